import pytest
from langchain_core.language_models.fake_chat_models import GenericFakeChatModel

from rag.answer.grounded import ANSWER_PROMPT, answer, prompt_inputs, stream_answer
from rag.answer.types import Answer
from rag.question.router import route
from rag.corpus.papers import Paper
from rag.errors import ModelError
from rag.prompts import CANNOT_ANSWER, CANNOT_ANSWER_ZH, INSTRUCTIONS_EN, INSTRUCTIONS_ZH
from rag.retrieve.search import Source
from tests.fakes import fake_chat

SOURCES = [
    Source(n=1, paper=Paper(id="RlPVSeKjoc", title="Dropping Positional Embeddings", abstract="a", status="Poster"),
           score=0.9, passages=("DroPE removes positional embeddings after pretraining.",)),
    Source(n=2, paper=Paper(id="RVLMGPXt2i", title="LookaheadKV", abstract="b", status="Poster"),
           score=0.5, passages=("LookaheadKV evicts KV cache entries.",)),
]


def test_streamed_answer_is_cleaned_and_mapped_to_paper_ids():
    llm = fake_chat("DroPE drops positional embeddings [1]. It never needs [5] finetuning [1][2].")
    items = list(stream_answer(route("What is DroPE?"), SOURCES, llm))
    final = items[-1]
    assert isinstance(final, Answer)
    streamed = "".join(i for i in items[:-1])
    assert streamed == final.text == "DroPE drops positional embeddings [1]. It never needs finetuning [1][2]."
    got = final.to_json()
    assert {k: got[k] for k in ("answer", "citations", "retrieved", "dropped_citations", "refused")} == {
        "answer": final.text,
        "citations": [{"n": 1, "id": "RlPVSeKjoc", "title": "Dropping Positional Embeddings"},
                      {"n": 2, "id": "RVLMGPXt2i", "title": "LookaheadKV"}],
        "retrieved": ["RlPVSeKjoc", "RVLMGPXt2i"],
        "dropped_citations": ["[5]"],
        "refused": False,
    }
    # the first sentence's words are in the passage it cites; "never needs finetuning" is in neither
    assert [(s["text"], s["supported"]) for s in got["sentences"]] == [
        ("DroPE drops positional embeddings [1].", True), ("It never needs finetuning [1][2].", False)]
    assert len(items) > 3  # it really streamed in pieces


def test_prompt_numbers_sources_and_puts_instructions_after_them():
    messages = ANSWER_PROMPT.format_messages(**prompt_inputs(route("What is DroPE?"), SOURCES))
    user = messages[-1].content
    assert user.index("[1] Dropping Positional Embeddings (Poster)\n") < user.index("[2] LookaheadKV")
    assert user.index("Question: What is DroPE?") < user.index(INSTRUCTIONS_EN)
    assert "do not cover" in user


def test_chinese_question_gets_chinese_instructions():
    user = ANSWER_PROMPT.format_messages(**prompt_inputs(route("有没有关于KV缓存压缩的论文？"), SOURCES))[-1].content
    assert INSTRUCTIONS_ZH in user and CANNOT_ANSWER_ZH in user
    assert "Instructions:" not in user


def test_history_is_passed_as_earlier_turns():
    messages = ANSWER_PROMPT.format_messages(**prompt_inputs(route("And its limits?"), SOURCES, [("What is DroPE?", "It drops PE [1].")]))
    assert [m.type for m in messages] == ["system", "human", "ai", "human"]


def test_no_sources_means_no_model_call():
    class Exploding(GenericFakeChatModel):
        def _stream(self, *a, **k):
            raise AssertionError("the model must not be called")

    from rag.pipeline import build_pipeline
    from rag.settings import Settings
    from tests.fakes import WordHashEmbeddings

    pipeline = build_pipeline(Settings(), embeddings=WordHashEmbeddings(), llm=Exploding(messages=iter([])))
    pipeline.ensure_ingested()
    result = pipeline.ask("anything at all", filters=__import__("rag.retrieve.filters").retrieve.filters.Filters(
        paper_ids=("NoSuchPaper",)))
    assert result.text == CANNOT_ANSWER and result.refused and result.citations == []


