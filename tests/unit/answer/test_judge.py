"""The model's yes/no on whether the sources answer, weighed with the decline score (rag.answer.judge)."""

import math

import pytest

from langchain_core.language_models.fake_chat_models import GenericFakeChatModel
from langchain_core.messages import AIMessage

from rag.answer.judge import JudgedScore, ask, yes_probability
from rag.pipeline import QuoteEvent, build_pipeline
from rag.prompts import INSTRUCTIONS_EN, JUDGE_INSTRUCTIONS
from rag.question.turns import Exchange
from rag.settings import Settings
from tests.fakes import WordHashEmbeddings


def said(word: str, yes: float) -> AIMessage:
    """A one-token reply whose first token's alternatives give "Yes" the probability `yes` (the rest to "No")."""
    top = [{"token": " Yes", "logprob": math.log(yes)}, {"token": "No", "logprob": math.log(1 - yes)},
           {"token": "The", "logprob": -9.0}]
    return AIMessage(word, response_metadata={"logprobs": {"content": [{"token": word, "logprob": -0.1,
                                                                        "top_logprobs": top}]}})


class Recording(GenericFakeChatModel):
    """A fake chat model that keeps each call's messages and options."""

    calls: list = []

    def _generate(self, messages, stop=None, run_manager=None, **kwargs):
        self.calls.append((messages, kwargs))
        return super()._generate(messages, stop=stop, run_manager=run_manager, **kwargs)  # streaming comes here too


def test_yes_is_read_from_the_first_tokens_probabilities_or_its_word():
    assert yes_probability([(" Yes", math.log(0.3)), ("no", math.log(0.1)), ("The", -1.0)]) == pytest.approx(0.75)
    assert yes_probability([("是", math.log(0.2)), ("否", math.log(0.2))]) == pytest.approx(0.5)
    assert yes_probability([("The", -0.1), ("A", -2.0)]) is None
    llm = Recording(messages=iter([said("No", 0.2), AIMessage("Yes."), AIMessage("Perhaps")]))
    assert abs(ask(llm, []) - 0.2) < 1e-9
    assert llm.calls[0][1]["max_tokens"] == 1 and llm.calls[0][1]["logprobs"] is True
    assert ask(llm, []) == 1.0  # a server without probabilities: its one word
    assert ask(llm, []) is None  # neither word: no verdict


def test_the_combined_score_weighs_both_probabilities():
    judged = JudgedScore.of({"bias": 0.0, "score": 1.0, "judge": 2.0, "threshold": 0.5, "before": 0.1})
    assert judged.probability(0.5, 0.5) == 0.5
    # the model's "no" outweighs a middling score, a confident score outweighs a faint "no"
    assert judged.probability(0.6, 0.1) < 0.5 < judged.probability(0.99, 0.4)
    assert JudgedScore.of({"bias": 0.0, "score": 1.0, "judge": 1.0, "threshold": 0.5, "before": 0.1},
                          threshold=0.2).threshold == 0.2


def test_the_decision_after_the_yes_no_or_without_one():
    judged = JudgedScore.of({"bias": 0.0, "score": 1.0, "judge": 2.0, "threshold": 0.5, "before": 0.1})
    assert judged.declines(0.6, 0.1) and not judged.declines(0.99, 0.4)  # weighed with P(yes), as probability reads
    assert judged.declines(0.3, 0.1, close=0.0) == (judged.probability(0.3, 0.1) < 0.5)
    # no verdict (a failed call): the decline score alone at its own threshold, and none means nothing declined
    assert judged.declines(0.3, None, alone=0.4) and not judged.declines(0.5, None, alone=0.4)
    assert not judged.declines(0.01, None)


def _pipeline(*replies):
    llm = Recording(messages=iter(replies))
    llm.calls = []
    settings = Settings()
    settings.embedding.decline_threshold = 0.0  # the decline score keeps everything: the model's yes/no decides
    pipeline = build_pipeline(settings, embeddings=WordHashEmbeddings(), llm=llm)
    pipeline.judged = JudgedScore(bias=0.0, score=0.0, judge=1.0, threshold=0.5, before=0.0)  # P(answer) = P(yes)
    pipeline.ensure_ingested()
    return pipeline, llm


def test_a_no_from_the_model_declines_with_the_closest_papers_and_takes_back_the_quotes():
    pipeline, llm = _pipeline(said("No", 0.1), AIMessage("never asked"))
    events = list(pipeline.stream("Which paper drops positional embeddings to extend context?"))
    done = events[-1].answer
    assert done.refusal == "judge" and done.refused and "do not cover" in done.text and "closest papers found" in done.text
    assert "abstracts do not answer it" in done.text  # why: the papers were read, whatever words they share
    quotes = [e.text for e in events if isinstance(e, QuoteEvent)]
    assert quotes[0] and quotes[-1] == ""  # the quotes were shown, then taken back
    assert len(llm.calls) == 1  # the answer was never written
    # the yes/no was asked after the same sources and question the answer prompt holds, in place of its instructions
    asked = llm.calls[0][0][-1].content
    assert asked.endswith(JUDGE_INSTRUCTIONS) and "Question: Which paper drops positional embeddings" in asked


