"""Shared fixtures: every test runs offline, with all on-disk state in a temporary data dir."""

from __future__ import annotations

import json
import os
import sys
from pathlib import Path

import pytest

NETGUARD = Path(__file__).parent / "netguard"
REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))
sys.path.insert(0, str(NETGUARD))
import sitecustomize as netguard  # noqa: E402  (our guard, not a system one: it is first on sys.path)

netguard.install()


@pytest.fixture(autouse=True)
def _isolated_settings(tmp_path, monkeypatch):
    """No PAPERCHAT_* from the developer's shell leaks in; the data dir is a fresh temp dir."""
    for key in list(os.environ):
        if key.startswith("PAPERCHAT_"):
            monkeypatch.delenv(key)
    monkeypatch.setenv("PAPERCHAT_DATA_DIR", str(tmp_path / "data"))
    # the 19 seed papers, not the whole conference (the default): a test that wants the default says so
    monkeypatch.setenv("PAPERCHAT_CORPUS", json.dumps([str(REPO / "corpus" / "iclr2026_seed.jsonl")]))
    monkeypatch.setenv("GRADIO_ANALYTICS_ENABLED", "False")
    monkeypatch.setenv("ANONYMIZED_TELEMETRY", "False")


@pytest.fixture
def guarded_env(tmp_path) -> dict:
    """Environment for a subprocess that must stay offline: the guard is loaded through PYTHONPATH."""
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join([str(NETGUARD), str(REPO), env.get("PYTHONPATH", "")])
    env["NETGUARD_LOG"] = str(tmp_path / "net.log")
    return env
