"""PaperChat's hybrid search as a LangChain retriever: `from rag import PaperRetriever`.

BM25 and vectors fused, grouped per paper, filtered (rag.retrieve.search); each returned `Document` is one
paper, its text the passages that matched, its metadata the paper's id, title, status, area, link and rank.
The pipeline searches through the same object (`papers`, which keeps the typed `Source`s and takes several
queries at once); any LangChain chain can use it through `invoke`.
"""

from __future__ import annotations

from collections.abc import Sequence

from langchain_core.callbacks import CallbackManagerForRetrieverRun
from langchain_core.documents import Document
from langchain_core.retrievers import BaseRetriever
from pydantic import ConfigDict

from rag.index.store import PaperIndex
from rag.retrieve.filters import Filters
from rag.retrieve.search import Source, by_id, retrieve
from rag.settings import RetrievalSettings


def source_document(source: Source) -> Document:
    """One retrieved paper as a LangChain Document."""
    p = source.paper
    return Document(id=p.id, page_content=source.text or p.abstract,
                    metadata={"id": p.id, "title": p.title, "status": p.status, "primary_area": p.primary_area,
                              "keywords": list(p.keywords), "url": p.link, "n": source.n, "score": source.score})


class PaperRetriever(BaseRetriever):
    """The top `k` papers for a query under `filters` (BM25 + vectors, fused, one Document per paper)."""

    model_config = ConfigDict(arbitrary_types_allowed=True)

    index: PaperIndex
    settings: RetrievalSettings
    filters: Filters = Filters()
    k: int | None = None

    def papers(self, queries: str | Sequence[str], filters: Filters | None = None, k: int | None = None,
               referred: Sequence[str] = (), described: Sequence[str] = ()) -> list[Source]:
        """The top papers for one query, or several searched alike and fused, as numbered sources; `referred`:
        papers of an earlier turn a follow-up points back to, fused in as one more ranked list; `described`: a
        comparison's descriptions of its papers, each searched on its own, their best papers first."""
        return retrieve(self.index, queries, self.settings, self.filters if filters is None else filters,
                        k or self.k or self.settings.k, referred=referred, described=described)

    def named(self, paper_ids: Sequence[str]) -> list[Source]:
        """Given papers (a pinned set) as numbered sources, in that order."""
        return by_id(self.index, paper_ids)

    def _get_relevant_documents(self, query: str, *, run_manager: CallbackManagerForRetrieverRun) -> list[Document]:
        return [source_document(s) for s in self.papers(query)]
