"""The BM25 twin of the vector store: ranking, filters, staying in step with Chroma, fusion."""

import sqlite3

from langchain_core.documents import Document

from rag.corpus.papers import Paper
from rag.index.store import PaperIndex, make_client
from rag.index.lexical import LexicalIndex
from rag.offline import prime_tiktoken
from rag.retrieve.filters import Filters
from rag.retrieve.search import fuse, retrieve
from rag.text import MAX_QUERY_TERMS, query_terms
from rag.settings import Settings
from tests.fakes import WordHashEmbeddings


def chunk(cid, title, body, status="Poster", area="llms"):
    return Document(id=cid, page_content=f"{title}\n\n{body}",
                    metadata={"paper_id": cid.split(":")[0], "title": title, "status": status, "primary_area": area})


def test_query_terms_drop_stop_words_and_stay_bounded():
    assert query_terms("Which papers propose a method for KV-cache compression?") == ["kv", "cache", "compression"]
    assert len(query_terms(" ".join(f"word{i}" for i in range(10_000)))) == MAX_QUERY_TERMS
    assert query_terms("the of and ??? 🙂") == []


def test_bm25_ranks_matching_words_and_applies_filters(tmp_path):
    lex = LexicalIndex(tmp_path / "lex.sqlite")
    lex.upsert([chunk("A:0", "Evicting the KV cache", "We compress key value caches for long contexts.", "Oral"),
                chunk("B:0", "Graph networks", "Message passing on molecules.", "Poster"),
                chunk("C:0", "Cache-friendly sorting", "A sorting algorithm.", "Poster", "systems")])
    hits = lex.search("kv cache compression", 10)
    assert [h[0] for h in hits] == ["A:0", "C:0"]  # B shares no word; A shares three
    assert hits[0][4] > hits[1][4] > 0
    assert [h[0] for h in lex.search("cache", 10, Filters(statuses=("Poster",)))] == ["C:0"]
    assert [h[0] for h in lex.search("cache", 10, Filters(primary_areas=("llms",)))] == ["A:0"]
    assert lex.search("compressing caches", 10)[0][0] == "A:0"  # Porter stemming: caches -> cach, compressing -> compress
    assert lex.search("", 10) == [] and lex.search("的 是", 10) == []


def test_a_hyphenated_query_word_finds_the_word_written_as_one(tmp_path):
    lex = LexicalIndex(tmp_path / "lex.sqlite")
    lex.upsert([chunk("A:0", "Metacognition in language models", "Models that know what they know."),
                chunk("B:0", "Graph networks", "Message passing on molecules.")])
    assert [h[0] for h in lex.search("meta-cognition", 10)] == ["A:0"]  # FTS5 alone splits it into "meta", "cognition"


def test_upsert_replaces_and_delete_removes(tmp_path):
    lex = LexicalIndex(tmp_path / "lex.sqlite")
    lex.upsert([chunk("A:0", "Old", "alpha words")])
    lex.upsert([chunk("A:0", "New", "beta words")])
    assert lex.count() == 1 and lex.search("alpha", 5) == [] and lex.search("beta", 5)[0][0] == "A:0"
    lex.delete(["A:0"])
    assert lex.count() == 0


def seed_index(settings):
    prime_tiktoken(settings.cache_dir / "tiktoken")
    index = PaperIndex(make_client(settings), WordHashEmbeddings(), settings)
    index.ingest([
        Paper(id="Drope00001", title="Dropping positional embeddings", abstract="DroPE removes RoPE after pretraining "
              "so that language models extrapolate to longer contexts.", status="Oral", primary_area="llms"),
        Paper(id="Kvcache001", title="LookaheadKV", abstract="Evicting KV cache entries by looking ahead at future "
              "queries.", status="Poster", primary_area="llms", keywords=("KV Cache", "long  context")),
        Paper(id="Graphs0001", title="Message passing", abstract="Graph neural networks on molecules.",
              status="Poster", primary_area="graphs"),
    ])
    return index


def test_ingest_keeps_the_twin_in_step_and_a_lost_twin_is_rebuilt(tmp_path):
    settings = Settings()
    index = seed_index(settings)
    assert index.lexical.count() == index.count_chunks() == 3
    assert index.lexical_search("RoPE extrapolate", 5)[0][0].metadata["paper_id"] == "Drope00001"
    # Lose rows behind the index's back (as a kill -9 between the two writes would): reopening repairs it.
    db = sqlite3.connect(index.lexical.path)
    db.execute("DELETE FROM chunks WHERE chunk_id = 'Kvcache001:0'")
    db.execute("DELETE FROM ids WHERE chunk_id = 'Kvcache001:0'")
    db.commit()
    db.close()
    reopened = PaperIndex(make_client(settings), WordHashEmbeddings(), settings)
    assert reopened.lexical.chunk_ids() == {"Drope00001:0", "Kvcache001:0", "Graphs0001:0"}
    assert reopened.prune(["Drope00001"]) == 2
    assert reopened.lexical.chunk_ids() == {"Drope00001:0"}


def test_modes_and_fusion(tmp_path):
    settings = Settings(retrieval={"k": 2})
    index = seed_index(settings)
    for mode in ("lexical", "dense", "hybrid"):
        s = settings.retrieval.model_copy(update={"mode": mode})
        top = retrieve(index, "KV cache eviction", s)
        assert top[0].paper.id == "Kvcache001", mode
        assert top[0].text.startswith("Evicting KV cache")
    lexical = settings.retrieval.model_copy(update={"mode": "lexical"})
    assert [s.paper.id for s in retrieve(index, "molecules", lexical, Filters(primary_areas=("llms",)))] == []
    for mode in ("lexical", "dense", "hybrid"):  # keywords: case and spacing do not count; all must match
        s = settings.retrieval.model_copy(update={"mode": mode})
        only = retrieve(index, "future queries", s, Filters(keywords=("kv cache", "Long Context")))
        assert [src.paper.id for src in only] == ["Kvcache001"], mode
        assert retrieve(index, "positional embeddings", s, Filters(keywords=("kv cache", "graphs"))) == [], mode


def test_rrf_sums_reciprocal_ranks():
    a, b, c = (Document(id=i, page_content=i, metadata={"paper_id": i}) for i in "abc")
    fused = fuse([(1.0, [a, b]), (1.0, [b, c])], rrf_k=60)
    assert [d.id for d, _ in fused] == ["b", "a", "c"]  # b is in both lists
    assert abs(fused[0][1] - (1 / 62 + 1 / 61)) < 1e-12
    weighted = fuse([(1.0, [a]), (3.0, [c])], rrf_k=60)
    assert [d.id for d, _ in weighted] == ["c", "a"]
