"""Stage 3b, aggregate questions: counts, averages and rankings computed in code over the indexed papers'
metadata and their official reviews' scores, with the matching ids listed, never a number guessed by a model.

Three shapes of question:
- a count: "how many oral papers on KV cache?", "how many papers have an average rating above 6?";
- an average: "what is the average rating of oral papers on KV cache?", "mean soundness score of posters";
- a ranking: "which KV-cache papers had the highest ratings?", "top 5 lowest-rated papers on unlearning".

Definitions (each answer states the one it used):
- the topic is a phrase, matched case-insensitively as whole words in the title, abstract or keywords,
  with hyphens, spaces or nothing between its words alike ("KV-cache" = "KV cache" = "KVcache") and an
  optional plural ending ("KV caches"); "DroPE" does not match "DropEdge";
- status and area come from the filters: the UI's, the question's own ("oral", "in the X area") and the
  noun ("orals", "posters");
- a score is one of the reviews' fields (rating unless soundness, presentation, contribution or reviewers'
  confidence is named). A paper's score is the mean over its reviews; an average is over all reviews of
  the matching papers (each review counts once), with the mean of the papers' own averages next to it.
"""

from __future__ import annotations

import re
import statistics
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass

from rag.corpus.papers import Paper
from rag.retrieve.search import Filters

_COUNT = re.compile(
    r"^\s*(?:how many|number of|count (?:of )?(?:the )?)\s*(?:(?:oral|poster|accepted|rejected|withdrawn|iclr|2026)\s+)*"
    r"(papers|orals|posters|submissions|works)\b(?P<rest>.*)$", re.IGNORECASE)
_TOPIC = re.compile(r"\b(?:on|about|mentioning|mention|mentions|related to|regarding|using|use|uses|studying|study|"
                    r"studies|propose|proposing|with the keyword|with keyword)\s+(?P<topic>.+)$", re.IGNORECASE)
_TAIL = re.compile(r"\s+(?:in the\b.*|at iclr.*|were\b.*|are there.*|are\b.*|have\b.*|has\b.*|had\b.*|got\b.*|"
                   r"did\b.*|received?\b.*|with (?:an?|the|their|its)\b.*|in iclr.*)$", re.IGNORECASE)
MAX_LISTED = 50  # papers listed with their titles; the count is always of all of them
MAX_IDS = 500  # further ids listed bare (`ask --json` has the answer text with the same list)
DEFAULT_TOP = 10  # papers a ranking lists unless the question says "top 5"
BY_TYPE = {"orals": ("Oral", "Oral (conditional)"), "posters": ("Poster", "Poster (conditional)")}

# -- review scores in a question ---------------------------------------------------------------------------
SCORE_FIELDS = ("rating", "soundness", "presentation", "contribution", "confidence")
# A word that names reviewers' scores. A bare "scores" may be a benchmark's ("highest scores on GSM8K"), and a
# bare "confidence" a model's, so those count only next to "review(er)".
_SCORE = re.compile(r"\brat(?:ed|ings?)\b|\breview(?:er)?s?'?\s+scores?\b|\bscores?\s+(?:from|by|given by)\s+(?:the\s+)?"
                    r"reviewers?\b|\breviewed\b|\breviews\b|\bsoundness\b|\bpresentation\s+scores?\b|"
                    r"\bcontribution\s+scores?\b|\breviewers?'?\s+confidence\b|\bconfidence\s+(?:scores?\s+)?"
                    r"(?:from|of|given by)\s+(?:the\s+)?reviewers?\b", re.IGNORECASE)
_FIELD = re.compile(r"\b(soundness|presentation|contribution|confidence)\b", re.IGNORECASE)
_AVERAGE = re.compile(r"\b(?:average|mean|avg)\b", re.IGNORECASE)
_HIGH = re.compile(r"\b(?:highest|best|top|strongest|most highly)\b", re.IGNORECASE)
_STRICT_HIGH = re.compile(r"\b(?:highest|best|strongest|most highly)\b", re.IGNORECASE)
_LOW = re.compile(r"\b(?:lowest|worst|weakest|poorest|least)\b", re.IGNORECASE)
_TOP_N = re.compile(r"\btop[- ]?(\d{1,2})\b|\b(\d{1,2})\s+(?:highest|best|lowest|worst|top|most)", re.IGNORECASE)
# The clause that asks for the score ("had the highest ratings", "the average rating", "top-rated",
# "received the best reviews from reviewers"): cut out to leave the topic.
_SCORE_PHRASE = re.compile(
    r"(?:\b(?:had|have|has|got|get|gets|received|receive|receives|with|by|in terms of|according to|that|which|"
    r"were|was|are|is)\s+)*(?:\b(?:the|their|its|an?)\s+)?(?:\btop[- ]?\d*\s*|\b\d{1,2}\s+)?"
    r"(?:\b(?:highest|best|top|strongest|most highly|lowest|worst|weakest|poorest|least|average|mean|avg)[- ]?\s*)*"
    r"(?:\b(?:official|reviewers?'?|review)\s+)?"
    r"\b(?:rated|ratings?|scored|scores?|reviews|reviewed|soundness|presentation|contribution|confidence)\b"
    r"(?:\s+(?:scores?|ratings?)\b)?(?:\s+(?:from|by|given by|among|across)\s+(?:the\s+)?reviewers?\b)?"
    r"(?:\s+on average\b)?", re.IGNORECASE)
