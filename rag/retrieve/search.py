"""Retrieve: the top papers for one or more queries, not duplicate chunks of one paper.

BM25 (the lexical twin) and the vectors are searched under the same filters and fused by reciprocal rank;
several queries (a rewritten follow-up and the message itself) are searched alike and fused; the chunks are
then grouped per paper, best first, and each paper keeps the sentences of its abstract that best match the
query, up to a token budget (rag.retrieve.passages): what the model will read.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from itertools import zip_longest

import numpy as np
import tiktoken
from langchain_core.documents import Document

from rag.corpus.papers import Paper
from rag.index.store import PaperIndex
from rag.retrieve.filters import Filters
from rag.retrieve.passages import Terms, focus
from rag.settings import RetrievalSettings
from rag.text import language, openreview_url, text_held, unwrapped, word_set


@dataclass(frozen=True)
class Source:
    """A retrieved paper as numbered in the prompt: `[n]` in the answer means this paper."""

    n: int
    paper: Paper
    score: float
    passages: tuple[str, ...] = field(default=())
    review_id: str = ""  # set when this source is one official review of `paper` (rag.corpus.reviews), not its abstract
    review_scores: str = ""  # e.g. "rating 6, confidence 4, ..." of that review

    @property
    def link(self) -> str:
        """The review on OpenReview for a review source, else the paper's page."""
        return openreview_url(self.paper.id, self.review_id) if self.review_id else self.paper.link

    @property
    def abstract(self) -> str:
        """The paper's abstract as it is read and shown: without a PDF's line breaks (rag.text.unwrapped), so that
        its passages are found in it."""
        return unwrapped(self.paper.abstract)

    @property
    def text(self) -> str:
        """What the model reads of this source: its passages (verbatim sentences, or a whole text), in order."""
        return " ".join(self.passages)


def rank_fusion(ranked_lists: Sequence[tuple[float, Sequence[str]]], rrf_k: int) -> dict[str, float]:
    """Reciprocal rank fusion of ranked ids (weight, ids best first): each id's summed weight / (rrf_k + rank),
    best first."""
    scores: dict[str, float] = {}
    for weight, ranked in ranked_lists:
        for rank, key in enumerate(ranked, start=1):
            scores[key] = scores.get(key, 0.0) + weight / (rrf_k + rank)
    return dict(sorted(scores.items(), key=lambda pair: -pair[1]))


def fuse(ranked_lists: Sequence[tuple[float, list[Document]]], rrf_k: int) -> list[tuple[Document, float]]:
    """Reciprocal rank fusion of chunk lists (weight, chunks best first) into one list, best first."""
    docs: dict[str, Document] = {}
    for _, ranked in ranked_lists:
        for doc in ranked:
            docs.setdefault(doc.id, doc)
    fused = rank_fusion([(weight, [doc.id for doc in ranked]) for weight, ranked in ranked_lists], rrf_k)
    return [(docs[i], score) for i, score in fused.items()]


def search_chunks(index: PaperIndex, query: str, settings: RetrievalSettings, filters: Filters,
                  fetch_k: int) -> list[tuple[Document, float]]:
    """Chunks best first, by the configured mode (dense, lexical, or both fused)."""
    lists = []
    if settings.mode in ("hybrid", "dense"):
        dense = index.search(query, k=fetch_k, filters=filters)
        if settings.mode == "dense":
            return dense
        lists.append((1.0, [doc for doc, _ in dense]))
    lexical = index.lexical_search(query, fetch_k, filters)
    if settings.mode == "lexical":
        return lexical
    lists.append((settings.lexical_weight, [doc for doc, _ in lexical]))
    return fuse(lists, settings.rrf_k)


def query_terms(index: PaperIndex, queries: Sequence[str]) -> Terms:
    """The English queries' words, weighted by their rarity in this index."""
    english = [q for q in queries if language(q) == "en"]
    return Terms.of(english, index.lexical.document_frequency, index.lexical.count())


# A comparison's description is searched with the whole question fused in at this weight: the question's shared
# context ("generative image models ...") keeps "the one that reads instance edges from self-attention" on topic.
# 0.5 against 0 (the description alone) and 1: best on two generated comparison sets (benchmarks/README.md).
WHOLE_QUESTION_WEIGHT = 0.5


