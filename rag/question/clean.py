"""The question: what the user typed -> a clean question, or a QuestionError saying what to fix.

Runs before anything else, so a bad question costs no search and no model call, and the prompt stays
bounded whatever was pasted: control characters (and bidi overrides, which can hide text) are removed,
whitespace is collapsed, and questions longer than the limit are refused rather than cut silently.
"""

from __future__ import annotations

import re
import unicodedata

from rag.errors import QuestionError

# C0/C1 controls except tab and newline, DEL, bidi embeddings/overrides/isolates, zero-width spaces, BOM.
_CONTROL = re.compile(r"[\x00-\x08\x0b-\x1f\x7f-\x9f\u202a-\u202e\u2066-\u2069\u200b\u2060\ufeff]")
_SPACE = re.compile(r"\s+")


def _has_words(text: str) -> bool:
    """A letter or a digit in any script (emoji and punctuation are neither)."""
    return any(unicodedata.category(c)[0] in "LN" for c in text)


def clean_question(text: str | None, max_chars: int) -> str:
    """The question to search and answer, or QuestionError when there is nothing usable in it."""
    cleaned = _SPACE.sub(" ", _CONTROL.sub("", text or "")).strip()
    if not cleaned:
        raise QuestionError("Type a question first, e.g. “Which papers drop positional embeddings to extend context?”")
    if len(cleaned) > max_chars:
        raise QuestionError(
            f"The question is {len(cleaned):,} characters long; the limit is {max_chars:,}. "
            "Ask it in fewer words (the papers are searched by meaning, so a sentence or two is enough)."
        )
    if not _has_words(cleaned):
        raise QuestionError("The question has no words to search for (only symbols or emoji). Ask it in words.")
    return cleaned
