"""The router decides once what a question asks: kind, language, follow-up, names, stated filters, English.
One table in both languages; later stages only read the Intent."""

import re

import pytest

from rag.question.router import Kind, descriptions, is_followup, route
from rag.question.turns import Exchange
from rag.retrieve.filters import STATUS_GROUPS

ORAL, POSTER, ACCEPTED = STATUS_GROUPS["Oral"], STATUS_GROUPS["Poster"], STATUS_GROUPS["All accepted"]
AREAS = ["reinforcement learning", "generative models"]

# question, kind, language, stated statuses, stated areas
TABLE = [
    ("Which papers drop positional embeddings to extend context?", Kind.LOOKUP, "en", (), ()),
    ("有没有关于KV缓存压缩的论文？", Kind.LOOKUP, "zh", (), ()),
    ("How does DroPE differ from LookaheadKV?", Kind.COMPARE, "en", (), ()),
    ("DroPE和LookaheadKV有什么区别？", Kind.COMPARE, "zh", (), ()),
    ("Compare the three oral papers on unlearning", Kind.COMPARE, "en", ORAL, ()),
    ("What weaknesses did reviewers raise about DroPE?", Kind.REVIEW, "en", (), ()),
    ("审稿人对DroPE提出了哪些缺点？", Kind.REVIEW, "zh", (), ()),
    ("How many oral papers are about KV cache?", Kind.AGGREGATE, "en", ORAL, ()),
    ("有多少篇关于KV缓存的口头报告论文？", Kind.AGGREGATE, "zh", ORAL, ()),
    ("Which KV-cache papers had the highest ratings?", Kind.AGGREGATE, "en", (), ()),
    ("评分最高的5篇扩散模型论文有哪些？", Kind.AGGREGATE, "zh", (), ()),
    ("口头报告论文的平均评分是多少？", Kind.AGGREGATE, "zh", ORAL, ()),
    ("What is the average rating of poster papers in the reinforcement learning area?", Kind.AGGREGATE, "en", POSTER,
     ("reinforcement learning",)),
    ("哪些已录用的论文研究元认知？", Kind.LOOKUP, "zh", ACCEPTED, ()),
    ("Which accepted papers in the generative models area use flow matching?", Kind.LOOKUP, "en", ACCEPTED,
     ("generative models",)),
    ("What are the weaknesses of DroPE?", Kind.LOOKUP, "en", (), ()),  # the paper's own limitations
    ("How many layers does DroPE use?", Kind.LOOKUP, "en", (), ()),  # "how many", but not a count of papers
    ("DroPE有多少层？", Kind.LOOKUP, "zh", (), ()),  # the same in Chinese
    ("有几篇关于KV缓存的论文？", Kind.AGGREGATE, "zh", (), ()),
    # "十几个任务" is "a dozen or so tasks", not "how many": a lookup that happens to hold 几个
    ("多任务LoRA扩展到十几个任务时性能崩溃，有论文用块级适配来解决吗？", Kind.LOOKUP, "zh", (), ()),
    # a number the paper is about, not a count of papers: "数量" and "论文" in one question are not "how many papers"
    ("该论文提出的自适应框架如何动态确定每个输入的最优假设数量，通过风险控制？", Kind.LOOKUP, "zh", (), ()),
    ("这篇论文有多少个参数？", Kind.LOOKUP, "zh", (), ()),  # one paper's "how many"
    ("关于扩散模型的论文有多少？", Kind.AGGREGATE, "zh", (), ()),  # papers, then "how many"
    ("扩散模型论文的数量是多少？", Kind.AGGREGATE, "zh", (), ()),
    ("有多少个工作研究了联邦学习？", Kind.AGGREGATE, "zh", (), ()),
]


@pytest.mark.parametrize("question, kind, lang, statuses, areas", TABLE, ids=[row[0] for row in TABLE])
def test_kind_language_and_stated_filters(question, kind, lang, statuses, areas):
    intent = route(question, known_areas=AREAS)
    assert (intent.kind, intent.lang) == (kind, lang)
    assert (intent.filters.statuses, intent.filters.primary_areas) == (statuses, areas)


def test_a_count_asked_in_chinese_is_the_same_count_as_in_english():
    en = route("How many oral papers are about KV cache?").aggregate
    zh = route("有多少篇关于KV缓存的口头报告论文？").aggregate
    assert (zh.kind, zh.topic, zh.field, zh.threshold) == (en.kind, en.topic, en.field, en.threshold) == (
        "count", "KV cache", "rating", None)
    ranked = route("评分最高的5篇扩散模型论文有哪些？").aggregate
    assert (ranked.kind, ranked.top, ranked.topic) == ("highest", 5, "diffusion model")
    over = route("有多少篇论文的平均评分高于6分？").aggregate
    assert (over.kind, over.threshold, over.topic) == ("count", (">", 6.0), "")
    assert route("口头报告论文的平均评分是多少？").aggregate.kind == "average"