def ranked_papers(hits: Sequence[tuple[Document, float]], k: int | None = None) -> dict[str, float]:
    """Papers by their best chunk (hits arrive best first), the first `k` (all when None)."""
    best: dict[str, float] = {}
    for doc, score in hits:
        pid = doc.metadata["paper_id"]
        if pid not in best:
            best[pid] = score
            if len(best) == k:
                break
    return best


def words_held(text: str, paper: Paper) -> float:
    """The share of a text's content words that the paper's title and abstract hold."""
    return text_held(text, word_set(f"{paper.title} {paper.abstract}"))


def by_words(text: str, ranked: Sequence[str], records: dict[str, Paper], settings: RetrievalSettings) -> list[str]:
    """`ranked` (paper ids, best first) with its first `settings.words_pool` re-ordered by how many of `text`'s words
    each paper holds: rrf_k / (rrf_k + place) + words_weight x the share (a paper not in `records` holds none).

    A question or a description is worded after what it asks for ("the one that evicts KV cache entries by looking
    ahead"); the fused search ranks by similarity and by a few rare words, so a paper that holds all of a vague
    description's words could rank 3rd to 10th, out of the sources (benchmarks/README.md, issue 20)."""
    if not settings.words_weight or not text:
        return list(ranked)
    pool = list(ranked[:settings.words_pool])

    def score(place: int) -> float:
        paper = records.get(pool[place])
        held = words_held(text, paper) if paper else 0.0
        return settings.rrf_k / (settings.rrf_k + place) + settings.words_weight * held

    return [pool[i] for i in sorted(range(len(pool)), key=score, reverse=True)] + list(ranked[settings.words_pool:])


def paired(each: list[list[str]], described: Sequence[str], records: dict[str, Paper], index: PaperIndex,
           margin: float | None) -> list[list[str]]:
    """Two descriptions' papers (best first), with the first of each list chosen as a pair: among each one's best
    two, the pair whose papers are closest to each other, a second-best counting `margin` (a cosine) less, and only
    when it holds as many words of its own description as of the other (a neighbour of the other paper is not this
    one). Papers compared in one question are related work; a description translated from Chinese loses words,
    and its own search then ranks a paper that shares a few of them ("a direct average estimator": "Direct Doubly
    Robust Estimation") above the related one it describes (benchmarks/README.md). `margin` None (not measured
    for this embedder): the lists as they are."""
    if margin is None or len(each) != 2 or min(len(e) for e in each) < 2:
        return each
    ones, others = each[0][:2], each[1][:2]
    missing = [pid for pid in (*ones, *others) if pid not in records]  # read only when the pairing is on
    if missing:
        records.update(index.get_papers(missing))

    def own(pid: str, mine: str, theirs: str) -> bool:
        paper = records.get(pid)
        return paper is not None and words_held(mine, paper) >= words_held(theirs, paper)

    choices = [(i, j) for i in (0, 1) for j in (0, 1) if ones[i] != others[j]
               and (i == 0 or own(ones[1], described[0], described[1]))
               and (j == 0 or own(others[1], described[1], described[0]))]
    if len(choices) < 2:
        return each
    vector = {pid: _unit(index.vectors_of(pid)) for pid in {*ones, *others}}

    def worth(ij: tuple[int, int]) -> tuple[float, int]:
        i, j = ij
        return float(vector[ones[i]] @ vector[others[j]]) - margin * (i + j), -(i + j)

    i, j = max(choices, key=worth)
    return [[chosen, *(pid for pid in ranked if pid != chosen)]
            for chosen, ranked in ((ones[i], each[0]), (others[j], each[1]))]


def _unit(vectors: list[list[float]]) -> np.ndarray:
    """A paper's direction: the mean of its chunks' vectors, unit length (zero when it has none)."""
    if not vectors:
        return np.zeros(1, dtype=np.float32)
    mean = np.asarray(vectors, dtype=np.float32).mean(axis=0)
    return mean / max(float(np.linalg.norm(mean)), 1e-9)