_THRESHOLD = re.compile(
    r"(?P<op>at least|no less than|greater than or equal to|above|over|greater than|more than|higher than|>=|≥|>|"
    r"at most|no more than|below|under|less than|lower than|<=|≤|<|of exactly|exactly|equal to|of|=)\s*"
    r"(?P<n>\d+(?:\.\d+)?)(?P<or>\s+or\s+(?:more|higher|above|better|less|lower|below|worse))?", re.IGNORECASE)
_OPS = {"at least": ">=", "no less than": ">=", "greater than or equal to": ">=", ">=": ">=", "≥": ">=",
        "above": ">", "over": ">", "greater than": ">", "more than": ">", "higher than": ">", ">": ">",
        "at most": "<=", "no more than": "<=", "<=": "<=", "≤": "<=",
        "below": "<", "under": "<", "less than": "<", "lower than": "<", "<": "<",
        "of exactly": "==", "exactly": "==", "equal to": "==", "of": "==", "=": "=="}
_OP_WORDS = {">=": "at least", ">": "above", "<=": "at most", "<": "below", "==": "exactly"}
_REVIEWED = re.compile(r"\b(?:were|was|got|get|received|receive|have|has|had|with)\s+(?:any\s+|an?\s+|some\s+)?"
                       r"(?:official\s+)?(?:reviews|ratings?|rated|reviewed)\b", re.IGNORECASE)
_LEAD = re.compile(r"^\s*(?:(?:which|what|list|show|name|give me|find|tell me)\b\s*)?(?:(?:are|were|is|was|the|me|of|"
                   r"for|among|across|on|about|in|all)\b\s*)*", re.IGNORECASE)
_NOUN = re.compile(r"\b(papers?|orals?|posters?|submissions?|works?)\b", re.IGNORECASE)
_NOT_TOPIC = re.compile(r"\b(?:oral|poster|accepted|rejected|withdrawn|spotlight|iclr|2026|the|all|of|at|in|"
                        r"conference|reviewers?)\b", re.IGNORECASE)
_AREA_PHRASE = re.compile(r"\bin the [a-z][a-z ,&()/-]{2,100}?\s*(?:primary\s+)?area\b", re.IGNORECASE)


@dataclass(frozen=True)
class Aggregate:
    """An aggregate question. `kind`: "count", "average", "highest" or "lowest"; `topic`: the phrase ("" = every
    paper); `statuses`: those the noun names ("orals"); `field`: the review score it is about; `threshold`:
    a count's (op, value) on the papers' average score; `reviewed`: a count of reviewed papers only."""

    topic: str
    statuses: tuple[str, ...] = ()
    kind: str = "count"
    field: str = "rating"
    threshold: tuple[str, float] | None = None
    reviewed: bool = False
    top: int = DEFAULT_TOP

    @property
    def needs_reviews(self) -> bool:
        return self.kind != "count" or self.threshold is not None or self.reviewed


def topic_pattern(topic: str) -> re.Pattern[str]:
    """The topic phrase as a case-insensitive pattern of whole words: hyphens, spaces or nothing between its
    words match alike ("KV-cache" = "KV cache" = "KVcache"), a plural "s"/"es" may follow, and it must not
    start or end inside a word ("DroPE" is not "DropEdge")."""
    words = [re.escape(w) for w in re.split(r"[\s\-‐–]+", topic.strip()) if w]
    return re.compile(r"(?<!\w)" + r"[\s\-‐–]*".join(words) + r"(?:e?s)?(?!\w)", re.IGNORECASE)


def _field(question: str) -> str:
    found = _FIELD.search(question)
    return found.group(1).lower() if found else "rating"


def _clean_topic(text: str) -> str:
    text = re.sub(r"(?:'s|’s)\b", "", text)  # "DroPE's average rating"
    return re.sub(r"\s+", " ", text).strip(" \"'“”‘’,;:-")


def parse_aggregate(question: str) -> Aggregate | None:
    """The aggregate a question asks for, or None when it asks for something else."""
    q = question.strip().rstrip("?？.!！ ")
    found = _COUNT.match(q)
    if found:
        return _parse_count(found)
    if _SCORE.search(q) and (_AVERAGE.search(q) or _HIGH.search(q) or _LOW.search(q)):
        return _parse_score(q)
    return None


