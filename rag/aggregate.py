"""Stage 3b, aggregate questions: "how many oral papers on KV cache?" is answered by counting the indexed
papers' metadata in code, with the matching ids listed, never by a model guessing a number.

A question is an aggregate one only when it asks for a count of papers ("how many papers / orals /
posters / submissions ...", "number of papers ..."); its topic is the phrase after "on", "about",
"mentioning", ... and a paper matches when its title, abstract or keywords contain that phrase
(case-insensitive). Status and area come from the filters (the UI's, and those the question states).
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass

from rag.corpus import Paper
from rag.retrieve import Filters

_COUNT = re.compile(
    r"^\s*(?:how many|number of|count (?:of )?(?:the )?)\s*(?:(?:oral|poster|accepted|rejected|withdrawn|iclr|2026)\s+)*"
    r"(papers|orals|posters|submissions|works)\b(?P<rest>.*)$", re.IGNORECASE)
_TOPIC = re.compile(r"\b(?:on|about|mentioning|mention|mentions|related to|regarding|using|use|uses|studying|study|"
                    r"studies|propose|proposing|with the keyword|with keyword)\s+(?P<topic>.+)$", re.IGNORECASE)
_TAIL = re.compile(r"\s+(?:in the\b.*|at iclr.*|were\b.*|are there.*|are\b.*|have\b.*|got\b.*|did\b.*|"
                   r"in iclr.*)$", re.IGNORECASE)
MAX_LISTED = 50  # papers listed with their titles; the count is always of all of them
MAX_IDS = 500  # further ids listed bare (`ask --json` has the answer text with the same list)
BY_TYPE = {"orals": ("Oral", "Oral (conditional)"), "posters": ("Poster", "Poster (conditional)")}


@dataclass(frozen=True)
class Aggregate:
    """A count of papers: the topic phrase ("" = every paper) and the statuses the noun itself names."""

    topic: str
    statuses: tuple[str, ...] = ()


def parse_aggregate(question: str) -> Aggregate | None:
    found = _COUNT.match(question.strip())
    if not found:
        return None
    rest = found.group("rest").strip().rstrip("?？. ")
    topic = ""
    m = _TOPIC.search(rest)
    if m:
        topic = _TAIL.sub("", m.group("topic")).strip(" \"'“”‘’")
    return Aggregate(topic, BY_TYPE.get(found.group(1).lower(), ()))


def _statuses(*groups: Sequence[str]) -> tuple[str, ...]:
    """The statuses allowed by every non-empty group (their intersection)."""
    allowed: set[str] | None = None
    for group in groups:
        if group:
            allowed = set(group) if allowed is None else allowed & set(group)
    return tuple(sorted(allowed)) if allowed is not None else ()


def matching(papers: Iterable[Paper], agg: Aggregate, filters: Filters, stated: Filters) -> list[Paper]:
    statuses = _statuses(agg.statuses, stated.statuses, filters.statuses)
    areas = set(filters.primary_areas or stated.primary_areas)
    keywords = [k.lower() for k in filters.keywords]
    phrase = re.compile(re.escape(agg.topic), re.IGNORECASE) if agg.topic else None
    found = []
    for p in papers:
        if statuses and p.status not in statuses:
            continue
        if areas and p.primary_area not in areas:
            continue
        own = {k.lower() for k in p.keywords}
        if any(k not in own for k in keywords):
            continue
        if phrase and not phrase.search(" \n ".join([p.title, p.abstract, *p.keywords])):
            continue
        found.append(p)
    return sorted(found, key=lambda p: p.title.lower())


def describe(agg: Aggregate, filters: Filters, stated: Filters) -> str:
    parts = []
    statuses = _statuses(agg.statuses, stated.statuses, filters.statuses)
    if statuses:
        parts.append("status " + " or ".join(statuses))
    areas = filters.primary_areas or stated.primary_areas
    if areas:
        parts.append("primary area " + " or ".join(areas))
    if filters.keywords:
        parts.append("listing the keywords " + ", ".join(filters.keywords))
    if agg.topic:
        parts.append(f"whose title, abstract or keywords contain “{agg.topic}”")
    return "; ".join(parts) or "all indexed papers"


def aggregate_text(agg: Aggregate, papers: Sequence[Paper], total: int, filters: Filters, stated: Filters) -> str:
    """The answer: the number, how it was counted, and the matching papers (ids linked to OpenReview)."""
    found = matching(papers, agg, filters, stated)
    head = "**1 paper** matches" if len(found) == 1 else f"**{len(found):,} papers** match"
    lines = [f"{head} ({describe(agg, filters, stated)}), counted over the "
             f"{total:,} indexed papers by a query on their metadata, not estimated by the model."]
    if found:
        lines.append("")
        lines += [f"- {p.title} · {p.status or 'status unknown'} · [{p.id}]({p.link})" for p in found[:MAX_LISTED]]
        more = found[MAX_LISTED:MAX_IDS]
        if more:
            lines.append(f"- and {len(found) - MAX_LISTED:,} more: " + ", ".join(p.id for p in more)
                         + (f", … ({len(found) - MAX_IDS:,} not listed)" if len(found) > MAX_IDS else ""))
    return "\n".join(lines)
