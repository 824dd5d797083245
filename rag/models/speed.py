"""How fast this machine's model reads a prompt, measured, so a waiting user is told a true estimate.

Every answer's time to its first token is measured against the prompt's size (cl100k tokens: the same unit
whatever the model's own tokenizer), and the rate is the (lower) median of the last few; `estimate` turns the next
prompt's size into seconds. The first figure comes from a short prompt read when the model starts. A median,
not an average: a prompt the server had cached (the same question again) is read in a blink, and one such
answer must not make the next user's estimate 100 times too short.
"""

from __future__ import annotations

import statistics
import threading
from collections import deque

KEPT = 5  # the last measurements the median is taken over


class ReadRate:
    """Prompt tokens read per second, as measured on this machine (None until the first measurement)."""

    def __init__(self) -> None:
        self._rates: deque[float] = deque(maxlen=KEPT)
        self._lock = threading.Lock()

    @property
    def tokens_per_s(self) -> float | None:
        with self._lock:
            return statistics.median_low(self._rates) if self._rates else None  # of two, the slower

    def observe(self, tokens: int, seconds: float) -> None:
        """One prompt of `tokens` took `seconds` to its first generated token."""
        if tokens <= 0 or seconds <= 0:
            return
        with self._lock:
            self._rates.append(tokens / seconds)

    def estimate(self, tokens: int) -> float | None:
        """Seconds to read a prompt of `tokens`, or None before anything was measured."""
        rate = self.tokens_per_s
        return tokens / rate if rate else None
