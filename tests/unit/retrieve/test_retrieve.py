import pytest

from rag.corpus.papers import Paper
from rag.index.store import PaperIndex, make_client
from rag.offline import prime_tiktoken
from rag.question.router import descriptions
from rag.retrieve.search import Filters, retrieve
from rag.settings import Settings
from tests.fakes import WordHashEmbeddings

LONG = " ".join(f"Attention sink number {i} stores keys and values in the cache." for i in range(60))


@pytest.fixture
def index():
    s = Settings(chunking={"size": 48, "overlap": 8}, retrieval={"k": 3, "fetch_k": 30, "max_source_tokens": 80})
    prime_tiktoken(s.cache_dir / "tiktoken")
    idx = PaperIndex(make_client(s), WordHashEmbeddings(), s)
    idx.ingest([
        Paper(id="Many000001", title="Cache Keys Values", abstract=LONG, status="Oral", primary_area="llms"),
        Paper(id="Rope000001", title="Rotary positions", abstract="Rotary position embeddings for long context.",
              status="Poster", primary_area="llms"),
        Paper(id="Graph00001", title="Graph cache", abstract="Caching keys and values of graph neural networks.",
              status="Poster", primary_area="graphs"),
        Paper(id="Vision0001", title="Vision", abstract="Images of cats.", status="Withdrawn", primary_area="vision"),
    ])
    return idx


def test_top_papers_not_duplicate_chunks(index):
    sources = retrieve(index, "keys and values in the cache", index.settings.retrieval)
    ids = [s.paper.id for s in sources]
    assert len(ids) == len(set(ids)) == 3
    assert ids[0] == "Many000001"  # its many chunks collapse into one source
    assert [s.n for s in sources] == [1, 2, 3]
    assert sources[0].score >= sources[1].score >= sources[2].score


def test_source_text_is_bounded(index):
    import tiktoken

    source = retrieve(index, "keys and values in the cache", index.settings.retrieval)[0]
    assert len(source.passages) >= 1
    assert len(tiktoken.get_encoding("cl100k_base").encode(source.text)) <= 80 + 10
    assert source.paper.abstract == LONG  # the full record comes back for display
    assert all(p in LONG for p in source.passages)  # verbatim sentences: the paper panel marks each one



def test_filters_apply_inside_the_search(index):
    only_graphs = retrieve(index, "keys and values in the cache", index.settings.retrieval,
                           Filters(primary_areas=("graphs",)))
    assert [s.paper.id for s in only_graphs] == ["Graph00001"]
    posters = retrieve(index, "cache", index.settings.retrieval, Filters(statuses=("Poster",)), k=5)
    assert {s.paper.status for s in posters} == {"Poster"}
    assert Filters().where() is None
    assert Filters(statuses=("Oral",), primary_areas=("x",)).where() == {
        "$and": [{"status": {"$in": ["Oral"]}}, {"primary_area": {"$in": ["x"]}}]}


@pytest.mark.parametrize("question, followup", [
    ("What are its limitations?", True), ("Compare the first two", True), ("how does the second one differ?", True),
    ("它有什么局限？", True), ("Why?", True),
    ("What is DroPE and why does it extend context?", True),  # "it" — searched with the previous question too
    ("Which papers study KV cache eviction for long prompts?", False), ("有没有关于KV缓存压缩的论文？", False),
])
def test_followups_are_searched_with_the_previous_question(question, followup):
    from rag.question.rewrite import fallback_query
    from rag.question.router import is_followup, route
    from rag.question.turns import Exchange

    assert is_followup(question) is followup
    history = [Exchange("What is DroPE?", "It drops positional embeddings [1].")]
    as_searched = route(question).english or question  # the question, or a Chinese one's English terms
    assert fallback_query(route(question, history), history) == (f"What is DroPE? {as_searched}" if followup else as_searched)
    assert fallback_query(route(question), []) == as_searched


def test_papers_a_followup_points_back_to_are_fused_in_under_the_filters(index):
    settings = index.settings.retrieval
    query = "keys and values in the cache"
    alone = [s.paper.id for s in retrieve(index, query, settings, k=2)]
    assert "Rope000001" not in alone  # the query alone does not find it
    kept = [s.paper.id for s in retrieve(index, query, settings, k=2, referred=["Rope000001"])]
    assert set(kept) == {"Rope000001", alone[0]}  # one more ranked list: it joins the query's best paper
    # a referred paper the filters exclude stays out; an unknown id is ignored
    graphs = retrieve(index, query, settings, Filters(primary_areas=("graphs",)), referred=["Rope000001", "Nope000001"])
    assert [s.paper.id for s in graphs] == ["Graph00001"]


