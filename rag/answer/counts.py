"""Counts: aggregate questions (rag.question.aggregate) answered in code over the indexed papers'
metadata and their official reviews' scores, with the definitions used and the matching ids listed.
"""

from __future__ import annotations

import re
import statistics
from collections.abc import Iterable, Mapping, Sequence

from rag.corpus.papers import Paper
from rag.question.aggregate import Aggregate
from rag.retrieve.filters import Filters

MAX_LISTED = 50  # papers listed with their titles; the count is always of all of them
MAX_IDS = 500  # further ids listed bare (`ask --json` has the answer text with the same list)
_OP_WORDS = {">=": "at least", ">": "above", "<=": "at most", "<": "below", "==": "exactly"}


def topic_pattern(topic: str) -> re.Pattern[str]:
    """The topic phrase as a case-insensitive pattern of whole words: hyphens, spaces or nothing between its
    words match alike ("KV-cache" = "KV cache" = "KVcache"), a plural "s"/"es" may follow, and it must not
    start or end inside a word ("DroPE" is not "DropEdge")."""
    words = [re.escape(w) for w in re.split(r"[\s\-‐–]+", topic.strip()) if w]
    return re.compile(r"(?<!\w)" + r"[\s\-‐–]*".join(words) + r"(?:e?s)?(?!\w)", re.IGNORECASE)


def matching(papers: Iterable[Paper], agg: Aggregate, filters: Filters) -> list[Paper]:
    """The papers the aggregate is over (before any review condition), sorted by title."""
    phrase = topic_pattern(agg.topic) if agg.topic else None
    found = [p for p in papers if filters.admits(p) and (not agg.statuses or p.status in agg.statuses)
             and (phrase is None or phrase.search(" \n ".join([p.title, p.abstract, *p.keywords])))]
    return sorted(found, key=lambda p: p.title.lower())


def _passes(value: float, threshold: tuple[str, float]) -> bool:
    op, limit = threshold
    return {">=": value >= limit, ">": value > limit, "<=": value <= limit, "<": value < limit,
            "==": abs(value - limit) < 1e-9}[op]


def describe(agg: Aggregate, filters: Filters) -> str:
    parts = []
    if filters.paper_ids:
        parts.append(f"among the {len(filters.paper_ids):,} papers in scope")
    statuses = [s for s in filters.statuses if not agg.statuses or s in agg.statuses] or agg.statuses
    if statuses:
        parts.append("status " + " or ".join(statuses))
    if filters.primary_areas:
        parts.append("primary area " + " or ".join(filters.primary_areas))
    if filters.keywords:
        parts.append("listing the keywords " + ", ".join(filters.keywords))
    if agg.topic:
        parts.append(f"whose title, abstract or keywords contain “{agg.topic}”")
    if agg.threshold:
        op, value = agg.threshold
        parts.append(f"whose reviews' average {agg.field} is {_OP_WORDS[op]} {value:g}")
    elif agg.reviewed:
        parts.append("with at least one official review loaded")
    return "; ".join(parts) or "all indexed papers"


def _line(p: Paper, extra: str = "") -> str:
    return f"- {p.title} · {p.status or 'status unknown'}{extra} · [{p.id}]({p.link})"


def _listing(found: Sequence[Paper], extra=lambda p: "") -> list[str]:
    if not found:
        return []
    lines = [""] + [_line(p, extra(p)) for p in found[:MAX_LISTED]]
    more = found[MAX_LISTED:MAX_IDS]
    if more:
        lines.append(f"- and {len(found) - MAX_LISTED:,} more: " + ", ".join(p.id for p in more)
                     + (f", … ({len(found) - MAX_IDS:,} not listed)" if len(found) > MAX_IDS else ""))
    return lines


def _count(n: int, noun: str) -> str:
    return f"{n:,} {noun}{'' if n == 1 else 's'}"


def _fmt(scores: Sequence[int]) -> str:
    return ", ".join(str(s) for s in scores)


