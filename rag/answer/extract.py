"""The quoted answer: the abstract sentences that best answer the question, each cited, shown at once.

Built in code before the model writes (a CPU model needs tens of seconds to read its prompt), so a cited
answer is on screen within a second of the sources. Every line is a verbatim sentence of the cited paper's
abstract: supported by construction. The model's synthesis follows it.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass

from rag.retrieve.passages import Terms, ranked_sentences
from rag.retrieve.search import Source

MAX_QUOTED = 3  # papers quoted (the best-ranked ones that hold the question's words)
MAX_QUOTE_WORDS = 45  # a longer sentence is cut here, marked with "…"
MIN_HELD = 0.2  # a quoted sentence holds at least this share of the question's idf mass
# A sentence about where the code or data lives answers no question about the research: never quoted.
BOILERPLATE = re.compile(r"https?://|github\.com|\b(code|data|models?|datasets?|implementation|materials?|checkpoints?)\b"
                         r"[^.]{0,80}\b(is|are|will be|has been|have been)\s+(made\s+)?(publicly\s+|freely\s+|openly\s+)?"
                         r"(available|released|open[- ]sourced)", re.IGNORECASE)
HEADER_EN = "From the abstracts:"
HEADER_ZH = "摘要原文："


@dataclass(frozen=True)
class Quote:
    n: int  # the source it is quoted from
    sentence: str  # verbatim (possibly cut, with "…")


@dataclass(frozen=True)
class Extract:
    quotes: tuple[Quote, ...]
    chinese: bool = False

    def __bool__(self) -> bool:
        return bool(self.quotes)

    def markdown(self) -> str:
        if not self.quotes:
            return ""
        lines = [f"- “{q.sentence}” [{q.n}]" for q in self.quotes]
        return "\n".join([HEADER_ZH if self.chinese else HEADER_EN, *lines])

    @property
    def cited(self) -> list[int]:
        return list(dict.fromkeys(q.n for q in self.quotes))


def _cut(sentence: str) -> str:
    words = sentence.split()
    return sentence if len(words) <= MAX_QUOTE_WORDS else " ".join(words[:MAX_QUOTE_WORDS]) + " …"


def quote(sources: Sequence[Source], terms: Terms, chinese: bool = False, limit: int = MAX_QUOTED) -> Extract:
    """The best sentence of each of the best-ranked papers, when it holds at least MIN_HELD of the question's
    words by weight (none for a paper whose abstract barely touches the question: better no quote than an
    off-topic one)."""
    quotes = []
    for source in sources:
        if source.review_id:  # reviews are quoted by the model as a reviewer's words, not here
            continue
        ranked = [r for r in ranked_sentences(source.paper.abstract, terms) if not BOILERPLATE.search(r[2])]
        if ranked and terms.held(ranked[0][2]) >= MIN_HELD:
            quotes.append(Quote(source.n, _cut(ranked[0][2])))
        if len(quotes) == limit:
            break
    return Extract(tuple(quotes), chinese)
