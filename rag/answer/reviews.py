"""Reviews: a question about the official reviews ("What weaknesses did reviewers raise about DroPE?")
is answered from the reviews of the paper it is about, each review a numbered source labeled as one
reviewer's opinion, never as the paper's own claim.

Two steps: find the paper (searched without the review words, and by the name the question uses), then
give the model the part of its reviews the question asks about (rag.question.router.review_fields).
"""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence
from dataclasses import replace

from rag.answer.coverage import paper_names
from rag.corpus.reviews import ReviewStore
from rag.question.router import Intent
from rag.retrieve.search import Source
from rag.text import introduced_names, names_paper

MAX_REVIEW_SOURCES = 4  # reviews given to the model for a review question (the top paper's first)
REVIEWED_PAPERS = 2  # whose reviews are read: the best-matching papers only
SEARCH_DEPTH = 10  # papers searched to find the one the question names

# Words that ask about the reviews rather than name the paper: left out of the search for the paper.
_INTENT = re.compile(r"\b(?:what|which|did|do|does|the|official|reviewers?'?s?|reviews?|raise[ds]?|raising|say|said|"
                     r"think|thought|about|of|on|for|main|key|weakness(?:es)?|strengths?|concerns?|criticisms?|"
                     r"criticis(?:e|ed|ing)|questions?|asked|ratings?|rated|scores?|give|gave|papers?|had|have|"
                     r"highest|lowest|best|worst|see|saw|seen|in|ask|point(?:ed)?|out|find|found|mention(?:ed)?|"
                     r"identif(?:y|ied)|list)\b|审稿人?|评审(?:意见)?|提出了?|哪些|缺点|优点|评分|关于|对|的",
                     re.IGNORECASE)

Search = Callable[[Sequence[str], int], list[Source]]  # (queries, k) -> papers, best first


def review_topic(question: str) -> str:
    """What to search for to find the paper(s) a review question is about: the question without its
    review words ("What weaknesses did reviewers raise about DroPE?" -> "DroPE")."""
    topic = re.sub(r"[\s?？,.!]+", " ", _INTENT.sub(" ", question)).strip()
    return topic if len(topic) >= 3 else question


def reviewed_papers(intent: Intent, queries: Sequence[str], search: Search, k: int) -> list[Source]:
    """The papers a review question is about: searched without its review words ("reviewers" would find
    papers on peer review). When the question calls papers by name, only the papers that go by it (a title's
    "MMSI-Bench: ...", "we propose X"; written as asked beats another case: "REALIGN" is not "ReAlign") or,
    failing that, use it ("DroPE"), the most frequent users first: another paper's reviews would answer a
    question not asked. A question naming nothing keeps the search's order."""
    texts = list(dict.fromkeys([intent.question, *queries]))
    found = search([review_topic(q) for q in texts], max(k, SEARCH_DEPTH))
    names = paper_names(" ".join([*intent.names, *queries]))  # "LLMs" names a field, not the paper

    def uses(s: Source) -> int:  # case-sensitive: "DroPE" is not "drope" in "dropout"
        text = f"{s.paper.title} {s.paper.abstract}"
        return sum(text.count(n) for n in names)

    def titled(s: Source) -> int:  # the paper goes by the name: its title's, as written (2) or in another
        by_title = max(names_paper(q, s.paper.title) for q in texts)  # case (1); or "we propose <name>"
        return by_title or (2 if names & introduced_names(s.paper.title, s.paper.abstract) else 0)

    rank = {s.n: (titled(s), uses(s)) for s in found}  # each computed once
    ordered = sorted(found, key=lambda s: (-rank[s.n][0], -rank[s.n][1], s.n))
    best = rank[ordered[0].n][0] if ordered else 0
    ordered = ([s for s in ordered if rank[s.n][0] == best] if best
               else [s for s in ordered if rank[s.n][1]] or ordered)
    return [replace(s, n=i) for i, s in enumerate(ordered[:k], start=1)]


def review_sources(store: ReviewStore | None, intent: Intent, papers: Sequence[Source], chars: int) -> list[Source]:
    """The reviews of the top papers as numbered sources, each cut to `chars` characters of the part the
    question asks about."""
    if store is None or not papers:
        return []
    top = list(papers[:REVIEWED_PAPERS])
    by_paper = store.for_papers([s.paper.id for s in top])
    found: list[Source] = []
    for source in top:
        for review in by_paper[source.paper.id]:
            text = "\n".join(f"{f.capitalize()}: {getattr(review, f)}" for f in intent.review_fields
                             if getattr(review, f))
            if not text:  # its scores only (the shipped corpus): nothing a reviewer said to quote
                continue
            found.append(Source(len(found) + 1, source.paper, source.score, (text[:chars],),
                                review_id=review.review_id, review_scores=review.scores()))
            if len(found) == MAX_REVIEW_SOURCES:
                return found
    return found
