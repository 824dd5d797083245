"""A Chinese question's technical terms in English, without a model call: a longest-match look-up in a
glossary of general machine-learning vocabulary (glossary_zh.tsv). The model's translation is better and
comes later (rag.question.rewrite); this one is instant, so the first search and the counting of
"有多少篇关于KV缓存的论文？" need not wait for it.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import lru_cache
from importlib import resources

from rag.text import has_cjk


@lru_cache(maxsize=1)
def _rows() -> tuple[tuple[str, str], ...]:
    """(Chinese, English) as glossary_zh.tsv lists them."""
    text = resources.files("rag.question").joinpath("glossary_zh.tsv").read_text(encoding="utf-8")
    return tuple((zh.strip(), en.strip()) for zh, en in (line.split("\t") for line in text.splitlines()
                                                         if line.strip() and not line.startswith("#")))


@lru_cache(maxsize=1)
def _table() -> tuple[dict[str, str], int]:
    terms = {zh.lower(): en for zh, en in _rows()}
    return terms, max(map(len, terms))


@dataclass(frozen=True)
class Glossed:
    english: str  # the question with every known Chinese term replaced by its English one (other Chinese left out)
    terms: tuple[str, ...]  # the English terms found, in order
    unknown: str  # the Chinese characters no term covered (function words, or terms the glossary lacks)


def gloss(text: str) -> Glossed:
    """Replace Chinese terms by English ones, longest first ("KV缓存压缩" -> "KV cache compression")."""
    table, longest = _table()
    lowered = text.lower()
    out: list[str] = []
    terms: list[str] = []
    unknown: list[str] = []
    i = 0
    while i < len(text):
        for size in range(min(longest, len(text) - i), 0, -1):
            english = table.get(lowered[i:i + size])
            if english and has_cjk(lowered[i:i + size]):
                out.append(f" {english} ")
                terms.append(english)
                i += size
                break
        else:
            char = text[i]
            if has_cjk(char):
                unknown.append(char)
                out.append(" ")
            else:
                out.append(char)
            i += 1
    return Glossed(" ".join("".join(out).split()), tuple(terms), "".join(unknown))


@lru_cache(maxsize=1)
def _chinese() -> dict[str, str]:
    reverse: dict[str, str] = {}
    for zh, en in _rows():
        reverse.setdefault(en.lower(), zh)  # the first Chinese term listed for an English one
    return reverse


def chinese_of(english: str) -> str | None:
    """The glossary's Chinese for a whole English term ("contrastive learning" -> "对比学习"), or None."""
    return _chinese().get(english.strip().lower())
