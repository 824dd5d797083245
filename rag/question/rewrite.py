"""Query rewriting: what to search for, given the routed question and the conversation so far.

A first English question is searched as it is (no model call, no delay). A follow-up ("how does the
second one differ?") is rewritten by the chat model into one standalone English query, resolving references
against the papers shown in earlier turns; a question in another language on its own is translated by it. When the
model is unavailable the question falls back to plain code (the previous question prepended to a
follow-up; a Chinese question's glossary terms), so retrieval never fails because rewriting did.
"""

from __future__ import annotations

import logging
import re
from collections.abc import Sequence
from dataclasses import dataclass

from langchain_core.language_models import BaseChatModel
from langchain_core.messages import HumanMessage, SystemMessage

from rag.prompts import (COMPARE_DESCRIBED, REWRITE_HISTORY_TEMPLATE, REWRITE_SYSTEM_PROMPT, REWRITE_TEMPLATE,
                         TRANSLATE_DESCRIPTION, TRANSLATE_QUESTION)
from rag.question.router import Intent, Kind, descriptions, without_fate
from rag.question.turns import Exchange, referred
from rag.text import english_only, language, states_absence

log = logging.getLogger(__name__)

MAX_HISTORY_TURNS = 3
MAX_QUERY_CHARS = 400  # a rewrite longer than this is the model rambling; keep its start


@dataclass(frozen=True)
class Query:
    text: str
    rewritten: bool  # True when the chat model wrote it
    reason: str = ""  # why it was (or was not) rewritten, for the eval and the logs
    also: tuple[str, ...] = ()  # further queries searched and fused with `text` (see rewrite_query)
    referred: tuple[str, ...] = ()  # ids of the earlier turn's papers a follow-up points back to, fused in too
    described: tuple[str, ...] = ()  # a comparison's descriptions of its papers, each searched on its own

    @property
    def all(self) -> tuple[str, ...]:
        return (self.text, *self.also)


def fallback_query(intent: Intent, history: Sequence[Exchange]) -> str:
    """What to search without the model: a follow-up together with the question before it (so "its" finds the
    same papers), a foreign question by its glossary terms, anything else as written."""
    text = intent.english or intent.question
    if history and intent.followup:
        return f"{history[-1].question} {text}"
    return text


def referred_papers(intent: Intent, history: Sequence[Exchange]) -> tuple[str, ...]:
    """The papers shown in the turn before, for a question that refers back to them (rag.question.turns)."""
    return referred(intent.question, history) if intent.followup else ()


def described_papers(intent: Intent, english: str) -> tuple[str, ...]:
    """A comparison's descriptions of its papers ("the paper that X ... the one that Y"), read from the English
    query (a foreign question's translation): each is searched on its own (rag.retrieve.search)."""
    if intent.kind is not Kind.COMPARE or intent.papers or language(english) != "en":
        return ()
    return descriptions(english)


def rewrite_messages(question: str, history: Sequence[Exchange]) -> list:
    if not history:  # a foreign question on its own: a translation (see TRANSLATE_QUESTION)
        return [HumanMessage(TRANSLATE_QUESTION.format(question=question))]
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
    """The model's standalone English query (its translation when there is no history), or "" when unusable:
    not English, or an answer instead of a query ("The retrieved papers do not cover this question.")."""
    return _usable(str(llm.invoke(rewrite_messages(question, history)).content))


def _translated(llm: BaseChatModel, phrase: str) -> str:
    """One description of a paper in English, or "" when the reply is unusable."""
    return _usable(str(llm.invoke([HumanMessage(TRANSLATE_DESCRIPTION.format(text=phrase))]).content)).rstrip(" .?")


def _usable(reply: str) -> str:
    """The reply's first line as English (a few untranslated characters dropped), or "" when it is not English or
    is an answer rather than a query."""
    text = english_only(clean_query(reply))
    return text if text and not states_absence(text) else ""


def _translate(llm: BaseChatModel, intent: Intent) -> str:
    """A foreign question in English: a comparison of two described papers by its descriptions, one by one, set in
    COMPARE_DESCRIBED (translated whole, the small model merged the two or dropped one: benchmarks/README.md); any
    other question (or a description the model could not translate) whole."""
    if len(intent.described) == 2:
        one = _translated(llm, intent.described[0])
        other = _translated(llm, intent.described[1]) if one else ""  # no second call when the first failed
        if one and other:
            return COMPARE_DESCRIBED.format(one=_lowered(one), other=_lowered(other))
    return _ask(llm, intent.question, [])


def _lowered(phrase: str) -> str:
    """"Proposes a method" -> "proposes a method" and "A method" -> "a method", to follow "the paper that"; "LLMs ..."
    stays."""
    first = phrase.split(" ", 1)[0]
    return phrase[:1].lower() + phrase[1:] if len(first) == 1 or first[1:].islower() else phrase


def rewrite_query(intent: Intent, history: Sequence[Exchange], llm: BaseChatModel | None) -> Query:
    """The query (or queries) to search for a routed question (see the module docstring).

    A message after earlier turns is searched as the model rewrote it with the history (resolves "the second
    one"), fused with more queries: when it does not refer back, the message on its own (translated if need be),
    because a small model sometimes carries the old topic into a question that starts a new one; when it refers
    back after an English turn, the message with the question before it. A referring message alone ("what about
    its limitations?") found papers about limitations and pushed the paper meant out of the top 5.
    Measured on the generated follow-ups: benchmarks/README.md.
    """
    history = list(history)
    reason = intent.rewrite
    fallback = fallback_query(intent, history)
    kept = referred_papers(intent, history)

    def query(text: str, rewritten: bool, why: str, also: tuple[str, ...] = ()) -> Query:
        text = without_fate(text)  # a translation says "rejected papers" too: the status filter holds it
        return Query(text, rewritten, why, also, kept, described_papers(intent, text))

    if not reason or llm is None:
        return query(fallback, False, reason and "no model")
    try:
        text = _ask(llm, intent.question, history) if history else _translate(llm, intent)
        own = ""
        if reason == "followup" and not intent.followup:
            own = _translate(llm, intent) if intent.foreign else intent.question
    except Exception as exc:  # the answer step reports model failures; here we just search without it
        log.warning("query rewrite failed (%s); searching the question as written", exc.__class__.__name__)
        return query(fallback, False, f"{reason}: model failed")
    if not text:
        return query(fallback, False, f"{reason}: unusable rewrite")
    # the follow-up with the question before it, as without a model: it finds that turn's papers again, so "its
    # limitations" still reach the paper the user meant when the model resolved "it" to another one
    carried = fallback_query(intent, history) if intent.followup and language(history[-1].question) == "en" else ""
    return query(text, True, reason, tuple(dict.fromkeys(q for q in (own, carried) if q and q != text)))
