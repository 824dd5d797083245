"""Similar papers, the topic map and the paper-id scope (map cluster/region, pinned set), on fake vectors."""

import json

import pytest

from rag.corpus.papers import Paper, load_corpus
from rag.index.store import PaperIndex, make_client
from rag.offline import prime_tiktoken
from rag.retrieve.filters import Filters
from rag.retrieve.search import retrieve
from rag.settings import Settings
from rag.explore.similar import differs_note, similar
from rag.explore.topics import MAX_CLUSTERS, build_map, ensure_map, index_key, label_clusters, map_path, same_topic
from tests.fakes import WordHashEmbeddings

SEED = "corpus/iclr2026_seed.jsonl"


@pytest.fixture
def index():
    s = Settings(retrieval={"k": 4, "fetch_k": 40})
    prime_tiktoken(s.cache_dir / "tiktoken")
    idx = PaperIndex(make_client(s), WordHashEmbeddings(), s)
    idx.ingest(load_corpus([SEED]).papers)
    return idx


@pytest.fixture
def papers():
    return load_corpus([SEED]).papers


# -- scope filter -----------------------------------------------------------------------------
def test_paper_id_scope_restricts_both_dense_and_bm25(index, papers):
    question = "large language models reasoning"
    free = [s.paper.id for s in retrieve(index, question, index.settings.retrieval)]
    scope = tuple(p.id for p in papers if p.id not in free[:2])[:5]
    for mode in ("hybrid", "dense", "lexical"):
        settings = index.settings.retrieval.model_copy(update={"mode": mode})
        got = [s.paper.id for s in retrieve(index, question, settings, Filters(paper_ids=scope))]
        assert got and set(got) <= set(scope), mode
    assert Filters(paper_ids=("a", "b")).where() == {"paper_id": {"$in": ["a", "b"]}}
    assert Filters(paper_ids=("a",)).narrowed_by(Filters(statuses=("Oral",))) == Filters(
        statuses=("Oral",), paper_ids=("a",))


# -- similar papers ---------------------------------------------------------------------------
def test_own_abstract_finds_itself_first(index, papers):
    for paper in papers:
        result = similar(index, text=paper.abstract, k=3)
        assert result.papers[0].paper.id == paper.id
        assert result.papers[0].score > 0.9 and not result.nothing_close


def test_papers_like_this_one_exclude_itself_and_are_ordered(index, papers):
    target = papers[0]
    result = similar(index, paper_id=target.id, k=5)
    assert len(result.papers) == 5 and target.id not in [p.paper.id for p in result.papers]
    assert result.query_title == target.title
    scores = [p.score for p in result.papers]
    assert scores == sorted(scores, reverse=True)
    assert all(p.differs for p in result.papers)


def test_nothing_close_for_off_topic_text(index):
    floor = Settings().embedding.floor("similar")
    result = similar(index, text="Preheat the oven, mix flour sugar butter, bake the cake golden brown", k=3,
                     threshold=floor)
    assert floor == 0.43 and result.nothing_close
    assert not similar(index, text="Preheat the oven, mix flour sugar butter", threshold=0.0).nothing_close


def test_bad_input_says_what_to_fix(index):
    with pytest.raises(ValueError, match="either paper_id"):
        similar(index)
    with pytest.raises(ValueError, match="not in the index"):
        similar(index, paper_id="NoSuchPaper")
    with pytest.raises(ValueError, match="at least a sentence"):
        similar(index, text="the of")


def test_differs_note_names_what_the_other_paper_has():
    other = Paper(id="X", title="T", abstract="We study graphs. Our method prunes molecular graph edges with spectral "
                  "sparsifiers for chemistry.", keywords=("graph pruning", "language models"))
    note = differs_note(other, "Language models for reasoning over text.", ("language models",))
    assert "graph pruning" in note and "language models" not in note
    assert "spectral" in note  # the sentence with the most new words