def test_a_chinese_topic_the_glossary_lacks_is_translated_by_the_model_once():
    asked = []

    def translate(text):
        asked.append(text)
        return "metacognition"

    intent = route("有多少篇关于元认知的论文？", translate=translate)
    assert intent.aggregate.topic == "metacognition" and asked == ["元认知"]
    # a lookup never calls the model at routing time
    assert route("哪些论文研究元认知？", translate=translate).kind is Kind.LOOKUP and len(asked) == 1
    # a failed translation leaves the glossary's words (here none), not an exception
    assert route("有多少篇关于元认知的论文？", translate=lambda t: 1 / 0).aggregate.topic == ""


def test_english_text_names_and_followups():
    zh = route("有没有关于KV缓存压缩的论文？")
    assert zh.english == "KV cache compression" and zh.foreign and zh.rewrite == "translate"
    mixed = route("DroPE 是什么? why does it extend context?")
    assert mixed.lang == "zh" and not mixed.foreign  # enough English of its own to be searched as written
    assert route("What is DroPE and how does LookaheadKV differ?").names == ("DroPE", "LookaheadKV")
    shown = [Exchange("What is DroPE?", "It drops PE [1].", ("Dropping positional embeddings",))]
    follow = route("What are its limitations?", shown)
    assert follow.followup and follow.rewrite == "followup"
    new_topic = route("Which papers study protein folding?", shown)
    assert not new_topic.followup and new_topic.rewrite == "followup"  # the model still sees the history
    assert route("What are its limitations?").rewrite == ""  # no history: nothing to resolve


@pytest.mark.parametrize("message", [
    "第三篇用了什么数据集来评估模型的泛化能力？", "第四个方法在长上下文上的表现怎么样呢？", "最后一篇论文的主要局限性有哪些？",
    "How does the fourth paper evaluate the method on long documents?", "What does the 3rd paper do differently?",
    "Which datasets does the paper cited as [3] use for evaluation?"])
def test_a_position_among_the_papers_shown_is_a_followup(message):
    # long enough not to count as a short message; the position is the only cue (turns.referred reads it too)
    shown = [Exchange("KV cache?", "A [1]. B [2]. C [3]. D [4].", ("A", "B", "C", "D"), ("a", "b", "c", "d"))]
    assert is_followup(message) and route(message, shown).followup


@pytest.mark.parametrize("message, followup", [
    # no word that points back, but "the method", "the authors", "作者", "该方法", or no topic of its own
    ("Does the method need labeled data?", True), ("Which benchmark did the authors evaluate on?", True),
    ("What datasets were used?", True), ("What were the main results?", True), ("主要结果是什么？", True),
    ("作者用了哪些数据集？", True), ("这个方法需要标注数据吗？", True), ("实验结果如何？", True),
    # a topic of its own starts a new search
    ("Which papers study KV cache eviction for long prompts?", False),
    ("What are the main results on ImageNet?", False),
    ("扩散模型有哪些论文？", False), ("灯塔维护有哪些论文？", False),  # a Chinese topic the glossary lacks is a topic too
    ("What is the proposed method for modeling single-cell perturbation data?", False),
    # "it" after the message's own topic points to that topic, not back to the conversation
    ("What method captures human performance from a monocular RGB stream, and how does it handle occlusion?", False),
    ("How does its memory cost compare with FlashAttention?", True),
    ("Compared with LookaheadKV, how does it handle long prompts?", True),
    # "the paper that ...", "the one that ...": a description, not a pointer back; "that paper" still points back
    ("How does the paper that drops positional embeddings differ from the one that evicts KV cache entries by "
     "glimpsing into the future?", False),
    ("How does that paper handle long prompts?", True),
    ("How does it differ from the paper that proposes token-indexed parameter scaling?", True),
])
def test_a_message_about_the_papers_shown_is_a_followup_without_a_pronoun(message, followup):
    shown = [Exchange("KV cache?", "A [1]. B [2].", ("A", "B"), ("a", "b"))]
    assert is_followup(message) is followup and route(message, shown).followup is followup


def test_compare_the_pinned_papers_compares_exactly_them():
    pins = ("A1", "B2", "C3")
    intent = route("compare the pinned papers", pinned=pins)
    assert (intent.kind, intent.papers, intent.compare_count) == (Kind.COMPARE, pins, 3)
    assert route("compare the pinned papers", pinned=pins[:1]).papers == ()  # one paper cannot be compared
    assert route("Compare DroPE and LookaheadKV", pinned=pins).papers == ()  # named papers, not the pins


