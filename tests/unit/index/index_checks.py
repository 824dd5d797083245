"""Index behaviour checks run against every store mode: the embedded store (tests/unit/index/test_index.py)
and a real `chroma run` server (tests/integration/test_chroma_server.py). Each check takes a `Store`."""

from __future__ import annotations

import dataclasses
from collections import defaultdict

from rag.corpus.papers import Paper
from rag.index.store import PaperIndex, make_client
from rag.settings import ChunkingSettings, Settings
from tests.fakes import WordHashEmbeddings

DROPE = "RlPVSeKjoc"


@dataclasses.dataclass
class Store:
    """Settings that point at one store (and a collection prefix of its own), and the seed papers."""

    settings: Settings
    seed: list[Paper]

    def index(self, embeddings=None, chunking: ChunkingSettings | None = None) -> PaperIndex:
        """A new client and index, as a new process would open them."""
        settings = self.settings if chunking is None else self.settings.model_copy(update={"chunking": chunking})
        return PaperIndex(make_client(settings), embeddings or WordHashEmbeddings(), settings)


def chunk_sets(index: PaperIndex) -> dict[str, list[str]]:
    """paper id -> its stored chunk ids, sorted by chunk number."""
    got = index.collection.get(include=["metadatas"])
    papers = defaultdict(list)
    for chunk_id, meta in zip(got["ids"], got["metadatas"]):
        papers[meta["paper_id"]].append((meta["chunk"], chunk_id))
    return {pid: [c for _, c in sorted(chunks)] for pid, chunks in papers.items()}


def assert_complete(index: PaperIndex) -> None:
    """Every paper holds exactly the chunks `<paper>:0..n_chunks-1` of one version."""
    got = index.collection.get(include=["metadatas"])
    assert len(got["ids"]) == len(set(got["ids"])) == index.count_chunks()
    by_paper = defaultdict(list)
    for chunk_id, meta in zip(got["ids"], got["metadatas"]):
        by_paper[meta["paper_id"]].append((chunk_id, meta["n_chunks"], meta["content_hash"]))
    assert index.lexical.chunk_ids() == set(got["ids"])  # the BM25 twin holds exactly the same chunks
    for pid, chunks in by_paper.items():
        n = chunks[0][1]
        assert sorted(c for c, _, _ in chunks) == sorted(f"{pid}:{i}" for i in range(n)), pid
        assert len({(n_, h) for _, n_, h in chunks}) == 1, pid


def check_reingesting_unchanged_papers_embeds_nothing(store: Store) -> None:
    emb = WordHashEmbeddings()
    index = store.index(emb)
    first = index.ingest(store.seed)
    assert first.papers_new == 19 and first.chunks_written == index.count_chunks() > 19
    emb.calls.clear()
    again = store.index(emb).ingest(store.seed)
    assert again.papers_unchanged == 19 and again.chunks_written == 0 and emb.calls == []


def check_changed_abstract_replaces_only_that_papers_chunks(store: Store) -> None:
    index = store.index()
    index.ingest(store.seed)
    before = index.count_chunks()
    drope = next(p for p in store.seed if p.id == DROPE)
    shorter = dataclasses.replace(drope, abstract="DroPE removes positional embeddings after pretraining.")
    stats = index.ingest([shorter if p.id == DROPE else p for p in store.seed])
    assert stats.papers_changed == 1 and stats.papers_unchanged == 18 and stats.chunks_written == 1
    assert index.collection.get(where={"paper_id": DROPE})["ids"] == [f"{DROPE}:0"]
    assert index.count_chunks() < before
    assert index.get_papers([DROPE])[DROPE].abstract == shorter.abstract
    assert_complete(index)


def check_a_partly_written_paper_is_written_again(store: Store) -> None:
    index = store.index()
    index.ingest(store.seed)
    sets = chunk_sets(index)
    long_ones = [pid for pid, chunks in sets.items() if len(chunks) >= 3][:2]
    assert len(long_ones) == 2
    # what a kill between two embedding batches leaves: the head of one paper, the tail of another
    index.collection.delete(ids=sets[long_ones[0]][1:] + sets[long_ones[1]][:1])
    stats = store.index().ingest(store.seed)
    assert stats.papers_changed == 2 and stats.papers_unchanged == 17
    assert stats.chunks_written == len(sets[long_ones[0]]) + len(sets[long_ones[1]])
    assert chunk_sets(index) == sets
    assert_complete(index)


def check_a_different_chunking_never_mixes_vectors(store: Store) -> None:
    store.index().ingest(store.seed[:3])
    assert store.index(chunking=ChunkingSettings(size=200, overlap=16)).is_empty()


def check_search_and_paper_records(store: Store) -> None:
    index = store.index()
    index.ingest(store.seed)
    hits = index.search("dropping positional embeddings extends context", k=5)
    assert hits[0][0].metadata["paper_id"] == DROPE
    assert hits[0][1] >= hits[-1][1]
    papers = index.get_papers([DROPE, "RVLMGPXt2i"])
    assert papers["RVLMGPXt2i"].title.startswith("LookaheadKV")
    assert papers[DROPE].abstract == next(p for p in store.seed if p.id == DROPE).abstract


def check_prune_deletes_every_paper_not_kept(store: Store) -> None:
    index = store.index()
    index.ingest(store.seed)
    sets = chunk_sets(index)
    keep = [p.id for p in store.seed if p.id != DROPE][:15]
    assert index.prune(keep + ["NotIndexed"]) == 4
    assert index.paper_ids() == set(keep)
    assert chunk_sets(index) == {pid: sets[pid] for pid in keep}
    assert index.count_chunks() == sum(len(sets[pid]) for pid in keep)
    hits = index.search("dropping positional embeddings extends context", k=50)
    assert {d.metadata["paper_id"] for d, _ in hits} <= set(keep)
    assert store.index().prune(keep) == 0
    again = store.index().ingest(store.seed)  # pruned papers come back whole
    assert again.papers_new == 4 and again.papers_unchanged == 15 and chunk_sets(index) == sets


CHECKS = [value for name, value in sorted(globals().items()) if name.startswith("check_")]
