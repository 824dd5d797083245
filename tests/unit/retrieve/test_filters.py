"""One filter definition, three forms: Chroma's `where`, the lexical index's SQL and the in-memory predicate
must admit exactly the same papers, and a question's stated constraints narrow the user's choices."""

import itertools
import re

import pytest
from langchain_core.documents import Document

from rag.corpus.openreview import NOT_ACCEPTED
from rag.corpus.papers import Paper
from rag.index.chunking import paper_metadata
from rag.index.lexical import LexicalIndex
from rag.index.store import PaperIndex, make_client
from rag.offline import prime_tiktoken
from rag.question.router import route, stated_filters
from rag.retrieve.filters import STATUS_GROUPS, Filters
from rag.settings import Settings
from tests.fakes import WordHashEmbeddings

STATUSES = ["Oral", "Poster", "Poster (conditional)", "Withdrawn"]
AREAS = ["optimization", "generative models", "reinforcement learning"]
KEYWORDS = ["KV cache", "Diffusion", "long context", "RL"]
PAPERS = [Paper(id=f"P{i:03d}", title=f"Paper {i} on memory", abstract=f"Memory study number {i}.",
                keywords=tuple(k for j, k in enumerate(KEYWORDS) if (i >> j) & 1),
                primary_area=AREAS[i % 3], status=STATUSES[i % 4]) for i in range(48)]
FILTERS = [Filters(), Filters(statuses=STATUS_GROUPS["All accepted"]), Filters(statuses=("Oral",)),
           Filters(primary_areas=("optimization", "reinforcement learning")), Filters(keywords=("kv cache",)),
           Filters(keywords=("  Diffusion ", "RL")), Filters(paper_ids=("P001", "P002", "P013")),
           Filters(statuses=STATUS_GROUPS["Poster"], primary_areas=("generative models",), keywords=("long context",)),
           Filters(statuses=("Oral",), paper_ids=("P000", "P001", "P004"))]


@pytest.fixture(scope="module")
def stores(tmp_path_factory):
    settings = Settings(data_dir=tmp_path_factory.mktemp("filters"))
    prime_tiktoken(settings.cache_dir / "tiktoken")
    index = PaperIndex(make_client(settings), WordHashEmbeddings(), settings)
    index.ingest(PAPERS)
    lexical = LexicalIndex(settings.data_dir / "lex.sqlite")
    lexical.upsert([Document(id=f"{p.id}:0", page_content=f"{p.title}\n\n{p.abstract}", metadata=paper_metadata(p))
                    for p in PAPERS])
    return index, lexical


@pytest.mark.parametrize("filters", FILTERS, ids=str)
def test_the_three_forms_admit_the_same_papers(stores, filters):
    index, lexical = stores
    expected = {p.id for p in PAPERS if filters.admits(p)}
    # Chroma's `get` applies the `where` exactly (a nearest-neighbour query over HNSW may return fewer than all)
    by_chroma = {meta["paper_id"] for meta in index.collection.get(where=filters.where(), include=["metadatas"])["metadatas"]}
    by_sql = {paper for _, paper, *_ in lexical.search("memory", 100, filters)}
    assert expected == by_chroma == by_sql
    assert 0 < len(expected) <= len(PAPERS)


def test_a_stated_constraint_narrows_the_users_choice():
    accepted = Filters(statuses=STATUS_GROUPS["All accepted"])
    oral = Filters(statuses=STATUS_GROUPS["Oral"], primary_areas=("optimization",))
    assert accepted.narrowed_by(oral) == oral  # all accepted and oral: oral
    assert Filters().narrowed_by(oral) == oral
    assert oral.narrowed_by(Filters()) == oral
    # the panel says Poster, the question says oral: both cannot hold, the question's words win
    assert Filters(statuses=STATUS_GROUPS["Poster"]).narrowed_by(oral).statuses == oral.statuses
    assert Filters(keywords=("a",)).narrowed_by(Filters(keywords=("b", "a"))).keywords == ("a", "b")


def test_every_status_group_is_a_set_of_real_statuses():
    # the statuses the corpus readers write (rag.corpus.openreview, rag.corpus.paperlists)
    real = {"Oral", "Oral (conditional)", "Poster", "Poster (conditional)", "Withdrawn", NOT_ACCEPTED}
    assert set(itertools.chain(*STATUS_GROUPS.values())) <= real


@pytest.mark.parametrize("question, group", [
    ("Which rejected submissions tried to remove positional embeddings?", "Not accepted"),
    ("Which papers were not accepted but studied Mamba?", "Not accepted"),
    ("未被接收的论文中有研究扩散模型的吗？", "Not accepted"), ("有哪些被拒的关于KV缓存压缩的论文？", "Not accepted"),
    ("Which withdrawn papers studied test-time scaling?", "Withdrawn"),
    ("Papers on graph transformers that were withdrawn?", "Withdrawn"),
    # a topic, not a paper's fate
    ("How do DPO variants weight rejected responses?", None),
    ("How do rejection sampling methods improve reasoning?", None),
    ("DPO中被拒绝的回答如何加权？", None),
])
def test_a_question_about_rejected_or_withdrawn_papers_is_filtered_to_them(question, group):
    assert stated_filters(question).statuses == (STATUS_GROUPS[group] if group else ())
    # the words that became the filter are not searched (they found papers about peer review); a topic's are
    searched = route(question).english
    assert not re.search(r"\b(?:rejected submissions|were withdrawn|withdrawn papers|not accepted)\b", searched)
    if "DPO variants" in question:
        assert searched == question
