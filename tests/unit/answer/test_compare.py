"""Comparison questions: which papers, one cited abstract sentence per aspect, and the answer around it."""

import pytest

from rag.answer.compare import NOT_STATED, build_comparison, compared_papers
from rag.answer.grounded import answer
from rag.question.router import Kind, compare_count, descriptions, is_comparison, route
from rag.corpus.papers import Paper
from rag.retrieve.search import Source, words_held
from tests.fakes import fake_chat

KV = Paper(id="RVLMGPXt2i", title="LookaheadKV: Fast and Accurate KV Cache Eviction",
           abstract="Long contexts make the KV cache a memory bottleneck. We propose LookaheadKV, which predicts "
                    "future attention with a small draft. On LongBench it outperforms SnapKV by 4 points.")
DROPE = Paper(id="RlPVSeKjoc", title="Extending the Context of Pretrained LLMs by Dropping Their Positional Embeddings",
              abstract="Positional embeddings limit length generalization. We introduce DroPE, which removes them "
                       "after pretraining. Experiments on RULER show 8x longer contexts. "
                       "However, our recalibration is limited to decoder-only models.")
OTHER = Paper(id="Xx12345678", title="Graph Diffusion", abstract="We study graphs.")
SOURCES = [Source(1, OTHER, 0.9, ("We study graphs.",)), Source(2, DROPE, 0.8, (DROPE.abstract,)),
           Source(3, KV, 0.7, (KV.abstract,))]


def test_comparison_questions_are_recognised_in_both_languages():
    assert is_comparison("How does DroPE differ from LookaheadKV?")
    assert is_comparison("Compare the three papers") and compare_count("Compare the three papers") == 3
    assert is_comparison("这两篇论文有什么区别？") and compare_count("这两篇论文有什么区别？") == 2
    assert not is_comparison("Which papers compress the KV cache?")
    # "one paper ..., the other ...": a comparison even when it only asks what each one does
    assert is_comparison("两篇论文都改进CLIP：一篇给出闭式解，另一篇用核均值嵌入。它们分别想解决什么问题？")
    assert is_comparison("One paper prunes experts while the other merges them: what problem does each solve?")
    assert not is_comparison("对比式学习里有没有建模条件不确定性的方法？")


@pytest.mark.parametrize("question, compared", [
    # one paper against the usual way: its abstract answers, there is no second paper to set beside it
    ("What is the attention sampler and how does it reduce the cost compared to traditional attention?", False),
    ("How does it compare with earlier methods?", False), ("Is it faster than standard attention?", False),
    ("该方法与传统方法相比，如何发现动作空间的群结构？", False), ("它和之前的方法相比怎么样？", False),
    # two papers named or described stay comparisons, whatever their descriptions say
    ("How does DroPE compare with existing methods such as LookaheadKV?", True),
    ("How does the paper that prunes experts differ from the one that merges them with conventional metrics?", True),
    ("Compare the paper that prunes experts with the one that merges them.", True),
    ("提出剪枝专家的论文与提出合并专家的论文有什么不同？", True),
])
def test_one_paper_against_the_usual_way_is_no_comparison(question, compared):
    assert is_comparison(question) is compared
    assert (route(question).kind is Kind.COMPARE) is compared


def test_named_papers_come_first_then_the_best_ranked():
    # LookaheadKV by its title's short name, DroPE by the name its abstract introduces; not the top-ranked paper 1
    assert [s.n for s in compared_papers(["How does DroPE differ from LookaheadKV?"], SOURCES, 2)] == [2, 3]
    assert [s.n for s in compared_papers(["Compare the three papers"], SOURCES, 3)] == [1, 2, 3]
    # the rewritten query names the earlier paper by title ("the second one" resolved)
    texts = ["how does the second one differ from LookaheadKV?",
             "Extending the Context of Pretrained LLMs by Dropping Their Positional Embeddings vs LookaheadKV"]
    assert [s.n for s in compared_papers(texts, SOURCES, 2)] == [2, 3]


