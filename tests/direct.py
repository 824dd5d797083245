"""Reference computations for the aggregate tests and benchmarks, written apart from rag/answer/aggregate.py (plain
string walking, no regular expressions): the same definitions, reached another way."""

from __future__ import annotations

SEPARATORS = set(" \t\n\r\f\v-‐–")


def _word_char(c: str) -> bool:
    return c.isalnum() or c == "_"


def _collapse(text: str) -> str:
    """Lowercase, with every run of spaces and hyphens made one space."""
    out, gap = [], False
    for c in text.lower():
        if c in SEPARATORS or c.isspace():
            gap = True
            continue
        if gap and out:
            out.append(" ")
        gap = False
        out.append(c)
    return "".join(out)


def phrase_in(text: str, phrase: str) -> bool:
    """Whether `phrase` occurs in `text` as whole words: case-insensitive, any run of spaces/hyphens (or
    none) between its words, an optional plural "s"/"es" after it."""
    words = _collapse(phrase).split(" ")
    t = _collapse(text)
    for start in range(len(t)):
        if not t.startswith(words[0], start) or (start and _word_char(t[start - 1])):
            continue
        pos = start + len(words[0])
        for word in words[1:]:
            if t.startswith(" " + word, pos):
                pos += 1 + len(word)
            elif t.startswith(word, pos):
                pos += len(word)
            else:
                break
        else:
            for ending in ("es", "s", ""):
                if t.startswith(ending, pos) and (pos + len(ending) == len(t) or not _word_char(t[pos + len(ending)])):
                    return True
    return False
