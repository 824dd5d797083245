"""The quoted answer: verbatim sentences of the best papers, each cited; never a sentence about where the code is."""

from rag.answer.extract import quote
from rag.corpus.papers import Paper
from rag.retrieve.passages import Terms
from rag.retrieve.search import Source

ABSTRACT = ("Our retriever picks code examples by execution traces and "
            "improves pass@1 by 9 points. Code and data for code generation are available at https://github.com/x/y. "
            "The code for our retrieval-augmented code generation will be made publicly available.")


def test_the_best_sentence_is_quoted_but_not_one_saying_where_the_code_is():
    source = Source(1, Paper(id="A", title="Retrieval for code generation", abstract=ABSTRACT), 1.0)
    got = quote([source], Terms.of(["code generation with retrieved code examples available"]))
    assert [q.sentence for q in got.quotes] == [
        "Our retriever picks code examples by execution traces and improves pass@1 by 9 points."]
    assert got.markdown().endswith("[1]") and got.cited == [1]
    only_links = Source(2, Paper(id="B", title="T", abstract="Code is available at https://x.org/code."), 0.9)
    assert not quote([only_links], Terms.of(["code available"]))
