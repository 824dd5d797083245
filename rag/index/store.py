"""Stage 2c, index: chunks and their vectors in Chroma, in a collection named after what made them,
with a BM25 twin (rag.index.lexical) that every write updates too.

The collection name hashes the embedding model and the chunking settings, so changing either never
mixes vectors; re-ingesting unchanged papers embeds nothing (content hashes on every chunk).
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass

import chromadb
from chromadb.config import Settings as ChromaClientSettings
from langchain_chroma import Chroma
from langchain_core.documents import Document
from langchain_core.embeddings import Embeddings

from rag.index.chunking import chunk_paper, chunk_text, make_splitter, paper_from_metadata
from rag.corpus.papers import Paper
from rag.models.embeddings import embedding_identity
from rag.errors import IndexError_
from rag.index.lexical import LexicalIndex
from rag.settings import ChromaSettings, Settings

INDEX_SCHEMA = 2  # 2: keyword_list array metadata; bump when the chunk layout or metadata changes meaning
READ_PAGE = 5_000  # ids per read when listing the whole collection
DELETE_BATCH = 1_000  # below Chroma's max batch size in every mode


def collection_identity(settings: Settings) -> dict:
    """Everything that changes the stored vectors or chunks."""
    return {
        "schema": INDEX_SCHEMA,
        "embedding": embedding_identity(settings.embedding),
        "chunk_encoding": settings.chunking.encoding,
        "chunk_size": settings.chunking.size,
        "chunk_overlap": settings.chunking.overlap,
    }


def collection_name(prefix: str, identity: dict) -> str:
    digest = hashlib.sha256(json.dumps(identity, sort_keys=True).encode()).hexdigest()[:12]
    return f"{prefix}-{digest}"


def make_client(settings: Settings) -> chromadb.ClientAPI:
    """An embedded store under the data dir, or a client of a `chroma run` server."""
    client_settings = ChromaClientSettings(anonymized_telemetry=False)
    chroma: ChromaSettings = settings.chroma
    if chroma.mode == "embedded":
        settings.chroma_dir.mkdir(parents=True, exist_ok=True)
        return chromadb.PersistentClient(path=str(settings.chroma_dir), settings=client_settings)
    try:
        client = chromadb.HttpClient(host=chroma.host, port=chroma.port, ssl=chroma.ssl, settings=client_settings)
        client.heartbeat()
    except Exception as exc:
        raise IndexError_(
            f"Cannot reach the Chroma server at {chroma.host}:{chroma.port} ({exc.__class__.__name__}). "
            f"Start one with `chroma run --host {chroma.host} --port {chroma.port} --path <dir>`, "
            "or set PAPERCHAT_CHROMA__MODE=embedded."
        ) from exc
    return client


@dataclass
class IngestStats:
    papers_new: int = 0
    papers_changed: int = 0
    papers_unchanged: int = 0
    chunks_written: int = 0

    def __str__(self) -> str:
        return (f"{self.papers_new} new, {self.papers_changed} changed, {self.papers_unchanged} unchanged papers; "
                f"{self.chunks_written} chunks embedded")


ProgressFn = Callable[[int, int], None]  # (papers done, papers total)


class PaperIndex:
    """The chunks of every ingested paper, searchable by vector, in one Chroma collection."""

    def __init__(self, client: chromadb.ClientAPI, embeddings: Embeddings, settings: Settings):
        self.settings = settings
        self.identity = collection_identity(settings)
        self.name = collection_name(settings.chroma.collection_prefix, self.identity)
        self.embeddings = embeddings
        self.store = Chroma(
            client=client,
            collection_name=self.name,
            embedding_function=embeddings,
            collection_metadata={"paperchat_identity": json.dumps(self.identity, sort_keys=True)},
            collection_configuration={"hnsw": {"space": "cosine"}},
        )
        stored = (self.store._collection.metadata or {}).get("paperchat_identity")
        if stored and json.loads(stored) != self.identity:  # only a hash collision could get here
            raise IndexError_(f"Collection {self.name} was made with {stored}, not {self.identity}.")
        self.lexical = LexicalIndex(settings.lexical_dir / f"{self.name}.sqlite")
        self.sync_lexical()

    def sync_lexical(self) -> bool:
        """Rebuild the BM25 twin from Chroma when their chunk counts differ; True if it was rebuilt."""
        if self.lexical.count() == self.count_chunks():
            return False
        self.lexical.rebuild(self._all_documents())
        return True

    def _all_documents(self) -> Iterable[Document]:
        offset = 0
        while True:
            page = self.collection.get(include=["documents", "metadatas"], limit=READ_PAGE, offset=offset)
            for chunk_id, text, meta in zip(page["ids"], page["documents"], page["metadatas"]):
                yield Document(id=chunk_id, page_content=text, metadata=meta)
            if len(page["ids"]) < READ_PAGE:
                return
            offset += READ_PAGE

    @property
    def collection(self):
        return self.store._collection

    def count_chunks(self) -> int:
        return self.collection.count()

    def is_empty(self) -> bool:
        return self.count_chunks() == 0

    # -- writing ---------------------------------------------------------------------------
    def _existing(self, paper_ids: Sequence[str]) -> dict[str, tuple[set[str], set[str], int]]:
        """paper id -> (chunk ids, content hashes, n_chunks claimed) for what is already stored."""
        found: dict[str, tuple[set[str], set[str], int]] = {}
        if not paper_ids:
            return found
        got = self.collection.get(where={"paper_id": {"$in": list(paper_ids)}}, include=["metadatas"])
        for chunk_id, meta in zip(got["ids"], got["metadatas"]):
            ids, hashes, _ = found.setdefault(meta["paper_id"], (set(), set(), 0))
            ids.add(chunk_id)
            hashes.add(meta.get("content_hash", ""))
            found[meta["paper_id"]] = (ids, hashes, int(meta.get("n_chunks", 0)))
        return found

    def ingest(self, papers: Iterable[Paper], batch_papers: int = 64, progress: ProgressFn | None = None) -> IngestStats:
        """Embed and store papers; unchanged papers are skipped, changed ones replaced whole."""
        papers = list(papers)
        splitter = make_splitter(self.settings.chunking)
        stats = IngestStats()
        for start in range(0, len(papers), batch_papers):
            batch = papers[start:start + batch_papers]
            existing = self._existing([p.id for p in batch])
            to_write: list[Document] = []
            stale: list[str] = []
            for paper in batch:
                old = existing.get(paper.id)
                digest = paper.content_hash()
                if old and old[1] == {digest} and len(old[0]) == old[2]:
                    stats.papers_unchanged += 1
                    continue
                chunks = chunk_paper(paper, splitter)
                if old:
                    stats.papers_changed += 1
                    stale.extend(old[0] - {c.id for c in chunks})
                else:
                    stats.papers_new += 1
                to_write.extend(chunks)
            # The BM25 twin is written first: if we die before Chroma, the paper still looks changed to
            # Chroma's content hashes, so the next run writes both again.
            if stale:
                self.lexical.delete(stale)
                self.collection.delete(ids=stale)
            step = self.settings.embedding.batch_size
            for i in range(0, len(to_write), step):
                part = to_write[i:i + step]
                self.lexical.upsert(part)
                self.store.add_documents(part, ids=[d.id for d in part])
                stats.chunks_written += len(part)
            if progress:
                progress(min(start + batch_papers, len(papers)), len(papers))
        return stats

    def paper_ids(self) -> set[str]:
        """Every paper with at least one stored chunk."""
        return {paper for paper, _ in self._chunk_ids()}

    def prune(self, keep_ids: Iterable[str]) -> int:
        """Delete every paper not in `keep_ids` (all its chunks); returns how many papers went."""
        keep = set(keep_ids)
        doomed = [(paper, chunk) for paper, chunk in self._chunk_ids() if paper not in keep]
        for i in range(0, len(doomed), DELETE_BATCH):
            ids = [chunk for _, chunk in doomed[i:i + DELETE_BATCH]]
            self.collection.delete(ids=ids)
            self.lexical.delete(ids)
        return len({paper for paper, _ in doomed})

    def _chunk_ids(self) -> list[tuple[str, str]]:
        """(paper id, chunk id) of every stored chunk, read in pages (ids only, no vectors or text)."""
        found, offset = [], 0
        while True:
            page = self.collection.get(include=[], limit=READ_PAGE, offset=offset)["ids"]
            # chunk ids are `<paper id>:<n>` (chunking.chunk_paper); paper ids may hold ':' themselves
            found.extend((chunk.rsplit(":", 1)[0], chunk) for chunk in page)
            if len(page) < READ_PAGE:
                return found
            offset += READ_PAGE

    # -- reading ---------------------------------------------------------------------------
    def search(self, query: str, k: int, where: dict | None = None) -> list[tuple[Document, float]]:
        """The k nearest chunks with their cosine similarity (higher is closer)."""
        vector = self.embeddings.embed_query(query)
        k = max(1, min(k, self.count_chunks()))
        hits = self.store.similarity_search_by_vector_with_relevance_scores(vector, k=k, filter=where or None)
        return [(doc, 1.0 - distance) for doc, distance in hits]

    def lexical_search(self, query: str, k: int, statuses: Sequence[str] = (), primary_areas: Sequence[str] = (),
                       keywords: Sequence[str] = (), paper_ids: Sequence[str] = ()) -> list[tuple[Document, float]]:
        """The k best chunks by BM25 (higher is better), under the same status/area/keyword/paper filters."""
        hits = []
        for chunk_id, paper_id, title, body, score in self.lexical.search(query, k, statuses, primary_areas, keywords,
                                                                          paper_ids=paper_ids):
            hits.append((Document(id=chunk_id, page_content=chunk_text(title, body),
                                  metadata={"paper_id": paper_id, "title": title}), score))
        return hits

    def get_papers(self, paper_ids: Sequence[str]) -> dict[str, Paper]:
        """Full records (with abstracts) of the given papers, from their first chunks."""
        if not paper_ids:
            return {}
        got = self.collection.get(ids=[f"{pid}:0" for pid in paper_ids], include=["metadatas"])
        papers = {meta["paper_id"]: paper_from_metadata(meta) for meta in got["metadatas"]}
        return papers
