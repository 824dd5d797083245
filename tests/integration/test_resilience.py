"""The app under load, faults and prying: `paperchat serve` started as a user does, on loopback, with a
real OpenAI-compatible server on 127.0.0.1 (tests/fake_openai.py) standing in for the model so that
eight sessions take seconds, not the embedded model's minutes (benchmarks/load.py measures that one).

Also: a Chroma server that goes away and comes back, and the login an app on a network address needs.
"""

from __future__ import annotations

import concurrent.futures as cf
import json
import os
import sys
from pathlib import Path

import httpx
import pytest
from gradio_client import Client

from rag.errors import IndexError_
from rag.pipeline import build_pipeline
from rag.settings import SEED_CORPUS, Settings
from tests.conftest import NETGUARD, REPO
from tests.fake_openai import FakeOpenAI
from tests.fakes import WordHashEmbeddings, fake_chat
from tests.integration.appserver import api_ask as ask
from tests.integration.appserver import app_pid, free_port, rss_mb, running_app, serving, texts

pytestmark = pytest.mark.integration
KEY = "sk-canary-resilience-5f3c9a"
SESSIONS = 8
TOPICS = [  # one per session, each retrieving a different seed paper
    "Dropping positional embedding extends context of pretrained LLMs?",
    "How can KV cache eviction be made accurate without generating a draft response?",
    "What is LookaheadKV?",
    "Which papers study speculative decoding?",
    "Which papers prune or compress the KV cache?",
    "Which papers are about long-context extension?",
    "Which papers use reinforcement learning for reasoning?",
    "Which papers study diffusion language models?",
]
CHROMA = Path(sys.executable).with_name("chroma")


@pytest.fixture(scope="module")
def model():
    with FakeOpenAI() as server:
        server.reply_delay = 0.6  # each answer streams for ~0.6 s: long enough for the sessions to overlap
        yield server


@pytest.fixture(scope="module")
def app(model, tmp_path_factory, guarded_env):
    root = tmp_path_factory.mktemp("resilience")
    env = dict(guarded_env, PAPERCHAT_DATA_DIR=str(root / "data"), PAPERCHAT_LLM__BACKEND="openai",
               PAPERCHAT_LLM__BASE_URL=model.base_url, PAPERCHAT_LLM__API_KEY=KEY, PAPERCHAT_LLM__MODEL="fake",
               PAPERCHAT_UI__MAX_WAITING=str(SESSIONS - 1))
    with running_app(env, root / "app.log") as url:
        yield {"url": url, "root": root, "data": root / "data", "log": root / "app.log"}


@pytest.fixture(scope="module")
def guarded_env(tmp_path_factory) -> dict:  # module-scoped twin of the conftest fixture
    # set up before the function-scoped settings fixture, so it says itself what that one says: the 19 seed
    # papers, not the whole conference (which took a minute to load for every app started here)
    env = {k: v for k, v in os.environ.items() if not k.startswith("PAPERCHAT_")}
    env["PAPERCHAT_CORPUS"] = json.dumps([str(SEED_CORPUS)])
    env["PYTHONPATH"] = os.pathsep.join([str(NETGUARD), str(REPO), env.get("PYTHONPATH", "")])
    env["NETGUARD_LOG"] = str(tmp_path_factory.mktemp("net") / "net.log")
    return env


def test_eight_sessions_at_once_all_answered_in_turn_and_never_mixed(app, model):
    pid = app_pid(app["data"])
    before = rss_mb(pid)
    model.max_active = 0
    clients = [Client(app["url"], verbose=False, download_files=False) for _ in range(SESSIONS)]

    def session(i: int):
        chat, first = ask(clients[i], TOPICS[i])
        chat, second = ask(clients[i], "What are its limitations?", chat)  # a follow-up in the same session
        return i, chat, first, second

    with cf.ThreadPoolExecutor(SESSIONS) as pool:
        results = list(pool.map(session, range(SESSIONS)))
    latencies = sorted(t for _, _, a, b in results for t in (a, b))
    for i, chat, _, _ in results:
        shown = texts(chat)
        users = [t for m, t in zip(chat, shown) if m["role"] == "user"]
        assert users == [TOPICS[i], "What are its limitations?"], users  # only this session's own turns
        answers = [t for m, t in zip(chat, shown) if m["role"] == "assistant"]
        assert len(answers) == 2 and all("References" in a or "No paper was cited" in a for a in answers), answers
    assert model.max_active == 1  # one answer at a time (ui.answer_slots), the others waited their turn
    # first come, first served: nobody waits much longer than everyone's answers one after another
    assert latencies[-1] < 2 * SESSIONS * (latencies[0] + 1.0), latencies
    assert rss_mb(pid) - before < 400, (before, rss_mb(pid))  # memory stays bounded under load


def test_a_full_queue_says_busy_and_the_rest_are_answered(app, model):
    burst = SESSIONS + 3  # one answering + SESSIONS-1 waiting fit; the rest are told to come back
    clients = [Client(app["url"], verbose=False, download_files=False) for _ in range(burst)]
    # answers slow enough that the queue cannot drain while the burst arrives: at 0.6 s an answer, a busy CI
    # machine that spreads the 11 submissions over a few seconds left nobody waiting past the queue's end
    model.reply_delay = 3.0
    try:
        with cf.ThreadPoolExecutor(burst) as pool:
            chats = list(pool.map(lambda i: ask(clients[i], TOPICS[i % SESSIONS])[0], range(burst)))
    finally:
        model.reply_delay = 0.6
    finals = [texts(c)[-1] for c in chats]
    busy = [f for f in finals if "PaperChat is busy" in f]
    answered = [f for f in finals if f not in busy and ("References" in f or "No paper was cited" in f)]
    assert len(busy) >= 1 and len(busy) + len(answered) == burst, finals
    assert all("From the abstracts:" in f and "References" in f for f in busy), busy  # told to wait, yet cited quotes
    assert "References" in texts(ask(clients[0], TOPICS[0])[0])[-1]  # once it is quiet, a retry is answered