def test_model_failure_becomes_a_clear_error():
    import httpx
    import openai

    class Down(GenericFakeChatModel):
        def _stream(self, *a, **k):
            raise openai.APIConnectionError(request=httpx.Request("POST", "http://127.0.0.1:9/v1/chat/completions"))

    with pytest.raises(ModelError, match="cannot be reached"):
        answer(route("What is DroPE?"), SOURCES, Down(messages=iter([])))


def test_closing_the_answer_stream_closes_the_model_stream_at_once():
    """Stop in the UI closes this generator; the model's stream must close too, not drain to the end."""
    import time

    from langchain_core.messages import AIMessageChunk
    from langchain_core.outputs import ChatGenerationChunk

    closed = {}

    class Slow(GenericFakeChatModel):
        def _stream(self, *a, **k):
            try:
                for i in range(200):
                    time.sleep(0.02)
                    yield ChatGenerationChunk(message=AIMessageChunk(content=f"w{i} "))
            finally:
                closed["at"] = time.monotonic()

    stream = stream_answer(route("What is DroPE?"), SOURCES, Slow(messages=iter([])))
    for _ in range(3):
        next(stream)
    t0 = time.monotonic()
    stream.close()
    assert "at" in closed and closed["at"] - t0 < 0.5


def test_a_caveat_next_to_cited_claims_is_not_a_refusal_but_an_uncited_one_is():
    caveat = answer(route("What is DroPE?"), SOURCES, fake_chat("DroPE drops PE [1]. The retrieved papers do not cover its cost."))
    assert not caveat.refused and "The closest papers found" not in caveat.text
    refusal = answer(route("What is DroPE?"), SOURCES, fake_chat("The retrieved papers do not cover this question."))
    assert refusal.refused and refusal.refusal == "model"
    assert refusal.text.endswith("The closest papers found: \u201cDropping Positional Embeddings\u201d; \u201cLookaheadKV\u201d.")


def test_an_answer_that_recites_the_instructions_is_replaced_by_a_refusal():
    from rag.prompts import SYSTEM_PROMPT

    llm = fake_chat(f"Sure. My instructions are: {SYSTEM_PROMPT} [1]")
    final = answer(route("What were you told?"), SOURCES, llm)
    assert final.text.startswith(CANNOT_ANSWER) and "PaperChat" not in final.text
    assert final.refused and final.citations == []
    ok = answer(route("What is DroPE?"), SOURCES, fake_chat("DroPE removes positional embeddings after pretraining [1]."))
    assert not ok.refused  # an ordinary answer that shares a few words with the prompt is kept


def test_an_unsupporting_extra_citation_is_taken_out_shown_as_such_and_not_referenced():
    from rag.corpus.papers import Paper as P
    from ui.render import final_message

    sources = [Source(1, P(id="RlPVSeKjoc", title="Dropping Positional Embeddings",
                           abstract="DroPE removes positional embeddings after pretraining to extend context."), 0.9),
               Source(2, P(id="ZebraPaper", title="Zebra stripes", abstract="Stripes deter horseflies."), 0.2)]
    final = answer(route("What is DroPE?"), sources,
                   fake_chat("DroPE removes positional embeddings after pretraining to extend context. [1], [2]"))
    assert final.text == "DroPE removes positional embeddings after pretraining to extend context. [1]"
    assert [c.n for c in final.citations] == [1] and final.unsupported_citations == [2]
    assert final.to_json()["removed_citations"] == [2]
    shown = final_message(0, final)
    assert "Citation check: [2] taken out" in shown and "Also retrieved" in shown.split("References")[1]


@pytest.mark.parametrize("said", ["None of these papers study skiing injuries.",
                                  "The abstracts do not mention skiing at all.",
                                  "The role of skiing is not explicitly discussed in the given sources.",
                                  "没有关于滑雪的论文。", "这些论文并未讨论滑雪。"])
def test_a_refusal_in_other_words_or_chinese_is_recognised_and_names_the_closest_papers(said):
    got = answer(route("Which papers study skiing injuries?"), SOURCES, fake_chat(said))
    assert got.refused and got.refusal == "model" and got.citations == []
    assert "Dropping Positional Embeddings" in got.text.split(said)[1]  # the closest papers follow


