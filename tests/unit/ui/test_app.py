"""The chat handler without a browser: sources first, streamed answer, references, friendly errors."""

import pytest
from langchain_core.language_models.fake_chat_models import GenericFakeChatModel

from rag.pipeline import build_pipeline
from rag.settings import Settings
from tests.fakes import WordHashEmbeddings, fake_chat
from ui.app import build_app, respond

QUESTION = "Dropping positional embedding extends context of pretrained LLMs?"


def pipeline_with(llm):
    p = build_pipeline(Settings(), embeddings=WordHashEmbeddings(), llm=llm)
    p.ensure_ingested()
    return p


def test_sources_show_before_the_answer_then_references():
    pipeline = pipeline_with(fake_chat("DroPE drops positional embeddings [1]. Hidden <script>alert(1)</script> [8]."))
    steps = list(respond(pipeline, QUESTION, [], []))
    contents = [chat[-1]["content"] for chat, _ in steps]
    reading = next(i for i, c in enumerate(contents) if "Reading 4 papers" in c)
    first_token = next(i for i, c in enumerate(contents) if "DroPE" in c)
    assert reading < first_token
    final_chat, turns = steps[-1]
    final = final_chat[-1]["content"]
    assert "**References**" in final and "RlPVSeKjoc" in final and "[8]" not in final
    assert "<script>" not in final and "&lt;script&gt;" in final  # model output is shown as text
    assert [t.question for t in turns] == [QUESTION] and final_chat[0] == {"role": "user", "content": QUESTION}
    assert turns[0].answer.citations[0].id == "RlPVSeKjoc"


def test_model_failure_is_a_message_in_the_chat_not_a_traceback():
    class Down(GenericFakeChatModel):
        def _stream(self, *a, **k):
            raise ConnectionError("refused")

    chat, turns = list(respond(pipeline_with(Down(messages=iter([]))), QUESTION, [], []))[-1]
    assert chat[-1]["content"].startswith("⚠️") and "retry" in chat[-1]["content"].lower()
    assert turns == []


@pytest.mark.parametrize("typed, says", [
    ("", "Type a question first"),
    ("  \n\t ", "Type a question first"),
    ("\x00\x07\x1b\x7f\u202e", "Type a question first"),  # only control characters
    ("🙂🚀🔥", "no words to search for"),
    ("what is DroPE? " * 7_000, "the limit is 1,000"),  # ~100,000 characters
])
def test_bad_questions_get_a_message_and_no_model_call(typed, says):
    class Never(GenericFakeChatModel):
        def _stream(self, *a, **k):
            raise AssertionError("the model was called")

    steps = list(respond(pipeline_with(Never(messages=iter([]))), typed, [], []))
    chat, turns = steps[-1]
    assert chat[-1]["role"] == "assistant" and chat[-1]["content"].startswith("⚠️") and says in chat[-1]["content"]
    assert turns == []  # nothing kept: the next question starts afresh
    assert all(len(m["content"]) < 1_000 for m in chat)  # a huge paste is not echoed back whole


def test_control_characters_are_dropped_and_a_mixed_language_question_is_answered():
    pipeline = pipeline_with(fake_chat("DroPE drops positional embeddings after pretraining [1]."))
    # the decline score is fitted to the default embedder's cosines, not to the hashing fake's: not judged here
    pipeline.settings.embedding.decline_threshold = 0.0
    chat, turns = list(respond(pipeline, "DroPE\x00 是什么? \u202ewhy\x1b does it extend context?", [], []))[-1]
    assert turns[0].question == "DroPE 是什么? why does it extend context?"
    assert turns[0].answer.citations[0].id == "RlPVSeKjoc"


def test_an_unexpected_failure_is_a_message_and_is_logged(caplog, monkeypatch):
    pipeline = pipeline_with(fake_chat("x"))

    def broken(*a, **k):
        raise KeyError("a bug")

    monkeypatch.setattr(pipeline, "retrieve", broken)
    chat, turns = list(respond(pipeline, QUESTION, [], []))[-1]
    assert chat[-1]["content"].startswith("⚠️ Something went wrong") and "KeyError" in chat[-1]["content"]
    assert "Traceback" not in chat[-1]["content"] and turns == []
    assert any("answering" in r.getMessage() and r.exc_info for r in caplog.records)


def test_build_app_makes_blocks():
    import gradio as gr

    assert isinstance(build_app(pipeline_with(fake_chat("x"))), gr.Blocks)


