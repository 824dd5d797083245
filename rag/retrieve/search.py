"""Stage 3, retrieve: the top papers for a question (not duplicate chunks of one paper)."""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass, field

import tiktoken
from langchain_core.documents import Document

from rag.index.chunking import body_of, keyword_key
from rag.corpus.papers import Paper
from rag.index.store import PaperIndex
from rag.settings import RetrievalSettings


# Status choices offered to users, as the status values of the corpus they stand for.
STATUS_GROUPS: dict[str, tuple[str, ...]] = {
    "All accepted": ("Oral", "Oral (conditional)", "Poster", "Poster (conditional)"),
    "Oral": ("Oral", "Oral (conditional)"),
    "Poster": ("Poster", "Poster (conditional)"),
    "Everything (incl. rejected and withdrawn)": (),
}


@dataclass(frozen=True)
class Filters:
    """Metadata constraints applied inside the vector search."""

    statuses: tuple[str, ...] = ()
    primary_areas: tuple[str, ...] = ()
    keywords: tuple[str, ...] = ()  # every one must be among the paper's keywords (case-insensitive)
    paper_ids: tuple[str, ...] = ()  # only these papers (a map cluster or region, the pinned set); empty: any

    def where(self) -> dict | None:
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
        if self.review_id:
            return f"https://openreview.net/forum?id={self.paper.id}&noteId={self.review_id}"
        return self.paper.link

    @property
    def text(self) -> str:
        return " ... ".join(self.passages)


_AREA = re.compile(r"""(?:['‘"“]([^'’"”]{3,120})['’"”]|\bin the ([a-z][a-z ,&()/-]{2,100}?))\s*(?:primary\s+)?area""",
                   re.IGNORECASE)


def constraints_in(question: str, known_areas: Sequence[str] = ()) -> Filters:
    """Metadata constraints stated in the question: "accepted", "oral", "poster", "in the X area".

    An area counts only if it is one of `known_areas` (case-insensitive): a misread area would
    otherwise filter every paper out.
    """
    text = question.lower()
    if re.search(r"\boral\b|口头报告|oral论文", text):
        statuses = STATUS_GROUPS["Oral"]
    elif re.search(r"\bposters?\b|海报", text):
        statuses = STATUS_GROUPS["Poster"]
    elif re.search(r"\baccepted\b|被接收|录用|接收的", text):
        statuses = STATUS_GROUPS["All accepted"]
    else:
        statuses = ()
    known = {a.lower(): a for a in known_areas}
    named = (next(g for g in m.groups() if g).strip().lower() for m in _AREA.finditer(question))
    areas = tuple(dict.fromkeys(known[a] for a in named if a in known))
    return Filters(statuses=statuses, primary_areas=areas)


def merge_filters(chosen: Filters | None, stated: Filters) -> Filters:
    """What the user picked in the UI wins; constraints stated in the question fill the rest."""
    chosen = chosen or Filters()
    return Filters(statuses=chosen.statuses or stated.statuses, primary_areas=chosen.primary_areas or stated.primary_areas,
                   keywords=chosen.keywords or stated.keywords, paper_ids=chosen.paper_ids)


def primary_areas(index: PaperIndex) -> list[str]:
    """The primary areas present in the index (one read of the first chunk of every paper)."""
    got = index.collection.get(where={"chunk": 0}, include=["metadatas"])
    return sorted({m.get("primary_area", "") for m in got["metadatas"]} - {""})


_FOLLOWUP = re.compile(
    r"\b(it|its|they|them|their|this|that|these|those|the (first|second|third|last|former|latter)( one)?|"
    r"above|previous|same|both|compare)\b|它|它们|这篇|那篇|这些|那些|第一|第二|上面|前面|两篇",
    re.IGNORECASE,
)


def is_followup(question: str) -> bool:
    """A question that leans on the conversation: it refers back ("its", "the second one") or is very short."""
    return bool(_FOLLOWUP.search(question)) or len(question.split()) <= 3 and not re.search(r"[\u4e00-\u9fff]{6,}", question)