def retrieve(index: PaperIndex, queries: str | Sequence[str], settings: RetrievalSettings,
             filters: Filters | None = None, k: int | None = None, terms: Terms | None = None,
             referred: Sequence[str] = (), described: Sequence[str] = ()) -> list[Source]:
    """Search chunks, rank papers by their best chunk, return the top k papers, each with the sentences of its
    abstract that best match `terms` (the queries' own words unless given). Several queries are searched alike
    and fused. `described` (a comparison's descriptions of its papers, "the paper that X", "the one that Y") are
    searched one by one, each with the whole question's papers fused in at WHOLE_QUESTION_WEIGHT, and their papers
    come first, taking turns (each description's best, then each one's second, ...): searched as one text, the
    paper of the vaguer description fell out of the top k. The first papers of each list (the question's, or each
    description's) are re-ordered by the words they hold (`by_words`).
    `referred` (the papers of an earlier turn a follow-up points back to, most likely first) is fused
    with the papers found as one more ranked list of equal weight: what the user saw stays in reach of "its
    limitations" even when the rewritten query drifted (benchmarks/README.md)."""
    k = k or settings.k
    filters = filters or Filters()
    queries = [queries] if isinstance(queries, str) else list(queries)
    fetch_k = max(settings.fetch_k, k)
    runs = [search_chunks(index, q, settings, filters, fetch_k) for q in queries]
    hits = runs[0] if len(runs) == 1 else fuse([(1.0, [doc for doc, _ in run]) for run in runs], settings.rrf_k)
    best = ranked_papers(hits, None if referred or described else max(k, settings.words_pool))
    pool = settings.words_pool if settings.words_weight else 0
    if described:
        found = [ranked_papers(search_chunks(index, d, settings, filters, fetch_k)) for d in described]
        scores = {pid: score for ranked in reversed(found) for pid, score in ranked.items()} | best
        # each description's papers, with the whole question's at a lower weight: the context they share
        fused = [list(rank_fusion([(1.0, list(ranked)), (WHOLE_QUESTION_WEIGHT, list(best))], settings.rrf_k))
                 for ranked in found]
        records = index.get_papers(list(dict.fromkeys(pid for ranked in fused for pid in ranked[:pool])))
        each = [by_words(d, ranked, records, settings)[:k] for d, ranked in zip(described, fused)]
        each = paired(each, described, records, index, index.settings.embedding.floor("pair"))
        turns = [pid for rank in zip_longest(*each) for pid in rank if pid is not None]
        best = {pid: scores[pid] for pid in list(dict.fromkeys([*turns, *best]))[:None if referred else k]}
    else:
        records = index.get_papers(list(best)[:pool])
        # the words of the main query (a follow-up's standalone rewrite), not of the others fused with it
        english = next((q for q in queries if language(q) == "en"), "")
        best = {pid: best[pid] for pid in by_words(english, list(best), records, settings)[:None if referred else k]}
    # read once: for the filters now, for the sources below
    records.update(index.get_papers([pid for pid in dict.fromkeys(referred) if pid not in records]))
    if referred:
        kept = [pid for pid in dict.fromkeys(referred) if pid in records and filters.admits(records[pid])]
        best = dict(list(rank_fusion([(1.0, list(best)), (1.0, kept)], settings.rrf_k).items())[:k])
    records.update(index.get_papers([pid for pid in best if pid not in records]))
    terms = terms if terms is not None else query_terms(index, queries)
    encoding = tiktoken.get_encoding(index.settings.chunking.encoding)

    def count(text: str) -> int:
        return len(encoding.encode(text, disallowed_special=()))

    # a paper in the BM25 twin but gone from Chroma (a prune cut short) is skipped
    found = [(records[pid], score) for pid, score in best.items() if pid in records]
    return [Source(n=i, paper=paper, score=score,
                   passages=focus(paper.abstract, terms, settings.max_source_tokens, count))
            for i, (paper, score) in enumerate(found, start=1)]


def by_id(index: PaperIndex, paper_ids: Sequence[str]) -> list[Source]:
    """Named papers as sources, in the given order (the pinned papers of a comparison)."""
    records = index.get_papers(list(paper_ids))
    return [Source(n=i, paper=records[pid], score=1.0, passages=(unwrapped(records[pid].abstract),))
            for i, pid in enumerate((p for p in paper_ids if p in records), start=1)]
