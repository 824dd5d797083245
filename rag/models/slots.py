"""A first-come, first-served gate in front of the model: `slots` answers at a time, a bounded queue.

The embedded model writes one answer at a time, so with several users the others wait. Gradio's own queue
would hold them silently; this gate lets each waiting session see how many questions are ahead of it,
and tells a user plainly that the app is busy when the queue is full, instead of a generic error.
"""

from __future__ import annotations

import itertools
import threading
from collections import deque


class Ticket:
    """A place in the gate's queue; `release()` it when done (also when it never got a slot)."""

    def __init__(self, gate: "FairGate", number: int):
        self.gate, self.number, self.admitted, self.released = gate, number, False, False

    def ahead(self) -> int:
        """Questions waiting in front of this one (0 once admitted)."""
        with self.gate._cond:
            if self.admitted:
                return 0
            return list(self.gate._waiting).index(self)

    def wait(self, timeout: float) -> bool:
        """Block up to `timeout` seconds for a slot; True once admitted."""
        with self.gate._cond:
            self.gate._cond.wait_for(lambda: self.admitted, timeout)
            return self.admitted

    def release(self) -> None:
        with self.gate._cond:
            if self.released:
                return
            self.released = True
            if self.admitted:
                self.gate._busy -= 1
            else:
                self.gate._waiting.remove(self)
            self.gate._admit()


class FairGate:
    def __init__(self, slots: int = 1, max_waiting: int = 16):
        self.slots, self.max_waiting = slots, max_waiting
        self._cond = threading.Condition()
        self._waiting: deque[Ticket] = deque()
        self._busy = 0
        self._numbers = itertools.count(1)

    def enter(self) -> Ticket | None:
        """A ticket (admitted at once if a slot is free), or None when the queue is full."""
        with self._cond:
            if self._busy >= self.slots and len(self._waiting) >= self.max_waiting:
                return None
            ticket = Ticket(self, next(self._numbers))
            self._waiting.append(ticket)
            self._admit()
            return ticket

    def _admit(self) -> None:  # caller holds the lock: the oldest waiting tickets get the free slots
        while self._waiting and self._busy < self.slots:
            ticket = self._waiting.popleft()
            ticket.admitted = True
            self._busy += 1
        self._cond.notify_all()

    def load(self) -> tuple[int, int]:
        """(answers being written, questions waiting)."""
        with self._cond:
            return self._busy, len(self._waiting)