def test_a_comparison_that_describes_its_papers_is_split_into_its_descriptions():
    got = descriptions("How does the paper that proposes a benchmark for code reasoning differ from the one that "
                       "trains tool-use agents in coding environments?")
    assert len(got) == 2 and "benchmark" in got[0] and "tool-use" in got[1]
    assert descriptions("How does DroPE differ from LookaheadKV?") == ()  # named: nothing to search one by one
    # the question's opening is not part of the first description
    assert descriptions("how does the paper that drops positional embeddings differ from the one that evicts KV cache "
                        "entries by looking ahead?")[0] == "the paper that drops positional embeddings"
    assert descriptions("Compare the paper that distills a reward model from human votes with the one that learns "
                        "rewards from pairwise video preferences.")[0] == "the paper that distills a reward model from human votes"
    assert descriptions("Which papers compress the KV cache?") == ()


@pytest.mark.parametrize("question, one, other", [
    ("What is the difference between a method that prunes attention heads at inference and a benchmark of "
     "long-context retrieval tasks?", "prunes attention heads", "benchmark of long-context"),
    ("提出一种动态后悔算法来优化在线库存的论文与提出一种适应未知折扣因子的新型算法的论文有什么不同？",
     "提出一种动态后悔算法来优化在线库存", "提出一种适应未知折扣因子的新型算法"),
    ("比较：去掉位置编码来扩展上下文的方法和通过前瞻来驱逐KV缓存的方法的区别", "去掉位置编码来扩展上下文", "通过前瞻来驱逐KV缓存"),
    ("用扩散模型生成分子结构的那篇论文跟用强化学习对齐大模型的论文相比有何不同？", "用扩散模型生成分子结构", "用强化学习对齐大模型"),
    ("Compare the paper that distills a reward model from human votes with the one that learns rewards from "
     "pairwise video preferences.", "distills a reward model", "pairwise video preferences"),
    ("Two papers speed up diffusion sampling: one caches attention features across denoising steps, the other "
     "trains a consistency student. How do they differ?", "caches attention features", "consistency student"),
    # one ..., the other ...: the first from a clause's "一篇/一种" (not "提出一种"), the second up to the question
    ("有两篇论文：一篇提出一种缓存去噪步骤间注意力特征的方法，另一篇则训练一个一致性学生模型。它们有什么区别？",
     "提出一种缓存去噪步骤间注意力特征的方法", "训练一个一致性学生模型"),
    ("两种方法都加速扩散采样：一种在去噪步骤之间缓存注意力特征，而另一种训练一致性学生模型，两者有何异同？",
     "在去噪步骤之间缓存注意力特征", "训练一致性学生模型"),
    ("一篇研究图神经网络的过平滑问题，另一篇研究图Transformer的位置编码，它们的思路有什么不同？",
     "研究图神经网络的过平滑问题", "研究图Transformer的位置编码"),  # "一篇研究" reads "one studies"
    ("比较用蒸馏压缩视觉编码器的方法和用剪枝压缩语言模型的方法。", "用蒸馏压缩视觉编码器", "用剪枝压缩语言模型"),
    ("用蒸馏压缩视觉编码器的方法和用剪枝压缩语言模型的方法在设计上有哪些差异？", "用蒸馏压缩视觉编码器", "用剪枝压缩语言模型"),
    # "while" inside a description is no turn when a stronger one is there
    ("How does the paper that edits object shapes precisely while preserving other content differ from the one that "
     "manipulates objects with a geometry-consistent diffusion model?", "while preserving other content",
     "geometry-consistent diffusion"),
    ("What is the difference between a method that prunes attention heads while decoding and a benchmark of "
     "long-context retrieval tasks?", "prunes attention heads while decoding", "benchmark of long-context"),
    ("One line of work distills a reward model from human votes, whereas the other learns rewards from pairwise "
     "video preferences.", "distills a reward model", "pairwise video preferences"),
])
def test_descriptions_are_read_in_the_question_s_own_language_and_phrasing(question, one, other):
    got = descriptions(question)
    assert len(got) == 2 and one in got[0] and other in got[1] and one not in got[1]
    assert not re.search(r"differ|区别|异同|不同|[。？?]$", got[1])  # the closing question is no description
    assert route(question).described == got


@pytest.mark.parametrize("question", [
    "DroPE和LookaheadKV有什么区别？",  # named, not described
    "DroPE的方法与LookaheadKV的方法有什么不同？",  # names again: too short to search as descriptions
    "有没有关于KV缓存压缩的论文？",  # not a comparison
    "What is the difference between DroPE and LookaheadKV?",
])
def test_a_question_that_names_its_papers_or_compares_nothing_has_no_descriptions(question):
    assert descriptions(question) == () and route(question).described == ()