def test_a_yes_lets_the_model_write_from_the_same_prompt_prefix():
    pipeline, llm = _pipeline(said("Yes", 0.9), AIMessage("DroPE drops positional embeddings after pretraining [1]."))
    done = list(pipeline.stream("Which paper drops positional embeddings to extend context?"))[-1].answer
    assert not done.refused and "DroPE drops positional embeddings" in done.text
    judge, answer = (messages[-1].content for messages, _ in llm.calls)
    assert judge.endswith(JUDGE_INSTRUCTIONS) and answer.endswith(INSTRUCTIONS_EN)
    assert judge[:-len(JUDGE_INSTRUCTIONS)] == answer[:-len(INSTRUCTIONS_EN)]


def test_a_given_model_is_not_asked_its_yes_no_and_nor_is_another_chat_model():
    settings = Settings()
    assert settings.judged_score() is not None  # the bundled model with the default embedder: fitted
    assert build_pipeline(settings, embeddings=WordHashEmbeddings(), llm=Recording(messages=iter([]))).judged is None
    settings.llm.backend = "openai"
    assert settings.judged_score() is None


def test_a_failed_yes_no_call_leaves_the_decision_to_the_decline_score_alone():
    class NoLogprobs(Recording):
        def _generate(self, messages, stop=None, run_manager=None, **kwargs):
            if kwargs.get("logprobs"):
                raise RuntimeError("this server does not do logprobs")
            return super()._generate(messages, stop=stop, run_manager=run_manager, **kwargs)

    llm = NoLogprobs(messages=iter([AIMessage("DroPE drops positional embeddings after pretraining [1].")]))
    settings = Settings()
    settings.embedding.decline_threshold = 0.0
    pipeline = build_pipeline(settings, embeddings=WordHashEmbeddings(), llm=llm)
    pipeline.judged = JudgedScore(bias=0.0, score=0.0, judge=1.0, threshold=0.5, before=0.0)
    pipeline.ensure_ingested()
    done = list(pipeline.stream("Which paper drops positional embeddings to extend context?"))[-1].answer
    assert not done.refused and "DroPE drops positional embeddings" in done.text
    # without a verdict, a question kept only by the lower threshold is declined at the decline score's own
    weak = "Which papers study skiing injuries on glaciers?"
    cover = pipeline.coverage(pipeline.route(weak), pipeline.search_query(pipeline.route(weak)), pipeline.retrieve([weak]))
    settings.embedding.decline_threshold = None
    pipeline.judged = JudgedScore(bias=0.0, score=0.0, judge=1.0, threshold=0.5, before=cover.probability / 2)
    assert cover.probability < settings.embedding.decline_score().threshold
    done = list(pipeline.stream(weak))[-1].answer
    assert done.refused and done.refusal == "judge"


def test_a_comparison_is_not_put_to_the_yes_no():
    pipeline, llm = _pipeline(AIMessage("DroPE drops positional embeddings [1], while LookaheadKV evicts entries [2]."))
    done = list(pipeline.stream("How does DroPE differ from LookaheadKV?"))[-1].answer
    assert not done.refused and len(llm.calls) == 1 and not llm.calls[0][0][-1].content.endswith(JUDGE_INSTRUCTIONS)


def test_a_question_put_to_the_yes_no_is_declined_before_it_only_under_the_lower_threshold():
    question = "Which papers study skiing injuries on glaciers?"
    settings = Settings()
    alone = build_pipeline(settings, embeddings=WordHashEmbeddings(), llm=Recording(messages=iter([])))
    alone.ensure_ingested()
    intent = alone.route(question)
    query = alone.search_query(intent)
    sources = alone.retrieve(query.all)
    cover = alone.coverage(intent, query, sources)
    assert not cover.answerable and 0.0 < cover.probability < settings.embedding.decline_score().threshold
    alone.judged = JudgedScore(bias=0.0, score=0.0, judge=1.0, threshold=0.5, before=cover.probability / 2)
    assert alone.coverage(intent, query, sources).answerable  # kept for the model's yes/no to weigh
    followup = alone.coverage(intent, query, sources, turns=[Exchange("What is DroPE?", "DroPE drops PE [1].")])
    assert not followup.answerable  # not put to the yes/no: the decline score's own threshold
    settings.embedding.decline_threshold = 0.35
    assert not alone.coverage(intent, query, sources).answerable  # a threshold set by the user holds


