"""Who can reach the app: loopback by default, any other address only with a login."""

import pytest

from rag.cli import EXIT_ERROR, main
from rag.errors import ConfigError
from rag.pipeline import build_pipeline
from rag.settings import UISettings
from tests.fakes import WordHashEmbeddings, fake_chat
from ui.app import login_for


@pytest.mark.parametrize("host", ["127.0.0.1", "localhost", "::1", "127.0.0.2"])
def test_loopback_needs_no_login(host):
    assert login_for(host, UISettings()) is None


@pytest.mark.parametrize("host", ["0.0.0.0", "::", "192.168.1.20", "paperchat.example.org"])
def test_any_other_address_needs_a_login(host):
    with pytest.raises(ConfigError, match="PAPERCHAT_UI__AUTH_USER and PAPERCHAT_UI__AUTH_PASSWORD"):
        login_for(host, UISettings())
    with pytest.raises(ConfigError):  # a user without a password is no login
        login_for(host, UISettings(auth_user="ana"))
    assert login_for(host, UISettings(auth_user="ana", auth_password="s3cret-pass")) == ("ana", "s3cret-pass")


def test_serve_on_all_interfaces_without_a_login_refuses_before_starting_anything(capsys):
    started = []

    def factory(settings):
        pipeline = build_pipeline(settings, embeddings=WordHashEmbeddings(), llm=fake_chat("x"))
        pipeline.warm_up = lambda: started.append("model")
        return pipeline

    assert main(["serve", "--host", "0.0.0.0"], pipeline_factory=factory) == EXIT_ERROR
    err = capsys.readouterr().err
    assert "Refusing to serve on 0.0.0.0 without a login" in err and started == []


def test_the_password_is_not_in_the_settings_repr():
    ui = UISettings(auth_user="ana", auth_password="s3cret-pass")
    assert "s3cret-pass" not in repr(ui) and "s3cret-pass" not in str(ui)
