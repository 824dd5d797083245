"""The first-come, first-served gate and the queue messages a waiting user sees."""

import threading
import time

from ui.app import BUSY, in_turn
from rag.models.slots import FairGate


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


def test_a_waiting_turn_shows_its_place_then_runs_and_frees_its_slot():
    gate = FairGate(slots=1, max_waiting=4)
    holder = gate.enter()
    steps = []

    def run():
        yield [{"role": "assistant", "content": "answered"}], ["turn"]

    turn = in_turn(gate, "my question", [], [], run)
    steps.append(next(turn))  # waiting: one ahead (the holder)
    assert "1 question(s) ahead" in steps[0][0][-1]["content"] and steps[0][0][0]["content"] == "my question"
    holder.release()
    steps.extend(turn)
    assert steps[-1] == ([{"role": "assistant", "content": "answered"}], ["turn"])
    assert gate.load() == (0, 0)


def test_a_full_gate_answers_busy_at_once_without_running():
    gate = FairGate(slots=1, max_waiting=0)
    holder = gate.enter()
    ran = []
    steps = list(in_turn(gate, "q", [], [], lambda: ran.append(1) or iter(())))
    assert ran == [] and steps[-1][0][-1]["content"] == BUSY.format(waiting=0)
    holder.release()


def test_stop_while_waiting_leaves_the_queue():
    gate = FairGate(slots=1, max_waiting=4)
    holder = gate.enter()
    steps = list(in_turn(gate, "q", [{"role": "user", "content": "old"}], [], lambda: iter(()), should_stop=lambda: True))
    assert steps[-1] == ([{"role": "user", "content": "old"}], [])
    assert gate.load() == (1, 0)
    holder.release()
