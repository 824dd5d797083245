"""The chat model failing in every way we know, on the wire: a real OpenAI-compatible HTTP server on
127.0.0.1 (tests/fake_openai.py) met by the real `openai` client. Each fault gives one clear message,
no traceback, no secret; the same pipeline answers again once the server is fine (no app restart)."""

import json
import socket

import pytest
import tiktoken

from rag.answer.grounded import HISTORY_ANSWER_CHARS, MAX_HISTORY_TURNS
from rag.cli import EXIT_ERROR, main
from rag.errors import ModelError, QuestionError
from rag.logs import RedactingFormatter, setup_logging
from rag.pipeline import build_pipeline
from rag.question.rewrite import Exchange
from rag.settings import Settings
from tests.fake_openai import FakeOpenAI
from tests.fakes import WordHashEmbeddings

QUESTION = "Dropping positional embedding extends context of pretrained LLMs?"
KEY = "sk-canary-0123456789abcdef"


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def openai_pipeline(port: int, **llm):
    settings = Settings(llm={"backend": "openai", "base_url": f"http://127.0.0.1:{port}/v1", "api_key": KEY,
                             "model": "fake", "timeout_s": 5, **llm}, retrieval={"rewrite": "off"})
    pipeline = build_pipeline(settings, embeddings=WordHashEmbeddings())
    pipeline.ensure_ingested()
    return pipeline


def test_server_down_at_start_then_up_answers_without_a_restart():
    port = free_port()
    pipeline = openai_pipeline(port)
    with pytest.raises(ModelError, match="cannot be reached"):
        pipeline.ask(QUESTION)
    with FakeOpenAI(port):
        answer = pipeline.ask(QUESTION)
    assert answer.citations and answer.citations[0].id == "RlPVSeKjoc"
    assert answer.sentences[0].supported  # the fake replies with source [1]'s first sentence


@pytest.mark.parametrize("mode, says", [
    ("error", "answered with an error"),
    ("garbage", "not an OpenAI-compatible response"),
    ("die", "closed the connection in the middle of the answer"),
    ("slow", "took too long"),
    ("auth", "refused the API key"),
])
def test_each_fault_is_one_clear_message_and_the_next_question_works(mode, says):
    with FakeOpenAI(mode=mode) as server:
        server.delay = 3.0
        pipeline = openai_pipeline(server.server_address[1], timeout_s=1.0)
        with pytest.raises(ModelError) as failed:
            pipeline.ask(QUESTION)
        message = str(failed.value)
        assert says in message and KEY not in message and "Traceback" not in message
        server.mode = "ok"
        assert pipeline.ask(QUESTION).citations[0].id == "RlPVSeKjoc"


def test_cli_shows_one_line_and_logs_no_key(tmp_path, capsys, monkeypatch):
    import logging

    handlers = []
    with FakeOpenAI(mode="auth") as server:
        monkeypatch.setenv("PAPERCHAT_LLM__BACKEND", "openai")
        monkeypatch.setenv("PAPERCHAT_LLM__BASE_URL", server.base_url)
        monkeypatch.setenv("PAPERCHAT_LLM__API_KEY", KEY)
        monkeypatch.setenv("PAPERCHAT_RETRIEVAL__REWRITE", "off")

        def factory(settings):
            handlers.append(setup_logging(settings))
            logging.getLogger("paperchat.test").warning("configured with key %s", KEY)  # a careless log line
            return build_pipeline(settings, embeddings=WordHashEmbeddings())

        try:
            code = main(["ask", QUESTION], pipeline_factory=factory)
        finally:
            for h in handlers:
                logging.getLogger().removeHandler(h)
                h.close()
        assert server.requests and server.requests[-1]["auth"] == f"Bearer {KEY}"  # the key was really sent
    err = capsys.readouterr().err
    assert code == EXIT_ERROR and "refused the API key" in err and "Traceback" not in err
    assert KEY not in err
    log = (tmp_path / "data" / "logs" / "app.log").read_text()
    assert "configured with key ***" in log and KEY not in log


def test_a_traceback_in_the_log_is_masked_too():
    import logging
    import sys

    try:
        raise RuntimeError(f"bad key {KEY}")
    except RuntimeError:
        record = logging.LogRecord("x", logging.ERROR, __file__, 1, "sent %s", (KEY,), sys.exc_info())
    text = RedactingFormatter([KEY]).format(record)
    assert "RuntimeError: bad key ***" in text and "sent ***" in text and KEY not in text
    assert record.args == (KEY,)  # the record is left as it was for other handlers


def test_a_100k_character_question_never_reaches_the_model_and_the_prompt_stays_bounded():
    enc = tiktoken.get_encoding("cl100k_base")
    with FakeOpenAI() as server:
        pipeline = openai_pipeline(server.server_address[1])
        limit = pipeline.settings.retrieval.max_question_chars
        with pytest.raises(QuestionError):
            pipeline.ask("positional embeddings " * 5_000)
        assert server.requests == []

        def prompt_tokens(turns: int) -> int:
            history = [Exchange("why? " * (limit // 5), "An earlier long answer. " * 400, ("A title",) * 4)] * turns
            pipeline.ask(((QUESTION + " ") * limit)[:limit], history=history)
            sent = server.requests[-1]["body"]["messages"]
            return len(enc.encode(json.dumps(sent, ensure_ascii=False)))

        two, twenty = prompt_tokens(2), prompt_tokens(20)
    retrieval = pipeline.settings.retrieval
    bound = (limit * (MAX_HISTORY_TURNS + 1) // 2 + MAX_HISTORY_TURNS * HISTORY_ANSWER_CHARS // 3
             + retrieval.k * (retrieval.max_source_tokens + 80) + 600)
    assert twenty == two <= bound  # a longer history does not grow it
    assert two + pipeline.settings.llm.max_tokens <= pipeline.settings.embedded_llm.n_ctx, two  # fits the context