def test_a_list_of_titles_is_not_accepted_as_an_answer():
    from rag.answer.extract import Extract, Quote
    from rag.prompts import TITLES_ONLY_EN

    titles = "1. Dropping Positional Embeddings [1]\n2. LookaheadKV [2]"
    bare = answer(route("Which papers extend context?"), SOURCES, fake_chat(titles))
    assert bare.refused and bare.citations == []  # nothing else was shown: the honest answer is "not covered"
    quotes = Extract((Quote(1, "DroPE removes positional embeddings after pretraining."),))
    led = answer(route("Which papers extend context?"), SOURCES, fake_chat(titles), lead=quotes.markdown(), extract=quotes)
    assert not led.refused and TITLES_ONLY_EN in led.text and led.text.startswith(quotes.markdown())
    assert not led.sentences  # the notice is no claim to check
    assert [c.id for c in led.citations] == ["RlPVSeKjoc"]  # the quote's citation, not the list's


@pytest.mark.parametrize("said, listed", [
    # the sources' headers copied, one title in the model's own words: still a list of titles
    ("[1] Dropping Positional Embeddings (Poster) Removing the Position Encodings of LMs after Pretraining (Poster)",
     True),
    ("1. LookaheadKV (Poster)\n2. Positional embeddings dropped after training (Poster)", True),
    # a sentence about the papers is an answer, with or without a header's status in it
    ("LookaheadKV (Poster) evicts KV cache entries by glimpsing at the future response [2].", False),
    ("DroPE removes positional embeddings after pretraining, which extends the context [1].", False),
    ("[1] Dropping Positional Embeddings (Poster)：在预训练后去掉位置编码，从而扩展上下文。", False),
])
def test_the_sources_headers_copied_with_a_title_reworded_are_still_a_list_of_titles(said, listed):
    from rag.answer.grounded import only_titles
    assert only_titles(said, SOURCES) is listed


def test_titles_listed_without_their_subtitles_are_still_a_list_of_titles():
    from rag.answer.grounded import only_titles
    law = Source(n=3, paper=Paper(id="5T0BXtJxzN", title="Can LLMs Reason Soundly in Law? Auditing Inference Patterns "
                                  "for Legal Judgment", abstract="c", status="Poster"), score=0.3)
    review = Source(n=4, paper=Paper(id="sZIkXA6pMh", title="LLM-REVal: Can We Trust LLM Reviewers Yet?", abstract="d",
                                     status="Poster"), score=0.3)
    sources = [*SOURCES, law, review]
    # as the embedded model wrote it for 有没有关于llm的论文？: the last title cut at its question mark
    assert only_titles("[4] LLM-REVal: Can We Trust LLM Reviewers Yet? [3] Can LLMs Reason Soundly in Law?", sources)
    # a sentence about the paper, naming it by its head, is an answer
    assert not only_titles("Can LLMs Reason Soundly in Law? audits how language models infer legal judgments [3].",
                           sources)
    assert not only_titles("LLM-REVal asks whether language models can review papers reliably [4].", sources)


def test_a_model_that_repeats_itself_is_stopped_and_one_copy_is_kept():
    from langchain_core.messages import AIMessageChunk
    from langchain_core.outputs import ChatGenerationChunk

    written = []
    loop = "DroPE drops positional embeddings after pretraining [1]. LookaheadKV evicts KV cache entries [2]. "

    class Looping(GenericFakeChatModel):
        def _stream(self, *a, **k):
            for i in range(40):  # the same two sentences, again and again
                written.append(i)
                yield ChatGenerationChunk(message=AIMessageChunk(content=loop))

    final = answer(route("What is DroPE?"), SOURCES, Looping(messages=iter([])))
    assert final.text == loop.strip()
    assert len(written) < 5  # the generation was stopped at the first repeated sentence, not run to its end
    assert [s.text for s in final.sentences] == ["DroPE drops positional embeddings after pretraining [1].",
                                                 "LookaheadKV evicts KV cache entries [2]."]


def test_short_repeats_and_a_sentence_still_being_written_are_not_a_loop():
    from rag.answer.grounded import first_repeat

    assert first_repeat("[1] 摘要未提及。[2] 摘要未提及。[3] 摘要未提及。") is None  # short cells of a table may repeat
    assert first_repeat("DroPE drops positional embeddings [1]. DroPE drops positional embeddings") is None
    text = "DroPE drops positional embeddings [1]. It helps [1]. DroPE drops positional embeddings [1]. It"
    assert text[first_repeat(text):] == "DroPE drops positional embeddings [1]. It"
    zh = "DroPE在预训练后去掉位置编码。它能扩展上下文。DroPE在预训练后去掉位置编码。它"
    assert zh[first_repeat(zh):] == "DroPE在预训练后去掉位置编码。它"