def _parse_count(found: re.Match[str]) -> Aggregate:
    rest = found.group("rest").strip()
    threshold, reviewed = None, False
    if _SCORE.search(rest):
        limit = _THRESHOLD.search(rest)
        if limit:
            op = _OPS[limit.group("op").lower()]
            if limit.group("or"):
                op = ">=" if re.search(r"more|higher|above|better", limit.group("or"), re.I) else "<="
            threshold = (op, float(limit.group("n")))
            rest = rest[:limit.start()] + rest[limit.end():]
        reviewed = threshold is None and bool(_REVIEWED.search(rest))
        if threshold or reviewed:
            rest = _SCORE_PHRASE.sub(" ", rest)
    topic = ""
    m = _TOPIC.search(rest)
    if m:
        topic = _clean_topic(_TAIL.sub("", m.group("topic").strip()))
    return Aggregate(topic, BY_TYPE.get(found.group(1).lower(), ()), field=_field(found.group(0)),
                     threshold=threshold, reviewed=reviewed)


def _parse_score(q: str) -> Aggregate:
    field = _field(q)
    if _AVERAGE.search(q) and not (_HIGH.search(q) or _LOW.search(q)):
        kind = "average"
    else:  # "highest average rating" ranks papers by their average; "top 3 lowest-rated" is a lowest
        kind = "lowest" if _LOW.search(q) and not _STRICT_HIGH.search(q) else "highest"
    n = _TOP_N.search(q)
    top = int(n.group(1) or n.group(2)) if n else DEFAULT_TOP
    rest = _AREA_PHRASE.sub(" ", q)
    rest = re.sub(r"\b(?:at|in|of|from)\s+ICLR(?:\s*2026)?\b|\bICLR(?:\s*2026)?\b", " ", rest, flags=re.IGNORECASE)
    rest = _SCORE_PHRASE.sub(" ", rest)
    rest = _LEAD.sub("", rest)
    statuses: tuple[str, ...] = ()
    noun = _NOUN.search(rest)
    if noun:
        word = noun.group(1).lower()
        statuses = BY_TYPE.get(word if word.endswith("s") else word + "s", ())
        before, after = rest[:noun.start()], rest[noun.end():]
        m = _TOPIC.search(after)
        after = _TAIL.sub("", m.group("topic")) if m else ""
        modifier = _NOT_TOPIC.sub(" ", before)
        topic = _clean_topic(after) or _clean_topic(modifier)
    else:
        topic = _clean_topic(_TAIL.sub("", _NOT_TOPIC.sub(" ", rest)))
    if re.fullmatch(r"(?:of|for|by|on|about|papers?|\d+)?", topic, re.IGNORECASE):
        topic = ""
    return Aggregate(topic, statuses, kind=kind, field=field, top=top)


# -- matching and computing ------------------------------------------------------------------------------
def _statuses(*groups: Sequence[str]) -> tuple[str, ...]:
    """The statuses allowed by every non-empty group (their intersection)."""
    allowed: set[str] | None = None
    for group in groups:
        if group:
            allowed = set(group) if allowed is None else allowed & set(group)
    return tuple(sorted(allowed)) if allowed is not None else ()


def matching(papers: Iterable[Paper], agg: Aggregate, filters: Filters, stated: Filters) -> list[Paper]:
    """The papers the aggregate is over (before any review condition), sorted by title."""
    statuses = _statuses(agg.statuses, stated.statuses, filters.statuses)
    areas = set(filters.primary_areas or stated.primary_areas)
    keywords = [k.lower() for k in filters.keywords]
    scope = set(filters.paper_ids) if filters.paper_ids else None
    phrase = topic_pattern(agg.topic) if agg.topic else None
    found = []
    for p in papers:
        if scope is not None and p.id not in scope:
            continue
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


def _passes(value: float, threshold: tuple[str, float]) -> bool:
    op, limit = threshold
    return {">=": value >= limit, ">": value > limit, "<=": value <= limit, "<": value < limit,
            "==": abs(value - limit) < 1e-9}[op]


def describe(agg: Aggregate, filters: Filters, stated: Filters) -> str:
    parts = []
    if filters.paper_ids:
        parts.append(f"among the {len(filters.paper_ids):,} papers in scope")
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


def aggregate_text(agg: Aggregate, papers: Sequence[Paper], total: int, filters: Filters, stated: Filters,
                   scores: Mapping[str, Sequence[int]] | None = None) -> str:
    """The answer: the number(s), how they were computed, and the matching papers (ids linked to OpenReview).

    `scores`: paper id -> that paper's reviews' values of `agg.field` (needed when `agg.needs_reviews`)."""
    found = matching(papers, agg, filters, stated)
    scores = scores or {}
    how = describe(agg, filters, stated)

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
