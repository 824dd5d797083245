"""The conversation so far: one `Exchange` per earlier turn, as the router, the query rewrite and the
answer prompt read it."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass


@dataclass(frozen=True)
class Exchange:
    """One earlier turn of a conversation: the question, the answer text, the papers shown (titles, in
    the order they were numbered). Rewriting reads the papers; the answer prompt reads all three."""

    question: str
    answer: str = ""
    papers: tuple[str, ...] = ()


HistoryItem = Exchange | tuple[str, str]


def exchanges(history: Sequence[HistoryItem]) -> list[Exchange]:
    """Accepts plain (question, answer) pairs too."""
    return [item if isinstance(item, Exchange) else Exchange(item[0], item[1]) for item in history]
