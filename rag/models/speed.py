"""How fast this machine's model reads a prompt, measured, so a waiting user is told a true estimate.

Every answer's time to its first token is measured against the prompt's size (cl100k tokens: the same unit
whatever the model's own tokenizer), and the rate is kept as a running average; `estimate` turns the next
prompt's size into seconds. The first figure comes from a short prompt read when the model starts.
"""

from __future__ import annotations

import threading

SMOOTHING = 0.5  # weight of the newest measurement in the running average


class ReadRate:
    """Prompt tokens read per second, as measured on this machine (None until the first measurement)."""

    def __init__(self) -> None:
        self.tokens_per_s: float | None = None
        self._lock = threading.Lock()

    def observe(self, tokens: int, seconds: float) -> None:
        """One prompt of `tokens` took `seconds` to its first generated token."""
        if tokens <= 0 or seconds <= 0:
            return
        rate = tokens / seconds
        with self._lock:
            self.tokens_per_s = rate if self.tokens_per_s is None else (
                SMOOTHING * rate + (1 - SMOOTHING) * self.tokens_per_s)

    def estimate(self, tokens: int) -> float | None:
        """Seconds to read a prompt of `tokens`, or None before anything was measured."""
        with self._lock:
            return tokens / self.tokens_per_s if self.tokens_per_s else None