def test_every_cell_is_a_cited_sentence_of_that_paper_or_not_stated():
    table = build_comparison(["Compare DroPE and LookaheadKV"], SOURCES[1:])
    assert [s.paper.id for s in table.papers] == ["RlPVSeKjoc", "RVLMGPXt2i"]
    drope, kv = table.cells
    assert drope == ("Positional embeddings limit length generalization. [2]",
                     "We introduce DroPE, which removes them after pretraining. [2]",
                     "Experiments on RULER show 8x longer contexts. [2]", NOT_STATED,
                     "However, our recalibration is limited to decoder-only models. [2]")
    assert kv[1].startswith("We propose LookaheadKV") and kv[3].startswith("On LongBench it outperforms")
    assert kv[4] == NOT_STATED
    md = table.markdown()
    assert md.splitlines()[0] == "| paper | problem | method | data | main result | limitation |"
    assert "| Extending the Context" in md and md.count("\n") == 3
    assert build_comparison(["Compare DroPE and LookaheadKV"], SOURCES[1:2]) is None  # one paper: nothing to compare


def test_a_comparison_answer_opens_with_the_table_and_shows_the_model_only_those_papers():
    llm = fake_chat("DroPE removes positional embeddings [2], while LookaheadKV predicts future attention [3].")
    question = "How does DroPE differ from LookaheadKV?"
    intent = route(question)
    assert intent.kind is Kind.COMPARE and intent.compare_count == 2
    table = build_comparison([question], SOURCES, intent.compare_count)
    got = answer(intent, SOURCES, llm, lead=table.markdown(), comparison=table)
    assert got.text.startswith("| paper | problem |") and got.text.endswith("predicts future attention [3].")
    assert [c.id for c in got.citations] == ["RlPVSeKjoc", "RVLMGPXt2i"]
    assert got.to_json()["comparison"]["papers"] == ["RlPVSeKjoc", "RVLMGPXt2i"]
    assert [s.supported for s in got.sentences] == [True]  # only the prose is checked; the table is extractive


def test_addressing_earlier_work_s_limitation_is_the_method_not_a_limitation():
    from rag.answer.compare import cells_for

    star = Paper(id="STARxxxxx1", title="STAR: Strategy-driven red-teaming",
                 abstract="Existing red-teaming stays in text space. To address this limitation, we shift the search to "
                          "activation space and propose STAR. STAR outperforms baselines in attack success rate.")
    problem, method, data, result, limitation = cells_for(Source(1, star, 1.0, (star.abstract,)))
    assert method.startswith("To address this limitation, we shift") and limitation == NOT_STATED
    assert problem.startswith("Existing red-teaming") and result.startswith("STAR outperforms")