def test_stop_closes_the_stream_and_keeps_the_partial_answer():
    pipeline = pipeline_with(fake_chat("DroPE drops positional embeddings [1]. " + "More words here. " * 50))
    pressed = {"now": False}
    steps = []
    for chat, turns in respond(pipeline, QUESTION, [], [], should_stop=lambda: pressed["now"]):
        steps.append((chat, turns))
        if "drops positional" in chat[-1]["content"]:
            pressed["now"] = True
    final_chat, turns = steps[-1]
    assert "_Stopped._" in final_chat[-1]["content"]
    stopped = turns[0].answer
    assert stopped.text.startswith("From the abstracts:")  # the quotes shown before the model wrote are kept
    assert stopped.prose.startswith("DroPE drops positional") and len(stopped.prose) < 200
    assert [c.id for c in turns[0].answer.citations] in ([], ["RlPVSeKjoc"])


def test_stop_is_seen_while_the_model_reads_its_prompt_and_the_stream_is_closed_after():
    """No event comes while the model reads its prompt; a Stop pressed then must still stop the turn at once."""
    import threading
    import time

    from langchain_core.messages import AIMessageChunk
    from langchain_core.outputs import ChatGenerationChunk

    reading, closed = threading.Event(), threading.Event()

    class SlowReader(GenericFakeChatModel):
        def _stream(self, *a, **k):
            try:
                reading.wait(5)  # "prefill": nothing is sent until the test lets it go
                for word in "DroPE drops positional embeddings [1].".split():
                    yield ChatGenerationChunk(message=AIMessageChunk(content=word + " "))
            finally:
                closed.set()

    pipeline = pipeline_with(SlowReader(messages=iter([])))
    pressed = {"at": None}
    steps = []
    for chat, turns in respond(pipeline, QUESTION, [], [], should_stop=lambda: pressed["at"] is not None):
        steps.append((chat, turns))
        if "Writing a summary" in chat[-1]["content"] and pressed["at"] is None:
            pressed["at"] = time.monotonic()
    waited = time.monotonic() - pressed["at"]
    final_chat, turns = steps[-1]
    assert "_Stopped._" in final_chat[-1]["content"] and waited < 2, waited  # not after the 5 s "prefill"
    assert turns[0].answer.text.startswith("From the abstracts:") and not turns[0].answer.prose
    reading.set()  # the model's first token arrives: the stream is closed then, not read on
    assert closed.wait(5)


def test_followup_is_searched_by_the_model_written_query_and_shows_it():
    pipeline = pipeline_with(fake_chat("DroPE drops positional embeddings [1].",
                                       "LookaheadKV KV cache eviction",  # the rewrite of the follow-up
                                       "LookaheadKV evicts entries [1]."))
    chat, turns = list(respond(pipeline, QUESTION, [], []))[-1]
    chat, turns = list(respond(pipeline, "How does the KV one differ from it?", chat, turns))[-1]
    assert turns[1].searched == "LookaheadKV KV cache eviction"
    assert "Searched for: LookaheadKV KV cache eviction" in chat[-1]["content"]
    assert turns[1].answer.sources[0].paper.title.startswith("LookaheadKV")


def test_keyword_box_becomes_a_filter():
    from ui.app import make_filters

    f = make_filters("Oral", ["llms"], " kv cache, long context，,")
    assert f.keywords == ("kv cache", "long context") and f.statuses[0] == "Oral" and f.primary_areas == ("llms",)


def test_api_needs_only_the_question():
    """gradio_client users (and the integration tests) call /ask with the question alone."""
    info = build_app(pipeline_with(fake_chat("x"))).get_api_info()
    params = info["named_endpoints"]["/ask"]["parameters"]
    assert params[0]["parameter_name"] == "message"
    assert all(p["parameter_has_default"] for p in params[1:]), params


def test_an_aggregate_question_shows_the_count_and_linked_ids_without_the_model():
    class Never(GenericFakeChatModel):
        def _stream(self, *a, **k):
            raise AssertionError("the model was called")

    chat, turns = list(respond(pipeline_with(Never(messages=iter([]))), "How many papers are there?", [], []))[-1]
    final = chat[-1]["content"]
    assert "**19 papers** match" in final and "https://openreview.net/forum?id=RlPVSeKjoc" in final
    assert turns[0].answer.text.startswith("**19 papers**") and "No paper was cited" not in final


def test_a_second_turn_hands_the_pipeline_the_papers_the_first_one_showed():
    pipeline = pipeline_with(fake_chat("DroPE drops positional embeddings [1].", "It needs a short recalibration [1]."))
    seen, stream = [], pipeline.stream

    def recording(question, history=(), **kw):
        seen.append(list(history))
        return stream(question, history=history, **kw)

    pipeline.stream = recording
    chat, turns = list(respond(pipeline, QUESTION, [], []))[-1]
    list(respond(pipeline, "What are its limitations?", chat, turns))
    earlier = seen[-1][0]
    assert earlier.question == QUESTION
    assert earlier.ids == tuple(s.paper.id for s in turns[0].answer.sources) and earlier.ids[0] == "RlPVSeKjoc"
    assert len(earlier.ids) == len(earlier.papers)
