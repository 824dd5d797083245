"""Explore, similar papers: the nearest indexed papers to a paper ("papers like this one") or to pasted
text ("paste my abstract"), each with a short note on what differs, or an explicit "nothing close".

Nearness is the cosine between stored chunk vectors (Chroma's own index, so no full scan); a paper is
represented by its chunks' vectors, pasted text by its embedding. The "what differs" note is plain code,
not the model: the other paper's keywords that the query lacks, and its abstract sentence with the most
words the query does not have.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field

from rag.corpus.papers import Paper
from rag.index.store import PaperIndex
from rag.text import abstract_sentences, content_words, query_terms

# Below the embedder's `similar` floor (rag.settings.MEASURED_FLOORS), nothing is "close". For MiniLM it was
# chosen by measurement on the full corpus (benchmarks/similar_hit.py, 200 papers): a real ICLR paper's nearest
# *other* paper is at cosine 0.507 or more (1st percentile 0.549); 20 off-topic pasted texts (recipes, news,
# travel) top out at 0.359. 0.43 is midway between the two. Without a floor, nothing is ever "nothing close".
MAX_TEXT_CHARS = 20_000  # a pasted text beyond this is cut (the embedder reads far less anyway)


@dataclass(frozen=True)
class SimilarPaper:
    paper: Paper
    score: float  # cosine similarity to the query, higher is closer
    differs: str  # what this paper has that the query does not (plain code, from its own abstract)


@dataclass(frozen=True)
class SimilarResult:
    query_title: str  # the paper asked about, or "" for pasted text
    papers: list[SimilarPaper] = field(default_factory=list)
    threshold: float | None = None

    @property
    def best(self) -> float:
        return self.papers[0].score if self.papers else 0.0

    @property
    def nothing_close(self) -> bool:
        return not self.papers or self.threshold is not None and self.best < self.threshold

    def close(self) -> list[SimilarPaper]:
        """The papers at or above the floor (all of them when there is none)."""
        return [p for p in self.papers if self.threshold is None or p.score >= self.threshold]


def differs_note(other: Paper, query_text: str, query_keywords: Sequence[str] = ()) -> str:
    """Keywords `other` lists that the query lacks, and its most distinctive abstract sentence."""
    have = set(content_words(query_text)) | {w for k in query_keywords for w in query_terms(k)}
    mine = {k.lower().strip() for k in query_keywords}
    extra = [k for k in other.keywords if k.lower().strip() not in mine and not set(query_terms(k)) <= have]
    sentences = [s for s in abstract_sentences(other.abstract) if len(s.split()) >= 5]
    best, best_new = "", 0
    for sentence in sentences:
        new = len(set(content_words(sentence)) - have)
        if new > best_new:
            best, best_new = sentence, new
    parts = []
    if extra:
        parts.append("Also about: " + ", ".join(extra[:4]) + ".")
    if best:
        parts.append("Differs: " + (best if len(best) <= 240 else best[:237].rstrip() + "..."))
    return " ".join(parts) or "Close in wording; no keyword or sentence stands out."


def _nearest(index: PaperIndex, vectors: Sequence[Sequence[float]], k: int,
             exclude: str | None) -> list[tuple[str, float]]:
    """Best paper ids by their closest chunk to any query vector, best first."""
    best: dict[str, float] = {}
    for hits in index.nearest(vectors, max(4 * k + 4, 20)):
        for meta, cosine in hits:
            pid = meta["paper_id"]
            if pid != exclude:
                best[pid] = max(best.get(pid, -1.0), cosine)
    return sorted(best.items(), key=lambda pair: (-pair[1], pair[0]))[:k]


def similar(index: PaperIndex, paper_id: str | None = None, text: str | None = None, k: int = 5,
            threshold: float | None = None) -> SimilarResult:
    """The k nearest papers to an indexed paper (itself excluded) or to pasted text (title and/or abstract)."""
    if (paper_id is None) == (text is None):
        raise ValueError("Give either paper_id (papers like this one) or text (a pasted abstract), not both.")
    if k < 1:
        raise ValueError(f"k must be at least 1, not {k}.")
    if index.is_empty():
        return SimilarResult("", [], threshold)
    if paper_id is not None:
        record = index.get_papers([paper_id]).get(paper_id)
        if record is None:
            raise ValueError(f"Paper {paper_id!r} is not in the index.")
        vectors, query_text, keywords, title = (index.vectors_of(paper_id), f"{record.title}. {record.abstract}",
                                                record.keywords, record.title)
    else:
        query_text = " ".join(text.split())[:MAX_TEXT_CHARS]
        if len(query_terms(query_text)) < 3:
            raise ValueError("Paste at least a sentence of an abstract (three or more content words).")
        vectors, keywords, title = [index.embeddings.embed_query(query_text)], (), ""
    ranked = _nearest(index, vectors, k, exclude=paper_id)
    records = index.get_papers([pid for pid, _ in ranked])
    papers = [SimilarPaper(records[pid], score, differs_note(records[pid], query_text, keywords))
              for pid, score in ranked if pid in records]
    return SimilarResult(title, papers, threshold)
