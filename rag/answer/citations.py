"""Citations: map every `[n]` in an answer back to a retrieved paper, in plain code.

Markers that name a paper that was not retrieved are removed, and the reference list is built only
from what the cleaned answer cites. `CitationFilter` works on a stream, so what the user sees while
the answer is written is already clean.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import asdict, dataclass

from rag.retrieve.search import Source

MAX_MARKER = 240  # longer bracketed text is prose, not a citation (a title-and-id citation fits)
_PART_SPLIT = re.compile(r"\s*[,;]\s*|\]\s*\[|\s+and\s+")
_NUMBER = re.compile(r"(?:sources?|papers?|refs?\.?|#)?\s*(\d{1,3})(?:\s*[-–]\s*(\d{1,3}))?", re.IGNORECASE)
_OPENREVIEW_ID = re.compile(r"[A-Za-z0-9_-]{8,14}")


@dataclass(frozen=True)
class Citation:
    n: int
    id: str
    title: str
    status: str
    url: str
    review_id: str = ""  # a citation of one review of the paper, not of the paper's abstract

    def to_json(self) -> dict:
        return asdict(self)


class CitationFilter:
    """Feed answer text in pieces; get back the same text with only valid, canonical `[n]` markers."""

    def __init__(self, sources: Sequence[Source]):
        self._by_n = {s.n: s for s in sources}
        self._by_id = {s.paper.id: s.n for s in sources}
        self._pending = ""
        self.cited: list[int] = []  # source numbers, in order of first citation
        self.dropped: list[str] = []  # markers removed because they named no retrieved paper

    def feed(self, delta: str) -> str:
        self._pending += delta
        return self._drain(final=False)

    def finish(self) -> str:
        return self._drain(final=True)

    def _resolve(self, content: str) -> list[int] | None:
        """Source numbers named by a marker's content (0 for unknown ones); None if not a citation."""
        named = [n for pid, n in self._by_id.items() if re.search(rf"\b{re.escape(pid)}\b", content)]
        if named and len(content) > 16:  # "[Title (Poster, id RlPVSeKjoc)]": the model copied the source header
            return named
        numbers: list[int] = []
        for part in _PART_SPLIT.split(content.strip()):
            match = _NUMBER.fullmatch(part)
            if match:
                low = int(match.group(1))
                high = int(match.group(2) or low)
                if high < low or high - low > 20:
                    return None
                numbers.extend(range(low, high + 1))
            elif part in self._by_id:
                numbers.append(self._by_id[part])
            elif _OPENREVIEW_ID.fullmatch(part) and any(c.isdigit() for c in part) and any(c.isupper() for c in part):
                numbers.append(0)  # looks like a paper id, but not one that was retrieved
            else:
                return None
        return numbers or None

    def _drain(self, final: bool) -> str:
        out: list[str] = []
        text = self._pending
        while True:
            i = text.find("[")
            if i < 0:
                keep = text if final else text.rstrip(" ")  # hold trailing spaces: a dropped marker may follow
                out.append(keep)
                text = text[len(keep):]
                break
            before, rest = text[:i], text[i:]
            j = rest.find("]")
            if j < 0:
                if final or len(rest) > MAX_MARKER or "\n" in rest:
                    out.append(before + "[")
                    text = rest[1:]
                    continue
                keep = before.rstrip(" ")
                out.append(keep)
                text = before[len(keep):] + rest
                break
            numbers = self._resolve(rest[1:j])
            if numbers is None:
                out.append(before + rest[: j + 1])
            else:
                valid = [n for n in numbers if n in self._by_n]
                if len(valid) < len(numbers):
                    self.dropped.append(rest[: j + 1])
                if valid:
                    out.append(before + "".join(f"[{n}]" for n in dict.fromkeys(valid)))
                    self.cited.extend(n for n in valid if n not in self.cited)
                else:
                    out.append(before.rstrip(" "))
            text = rest[j + 1:]
        self._pending = text
        return "".join(out)

    def citations(self) -> list[Citation]:
        return [to_citation(self._by_n[n]) for n in self.cited]


def to_citation(source: Source) -> Citation:
    p = source.paper
    return Citation(n=source.n, id=p.id, title=p.title, status=p.status, url=source.link, review_id=source.review_id)


def clean_citations(text: str, sources: Sequence[Source]) -> tuple[str, list[Citation], list[str]]:
    """Whole-text version of `CitationFilter`: (clean text, citations in order, dropped markers)."""
    f = CitationFilter(sources)
    clean = f.feed(text) + f.finish()
    return clean, f.citations(), f.dropped