def test_each_description_keeps_the_paper_its_own_search_ranked_first():
    # the retrieval's turn order: the first description's best (DROPE), the second's (KV), then a neighbour that
    # holds more of the second description's words than KV does
    neighbour = Paper(id="Nb12345678", title="Attention for KV cache entries",
                      abstract="We predict future attention to evict KV cache entries and compress KV cache entries.")
    question = ("How does the method that removes positional embeddings after pretraining differ from the one that "
                "predicts future attention to evict KV cache entries?")
    turns = [Source(1, DROPE, 0.9, ()), Source(2, KV, 0.8, ()), Source(3, neighbour, 0.7, ()), Source(4, OTHER, 0.6, ())]
    assert words_held(descriptions(question)[1], neighbour) > words_held(descriptions(question)[1], KV)
    assert [s.paper.id for s in compared_papers([question], turns, 2)] == ["RlPVSeKjoc", "RVLMGPXt2i"]
    # "LLMs" is no paper's name, though a fourth paper "introduces" it ("large language models (LLMs)")
    llms = Paper(id="Ll12345678", title="Self-rewarding for reasoning",
                 abstract="We propose a reward for large language models (LLMs) that checks the last token.")
    asked = ("Two papers: one removes positional embeddings after pretraining, the other predicts future attention to "
             "evict KV cache entries of LLMs. How do they differ?")
    ranked = [*turns[:2], Source(3, OTHER, 0.7, ()), Source(4, llms, 0.6, ())]
    assert [s.paper.id for s in compared_papers([asked], ranked, 2)] == ["RlPVSeKjoc", "RVLMGPXt2i"]
    # nor is "all-atom" the name of "ATOM: ...", nor "an atom"; "ATOM" as written is
    atom = Paper(id="At12345678", title="ATOM: A Pretrained Neural Operator for Molecular Dynamics", abstract="MD.")
    ranked = [*turns[:2], Source(3, atom, 0.7, ())]
    assert "At12345678" in [s.paper.id for s in compared_papers(["How does ATOM differ from DroPE?"], ranked, 2)]
    for said in ("How does the all-atom generator differ from DroPE?", "Does moving an atom differ from DroPE?"):
        assert "At12345678" not in [s.paper.id for s in compared_papers([said], ranked, 2)]
    # a version's label names no paper: "V1" (the visual cortex) is not "Pusa V1.0"; the title's name is
    pusa = Paper(id="Pu12345678", title="Pusa V1.0: Temporal Control in Video Diffusion", abstract="We adapt timesteps.")
    ranked = [*turns[:2], Source(3, pusa, 0.7, ())]
    v1 = ("Compare the paper that proposes a generative model of V1 for a discrimination task with the one that "
          "predicts future attention to evict KV cache entries.")
    assert [s.paper.id for s in compared_papers([v1], ranked, 2)] == ["RlPVSeKjoc", "RVLMGPXt2i"]
    assert "Pu12345678" in [s.paper.id for s in compared_papers(["How does Pusa V1.0 differ from DroPE?"], ranked, 2)]
    # a paper named by its coined name comes first, wherever it ranks
    named = [Source(1, OTHER, 0.9, ()), Source(2, neighbour, 0.8, ()), Source(3, KV, 0.7, ())]
    assert [s.paper.id for s in compared_papers(["How does LookaheadKV differ from the paper that predicts future "
                                                  "attention?"], named, 2)] == [OTHER.id, "RVLMGPXt2i"]


def test_a_chinese_comparison_is_searched_and_tabled_by_its_translated_descriptions():
    from rag.pipeline import DoneEvent, SourcesEvent, build_pipeline
    from rag.settings import Settings
    from tests.fakes import WordHashEmbeddings

    llm = fake_chat("Drops the positional embeddings of a pretrained language model to extend its context",
                    "Evicts KV cache entries by glimpsing into the future without generation",
                    "DroPE drops positional embeddings [1], while LookaheadKV evicts KV cache entries [2].")
    pipeline = build_pipeline(Settings(), embeddings=WordHashEmbeddings(), llm=llm)
    pipeline.ensure_ingested()
    events = list(pipeline.stream("去掉预训练语言模型的位置编码来扩展上下文的论文与不生成就预见未来来驱逐KV缓存的论文有什么不同？"))
    final = [e for e in events if isinstance(e, SourcesEvent) and e.final][-1]
    assert final.query.text.startswith("How does the paper that drops the positional embeddings")
    assert len(final.query.described) == 2 and "KV cache" in final.query.described[1]
    done = events[-1]
    assert isinstance(done, DoneEvent) and done.answer.comparison is not None
    assert set(done.answer.comparison.to_json()["papers"]) == {"RlPVSeKjoc", "RVLMGPXt2i"}


def test_an_uncited_contrast_in_a_comparison_keeps_its_table():
    # "does not address" is how a contrast reads; the table's cells are the cited claims, so this is no refusal
    said = "The paper that drops positional embeddings does not address KV cache eviction."
    question = "How does the paper that drops positional embeddings differ from LookaheadKV?"
    intent = route(question)
    table = build_comparison([question], SOURCES[1:], intent.compare_count)
    got = answer(intent, SOURCES[1:], fake_chat(said), lead=table.markdown(), comparison=table)
    assert not got.refused and got.text.startswith(table.markdown()) and got.text.endswith(said)
    assert [c.id for c in got.citations] == ["RlPVSeKjoc", "RVLMGPXt2i"]
    # the same words after a lookup's quotes are the model finding nothing: its words stand alone
    alone = answer(route("Which papers evict KV cache entries?"), SOURCES, fake_chat(said))
    assert alone.refused and alone.refusal == "model"