def aggregate_text(agg: Aggregate, papers: Sequence[Paper], total: int, filters: Filters,
                   scores: Mapping[str, Sequence[int]] | None = None) -> str:
    """The answer: the number(s), how they were computed, and the matching papers (ids linked to OpenReview).

    `scores`: paper id -> that paper's reviews' values of `agg.field` (needed when `agg.needs_reviews`)."""
    found = matching(papers, agg, filters)
    scores = scores or {}
    how = describe(agg, filters)

    def mean(p: Paper) -> float:
        return statistics.fmean(scores[p.id])

    if agg.kind == "count":
        if agg.needs_reviews:
            found = [p for p in found if scores.get(p.id) and (agg.threshold is None or _passes(mean(p), agg.threshold))]
        head = "**1 paper** matches" if len(found) == 1 else f"**{len(found):,} papers** match"
        lines = [f"{head} ({how}), counted over the {total:,} indexed papers by a query on their metadata"
                 + (" and their official reviews" if agg.needs_reviews else "") + ", not estimated by the model."]
        extra = (lambda p: f" · average {agg.field} {mean(p):.2f} ({len(scores[p.id])} reviews)") if agg.needs_reviews \
            else (lambda p: "")
        return "\n".join(lines + _listing(found, extra))

    reviewed = [p for p in found if scores.get(p.id)]
    unreviewed = len(found) - len(reviewed)
    none_note = f" {unreviewed:,} matching paper{'s have' if unreviewed != 1 else ' has'} no reviews loaded." \
        if unreviewed else ""
    if not reviewed:
        return (f"No paper with loaded reviews matches ({how}): {len(found):,} indexed papers match, none with a "
                f"review {agg.field}, so there is nothing to compute.")
    values = [v for p in reviewed for v in scores[p.id]]
    per_paper = {p.id: mean(p) for p in reviewed}
    computed = (f"computed in code from the official reviews of the {total:,} indexed papers, not estimated by the "
                f"model. A paper's {agg.field} is the mean of its reviews' {agg.field}s (these are reviewers' opinions).")
    if agg.kind == "average":
        head = (f"**Average {agg.field} {statistics.fmean(values):.2f}** over {_count(len(values), 'review')} of "
                f"{_count(len(reviewed), 'paper')} ({how}); the mean of the papers' own averages is "
                f"{statistics.fmean(per_paper.values()):.2f}, the median paper {statistics.median(per_paper.values()):.2f}, "
                f"reviews range {min(values)}–{max(values)}. {computed}{none_note}")
        ordered = sorted(reviewed, key=lambda p: (-per_paper[p.id], p.title.lower()))
        return "\n".join([head] + _listing(ordered, lambda p: f" · {per_paper[p.id]:.2f} ({_fmt(scores[p.id])})"))
    sign = -1 if agg.kind == "highest" else 1
    ordered = sorted(reviewed, key=lambda p: (sign * per_paper[p.id], -len(scores[p.id]), p.title.lower()))
    shown = ordered[:agg.top]
    cutoff = per_paper[shown[-1].id]
    tied = sum(1 for p in ordered[len(shown):] if abs(per_paper[p.id] - cutoff) < 1e-9)
    word = "Highest" if agg.kind == "highest" else "Lowest"
    head = (f"**{word} average {agg.field}** among {len(reviewed):,} reviewed papers ({how}), the top "
            f"{len(shown)} listed; ties go to the paper with more reviews. {computed}{none_note}")
    lines = [head, ""] + [f"{i}. {p.title} · {p.status or 'status unknown'} · **{per_paper[p.id]:.2f}** "
                          f"({len(scores[p.id])} reviews: {_fmt(scores[p.id])}) · [{p.id}]({p.link})"
                          for i, p in enumerate(shown, start=1)]
    if tied:
        lines += ["", f"_{tied:,} more paper{'s' if tied != 1 else ''} also average {cutoff:.2f}._"]
    return "\n".join(lines)