def test_a_refusal_by_the_yes_no_says_the_papers_were_read_not_which_words_they_lack():
    from rag.answer.coverage import Coverage
    from rag.answer.grounded import refusal
    from rag.corpus.papers import Paper
    from rag.prompts import JUDGE_WHY_ZH
    from rag.question.router import route
    from rag.retrieve.search import Source

    sources = [Source(1, Paper(id="RlPVSeKjoc", title="Dropping Positional Embeddings", abstract="DroPE drops PE."), 0.9)]
    kept = Coverage(True, missing_terms=("glacier",), probability=0.4)
    by_code = refusal(route("Which papers study glacier skiing?"), sources, kept)
    assert "key terms: glacier" in by_code.text and by_code.refusal == "code"
    by_judge = refusal(route("有没有关于冰川滑雪的论文？"), sources, kept, by="judge")
    assert JUDGE_WHY_ZH in by_judge.text and "glacier" not in by_judge.text and "Dropping Positional" in by_judge.text


def test_with_a_full_queue_a_question_kept_only_for_the_yes_no_is_declined_by_the_score_alone():
    weak = "Which papers study skiing injuries on glaciers?"
    settings = Settings()
    settings.ui.max_waiting = 0
    pipeline = build_pipeline(settings, embeddings=WordHashEmbeddings(), llm=Recording(messages=iter([])))
    pipeline.ensure_ingested()
    cover = pipeline.coverage(pipeline.route(weak), pipeline.search_query(pipeline.route(weak)), pipeline.retrieve([weak]))
    pipeline.judged = JudgedScore(bias=0.0, score=0.0, judge=1.0, threshold=0.5, before=cover.probability / 2)
    holder = pipeline.slots.enter()  # the queue is full: no yes/no can be asked
    try:
        done = list(pipeline.stream(weak))[-1].answer
        assert done.refused and done.refusal == "judge"  # not the quotes of a question the score declines
        strong = list(pipeline.stream("Which paper drops positional embeddings to extend context?"))[-1].answer
        assert not strong.refused and "busy" in strong.text  # what the score keeps still gets its quotes
    finally:
        holder.release()


class FixedSimilarity:
    """A similarity that answers one cosine, and keeps what it was asked."""

    floor = 0.0

    def __init__(self, cosine: float):
        self.cosine, self.asked = cosine, []

    def __call__(self, text, sentences, question=False):
        self.asked.append((text, list(sentences), question))
        return self.cosine


def test_closeness_reads_each_sources_best_sentence_against_the_question_asked_as_a_query():
    from rag.answer.judge import closeness
    from rag.corpus.papers import Paper
    from rag.models.embeddings import SentenceSimilarity
    from rag.retrieve.passages import Terms
    from rag.retrieve.search import Source

    drope = Paper(id="a", title="DroPE", abstract="Language models need long contexts for many tasks. We drop the "
                  "positional embeddings after pretraining to extend the context window. Results are strong.")
    kv = Paper(id="b", title="LookaheadKV", abstract="Key-value caches grow with the context of a model. We evict "
               "cache entries by glimpsing into the future of the attention pattern.")
    question = "How can positional embeddings be dropped to extend the context window?"
    terms = Terms.of([question])
    asked = FixedSimilarity(0.7)
    assert closeness(question, [Source(1, drope, 0.9), Source(2, kv, 0.5)], terms, asked) == 0.7
    (text, sentences, as_query), = asked.asked
    assert text == question and as_query is True
    assert sentences == ["We drop the positional embeddings after pretraining to extend the context window.",
                         "Key-value caches grow with the context of a model."]  # each paper's best by the words
    assert closeness(question, [], terms, asked) == 0.0
    # with a real (fake-weighted) embedder: the paper that says what is asked is closer than one on another point
    similar = SentenceSimilarity(WordHashEmbeddings(), floor=0.0)
    assert closeness(question, [Source(1, drope, 0.9)], terms, similar) > closeness(question, [Source(1, kv, 0.9)],
                                                                                     terms, similar)


def test_the_sources_closeness_weighs_in_the_decision_after_the_yes_no():
    question = "Which paper drops positional embeddings to extend context?"
    for cosine, refused in ((0.9, False), (0.1, True)):
        pipeline, llm = _pipeline(said("Yes", 0.5), AIMessage("DroPE drops positional embeddings after pretraining [1]."))
        pipeline.similarity = FixedSimilarity(cosine)
        # P(yes) 0.5 says nothing; the closeness decides: logistic(10 x (cosine - 0.5))
        pipeline.judged = JudgedScore(bias=-5.0, score=0.0, judge=1.0, threshold=0.5, before=0.0, closeness=10.0)
        done = list(pipeline.stream(question))[-1].answer
        assert done.refused is refused and (done.refusal == "judge") is refused
        assert pipeline.similarity.asked[0][2] is True  # the question was embedded as a query
    pipeline, llm = _pipeline(said("Yes", 0.9), AIMessage("DroPE drops positional embeddings after pretraining [1]."))
    pipeline.similarity = FixedSimilarity(0.1)
    done = list(pipeline.stream(question))[-1].answer  # without a closeness weight it is not even computed
    assert not done.refused and pipeline.similarity.asked == []
