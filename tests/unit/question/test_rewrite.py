"""Query rewriting: when the model is asked, what it is shown, and how its reply is used."""

import pytest
from langchain_core.messages import AIMessage

from rag.question.rewrite import clean_query, rewrite_query as _rewrite
from rag.question.router import route
from rag.question.turns import Exchange
from rag.text import language


class Recorder:
    """A chat model stand-in that records every prompt and replies from a script (or raises)."""

    def __init__(self, *replies):
        self.replies, self.prompts = list(replies), []

    def invoke(self, messages):
        self.prompts.append("\n".join(str(m.content) for m in messages))
        reply = self.replies.pop(0)
        if isinstance(reply, Exception):
            raise reply
        return AIMessage(content=reply)


SHOWN = Exchange("Which papers drop positional embeddings?", "DroPE does [1].",
                 ("Dropping positional embeddings", "LookaheadKV: evicting the KV cache"))


def rewrite_query(question, history, model):
    """The query for a question as the pipeline makes it: routed once, then rewritten."""
    return _rewrite(route(question, history), history, model)


@pytest.mark.parametrize("text, foreign", [
    ("有没有关于KV缓存压缩的论文？", True), ("KV cache compression?", False), ("Über Diffusionsmodelle", False),
    ("Что такое DroPE?", True), ("ViT", False), ("", False),
])
def test_only_non_latin_scripts_need_a_translation(text, foreign):
    assert (language(text) != "en") is foreign and route(text or "x").foreign is foreign


@pytest.mark.parametrize("text, foreign", [
    ("DroPE 是什么? why does it extend context?", False),  # its English words carry it
    ("如何从RGB图像和稀疏点云中推断出一个ego-centric的密集深度图？", True),  # 3 English words, but it says it in Chinese
    ("提出一种结合LLM和PRM的理论框架用于TTS的论文与提出序列和并行结合的测试时扩展方法的论文有什么不同？", True),
])
def test_a_mostly_chinese_question_is_translated_though_it_holds_a_few_english_words(text, foreign):
    assert route(text).foreign is foreign and (route(text).rewrite == "translate") is foreign


def test_first_english_question_is_searched_as_written_without_a_model_call():
    model = Recorder()
    query = rewrite_query("Which papers compress the KV cache?", [], model)
    assert query.text == "Which papers compress the KV cache?" and not query.rewritten
    assert model.prompts == []


def test_followup_is_rewritten_with_the_papers_shown_earlier():
    model = Recorder('Query: "LookaheadKV KV cache eviction compared with DroPE"\nBecause the user...')
    query = rewrite_query("How does the second one differ?", [SHOWN], model)
    assert query.rewritten and query.reason == "followup"
    assert query.text == "LookaheadKV KV cache eviction compared with DroPE"  # label, quotes, extra lines removed
    assert "[2] LookaheadKV: evicting the KV cache" in model.prompts[0]
    assert "Latest message: How does the second one differ?" in model.prompts[0]


def test_chinese_question_is_translated():
    model = Recorder("KV cache compression for large language models")
    query = rewrite_query("有没有关于KV缓存压缩的论文？", [], model)
    assert (query.text, query.reason) == ("KV cache compression for large language models", "translate")


@pytest.mark.parametrize("reply", [ConnectionError("down"), "", "还是中文的回答",
                                   "The retrieved papers do not cover this question."])  # an answer, not a query
def test_a_failed_or_unusable_rewrite_falls_back_to_the_question(reply):
    query = rewrite_query("有没有关于KV缓存压缩的论文？", [], Recorder(reply))
    assert query.text == "KV cache compression" and not query.rewritten  # the glossary's English terms
    followup = rewrite_query("What are its limitations?", [SHOWN], Recorder(ConnectionError("down")))
    assert followup.text == f"{SHOWN.question} What are its limitations?"  # the heuristic still joins the turns


def test_no_model_means_no_rewrite():
    assert route("What about its limitations?", [SHOWN]).rewrite == "followup"
    query = rewrite_query("What about its limitations?", [SHOWN], None)
    assert not query.rewritten and query.reason == "no model"


def test_clean_query_bounds_length():
    assert len(clean_query("word " * 500)) <= 400
    assert clean_query("\n\n  Search query: `graph transformers`  ") == "graph transformers"


def test_a_message_that_starts_a_new_topic_is_also_searched_on_its_own_and_one_that_refers_back_is_not():
    query = rewrite_query("How does the second one differ?", [SHOWN], Recorder("LookaheadKV versus DroPE"))
    # it refers back: the message alone ("differ") would only add papers about differences; searched with the
    # question before it instead (the papers the user meant, whatever paper the model resolved "it" to)
    assert query.all == ("LookaheadKV versus DroPE",
                         "Which papers drop positional embeddings? How does the second one differ?")
    query = rewrite_query("Are there benchmarks for multi-turn CBT counseling?", [SHOWN],
                          Recorder("Dropping positional embeddings CBT benchmark"))
    assert query.all == ("Dropping positional embeddings CBT benchmark",
                         "Are there benchmarks for multi-turn CBT counseling?")  # a new topic, searched as written
    model = Recorder("Dropping positional embeddings benchmark", "benchmark for multi-turn CBT counseling")
    query = rewrite_query("有评测多轮CBT心理咨询的基准吗？", [SHOWN], model)
    assert query.all == ("Dropping positional embeddings benchmark", "benchmark for multi-turn CBT counseling")
    assert "Earlier turn" in model.prompts[0] and "Earlier turn" not in model.prompts[1]  # translated alone


