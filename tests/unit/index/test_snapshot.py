"""Index snapshots: a corpus file's vectors shipped next to it, loaded on first start when they fit.
And the shipped one must fit the shipped corpus and the default embedder."""

import gzip
import json

import numpy as np
import pytest

from rag.corpus.papers import load_file
from rag.index.chunking import chunk_paper, make_splitter
from rag.index.snapshot import read_snapshot, snapshot_path, write_snapshot
from rag.index.store import collection_identity
from rag.offline import prime_tiktoken
from rag.pipeline import build_pipeline
from rag.settings import SEED_CORPUS, SHIPPED_CORPUS, Settings
from tests.fakes import WordHashEmbeddings


class Counting(WordHashEmbeddings):
    def __init__(self):
        super().__init__()
        self.embedded = 0

    def embed_documents(self, texts):
        self.embedded += len(texts)
        return super().embed_documents(texts)


@pytest.fixture
def corpus(tmp_path):
    path = tmp_path / "mini.jsonl"
    path.write_text(SEED_CORPUS.read_text())
    return path


def pipeline(tmp_path, name, embeddings=None, **settings):
    return build_pipeline(Settings(data_dir=tmp_path / name, **settings), embeddings=embeddings or Counting())


def test_a_snapshot_loads_instead_of_embedding_and_embeds_only_what_changed(tmp_path, corpus):
    first = pipeline(tmp_path, "a")
    first.ingest_files([corpus])
    path, written = first.snapshot(corpus)
    assert path == tmp_path / "mini.index.npz" and written
    assert first.snapshot(corpus) == (path, False)  # the same index writes the same bytes: nothing to commit

    records = [json.loads(line) for line in corpus.read_text().splitlines()]
    records[0]["abstract"] += " A sentence added later."
    corpus.write_text("".join(json.dumps(r) + "\n" for r in records))
    notes = []
    second = pipeline(tmp_path, "b")
    report, stats = second.ingest_files([corpus], notice=notes.append)
    changed_chunks = len(chunk_paper(load_file(corpus).papers[0], make_splitter(second.settings.chunking)))
    assert stats.chunks_written == second.index.embeddings.embedded == changed_chunks
    assert stats.chunks_from_snapshot == second.index.count_chunks() - changed_chunks > 0
    assert notes == [f"18 of 19 papers load from mini.index.npz; 1 new or changed ones are embedded."]
    # the loaded vectors are the snapshot's (float16), so search finds the same papers
    question = "dropping positional embeddings extends context"
    assert [s.paper.id for s in second.retrieve(question)] == [s.paper.id for s in first.retrieve(question)]


def test_a_snapshot_made_by_another_embedder_or_chunking_is_not_used(tmp_path, corpus):
    first = pipeline(tmp_path, "a")
    first.ingest_files([corpus])
    first.snapshot(corpus)
    notes = []
    other = pipeline(tmp_path, "b", chunking={"size": 96, "overlap": 16})
    _, stats = other.ingest_files([corpus], notice=notes.append)
    assert stats.chunks_from_snapshot == 0 and stats.chunks_written == other.index.count_chunks()
    assert "every paper is embedded instead" in notes[0]


def test_a_broken_snapshot_is_ignored(tmp_path, corpus):
    snapshot_path(corpus).write_bytes(b"not a zip")
    assert read_snapshot(snapshot_path(corpus)) is None
    _, stats = pipeline(tmp_path, "a").ingest_files([corpus])
    assert stats.chunks_from_snapshot == 0 and stats.chunks_written > 0


def test_the_shipped_snapshot_fits_the_shipped_corpus_and_the_default_index():
    """Fails when corpus/iclr2026.jsonl.gz, the chunking or the index schema changed without
    `paperchat snapshot build` (the embedder itself is checked against real vectors in the integration tests)."""
    prime_tiktoken(Settings().cache_dir / "tiktoken")
    snapshot = read_snapshot(snapshot_path(SHIPPED_CORPUS))
    assert snapshot is not None, "run `paperchat snapshot build` to write corpus/iclr2026.index.npz"
    settings = Settings()
    assert snapshot.identity == collection_identity(settings)
    with gzip.open(SHIPPED_CORPUS, "rt") as f:
        lines = sum(1 for _ in f)
    papers = load_file(SHIPPED_CORPUS).papers
    assert len(papers) == lines == 19_630
    splitter = make_splitter(settings.chunking)
    expected = {c.id: p.content_hash() for p in papers for c in chunk_paper(p, splitter)}
    assert dict(zip(snapshot.ids, snapshot.hashes)) == expected
    norms = np.linalg.norm(snapshot.vectors.astype(np.float32), axis=1)
    assert snapshot.vectors.dtype == np.float16 and np.allclose(norms, 1.0, atol=2e-3)
