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


def test_half_of_a_hyphenated_query_word_is_not_a_match():
    # the README's Chinese example, translated "key-value cache compression": "value prioritization" is another topic
    terms = Terms.of(["Are there any papers on key-value cache compression?"])
    kv = Source(1, Paper(id="A", title="KV", abstract="Transformer models rely on key–value (KV) caching to avoid "
                                                        "redundant computation during inference."), 1.0)
    values = Source(2, Paper(id="B", title="Values", abstract="Our work demonstrates the importance of evaluating "
                                                              "value prioritization in models."), 0.9)
    assert quote([kv, values], terms).cited == [1]
    assert terms.held("We compress the keyvalue cache of long prompts.") == 0.75  # written as one: key and value held
    assert terms.held("A key insight: value functions and caches.") == 0.5  # both parts, apart: as before


def test_a_quote_from_an_abstract_broken_into_pdf_lines_is_a_whole_sentence():
    abstract = ("Large language models remain vulnerable to jailbreaks, including multi-turn attacks that search for\n"
                "queries. Prior work builds ef-\nfective multi-turn attacks, often employing known jailbreaking techniques such\n"
                "as role play, and needs the victim's feedback.")
    source = Source(1, Paper(id="A", title="Jailbreaks", abstract=abstract), 1.0)
    got = quote([source], Terms.of(["multi-turn jailbreaking attacks without victim feedback"]))
    assert [q.sentence for q in got.quotes] == [
        "Prior work builds effective multi-turn attacks, often employing known jailbreaking techniques such as role "
        "play, and needs the victim's feedback."]
