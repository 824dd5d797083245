"""The embedder's run batch: chosen by timing on this CPU, without changing the vectors."""

import numpy as np
import pytest

from rag.models.embeddings import MiniLMEmbeddings, RunBatchTuner


def test_a_configured_run_batch_is_used_as_is():
    tuner = RunBatchTuner(fixed=32)
    assert tuner.size_for(64) == (32, False)
    assert tuner.chosen == 32


def test_short_calls_never_time_and_use_the_default():
    tuner = RunBatchTuner()
    assert tuner.size_for(1) == (RunBatchTuner.DEFAULT, False)  # a query
    assert tuner.size_for(RunBatchTuner.MIN_TEXTS - 1) == (RunBatchTuner.DEFAULT, False)
    assert tuner.chosen is None


def test_every_candidate_is_timed_and_the_fastest_median_is_kept():
    tuner = RunBatchTuner()
    speed = {4: 1100.0, 8: 1000.0, 16: 900.0}  # word pieces per second
    tried = []
    while tuner.chosen is None:
        size, trial = tuner.size_for(64)
        assert trial
        tried.append(size)
        tuner.record(size, word_pieces=10_000, seconds=10_000 / speed[size])
    assert sorted(tried) == sorted(RunBatchTuner.CANDIDATES * RunBatchTuner.ROUNDS)
    assert tuner.chosen == 4
    assert tuner.size_for(64) == (4, False)


def test_one_slow_trial_does_not_decide():
    tuner = RunBatchTuner()
    times = {4: [5.0, 1.0, 1.0], 8: [2.0, 2.0, 2.0], 16: [3.0, 3.0, 3.0]}  # seconds per trial, 4's first was disturbed
    while tuner.chosen is None:
        size, _ = tuner.size_for(64)
        tuner.record(size, word_pieces=1000, seconds=times[size].pop(0))
    # medians of two rounds: 4 -> (200, 1000) = 600, 8 -> 500, 16 -> 333
    assert tuner.chosen == 4


class _Clock:
    def __init__(self):
        self.now = 0.0

    def __call__(self):
        self.now += 1.0
        return self.now


def test_the_vectors_do_not_depend_on_the_run_batch():
    texts = [f"Paper {i}\n\n" + "We study sparse attention for long contexts. " * (1 + i % 7) for i in range(40)]
    small = MiniLMEmbeddings(threads=1, run_batch=4).embed_documents(texts)
    large = MiniLMEmbeddings(threads=1, run_batch=16).embed_documents(texts)
    assert np.allclose(np.array(small), np.array(large), atol=1e-4)


def test_an_ingest_tunes_on_its_first_calls_and_then_keeps_the_choice():
    texts = [f"Title {i}\n\nAn abstract about retrieval number {i}." for i in range(RunBatchTuner.MIN_TEXTS)]
    embedder = MiniLMEmbeddings(threads=1, clock=_Clock())
    first = embedder.embed_documents(texts)
    assert embedder.tuner.chosen is None
    for _ in range(len(RunBatchTuner.CANDIDATES) * RunBatchTuner.ROUNDS - 1):
        assert np.allclose(embedder.embed_documents(texts), first, atol=1e-4)
    assert embedder.tuner.chosen in RunBatchTuner.CANDIDATES  # every trial took one tick of the clock: a tie


def test_sentence_similarity_is_the_closest_sentence_and_embeds_each_text_once():
    from rag.models.embeddings import SentenceSimilarity
    from tests.fakes import WordHashEmbeddings

    fake = WordHashEmbeddings()
    similar = SentenceSimilarity(fake, floor=0.4)
    sentences = ["Cats sleep all day.", "Dropping positional embeddings extends context."]
    assert similar("positional embeddings extend context", sentences) == pytest.approx(
        similar("positional embeddings extend context", sentences[1:]))  # the closest one counts
    assert similar("positional embeddings extend context", sentences) > similar("cats", sentences[1:])
    assert sum(fake.calls) == 4  # two claims and two sentences, each embedded once
    assert similar("anything", []) == 0.0 and similar.floor == 0.4


def test_sentence_similarity_embeds_a_question_as_a_query_and_keeps_it_apart_from_the_same_text_as_a_passage():
    from rag.models.embeddings import SentenceSimilarity
    from tests.fakes import WordHashEmbeddings

    class Asymmetric(WordHashEmbeddings):  # a query vector unlike the passage vector of the same text (as e5's are)
        queries: list = []

        def embed_query(self, text):
            self.queries.append(text)
            return self._vector(f"{text} query")

    fake = Asymmetric()
    similar = SentenceSimilarity(fake, floor=0.0)
    sentences = ["positional embeddings extend context"]
    as_passage = similar("positional embeddings extend context", sentences)
    as_query = similar("positional embeddings extend context", sentences, question=True)
    assert as_passage == pytest.approx(1.0) and as_query < as_passage
    assert fake.queries == ["positional embeddings extend context"] and sum(fake.calls) == 1  # the passage once
