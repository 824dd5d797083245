import pytest

from rag.answer.citations import CitationFilter, clean_citations
from rag.corpus.papers import Paper
from rag.retrieve.search import Source


def sources(*ids):
    return [Source(n=i, paper=Paper(id=pid, title=f"Title {pid}", abstract="a", status="Poster"), score=0.5)
            for i, pid in enumerate(ids, start=1)]


SRC = sources("RlPVSeKjoc", "RVLMGPXt2i", "RWjEf9PdiJ")


def test_numbers_map_back_to_paper_ids_in_order_of_first_citation():
    text, cites, dropped = clean_citations("DroPE drops RoPE [1]. KV eviction [2]. Again [1].", SRC)
    assert text == "DroPE drops RoPE [1]. KV eviction [2]. Again [1]."
    assert [(c.n, c.id) for c in cites] == [(1, "RlPVSeKjoc"), (2, "RVLMGPXt2i")]
    assert cites[0].url == "https://openreview.net/forum?id=RlPVSeKjoc" and not dropped


def test_citations_to_sources_not_retrieved_are_removed():
    text, cites, dropped = clean_citations("Claim [7]. Other [2, 9]. Third [0].", SRC)
    assert text == "Claim. Other [2]. Third."
    assert [c.id for c in cites] == ["RVLMGPXt2i"]
    assert dropped == ["[7]", "[2, 9]", "[0]"]


def test_reference_list_holds_only_cited_papers():
    _, cites, _ = clean_citations("Only the third [3].", SRC)
    assert [c.id for c in cites] == ["RWjEf9PdiJ"]


@pytest.mark.parametrize("raw, expected", [
    ("x [1,2].", "x [1][2]."),
    ("x [1][3].", "x [1][3]."),
    ("x [Source 2].", "x [2]."),
    ("x [1-3].", "x [1][2][3]."),
    ("x [RVLMGPXt2i].", "x [2]."),
    ("x [ZZZZ9999zz].", "x."),  # looks like an OpenReview id, but was not retrieved
    ("x [DroPE: Extending the Context (Poster, id RlPVSeKjoc)].", "x [1]."),  # a copied source header
])
def test_marker_forms(raw, expected):
    assert clean_citations(raw, SRC)[0] == expected


@pytest.mark.parametrize("raw", ["tokens like [CLS] and [MASK]", "an interval [a, b] here", "a list [see below] x",
                                 "unclosed [ bracket at the end"])
def test_brackets_that_are_not_citations_are_left_alone(raw):
    text, cites, dropped = clean_citations(raw, SRC)
    assert text == raw and not cites and not dropped


def test_streaming_gives_the_same_text_however_it_is_split():
    raw = "Dropping [1] works [4]. Eviction [2, 5] helps [RWjEf9PdiJ]. Tokens [CLS] stay [ and so on."
    whole = clean_citations(raw, SRC)[0]
    for cut in range(len(raw)):
        for cut2 in (cut + 1, cut + 3):
            f = CitationFilter(SRC)
            streamed = f.feed(raw[:cut]) + f.feed(raw[cut:cut2]) + f.feed(raw[cut2:]) + f.finish()
            assert streamed == whole, (cut, cut2)
    f = CitationFilter(SRC)
    assert "".join(f.feed(ch) for ch in raw) + f.finish() == whole
    assert [c.n for c in f.citations()] == [1, 2, 3]
