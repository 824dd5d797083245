"""The first-come, first-served gate and the queue messages a waiting user sees."""

import threading
import time

from rag.models.slots import FairGate
from rag.pipeline import DoneEvent, QuoteEvent, SourcesEvent, TokenEvent, WaitEvent, build_pipeline
from rag.settings import Settings
from tests.fakes import WordHashEmbeddings, fake_chat


def test_slots_are_given_in_arrival_order_and_a_full_queue_says_so():
    gate = FairGate(slots=1, max_waiting=2)
    first, second, third = gate.enter(), gate.enter(), gate.enter()
    assert first.admitted and not second.admitted and not third.admitted
    assert (second.ahead(), third.ahead()) == (0, 1)
    assert gate.enter() is None  # 1 answering + 2 waiting: full
    first.release()
    assert second.admitted and not third.admitted and third.ahead() == 0
    third.release()  # leaving the queue before a slot frees a place in it
    assert gate.load() == (1, 0)
    second.release()
    second.release()  # twice is harmless
    assert gate.load() == (0, 0)


def test_many_threads_are_served_one_at_a_time_in_order():
    gate, order, running, peak = FairGate(slots=1, max_waiting=10), [], [0], [0]
    lock = threading.Lock()
    tickets = [gate.enter() for _ in range(8)]  # taken in this order

    def work(i):
        t = tickets[i]
        assert t.wait(10)
        with lock:
            running[0] += 1
            peak[0] = max(peak[0], running[0])
            order.append(i)
        time.sleep(0.01)
        with lock:
            running[0] -= 1
        t.release()

    threads = [threading.Thread(target=work, args=(i,)) for i in reversed(range(8))]  # started out of order
    for t in threads:
        t.start()
    for t in threads:
        t.join(10)
    assert order == list(range(8)) and peak[0] == 1


QUESTION = "Which papers drop positional embeddings to extend context?"


def pipeline_with(slots=1, waiting=4, reply="DroPE drops positional embeddings [1]."):
    p = build_pipeline(Settings(ui={"answer_slots": slots, "max_waiting": waiting}), embeddings=WordHashEmbeddings(),
                       llm=fake_chat(reply))
    p.ensure_ingested()
    return p


def test_sources_and_quotes_come_before_the_queue_then_the_turn_waits_its_place():
    pipeline = pipeline_with()
    holder = pipeline.slots.enter()  # another user's answer is being written
    stream = pipeline.stream(QUESTION)
    events = [next(stream) for _ in range(3)]
    assert isinstance(events[0], SourcesEvent) and isinstance(events[1], QuoteEvent) and "[1]" in events[1].text
    assert events[2] == WaitEvent(ahead=1)  # queued behind the holder, and told so
    holder.release()
    rest = list(stream)
    assert isinstance(rest[-1], DoneEvent) and any(isinstance(e, TokenEvent) for e in rest)
    assert pipeline.slots.load() == (0, 0)  # the slot was given back


def test_a_full_queue_answers_with_the_quotes_and_says_so_without_the_model():
    pipeline = pipeline_with(waiting=0)
    holder = pipeline.slots.enter()
    events = list(pipeline.stream(QUESTION))
    answer = events[-1].answer
    assert not any(isinstance(e, TokenEvent) for e in events)
    assert answer.text.startswith("From the abstracts:") and "PaperChat is busy" in answer.text
    assert answer.citations and not answer.refused
    holder.release()


def test_stop_while_waiting_leaves_the_queue():
    pipeline = pipeline_with()
    holder = pipeline.slots.enter()
    stream = pipeline.stream(QUESTION)
    while not isinstance(next(stream), WaitEvent):
        pass
    assert pipeline.slots.load() == (1, 1)
    stream.close()  # the user pressed Stop
    assert pipeline.slots.load() == (1, 0)
    holder.release()


def test_a_chinese_question_is_quoted_from_its_first_sources_while_the_model_translates():
    pipeline = build_pipeline(Settings(), embeddings=WordHashEmbeddings(),
                              llm=fake_chat("Dropping positional embeddings extends context", "DroPE drops them [1]."))
    pipeline.ensure_ingested()
    holder = pipeline.slots.enter()  # the model is busy: the translation must wait, the quotes need not
    stream = pipeline.stream("去掉位置编码能扩展上下文吗？")
    events = [next(stream) for _ in range(3)]
    assert isinstance(events[0], SourcesEvent) and not events[0].final  # searched by the glossary's terms
    assert isinstance(events[1], QuoteEvent) and "[1]" in events[1].text and events[1].text.startswith("摘要原文")
    assert events[2] == WaitEvent(ahead=1)
    holder.release()
    rest = list(stream)
    assert any(isinstance(e, SourcesEvent) and e.final for e in rest)  # refined by the model's English query
    assert isinstance(rest[-1], DoneEvent) and rest[-1].answer.citations
