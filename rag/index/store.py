"""Index: chunks and their vectors in one Chroma collection, named after what made them, with a BM25
twin (rag.index.lexical) that every write updates too.

The collection name hashes the embedding model and the chunking settings, so changing either never mixes
vectors; re-ingesting unchanged papers embeds nothing (content hashes on every chunk). This is the one module
that talks to Chroma: everything else reads the index through `PaperIndex`'s methods.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Callable, Iterable, Iterator, Sequence
from dataclasses import dataclass

import chromadb
import numpy as np
from chromadb.config import Settings as ChromaClientSettings
from langchain_core.documents import Document
from langchain_core.embeddings import Embeddings

from rag.corpus.papers import Paper
from rag.errors import IndexError_
from rag.index.chunking import chunk_paper, chunk_text, make_splitter, paper_from_metadata
from rag.index.lexical import LexicalIndex
from rag.index.snapshot import Snapshot
from rag.models.embeddings import embedding_identity
from rag.retrieve.filters import Filters
from rag.settings import ChromaSettings, Settings

INDEX_SCHEMA = 2  # 2: keyword_list array metadata; bump when the chunk layout or metadata changes meaning
READ_PAGE = 5_000  # ids per read when listing the whole collection
SNAPSHOT_BATCH = 2_000  # papers per write when their vectors come from a snapshot
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
    chunks_written: int = 0  # embedded here
    chunks_from_snapshot: int = 0  # written with their snapshot's vectors, not embedded

    def __str__(self) -> str:
        loaded = f", {self.chunks_from_snapshot} loaded from the snapshot" if self.chunks_from_snapshot else ""
        return (f"{self.papers_new} new, {self.papers_changed} changed, {self.papers_unchanged} unchanged papers; "
                f"{self.chunks_written} chunks embedded{loaded}")


ProgressFn = Callable[[int, int], None]  # (papers done, papers total)


@dataclass(frozen=True)
class Chunk:
    """One stored chunk as read back: its id, metadata, and (when asked for) vector and text."""

    id: str
    metadata: dict
    vector: Sequence[float] | None = None
    text: str | None = None

    def document(self) -> Document:
        return Document(id=self.id, page_content=self.text or "", metadata=self.metadata)


class PaperIndex:
    """The chunks of every ingested paper, searchable by vector (Chroma) and by BM25 (the lexical twin)."""

    def __init__(self, client: chromadb.ClientAPI, embeddings: Embeddings, settings: Settings):
        self.settings = settings
        self.identity = collection_identity(settings)
        self.name = collection_name(settings.chroma.collection_prefix, self.identity)
        self.embeddings = embeddings
        # Our embeddings, never Chroma's default function (it would download a model).
        self.collection = client.get_or_create_collection(
            name=self.name, embedding_function=None,
            metadata={"paperchat_identity": json.dumps(self.identity, sort_keys=True)},
            configuration={"hnsw": {"space": "cosine"}},
        )
        stored = (self.collection.metadata or {}).get("paperchat_identity")
        if stored and json.loads(stored) != self.identity:  # only a hash collision could get here
            raise IndexError_(f"Collection {self.name} was made with {stored}, not {self.identity}.")
        self.lexical = LexicalIndex(settings.lexical_dir / f"{self.name}.sqlite")
        self.sync_lexical()

    def sync_lexical(self) -> bool:
        """Rebuild the BM25 twin from Chroma when their chunk counts differ; True if it was rebuilt."""
        if self.lexical.count() == self.count_chunks():
            return False
        self.lexical.rebuild(c.document() for c in self.chunks(text=True))
        return True

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

    def write(self, documents: Sequence[Document], vectors: Sequence[Sequence[float]] | None = None) -> None:
        """Store chunks (replacing any with the same ids) with their vectors, embedded here unless given.
        The BM25 twin is written first: if we die before Chroma, the paper still looks changed to Chroma's
        content hashes, so the next run writes both again."""
        if not documents:
            return
        if vectors is None:
            vectors = self.embeddings.embed_documents([d.page_content for d in documents])
        self.lexical.upsert(documents)
        self.collection.upsert(ids=[d.id for d in documents], embeddings=[list(map(float, v)) for v in vectors],
                               documents=[d.page_content for d in documents],
                               metadatas=[d.metadata for d in documents])

    def delete_chunks(self, chunk_ids: Sequence[str]) -> None:
        for i in range(0, len(chunk_ids), DELETE_BATCH):
            part = list(chunk_ids[i:i + DELETE_BATCH])
            self.lexical.delete(part)
            self.collection.delete(ids=part)

    def ingest(self, papers: Iterable[Paper], batch_papers: int = 64, progress: ProgressFn | None = None,
               snapshot: Snapshot | None = None) -> IngestStats:
        """Embed and store papers; unchanged papers are skipped, changed ones replaced whole. A chunk whose
        vector the `snapshot` holds for the same paper content is stored with it instead of embedded (the
        caller checks the snapshot's identity)."""
        papers = list(papers)
        if snapshot is not None:  # loading vectors is fast: bigger batches, fewer round trips
            batch_papers = max(batch_papers, SNAPSHOT_BATCH)
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
            self.delete_chunks(stale)
            known = [(d, snapshot.vector(d.id, d.metadata["content_hash"])) for d in to_write] if snapshot else []
            loaded = [(d, v) for d, v in known if v is not None]
            if loaded:
                self.write([d for d, _ in loaded], [v for _, v in loaded])
                stats.chunks_from_snapshot += len(loaded)
            fresh = [d for d, v in known if v is None] if snapshot else to_write
            step = self.settings.embedding.batch_size
            for i in range(0, len(fresh), step):
                self.write(fresh[i:i + step])
            stats.chunks_written += len(fresh)
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
        self.delete_chunks([chunk for _, chunk in doomed])
        return len({paper for paper, _ in doomed})

    def _chunk_ids(self) -> list[tuple[str, str]]:
        """(paper id, chunk id) of every stored chunk (ids only, no vectors or text)."""
        # chunk ids are `<paper id>:<n>` (chunking.chunk_paper); paper ids may hold ':' themselves
        return [(c.id.rsplit(":", 1)[0], c.id) for c in self.chunks(metadata=False)]

    # -- reading ---------------------------------------------------------------------------
    def chunks(self, first_only: bool = False, metadata: bool = True, vectors: bool = False,
               text: bool = False) -> Iterator[Chunk]:
        """Every stored chunk (or only each paper's first), read in pages, with what was asked for."""
        include = [name for name, wanted in (("metadatas", metadata), ("embeddings", vectors), ("documents", text))
                   if wanted]
        offset = 0
        while True:
            page = self.collection.get(where={"chunk": 0} if first_only else None, include=include,
                                       limit=READ_PAGE, offset=offset)
            metas = page.get("metadatas") if metadata else None
            embeds = page.get("embeddings") if vectors else None
            docs = page.get("documents") if text else None
            for i, chunk_id in enumerate(page["ids"]):
                yield Chunk(chunk_id, metas[i] if metas is not None else {},
                            embeds[i] if embeds is not None else None, docs[i] if docs is not None else None)
            if len(page["ids"]) < READ_PAGE:
                return
            offset += READ_PAGE

    def vectors_of(self, paper_id: str) -> list[list[float]]:
        """The stored vectors of one paper's chunks."""
        got = self.collection.get(where={"paper_id": paper_id}, include=["embeddings"])
        found = got.get("embeddings")
        return [list(map(float, v)) for v in (found if found is not None else [])]

    def nearest(self, vectors: Sequence[Sequence[float]], k: int, filters: Filters | None = None) -> list[list[tuple[dict, float]]]:
        """Per query vector, the k nearest chunks as (metadata, cosine similarity), closest first."""
        k = max(1, min(k, self.count_chunks()))
        got = self.collection.query(query_embeddings=[list(map(float, v)) for v in vectors], n_results=k,
                                    where=(filters or Filters()).where(), include=["metadatas", "distances"])
        return [[(meta, 1.0 - float(dist)) for meta, dist in zip(metas, dists)]
                for metas, dists in zip(got["metadatas"], got["distances"])]

    def search(self, query: str, k: int, filters: Filters | None = None) -> list[tuple[Document, float]]:
        """The k nearest chunks to a text with their cosine similarity (higher is closer)."""
        vector = self.embeddings.embed_query(query)
        k = max(1, min(k, self.count_chunks()))
        got = self.collection.query(query_embeddings=[vector], n_results=k, where=(filters or Filters()).where(),
                                    include=["metadatas", "documents", "distances"])
        return [(Document(id=i, page_content=text or "", metadata=meta), 1.0 - float(dist))
                for i, text, meta, dist in zip(got["ids"][0], got["documents"][0], got["metadatas"][0],
                                               got["distances"][0])]

    def lexical_search(self, query: str, k: int, filters: Filters | None = None) -> list[tuple[Document, float]]:
        """The k best chunks by BM25 (higher is better), under the same filters."""
        return [(Document(id=chunk_id, page_content=chunk_text(title, body), metadata={"paper_id": paper_id, "title": title}),
                 score)
                for chunk_id, paper_id, title, body, score in self.lexical.search(query, k, filters or Filters())]

    def get_papers(self, paper_ids: Sequence[str]) -> dict[str, Paper]:
        """Full records (with abstracts) of the given papers, from their first chunks."""
        if not paper_ids:
            return {}
        got = self.collection.get(ids=[f"{pid}:0" for pid in paper_ids], include=["metadatas"])
        return {meta["paper_id"]: paper_from_metadata(meta) for meta in got["metadatas"]}

    def all_papers(self) -> list[Paper]:
        """Every indexed paper's record, read in pages."""
        return [paper_from_metadata(c.metadata) for c in self.chunks(first_only=True)]

    def snapshot(self, paper_ids: Iterable[str]) -> Snapshot:
        """The stored vectors of these papers' chunks, with this index's identity (`paperchat snapshot build`)."""
        wanted = set(paper_ids)
        rows = sorted((c.id, c.metadata.get("content_hash", ""), c.vector) for c in self.chunks(vectors=True)
                      if c.metadata["paper_id"] in wanted)
        vectors = np.asarray([v for _, _, v in rows], dtype=np.float32).reshape(len(rows), -1)
        return Snapshot(self.identity, [cid for cid, _, _ in rows], [h for _, h, _ in rows], vectors.astype(np.float16))

    def primary_areas(self) -> list[str]:
        """The primary areas present in the index."""
        return sorted({c.metadata.get("primary_area", "") for c in self.chunks(first_only=True)} - {""})
