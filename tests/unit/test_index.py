"""The index with a real embedded Chroma store and word-hash embeddings (fast, offline)."""

import dataclasses

import pytest

from rag.corpus import Paper, load_jsonl
from rag.index import PaperIndex, collection_identity, collection_name, make_client
from rag.offline import prime_tiktoken
from rag.settings import SHIPPED_CORPUS, Settings
from tests.fakes import WordHashEmbeddings


@pytest.fixture
def settings(tmp_path):
    s = Settings(chunking={"size": 96, "overlap": 16})
    prime_tiktoken(s.cache_dir / "tiktoken")
    return s


@pytest.fixture
def seed():
    return load_jsonl(SHIPPED_CORPUS).papers


def make_index(settings, embeddings=None):
    return PaperIndex(make_client(settings), embeddings or WordHashEmbeddings(), settings)


def test_reingesting_unchanged_papers_embeds_nothing(settings, seed):
    emb = WordHashEmbeddings()
    index = make_index(settings, emb)
    first = index.ingest(seed)
    assert first.papers_new == 19 and first.chunks_written == index.count_chunks() > 19
    emb.calls.clear()
    again = make_index(settings, emb).ingest(seed)  # a new process would reopen the same collection
    assert again.papers_unchanged == 19 and again.chunks_written == 0 and emb.calls == []


def test_changed_abstract_replaces_only_that_papers_chunks(settings, seed):
    index = make_index(settings)
    index.ingest(seed)
    before = index.count_chunks()
    drope = next(p for p in seed if p.id == "RlPVSeKjoc")
    shorter = dataclasses.replace(drope, abstract="DroPE removes positional embeddings after pretraining.")
    stats = index.ingest([shorter if p.id == drope.id else p for p in seed])
    assert stats.papers_changed == 1 and stats.papers_unchanged == 18 and stats.chunks_written == 1
    got = index.collection.get(where={"paper_id": "RlPVSeKjoc"})
    assert got["ids"] == ["RlPVSeKjoc:0"]
    assert index.count_chunks() < before
    assert index.get_papers(["RlPVSeKjoc"])["RlPVSeKjoc"].abstract == shorter.abstract


def test_collection_identity_follows_model_and_chunking(settings):
    base = collection_name("paperchat", collection_identity(settings))
    other_chunks = Settings(chunking={"size": 128, "overlap": 16})
    other_model = Settings(chunking={"size": 96, "overlap": 16},
                           embedding={"backend": "openai", "model": "text-embedding-3-small"})
    assert base == collection_name("paperchat", collection_identity(Settings(chunking={"size": 96, "overlap": 16})))
    assert base != collection_name("paperchat", collection_identity(other_chunks))
    assert base != collection_name("paperchat", collection_identity(other_model))


def test_a_different_chunking_never_mixes_vectors(settings, seed):
    make_index(settings).ingest(seed[:3])
    other = Settings(data_dir=settings.data_dir, chunking={"size": 200, "overlap": 16})
    assert make_index(other).is_empty()


def test_search_and_paper_records(settings, seed):
    index = make_index(settings)
    index.ingest(seed)
    hits = index.search("dropping positional embeddings extends context", k=5)
    assert hits[0][0].metadata["paper_id"] == "RlPVSeKjoc"
    assert hits[0][1] >= hits[-1][1]
    papers = index.get_papers(["RlPVSeKjoc", "RVLMGPXt2i"])
    assert papers["RVLMGPXt2i"].title.startswith("LookaheadKV")
    assert papers["RlPVSeKjoc"].abstract == next(p for p in seed if p.id == "RlPVSeKjoc").abstract
