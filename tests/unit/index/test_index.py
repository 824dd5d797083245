"""The index with a real embedded Chroma store and word-hash embeddings (fast, offline)."""

import pytest

from rag.corpus.papers import Paper, load_file
from rag.index.store import collection_identity, collection_name
from rag.offline import prime_tiktoken
from rag.settings import SEED_CORPUS, Settings
from tests.unit.index.index_checks import CHECKS, Store


@pytest.fixture
def store():
    settings = Settings(chunking={"size": 96, "overlap": 16})
    prime_tiktoken(settings.cache_dir / "tiktoken")
    return Store(settings, load_file(SEED_CORPUS).papers)


@pytest.mark.parametrize("check", CHECKS, ids=lambda c: c.__name__.removeprefix("check_"))
def test_embedded_store(check, store):
    check(store)


def test_collection_identity_follows_model_and_chunking():
    base = collection_name("paperchat", collection_identity(Settings(chunking={"size": 96, "overlap": 16})))
    other_chunks = Settings(chunking={"size": 128, "overlap": 16})
    other_model = Settings(chunking={"size": 96, "overlap": 16},
                           embedding={"backend": "openai", "model": "text-embedding-3-small"})
    assert base == collection_name("paperchat", collection_identity(Settings(chunking={"size": 96, "overlap": 16})))
    assert base != collection_name("paperchat", collection_identity(other_chunks))
    assert base != collection_name("paperchat", collection_identity(other_model))


def test_listing_and_pruning_read_every_page(store, monkeypatch):
    monkeypatch.setattr("rag.index.store.READ_PAGE", 5)  # the seed's ~50 chunks span many pages
    monkeypatch.setattr("rag.index.store.DELETE_BATCH", 3)
    index = store.index()
    odd = Paper(id="odd:id:7", title="An id with colons", abstract="Colons are allowed in ids.")
    index.ingest([*store.seed, odd])
    assert index.paper_ids() == {p.id for p in store.seed} | {odd.id}
    assert index.prune([store.seed[0].id, odd.id]) == 18
    assert index.paper_ids() == {store.seed[0].id, odd.id}