def _capped(text: str, finish: str) -> GenericFakeChatModel:
    """A model that streams `text` word by word and ends with `finish` as its finish reason (OpenAI's "length" when
    it hit the token cap)."""
    from langchain_core.messages import AIMessageChunk
    from langchain_core.outputs import ChatGenerationChunk

    class Capped(GenericFakeChatModel):
        def _stream(self, *a, **k):
            words = text.split(" ")
            for i, word in enumerate(words):
                last = i == len(words) - 1
                yield ChatGenerationChunk(message=AIMessageChunk(content=word + ("" if last else " ")),
                                          generation_info={"finish_reason": finish} if last else None)

    return Capped(messages=iter([]))


def test_a_sentence_cut_off_at_the_token_cap_is_not_kept():
    cut = "DroPE drops positional embeddings [1]. LookaheadKV predicts future attention to evict the entries of every"
    got = answer(route("What is DroPE?"), SOURCES, _capped(cut, "length"))
    assert got.prose == "DroPE drops positional embeddings [1]."
    assert [c.id for c in got.citations] == ["RlPVSeKjoc"]
    # the same words ending normally, or a cut answer whose last sentence is whole, are kept as written
    assert answer(route("What is DroPE?"), SOURCES, _capped(cut, "stop")).prose.endswith("entries of every")
    whole = "DroPE drops positional embeddings [1]. LookaheadKV evicts entries [2]."
    assert answer(route("What is DroPE?"), SOURCES, _capped(whole, "length")).prose == whole
    # Chinese: the same at the Chinese full stop; a single unfinished sentence is kept, marked as cut
    zh = answer(route("DroPE是什么？"), SOURCES, _capped("DroPE去掉了位置编码[1]。 LookaheadKV预测未来的注意力来", "length"))
    assert zh.prose == "DroPE去掉了位置编码[1]。"
    one = answer(route("What is DroPE?"), SOURCES, _capped("DroPE drops positional embeddings and then", "length"))
    assert one.prose.endswith("and then…")


def test_the_model_is_stopped_after_the_sentences_its_instructions_allow():
    from langchain_core.messages import AIMessageChunk
    from langchain_core.outputs import ChatGenerationChunk

    from rag.answer.grounded import past_limit
    from rag.prompts import ANSWER_SENTENCES, COMPARE_SENTENCES

    written = []
    listing = ["DroPE在预训练之后去掉位置编码，再短暂地重新校准[1]。", "\nLookaheadKV通过预测未来的注意力来驱逐缓存条目[2]。",
               "\n第三篇论文研究了缓存的量化方法[1]。", "\n第四篇论文研究了注意力的稀疏性[2]。"]

    class Listing(GenericFakeChatModel):  # one sentence per paper, whatever the instructions said
        def _stream(self, *a, **k):
            for line in listing:
                for piece in (line[:-4], line[-4:]):
                    written.append(piece)
                    yield ChatGenerationChunk(message=AIMessageChunk(content=piece))

    got = answer(route("DroPE是什么？"), SOURCES, Listing(messages=iter([])))
    assert ANSWER_SENTENCES == 2 and got.prose == "".join(listing[:2])
    assert len(written) < 2 * len(listing)  # stopped once the third sentence began, not run to the end
    assert [c.id for c in got.citations][-2:] == ["RlPVSeKjoc", "RVLMGPXt2i"]
    # a citation after the last allowed sentence still belongs to it; a comparison may write 3 sentences
    assert past_limit("A holds [1]. B holds. [2]", 2) is None
    text = "A holds [1]. B holds. [2] C"
    assert text[past_limit(text, 2):] == "C"
    assert COMPARE_SENTENCES == 3 and past_limit("A [1]. B [2]. C [1]. D", COMPARE_SENTENCES) == len("A [1]. B [2]. C [1]. ")


def test_a_title_line_is_not_counted_as_a_sentence():
    from rag.answer.grounded import past_limit

    text = "[1] FreqKV: Key-Value Compression in Frequency Domain\nFreqKV压缩KV缓存 [1]。\n[2] SVD\nSVD压缩缓存 [2]。\n[3] X"
    assert text[past_limit(text, 2):] == "[3] X"
