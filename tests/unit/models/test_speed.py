"""The measured prompt-reading rate behind the chat's wait estimate."""

import time

from langchain_core.language_models.fake_chat_models import GenericFakeChatModel
from langchain_core.messages import AIMessage

from rag.models.speed import ReadRate
from rag.pipeline import build_pipeline
from rag.settings import Settings
from tests.fakes import WordHashEmbeddings


def test_the_rate_is_the_median_of_recent_answers_so_a_cached_prompt_does_not_skew_it():
    rate = ReadRate()
    assert rate.estimate(600) is None  # nothing measured: no number is made up
    rate.observe(600, 10.0)
    assert rate.estimate(600) == 10.0
    rate.observe(600, 30.0)  # slower now (another job on the CPU): of two, the slower one is told
    assert rate.estimate(600) == 30.0
    rate.observe(600, 0.1)  # the server had this prompt cached: read in a blink
    assert rate.estimate(600) == 10.0  # not 0.1 s
    for _ in range(3):
        rate.observe(600, 12.0)
    assert rate.estimate(600) == 12.0  # the last five: 30, 0.1, 12, 12, 12
    rate.observe(0, 5.0)  # a meaningless measurement is ignored
    assert rate.estimate(600) == 12.0


def test_warm_up_times_the_calibration_prompt_not_the_servers_slow_first_call():
    class ColdStart(GenericFakeChatModel):
        calls: int = 0

        def _generate(self, *a, **k):
            self.calls += 1
            time.sleep(1.0 if self.calls == 1 else 0.05)  # the first call pays the start-up
            return super()._generate(*a, **k)

    llm = ColdStart(messages=iter([AIMessage(content="x"), AIMessage(content="y")]))
    pipeline = build_pipeline(Settings(), embeddings=WordHashEmbeddings(), llm=llm)
    pipeline.warm_up()
    assert llm.calls == 2
    # ~200 calibration tokens in ~0.05 s; counting the 1 s first call would give >= 5 s for 1,000 tokens
    assert pipeline.read_rate.estimate(1000) < 2.0


def test_warm_up_opens_the_index_and_reads_its_areas_so_the_first_question_does_not_pay_for_it():
    llm = GenericFakeChatModel(messages=iter([AIMessage(content="x"), AIMessage(content="y")]))
    pipeline = build_pipeline(Settings(), embeddings=WordHashEmbeddings(), llm=llm)
    searched = []
    retrieve = pipeline.retrieve
    pipeline.retrieve = lambda *a, **k: searched.append(a) or retrieve(*a, **k)
    pipeline.warm_up()
    assert searched == []  # nothing indexed yet: nothing to open
    pipeline.ensure_ingested()
    pipeline._llm = GenericFakeChatModel(messages=iter([AIMessage(content="x"), AIMessage(content="y")]))
    pipeline.warm_up()
    assert searched == [("warm up",)] and pipeline._areas is not None
