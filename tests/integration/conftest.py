"""Fixtures shared by the browser tests: one app (seed papers plus a hostile paper) and one Chromium per module."""

from __future__ import annotations

import json
import os

import pytest

from rag.settings import SEED_CORPUS
from tests.integration.appserver import HOSTILE, chromium, running_app


@pytest.fixture(scope="module")
def app_root(tmp_path_factory):
    return tmp_path_factory.mktemp("browser")


@pytest.fixture(scope="module")
def app_url(app_root):
    hostile = app_root / "hostile.jsonl"
    hostile.write_text(json.dumps(HOSTILE) + "\n")
    env = dict(os.environ, PAPERCHAT_DATA_DIR=str(app_root / "data"),
               PAPERCHAT_CORPUS=json.dumps([str(SEED_CORPUS), str(hostile)]))
    env = {k: v for k, v in env.items() if k != "OPENAI_API_KEY"}
    with running_app(env, app_root / "app.log") as url:
        yield url


@pytest.fixture(scope="module")
def model_log(app_url, app_root):
    """The embedded model server's log of this app (it records cancelled generations)."""
    log = app_root / "data" / "logs" / "llm-server.log"
    assert log.exists(), "the embedded model server wrote no log"
    return log


@pytest.fixture(scope="module")
def browser():
    with chromium() as b:
        yield b
