"""Lexical index: BM25 over the same chunks as the vector store, in SQLite FTS5.

It lives next to the vector store under the data dir, one file per collection (same name, so a
different embedder or chunking never shares it), and is updated by the same ingest calls, so no query
rebuilds anything. Writes go here before they go to Chroma; if the two ever disagree (a kill -9 between
them, or another machine writing to a shared Chroma server), `PaperIndex` sees the counts differ on
open and rebuilds this file from Chroma's stored chunks.
"""

from __future__ import annotations

import sqlite3
import threading
from collections.abc import Iterable, Sequence
from pathlib import Path

from langchain_core.documents import Document

from rag.index.chunking import body_of
from rag.retrieve.filters import Filters
from rag.text import search_terms

SCHEMA = 3  # PRAGMA user_version of the file layout below


class LexicalIndex:
    """Chunk id -> title and text, searchable by BM25 (FTS5, Porter-stemmed), with status and area columns."""

    def __init__(self, path: Path):
        path.parent.mkdir(parents=True, exist_ok=True)
        self.path = path
        self._lock = threading.Lock()  # one connection shared by the app's worker threads
        self._db = sqlite3.connect(str(path), check_same_thread=False, isolation_level=None)
        self._db.execute("PRAGMA journal_mode=WAL")
        if self._db.execute("PRAGMA user_version").fetchone()[0] != SCHEMA:  # older layout: start afresh
            self._db.execute("DROP TABLE IF EXISTS chunks")
            self._db.execute("DROP TABLE IF EXISTS ids")
            self._db.execute(f"PRAGMA user_version = {SCHEMA}")
        # `ids` gives every chunk id a row number, the FTS5 rowid of that chunk: FTS5 cannot index an
        # UNINDEXED column, so replacing or deleting by chunk id would otherwise scan the whole table.
        self._db.execute("CREATE TABLE IF NOT EXISTS ids (n INTEGER PRIMARY KEY, chunk_id TEXT UNIQUE NOT NULL)")
        self._db.execute(
            "CREATE VIRTUAL TABLE IF NOT EXISTS chunks USING fts5("
            "chunk_id UNINDEXED, paper_id UNINDEXED, status UNINDEXED, primary_area UNINDEXED, keywords UNINDEXED, "
            "title, body, tokenize='porter unicode61 remove_diacritics 2')"
        )

    def close(self) -> None:
        self._db.close()

    def count(self) -> int:
        with self._lock:
            return self._db.execute("SELECT count(*) FROM ids").fetchone()[0]

    def chunk_ids(self) -> set[str]:
        with self._lock:
            return {row[0] for row in self._db.execute("SELECT chunk_id FROM chunks")}

    def _rows_of(self, chunk_ids: Sequence[str]) -> list[int]:
        found = []
        for chunk_id in chunk_ids:
            row = self._db.execute("SELECT n FROM ids WHERE chunk_id = ?", (chunk_id,)).fetchone()
            if row:
                found.append(row[0])
        return found

    def upsert(self, documents: Sequence[Document]) -> None:
        """Store chunks (replacing any with the same id) in one transaction."""
        rows = [(d.id, d.metadata["paper_id"], d.metadata.get("status", ""), d.metadata.get("primary_area", ""),
                 "|" + "|".join(d.metadata.get("keyword_list") or ()) + "|", d.metadata.get("title", ""), body_of(d))
                for d in documents]
        with self._lock:
            self._db.execute("BEGIN")
            self._db.executemany("DELETE FROM chunks WHERE rowid = ?", [(n,) for n in self._rows_of([r[0] for r in rows])])
            self._db.executemany("INSERT OR IGNORE INTO ids (chunk_id) VALUES (?)", [(r[0],) for r in rows])
            numbered = [(self._rows_of([r[0]])[0], *r) for r in rows]
            self._db.executemany("INSERT INTO chunks (rowid, chunk_id, paper_id, status, primary_area, keywords, "
                                 "title, body) VALUES (?, ?, ?, ?, ?, ?, ?, ?)", numbered)
            self._db.execute("COMMIT")

    def delete(self, chunk_ids: Iterable[str]) -> None:
        chunk_ids = list(chunk_ids)
        with self._lock:
            self._db.execute("BEGIN")
            self._db.executemany("DELETE FROM chunks WHERE rowid = ?", [(n,) for n in self._rows_of(chunk_ids)])
            self._db.executemany("DELETE FROM ids WHERE chunk_id = ?", [(c,) for c in chunk_ids])
            self._db.execute("COMMIT")

    def rebuild(self, documents: Iterable[Document]) -> int:
        """Replace everything with `documents` (the vector store's chunks); returns how many."""
        with self._lock:
            self._db.execute("DELETE FROM chunks")
            self._db.execute("DELETE FROM ids")
        n = 0
        batch: list[Document] = []
        for doc in documents:
            batch.append(doc)
            if len(batch) == 1000:
                self.upsert(batch)
                n, batch = n + len(batch), []
        if batch:
            self.upsert(batch)
            n += len(batch)
        return n

    def document_frequency(self, terms: Sequence[str]) -> dict[str, int]:
        """How many chunks hold each term (Porter-stemmed like the index: "hives" counts "hive")."""
        found = {}
        with self._lock:
            for term in terms:
                phrase = '"' + term.replace('"', '""') + '"'
                found[term] = self._db.execute("SELECT count(*) FROM chunks WHERE chunks MATCH ?", (phrase,)).fetchone()[0]
        return found

    def search(self, query: str, k: int, filters: Filters = Filters(),
               title_weight: float = 2.0) -> list[tuple[str, str, str, str, float]]:
        """The k best chunks as (chunk id, paper id, title, body, BM25 score; higher is better), under `filters`.
        No terms, no hits."""
        terms = search_terms(query)
        if not terms:
            return []
        condition, params = filters.sql()
        sql = ("SELECT chunk_id, paper_id, title, body, -bm25(chunks, 0, 0, 0, 0, 0, ?, 1.0) AS score FROM chunks "
               "WHERE chunks MATCH ?" + (f" AND {condition}" if condition else "") + " ORDER BY score DESC LIMIT ?")
        with self._lock:
            rows = self._db.execute(sql, [title_weight, " OR ".join(f'"{t}"' for t in terms), *params, k])
            return [(c, p, t, b, float(s)) for c, p, t, b, s in rows]