def test_a_foreign_question_on_its_own_is_translated_and_a_followup_is_rewritten_with_its_history():
    model = Recorder("Are there papers on KV cache compression?")
    query = rewrite_query("有没有关于KV缓存压缩的论文？", [], model)
    assert query.text == "Are there papers on KV cache compression?" and query.rewritten
    # a translation, not a "search query": asked for one, the small model wrote review titles
    assert "Translate the question above into English" in model.prompts[0]
    assert "search queries" not in model.prompts[0]
    model = Recorder("DroPE limitations", "its limitations")
    rewrite_query("它有什么局限？", [SHOWN], model)
    assert "search queries" in model.prompts[0] and "Dropping positional embeddings" in model.prompts[0]


SHOWN_IDS = Exchange(SHOWN.question, SHOWN.answer, SHOWN.papers + ("Rotary positions",),
                     ("DroPE00001", "LookKV0001", "Rope000001"))


@pytest.mark.parametrize("question, first", [
    ("What are its limitations?", "DroPE00001"),  # "it": the papers as shown, the first first
    ("How does the second one differ?", "LookKV0001"),
    ("Tell me more about [3]", "Rope000001"),
    ("What about the last one?", "Rope000001"),
    ("第二篇用了什么数据？", "LookKV0001"),
])
def test_a_followup_keeps_the_papers_it_points_back_to(question, first):
    query = rewrite_query(question, [SHOWN_IDS], Recorder("a query the model drifted on"))
    assert query.referred[0] == first
    assert sorted(query.referred) == sorted(SHOWN_IDS.ids)  # the others stay, as shown
    assert rewrite_query(question, [SHOWN_IDS], None).referred == query.referred  # without a model too


def test_a_new_topic_or_a_turn_without_ids_keeps_no_earlier_paper():
    assert rewrite_query("Are there benchmarks for multi-turn CBT counseling?", [SHOWN_IDS],
                         Recorder("CBT counseling benchmark")).referred == ()
    assert rewrite_query("What are its limitations?", [SHOWN], Recorder("DroPE limitations")).referred == ()
    assert rewrite_query("What are its limitations?", [], None).referred == ()


ZH_COMPARE = "提出一种动态后悔算法来优化在线库存的论文与提出一种适应未知折扣因子的新型算法的论文有什么不同？"


def test_a_chinese_comparison_is_translated_description_by_description_and_each_is_searched():
    model = Recorder("Proposes a dynamic regret algorithm for online inventory optimization.",
                     "Proposes a novel algorithm that adapts to unknown discount factors")
    query = rewrite_query(ZH_COMPARE, [], model)
    assert query.rewritten and len(model.prompts) == 2
    assert "动态后悔" in model.prompts[0] and "折扣因子" in model.prompts[1] and "折扣因子" not in model.prompts[0]
    assert query.text == ("How does the paper that proposes a dynamic regret algorithm for online inventory "
                          "optimization differ from the one that proposes a novel algorithm that adapts to unknown "
                          "discount factors?")
    assert len(query.described) == 2 and "inventory" in query.described[0] and "discount" in query.described[1]


def test_a_description_the_model_cannot_translate_falls_back_to_the_whole_question():
    model = Recorder("Proposes a dynamic regret algorithm for online inventory", "还是中文",
                     "How does a dynamic regret method for inventories differ from a discount-adaptive one?")
    query = rewrite_query(ZH_COMPARE, [], model)
    assert len(model.prompts) == 3 and ZH_COMPARE in model.prompts[2]
    assert query.text == "How does a dynamic regret method for inventories differ from a discount-adaptive one?"


def test_a_translation_with_a_term_left_in_chinese_is_still_used_without_it():
    model = Recorder("Which papers explain hidden混淆 phenomena with theory and experiments?")
    query = rewrite_query("有没有用理论和实验解释隐藏混淆现象的论文？", [], model)
    assert query.rewritten and query.text == "Which papers explain hidden phenomena with theory and experiments?"


def test_a_description_starting_with_an_article_reads_on_after_the_paper_that():
    model = Recorder("A dynamic regret algorithm for online inventory", "LLMs that adapt to unknown discount factors")
    query = rewrite_query(ZH_COMPARE, [], model)
    assert query.text == ("How does the paper that a dynamic regret algorithm for online inventory differ from the one "
                          "that LLMs that adapt to unknown discount factors?")