def search_query(question: str, history: Sequence[tuple[str, str]] = ()) -> str:
    """What to search for: a follow-up ("what about its limitations?") is searched together with the
    question before it, so "its" finds the same papers; a new topic is searched alone.
    (A model-written standalone query is a later step.)"""
    if history and is_followup(question):
        return f"{history[-1][0]} {question}"
    return question


def _truncate(text: str, max_tokens: int, encoding: tiktoken.Encoding) -> str:
    tokens = encoding.encode(text, disallowed_special=())
    return text if len(tokens) <= max_tokens else encoding.decode(tokens[:max_tokens]) + " ..."


def _fuse(ranked_lists: Sequence[tuple[float, list[Document]]], rrf_k: int) -> list[tuple[Document, float]]:
    """Reciprocal rank fusion of chunk lists (weight, chunks best first) into one list, best first."""
    scores: dict[str, float] = {}
    docs: dict[str, Document] = {}
    for weight, ranked in ranked_lists:
        for rank, doc in enumerate(ranked, start=1):
            scores[doc.id] = scores.get(doc.id, 0.0) + weight / (rrf_k + rank)
            docs.setdefault(doc.id, doc)
    return sorted(((docs[i], score) for i, score in scores.items()), key=lambda pair: -pair[1])


def search_chunks(index: PaperIndex, query: str, settings: RetrievalSettings, filters: Filters,
                  fetch_k: int) -> list[tuple[Document, float]]:
    """Chunks best first, by the configured mode (dense, lexical, or both fused)."""
    lists = []
    if settings.mode in ("hybrid", "dense"):
        dense = index.search(query, k=fetch_k, where=filters.where())
        if settings.mode == "dense":
            return dense
        lists.append((1.0, [doc for doc, _ in dense]))
    lexical = index.lexical_search(query, fetch_k, filters.statuses, filters.primary_areas, filters.keywords,
                                   filters.paper_ids)
    if settings.mode == "lexical":
        return lexical
    lists.append((settings.lexical_weight, [doc for doc, _ in lexical]))
    return _fuse(lists, settings.rrf_k)


def retrieve(index: PaperIndex, question: str | Sequence[str], settings: RetrievalSettings,
             filters: Filters | None = None, k: int | None = None) -> list[Source]:
    """Search chunks, keep each paper's best chunks (in rank order), return the top k papers.
    Several queries (a rewritten follow-up and the message itself) are searched alike and fused."""
    k = k or settings.k
    queries = [question] if isinstance(question, str) else list(question)
    fetch_k = max(settings.fetch_k, k)
    runs = [search_chunks(index, q, settings, filters or Filters(), fetch_k) for q in queries]
    hits = runs[0] if len(runs) == 1 else _fuse([(1.0, [doc for doc, _ in run]) for run in runs], settings.rrf_k)
    best: dict[str, tuple[float, list[str]]] = {}
    for doc, score in hits:  # hits arrive best first
        pid = doc.metadata["paper_id"]
        if pid not in best:
            if len(best) == k:
                continue
            best[pid] = (score, [])
        best[pid][1].append(body_of(doc))
    records = index.get_papers(list(best))
    encoding = tiktoken.get_encoding(index.settings.chunking.encoding)
    sources = []
    for pid, (score, passages) in best.items():
        if pid not in records:  # in the BM25 twin but gone from Chroma (a prune cut short); skip it
            continue
        budget, kept = settings.max_source_tokens, []
        for passage in passages:
            used = len(encoding.encode(passage, disallowed_special=()))
            if kept and used > budget:
                break
            kept.append(_truncate(passage, budget, encoding))
            budget -= used
            if budget <= 0:
                break
        sources.append(Source(n=len(sources) + 1, paper=records[pid], score=score, passages=tuple(kept)))
    return sources