def test_a_comparison_that_describes_its_papers_finds_the_best_paper_for_each_description():
    s = Settings(retrieval={"k": 2, "fetch_k": 30})
    prime_tiktoken(s.cache_dir / "tiktoken")
    index = PaperIndex(make_client(s), WordHashEmbeddings(), s)
    cache = [Paper(id=f"Cache0000{i}", title=f"Cache {i}", abstract=f"Keys and values of attention sinks in the cache {i}.",
                   status="Poster", primary_area="llms") for i in range(4)]
    index.ingest([*cache, Paper(id="Rope000001", title="Rotary", abstract="Rotary positions for long inputs.",
                                status="Poster", primary_area="positions")])
    question = ("How does the paper that keeps the keys and values of attention sinks in the cache differ from the one "
                "that uses rotary positions?")
    parts = descriptions(question)
    assert len(parts) == 2 and "rotary" in parts[1]
    fused = [p.paper.id for p in retrieve(index, question, s.retrieval)]
    assert "Rope000001" not in fused  # the whole question's words are mostly the first paper's
    each = [p.paper.id for p in retrieve(index, question, s.retrieval, described=parts)]
    assert each[0].startswith("Cache") and each[1] == "Rope000001"  # each description's best, taking turns
    # under a filter, only what it admits
    llms = retrieve(index, question, s.retrieval, Filters(primary_areas=("llms",)), described=parts)
    assert len(llms) == 2 and all(p.paper.id.startswith("Cache") for p in llms)


def test_two_described_papers_are_taken_as_a_related_pair():
    """Each description's second-best replaces its best when it is closer to the other described paper by more than
    the margin, and holds its own description's words; a neighbour of the other paper never does."""
    from rag.retrieve.search import paired

    def paper(pid, abstract):
        return Paper(id=pid, title=pid, abstract=abstract)

    vectors = {"Sink000001": [1.0, 0.0, 0.0], "Sink000002": [0.98, 0.2, 0.0],  # the first description's two
               "Direct0001": [0.0, 0.0, 1.0],  # shares a word with the second description, unrelated to the first
               "Average001": [0.8, 0.0, 0.6]}  # the related paper, ranked second for the second description

    class Vectors:
        def vectors_of(self, pid):
            return [vectors[pid]]

    described = ("keeps attention sinks in the cache", "uses a direct average estimator of the cache")
    records = {"Sink000001": paper("Sink000001", "We keep attention sinks in the cache."),
               "Sink000002": paper("Sink000002", "Attention sinks kept in the cache, again."),
               "Direct0001": paper("Direct0001", "A direct doubly robust estimator."),
               "Average001": paper("Average001", "An average estimator for cache hits.")}
    each = [["Sink000001", "Sink000002"], ["Direct0001", "Average001", "Other00001"]]
    assert paired(each, described, records, Vectors(), 0.1) == [
        ["Sink000001", "Sink000002"], ["Average001", "Direct0001", "Other00001"]]
    assert paired(each, described, records, Vectors(), None) == each  # no margin measured: as ranked
    assert paired(each, described, records, Vectors(), 0.9) == each  # not closer by the margin
    # the second description's runner-up is the first one's neighbour (it holds the first's words): not taken
    neighbour = [["Sink000001", "Direct0001"], ["Direct0001", "Sink000002"]]
    assert paired(neighbour, described, records, Vectors(), 0.1)[1][0] == "Direct0001"


def test_a_description_moves_up_the_paper_that_holds_its_words():
    from rag.retrieve.search import by_words
    from rag.settings import RetrievalSettings

    def paper(pid, abstract):
        return Paper(id=pid, title=pid, abstract=abstract, status="Poster", primary_area="llms")

    settings = RetrievalSettings(words_pool=10, words_weight=0.5)
    description = "proposes a reasoning-oriented training pipeline for generative reward models"
    records = {"Vague00001": paper("Vague00001", "A reward model for alignment."),
               "Other00001": paper("Other00001", "Reward models trained with preference data."),
               "Gold000001": paper("Gold000001", "We propose a reasoning-oriented training pipeline that makes "
                                                 "generative reward models think before they judge.")}
    ranked = ["Vague00001", "Other00001", "Gold000001"]
    assert by_words(description, ranked, records, settings)[0] == "Gold000001"
    # weight 0 keeps the search's order; so do equal shares; a paper past the pool keeps its place
    assert by_words(description, ranked, records, RetrievalSettings(words_weight=0)) == ranked
    same = {pid: paper(pid, "Unrelated text.") for pid in ranked}
    assert by_words(description, ranked, same, settings) == ranked
    far = [f"Pad{i:07d}" for i in range(10)] + ["Gold000001"]
    assert by_words(description, far, records, settings) == far
    # an unread paper holds nothing, so one that holds the words passes it
    assert by_words(description, ["Unread0001", "Gold000001"], records, settings) == ["Gold000001", "Unread0001"]


def test_the_question_s_words_reorder_its_first_papers(index):
    from rag.retrieve.search import words_held

    settings = index.settings.retrieval
    query = "keys and values stored in the cache with rotary positions"
    plain = retrieve(index, query, settings.model_copy(update={"words_weight": 0.0}), k=4)
    worded = [s.paper.id for s in retrieve(index, query, settings.model_copy(update={"words_weight": 5.0}), k=4)]
    # a large weight orders by the share of the question's words each paper holds, the search's order breaking ties
    held = {s.paper.id: words_held(query, s.paper) for s in plain}
    assert worded == sorted(held, key=lambda pid: -held[pid])
    # "rotary positions" brings the rotary paper second; the graph paper holds more of the words: keys, values, cache
    assert [s.paper.id for s in plain][:3] == ["Many000001", "Rope000001", "Graph00001"]
    assert worded[:3] == ["Many000001", "Graph00001", "Rope000001"]
