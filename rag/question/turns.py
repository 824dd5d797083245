"""The conversation so far: one `Exchange` per earlier turn, as the router, the query rewrite and the
answer prompt read it, and which of its papers a follow-up points back to (`referred`)."""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass


@dataclass(frozen=True)
class Exchange:
    """One earlier turn of a conversation: the question, the answer text, the papers shown (titles, in
    the order they were numbered) and their ids in the same order. Rewriting reads the titles; the answer
    prompt reads the first three; a follow-up's search keeps the ids (`referred`)."""

    question: str
    answer: str = ""
    papers: tuple[str, ...] = ()
    ids: tuple[str, ...] = ()


HistoryItem = Exchange | tuple[str, str]


def exchanges(history: Sequence[HistoryItem]) -> list[Exchange]:
    """Accepts plain (question, answer) pairs too."""
    return [item if isinstance(item, Exchange) else Exchange(item[0], item[1]) for item in history]


# "the second one", "the 2nd paper", "[2]", "第二篇": which of the papers shown (1-based; -1 is the last)
_ORDINALS = {"first": 1, "1st": 1, "second": 2, "2nd": 2, "third": 3, "3rd": 3, "fourth": 4, "4th": 4,
             "last": -1, "latter": -1, "former": 1, "一": 1, "二": 2, "三": 3, "四": 4, "最后": -1}
ORDINAL = re.compile(r"\bthe (first|1st|second|2nd|third|3rd|fourth|4th|last|latter|former)\b"
                     r"|\[([1-9])\]|第(一|二|三|四)(?:篇|个|种|项)|(最后)(?:一)?(?:篇|个|种|项)", re.IGNORECASE)


def referred(question: str, history: Sequence[Exchange]) -> tuple[str, ...]:
    """The papers of the turn before that a follow-up points back to, most likely first: the ones it names by
    position ("the second one", "[2]", "第二篇") in that order, then the rest as they were shown. Its search
    fuses them in as one more ranked list (rag.retrieve.search), so "what are its limitations?" keeps the paper
    the user saw even when the model's rewrite named another. Empty without an earlier turn's ids."""
    if not history or not history[-1].ids:
        return ()
    shown = history[-1].ids
    named = []
    for match in ORDINAL.finditer(question):
        word = next(g for g in match.groups() if g)
        position = int(word) if word.isdigit() else _ORDINALS[word.lower()]
        index = position - 1 if position > 0 else position
        if -len(shown) <= index < len(shown):
            named.append(shown[index])
    return tuple(dict.fromkeys([*named, *shown]))
