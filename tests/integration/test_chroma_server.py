"""Client/server mode: the index checks of tests/unit/index/index_checks.py against a real `chroma run` server
(bound to 127.0.0.1, telemetry off) and, side by side, the embedded store; an unreachable server is one
clear error line."""

import os
import subprocess
import sys
import uuid
from pathlib import Path

import pytest

from rag.corpus.papers import load_file
from rag.errors import IndexError_
from rag.index.store import make_client
from rag.offline import prime_tiktoken
from rag.settings import SEED_CORPUS, Settings
from tests.conftest import NETGUARD, REPO
from tests.integration.appserver import free_port, serving
from tests.unit.index.index_checks import CHECKS, Store

pytestmark = pytest.mark.integration
CHROMA = Path(sys.executable).with_name("chroma")  # installed with chromadb


def listening_addresses(port: int) -> set[str]:
    """Local addresses (hex, as the kernel writes them) of the TCP sockets listening on `port`."""
    found = set()
    for table in ("/proc/net/tcp", "/proc/net/tcp6"):
        if not os.path.exists(table):
            continue
        for line in Path(table).read_text().splitlines()[1:]:
            local, state = line.split()[1], line.split()[3]
            address, hex_port = local.split(":")
            if state == "0A" and int(hex_port, 16) == port:  # 0A: LISTEN
                found.add(address)
    return found


@pytest.fixture(scope="module")
def chroma_server(tmp_path_factory):
    """The port of a `chroma run` server on 127.0.0.1: the one `.ci/run` started (CHROMA_TEST_SERVER=host:port),
    or else one started here on a free port and stopped after the module."""
    if os.environ.get("CHROMA_TEST_SERVER"):
        host, _, given = os.environ["CHROMA_TEST_SERVER"].rpartition(":")
        assert host == "127.0.0.1", f"CHROMA_TEST_SERVER must be a loopback server, not {host}"
        make_client(Settings(chroma={"mode": "http", "host": host, "port": int(given)}))  # reachable, or one clear error
        yield int(given)
        return
    port, path = free_port(), tmp_path_factory.mktemp("chroma-server")
    env = dict(os.environ, ANONYMIZED_TELEMETRY="False",
               PYTHONPATH=os.pathsep.join([str(NETGUARD), str(REPO)]))  # its Python part stays offline too
    cmd = [sys.executable, str(CHROMA), "run", "--host", "127.0.0.1", "--port", str(port), "--path", str(path / "db")]
    with serving(cmd, f"http://127.0.0.1:{port}/api/v2/heartbeat", env, path / "server.log", 60, "chroma run"):
        yield port


@pytest.fixture(params=["embedded", "http"])
def store(request):
    chroma = {}
    if request.param == "http":
        # one server for the module: every test gets collections of its own
        chroma = {"mode": "http", "host": "127.0.0.1", "port": request.getfixturevalue("chroma_server"),
                  "collection_prefix": f"test-{uuid.uuid4().hex[:8]}"}
    settings = Settings(chunking={"size": 96, "overlap": 16}, chroma=chroma)
    prime_tiktoken(settings.cache_dir / "tiktoken")
    return Store(settings, load_file(SEED_CORPUS).papers)


@pytest.mark.parametrize("check", CHECKS, ids=lambda c: c.__name__.removeprefix("check_"))
def test_index_behaviour(check, store):
    check(store)
    if store.settings.chroma.mode == "http":  # everything went to the server, nothing to a local store
        assert not store.settings.chroma_dir.exists()


def test_the_server_listens_on_loopback_only(chroma_server):
    assert listening_addresses(chroma_server) == {"0100007F"}  # 127.0.0.1, and no IPv6 or wildcard socket


def test_an_unreachable_server_is_one_clear_error(guarded_env):
    port = free_port()  # nothing listens there
    with pytest.raises(IndexError_, match=rf"Cannot reach the Chroma server at 127\.0\.0\.1:{port}.*chroma run"):
        make_client(Settings(chroma={"mode": "http", "port": port}))
    env = dict(guarded_env, PAPERCHAT_CHROMA__MODE="http", PAPERCHAT_CHROMA__PORT=str(port))
    done = subprocess.run([sys.executable, "-m", "rag.cli", "ingest", str(SEED_CORPUS)], env=env,
                          capture_output=True, text=True, timeout=300)
    assert done.returncode == 2
    assert done.stderr.startswith(f"paperchat: error: Cannot reach the Chroma server at 127.0.0.1:{port}")
    assert "Traceback" not in done.stderr and len(done.stderr.strip().splitlines()) == 1, done.stderr


def test_cli_ingests_and_prunes_through_the_server(chroma_server, guarded_env, tmp_path):
    fixtures = REPO / "tests" / "fixtures"
    subset = tmp_path / "two.csv"  # the header and the first two papers of the CSV fixture
    rows = (fixtures / "iclr2026_sample.csv").read_bytes().split(b"\r\n")  # csv.writer ends rows with CRLF
    subset.write_bytes(b"\r\n".join(rows[:3]) + b"\r\n")
    env = dict(guarded_env, PAPERCHAT_CHROMA__MODE="http", PAPERCHAT_CHROMA__PORT=str(chroma_server),
               PAPERCHAT_CHROMA__COLLECTION_PREFIX=f"cli-{uuid.uuid4().hex[:8]}")

    def ingest(*args):
        done = subprocess.run([sys.executable, "-m", "rag.cli", "ingest", *args], env=env, capture_output=True,
                              text=True, timeout=600)
        assert done.returncode == 0, done.stderr[-3000:]
        return done.stdout

    assert "5 new" in ingest(str(fixtures / "openreview_notes.json"))  # real vectors of the default embedder
    out = ingest("--prune", str(subset))  # the same papers from a CSV: same content, nothing re-embedded
    assert "2 papers loaded" in out and "2 unchanged papers; 0 chunks embedded" in out
    assert "pruned 3 papers" in out
    assert not os.path.exists(env["NETGUARD_LOG"]), open(env["NETGUARD_LOG"]).read()