# -- topic map --------------------------------------------------------------------------------
def test_map_covers_every_paper_with_bounded_clusters_and_stable_labels(index, papers):
    first, second = build_map(index), build_map(index)
    assert sorted(first.ids) == sorted(p.id for p in papers)
    assert len(first.x) == len(first.y) == len(first.cluster) == len(first.ids)
    assert 2 <= len(first.labels) <= MAX_CLUSTERS
    assert first == second  # fixed seed: same layout, clusters and labels every time
    assert all(first.members(c) for c in range(len(first.labels)))
    everything = first.in_region((min(first.x), max(first.x)), (min(first.y), max(first.y)))
    assert sorted(everything) == sorted(first.ids)


def test_labels_are_the_clusters_distinctive_terms():
    texts = ["Graph pruning\x00graph neural networks", "Graph sparsity\x00graph neural networks",
             "Diffusion images\x00diffusion models", "Diffusion video\x00diffusion models"]
    labels = label_clusters(texts, [0, 0, 1, 1], 2)
    assert labels[0].startswith("graph") and "diffusion" not in labels[0]
    assert "diffusion" in labels[1] and "graph" not in labels[1]


def test_a_label_does_not_repeat_a_term_in_another_form():
    assert same_topic("language", "large language models") and same_topic("llms", "large language models")
    assert same_topic("llm", "llms") and same_topic("diffusion models", "diffusion model")
    assert not same_topic("language", "vision") and not same_topic("graph", "hypergraph")
    assert not same_topic("rl", "large language models") and not same_topic("image", "imagenet")
    texts = [f"Large language models {i}\x00large language models; llms" for i in range(4)] + \
            [f"Diffusion images {i}\x00diffusion models" for i in range(4)]
    labels = label_clusters(texts, [0] * 4 + [1] * 4, 2)
    terms = labels[0].split(" · ")
    assert "large language models" in terms and "llms" not in terms and "language" not in terms, labels


def test_stored_map_is_reused_and_rebuilt_when_the_index_changes(index, tmp_path):
    data = index.settings.data_dir
    built, fresh = ensure_map(index, data)
    assert fresh and map_path(data, index.name).exists()
    again, fresh = ensure_map(index, data)
    assert not fresh and again == built
    index.ingest([Paper(id="NewPaper01", title="A new paper on graphs", abstract="Graph neural networks prune edges.")])
    assert index_key(index) != built.key
    rebuilt, fresh = ensure_map(index, data)
    assert fresh and "NewPaper01" in rebuilt.ids
    changed = Paper(id="NewPaper01", title="A new paper on graphs", abstract="Now about diffusion models instead.")
    index.ingest([changed])  # same ids, new content: still stale
    assert ensure_map(index, data)[1]
    stored = json.loads(map_path(data, index.name).read_text())
    stored["key"] = "tampered"
    map_path(data, index.name).write_text(json.dumps(stored))
    assert ensure_map(index, data)[1]  # never served when the key does not match


def test_a_phrase_wins_over_its_words_and_its_left_out_words_do_not_come_back():
    from rag.explore.topics import pick_terms

    gnn = [(126.7, "graph"), (79.7, "graph neural networks"), (36.5, "graphs"), (35.4, "networks"),
           (31.0, "neural"), (23.4, "gnns"), (19.6, "graph learning"), (19.1, "node")]  # the full corpus's scores
    assert pick_terms(gnn) == ["graph neural networks", "graph learning", "node"]
    assert same_topic("graph learning", "graph representation learning")
    assert not same_topic("graph learning", "graph neural networks")
    series = [(134.4, "series"), (126.3, "time"), (120.8, "forecasting"), (78.7, "time series forecasting"),
              (44.8, "multivariate"), (37.7, "time-series"), (19.9, "anomaly")]
    assert pick_terms(series) == ["time series forecasting", "multivariate", "anomaly"]
    quant = [(180.3, "quantization"), (46.1, "post-training quantization"), (40.1, "bit"), (39.7, "post-training"),
             (30.0, "model compression")]  # a phrase far weaker than its word is passed over, and so are its words
    assert pick_terms(quant) == ["quantization", "bit", "model compression"]