def test_bad_questions_through_the_api_are_messages(app):
    client = Client(app["url"], verbose=False, download_files=False)
    for question, says in [("", "Type a question first"), ("🙂🙂🙂", "no words"),
                           ("why " * 25_000, "the limit is 1,000"), ("\x00\x1b\x07", "Type a question first")]:
        chat, _ = ask(client, question)
        assert says in texts(chat)[-1], (question[:20], texts(chat)[-1])
        assert sum(len(t) for t in texts(chat)) < 2_000


def test_no_host_file_is_served(app):
    base = app["url"].rstrip("/")
    secret = app["data"] / "cache" / "secret.txt"
    secret.parent.mkdir(parents=True, exist_ok=True)
    secret.write_text("do not serve me")
    probes = ["/etc/passwd", str(REPO / "pyproject.toml"), str(secret), str(app["data"] / "logs" / "app.log")]
    for path in probes:
        for url in (f"{base}/gradio_api/file={path}", f"{base}/file={path}", f"{base}/gradio_api/file=..%2F..%2F..{path}"):
            r = httpx.get(url, timeout=10)
            assert r.status_code in (403, 404, 405) or ("root:" not in r.text and "do not serve" not in r.text
                                                        and "[project]" not in r.text), (url, r.status_code)
    r = httpx.get(f"{base}/static/../../../../etc/passwd", timeout=10)
    assert "root:" not in r.text


def test_the_api_key_never_shows(app, model):
    client = Client(app["url"], verbose=False, download_files=False)
    model.mode = "auth"  # the model server rejects the key and echoes it back, as api.openai.com does
    try:
        chat, _ = ask(client, TOPICS[0])
    finally:
        model.mode = "ok"
    assert "refused the API key" in texts(chat)[-1] and KEY not in str(chat)
    assert any(r["auth"] == f"Bearer {KEY}" for r in model.requests)  # it was sent to the model server...
    base = app["url"].rstrip("/")
    for page in ("/", "/config", "/gradio_api/info"):
        assert KEY not in httpx.get(base + page, timeout=10).text  # ...and nowhere else
    logs = [p.read_text(errors="replace") for p in [app["log"], *(app["data"] / "logs").glob("*.log")]]
    assert logs and all(KEY not in text for text in logs)


def test_a_login_is_required_when_configured(model, tmp_path, guarded_env):
    env = dict(guarded_env, PAPERCHAT_DATA_DIR=str(tmp_path / "data"), PAPERCHAT_LLM__BACKEND="openai",
               PAPERCHAT_LLM__BASE_URL=model.base_url, PAPERCHAT_LLM__MODEL="fake",
               PAPERCHAT_UI__AUTH_USER="ana", PAPERCHAT_UI__AUTH_PASSWORD="correct-horse-battery")
    with running_app(env, tmp_path / "app.log") as url:
        config = httpx.get(url + "config", timeout=10)  # without a login: only "not authenticated"
        assert config.status_code == 401 and "Not authenticated" in config.text and "components" not in config.text
        with pytest.raises(Exception):
            ask(Client(url, verbose=False, download_files=False), TOPICS[0])
        with pytest.raises(Exception):
            ask(Client(url, verbose=False, download_files=False, auth=("ana", "wrong")), TOPICS[0])
        chat, _ = ask(Client(url, verbose=False, download_files=False, auth=("ana", "correct-horse-battery")), TOPICS[0])
        assert "References" in texts(chat)[-1]
    assert "correct-horse-battery" not in (tmp_path / "app.log").read_text()


def test_chroma_server_down_is_a_message_and_back_up_answers_again(tmp_path):
    port = free_port()
    env = dict(os.environ, ANONYMIZED_TELEMETRY="False", PYTHONPATH=os.pathsep.join([str(NETGUARD), str(REPO)]))
    cmd = [sys.executable, str(CHROMA), "run", "--host", "127.0.0.1", "--port", str(port), "--path", str(tmp_path / "db")]
    heartbeat = f"http://127.0.0.1:{port}/api/v2/heartbeat"
    settings = Settings(data_dir=tmp_path / "data", chroma={"mode": "http", "host": "127.0.0.1", "port": port},
                        retrieval={"rewrite": "off"})
    question = "Dropping positional embedding extends context of pretrained LLMs?"
    with serving(cmd, heartbeat, env, tmp_path / "chroma1.log", 60, "chroma run"):
        pipeline = build_pipeline(settings, embeddings=WordHashEmbeddings(),
                                  llm=fake_chat(*["DroPE drops positional embeddings [1]."] * 3))
        pipeline.ensure_ingested()
        assert pipeline.ask(question).citations[0].id == "RlPVSeKjoc"
    with pytest.raises(IndexError_, match="Lost the connection to the Chroma server"):  # the server is gone
        pipeline.ask(question)
    with serving(cmd, heartbeat, env, tmp_path / "chroma2.log", 60, "chroma run"):  # restarted, same data
        assert pipeline.ask(question).citations[0].id == "RlPVSeKjoc"  # the same pipeline: no app restart
