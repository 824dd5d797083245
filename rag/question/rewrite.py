"""Stage 3a, query rewriting: what to search for, given the question and the conversation so far.

A first English question is searched as it is (no model call, no delay). A follow-up ("how does the
second one differ?") or a question in another language is rewritten by the chat model into one
standalone English query, resolving references against the papers shown in earlier turns. When the
model is unavailable the question falls back to the plain heuristic (the previous question prepended
to a follow-up), so retrieval never fails because rewriting did.
"""

from __future__ import annotations

import logging
import re
from collections.abc import Sequence
from dataclasses import dataclass

from langchain_core.language_models import BaseChatModel
from langchain_core.messages import HumanMessage, SystemMessage

from rag.answer.prompts import REWRITE_HISTORY_TEMPLATE, REWRITE_SYSTEM_PROMPT, REWRITE_TEMPLATE
from rag.retrieve.search import search_query

log = logging.getLogger(__name__)

MAX_HISTORY_TURNS = 3
MAX_QUERY_CHARS = 400  # a rewrite longer than this is the model rambling; keep its start
_NON_LATIN = re.compile(r"[^\x00-\u024f\u2000-\u206f\u2190-\u22ff]")  # anything beyond Latin, punctuation, math


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


@dataclass(frozen=True)
class Query:
    text: str
    rewritten: bool  # True when the chat model wrote it
    reason: str = ""  # why it was (or was not) rewritten, for the eval and the logs
    also: tuple[str, ...] = ()  # further queries searched and fused with `text` (see rewrite_query)

    @property
    def all(self) -> tuple[str, ...]:
        return (self.text, *self.also)


def is_foreign(question: str) -> bool:
    """True for a question written (mostly) outside the Latin script, e.g. Chinese."""
    letters = [c for c in question if c.isalpha()]
    return bool(letters) and sum(bool(_NON_LATIN.match(c)) for c in letters) >= max(2, len(letters) // 5)


def needs_rewrite(question: str, history: Sequence[Exchange]) -> str:
    """The reason a model should rewrite this question, or "" when it is searched as it is."""
    if history:
        return "followup"
    if is_foreign(question):
        return "translate"
    return ""


def rewrite_messages(question: str, history: Sequence[Exchange]) -> list:
    earlier = "".join(
        REWRITE_HISTORY_TEMPLATE.format(
            n=n, question=turn.question,
            papers="; ".join(f"[{i}] {title}" for i, title in enumerate(turn.papers, start=1)) or "none")
        for n, turn in enumerate(list(history)[-MAX_HISTORY_TURNS:], start=1)
    )
    return [SystemMessage(REWRITE_SYSTEM_PROMPT), HumanMessage(REWRITE_TEMPLATE.format(history=earlier, question=question))]


def clean_query(text: str) -> str:
    """The first line of the model's reply, without quotes or a 'Query:' label."""
    line = next((part.strip() for part in text.strip().splitlines() if part.strip()), "")
    line = re.sub(r"^(standalone )?(english )?(search )?query\s*:\s*", "", line, flags=re.IGNORECASE)
    return line.strip(" \"'`“”")[:MAX_QUERY_CHARS]


def _ask(llm: BaseChatModel, question: str, history: Sequence[Exchange]) -> str:
    """The model's standalone English query, or "" when its reply is unusable."""
    text = clean_query(str(llm.invoke(rewrite_messages(question, history)).content))
    return "" if is_foreign(text) else text


def rewrite_query(question: str, history: Sequence[Exchange], llm: BaseChatModel | None) -> Query:
    """The query (or queries) to search for `question` (see the module docstring).

    A follow-up is searched twice and the results fused: once as the model rewrote it with the
    history (resolves "the second one"), and once as the message says on its own (translated if need
    be), because a small model sometimes carries the old topic into a question that starts a new one.
    Measured on the dev follow-ups: benchmarks/README.md.
    """
    reason = needs_rewrite(question, history)
    fallback = search_query(question, [(t.question, t.answer) for t in history])
    if not reason or llm is None:
        return Query(fallback, False, reason and "no model")
    try:
        text = _ask(llm, question, history)
        own = ""
        if reason == "followup":
            own = _ask(llm, question, []) if is_foreign(question) else question
    except Exception as exc:  # the answer step reports model failures; here we just search without it
        log.warning("query rewrite failed (%s); searching the question as written", exc.__class__.__name__)
        return Query(fallback, False, f"{reason}: model failed")
    if not text:
        return Query(fallback, False, f"{reason}: unusable rewrite")
    return Query(text, True, reason, tuple(q for q in (own,) if q and q != text))
