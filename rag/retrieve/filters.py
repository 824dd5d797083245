"""The one filter definition: which papers a question may use (status, primary area, keywords, paper ids).

Each backend derives its form from this one value: Chroma's `where` (the vector search), SQL for the
lexical index, and a plain predicate (counting in code, and the eval's check of what was returned).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, replace

from rag.corpus.openreview import NOT_ACCEPTED

# Status choices offered to users, as the status values of the corpus they stand for.
STATUS_GROUPS: dict[str, tuple[str, ...]] = {
    "All accepted": ("Oral", "Oral (conditional)", "Poster", "Poster (conditional)"),
    "Oral": ("Oral", "Oral (conditional)"),
    "Poster": ("Poster", "Poster (conditional)"),
    "Not accepted": (NOT_ACCEPTED,),
    "Withdrawn": ("Withdrawn",),
    "Everything (incl. rejected and withdrawn)": (),
}


def keyword_key(keyword: str) -> str:
    """How a keyword is matched by the keyword filter: case and surrounding space do not count."""
    return " ".join(keyword.lower().split())


@dataclass(frozen=True)
class Filters:
    """Metadata constraints; an empty field allows anything."""

    statuses: tuple[str, ...] = ()
    primary_areas: tuple[str, ...] = ()
    keywords: tuple[str, ...] = ()  # every one must be among the paper's keywords (case-insensitive)
    paper_ids: tuple[str, ...] = ()  # only these papers (a map cluster or region, the pinned set); empty: any

    def __bool__(self) -> bool:
        return bool(self.statuses or self.primary_areas or self.keywords or self.paper_ids)

    # -- the three forms ------------------------------------------------------------------------
    def where(self) -> dict | None:
        """Chroma's metadata filter (chunk metadata: paper_id, status, primary_area, keyword_list)."""
        clauses = []
        if self.paper_ids:
            clauses.append({"paper_id": {"$in": list(self.paper_ids)}})
        if self.statuses:
            clauses.append({"status": {"$in": list(self.statuses)}})
        if self.primary_areas:
            clauses.append({"primary_area": {"$in": list(self.primary_areas)}})
        for keyword in self.keywords:
            clauses.append({"keyword_list": {"$contains": keyword_key(keyword)}})
        if not clauses:
            return None
        return clauses[0] if len(clauses) == 1 else {"$and": clauses}

    def sql(self) -> tuple[str, list]:
        """An SQL condition and its parameters over columns paper_id, status, primary_area and keywords (the
        keyword keys stored as "|a|b|c|"); "" when nothing is filtered."""
        parts: list[str] = []
        params: list = []
        for column, values in (("status", self.statuses), ("primary_area", self.primary_areas),
                               ("paper_id", self.paper_ids)):
            if values:
                parts.append(f"{column} IN ({','.join('?' * len(values))})")
                params.extend(values)
        for keyword in self.keywords:
            parts.append("instr(keywords, ?) > 0")
            params.append(f"|{keyword_key(keyword)}|")
        return " AND ".join(parts), params

    def admits(self, paper) -> bool:
        """Whether a paper record (anything with id, status, primary_area and keywords) passes."""
        if self.paper_ids and paper.id not in self.paper_ids:
            return False
        if self.statuses and paper.status not in self.statuses:
            return False
        if self.primary_areas and paper.primary_area not in self.primary_areas:
            return False
        if self.keywords:
            own = {keyword_key(k) for k in paper.keywords}
            return all(keyword_key(k) in own for k in self.keywords)
        return True

    # -- combining ------------------------------------------------------------------------------
    def narrowed_by(self, stated: "Filters") -> "Filters":
        """These filters (the user's choices) narrowed by the constraints a question states ("oral papers on
        ...", "in the X area"): both hold. When they cannot both hold (the panel says Poster, the question
        says oral), the question's own words win: it is the more recent and the more specific request."""
        return Filters(statuses=_both(self.statuses, stated.statuses),
                       primary_areas=_both(self.primary_areas, stated.primary_areas),
                       keywords=tuple(dict.fromkeys((*self.keywords, *stated.keywords))),
                       paper_ids=_both(self.paper_ids, stated.paper_ids))

    def only(self, paper_ids: Sequence[str]) -> "Filters":
        return replace(self, paper_ids=tuple(paper_ids))


def _both(chosen: tuple[str, ...], stated: tuple[str, ...]) -> tuple[str, ...]:
    if not chosen or not stated:
        return chosen or stated
    common = tuple(v for v in chosen if v in stated)
    return common or stated
