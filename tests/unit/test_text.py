"""One text module: words, sentences, names, language and links mean the same everywhere."""

import pytest

from rag.text import (abstract_sentences, content_words, coined_names, english_only, introduced_names, joined, language, latin_words,
                      numbers, openreview_url, query_terms, search_terms, short_name, split_sentences, states_absence, text_held,
                      unwrapped, web_link, word_set, words)


@pytest.mark.parametrize("text, lang", [
    ("Which papers compress the KV cache?", "en"), ("有没有关于KV缓存压缩的论文？", "zh"), ("DroPE是什么？", "zh"),
    ("Über Diffusionsmodelle", "en"), ("Что такое DroPE?", "other"), ("トランスフォーマーの論文", "ja"),
    ("트랜스포머 논문", "ko"), ("ViT", "en"), ("", "en"),
])
def test_language(text, lang):
    assert language(text) == lang


def test_words_and_terms():
    assert words("KV-cache eviction, 8x longer!") == ["kv", "cache", "eviction", "8x", "longer"]
    assert words("KV-cache eviction", hyphens=True) == ["kv-cache", "eviction"]
    assert content_words("The paper proposes a new KV cache for the cache") == ["kv", "cache"]
    assert len(query_terms("word%d " % 1 * 10 + " ".join(f"w{i}" for i in range(100)))) == 48
    assert latin_words("用Transformer做time series预测") == ["transformer", "time", "series"]
    assert latin_words("Что такое DroPE") == ["drope"]


def test_the_frame_of_a_chat_question_is_not_its_topic():
    # "tried" is in 11 of the conference's 19,630 abstracts: as a search term it would outweigh the topic
    assert query_terms("Has anyone ever tried pruning diffusion models?") == ["pruning", "diffusion", "models"]
    assert query_terms("Have you seen or heard of work on KV cache eviction? I wondered.") == ["kv", "cache", "eviction"]


def test_a_hyphenated_word_and_the_same_word_written_as_one_match_both_ways():
    assert joined("Meta-cognition after fine-tuning") == {"metacognition": ("meta", "cognition"),
                                                          "finetuning": ("fine", "tuning")}
    # "meta-cognition" asked, "metacognition" written: both parts are found, the unrelated word is not
    assert text_held("meta-cognition of agents", word_set("We measure metacognition in LLMs.")) == 2 / 3
    assert text_held("metacognition", word_set("A study of meta-cognition.")) == 1.0
    assert text_held("meta-cognition", word_set("A meta-analysis of cognition.")) == 1.0  # both parts, as before
    assert text_held("meta-cognition", word_set("A study of recognition.")) == 0.0
    assert search_terms("multi-modal fine-tuning") == ["multi", "modal", "fine", "tuning", "multimodal", "finetuning"]
    assert len(search_terms(" ".join(f"a{i}-b{i}" for i in range(1000)))) == 2 * 48


@pytest.mark.parametrize("text, absent", [
    ("没有关于滑雪的论文。", True), ("这些论文并未讨论滑雪。", True), ("无法从摘要中确定具体的样本数量。", True),
    ("摘要没有提到具体的硬件平台。", True), ("检索到的论文无法回答这个问题。", True),
    ("None of the papers study skiing.", True), ("The abstracts do not mention skiing.", True),
    # claims that happen to hold a negation: not a statement that something is missing
    ("学习率衰减使得模型在训练过程中无法充分利用高质量数据。", False), ("该方法没有使用位置编码，从而扩展了上下文。", False),
    ("It is not only faster but also more accurate.", False),
])
def test_a_statement_of_absence_is_a_negation_of_existence_or_coverage_not_any_negation(text, absent):
    assert states_absence(text) is absent


def test_sentences_numbers_and_names():
    assert split_sentences("It reaches 99.1% accuracy, e.g. on NIAH [1]. Next [2]。还有") == [
        "It reaches 99.1% accuracy, e.g. on NIAH [1].", "Next [2]。", "还有"]
    # a marker written straight before the next sentence's first word is its subject: "[1]介绍了GLC" cites [1]
    assert split_sentences("这些论文研究了通信效率。[1]介绍了GLC，压缩通信符号。[2]") == [
        "这些论文研究了通信效率。", "[1]介绍了GLC，压缩通信符号。[2]"]
    assert split_sentences("是的，有。[1][2]都提到了智能体协作。") == ["是的，有。", "[1][2]都提到了智能体协作。"]
    assert split_sentences("它压缩缓存。[1] 另一篇扩展上下文。[2]") == ["它压缩缓存。[1]", "另一篇扩展上下文。[2]"]
    assert numbers("from 1,000 to 3.5 (12%)") == ["1000", "3.5", "12"]
    assert coined_names("Does DroPE beat LookaheadKV on Qwen2?") == ["DroPE", "LookaheadKV", "Qwen2"]
    assert short_name("LookaheadKV: Fast and Accurate KV Cache Eviction") == "LookaheadKV"
    assert introduced_names("Dropping Positional Embeddings", "Limits exist. We introduce DroPE, a recipe.") == {"DroPE"}


def test_links_are_built_in_one_place_and_only_web_links_leave():
    assert openreview_url("RlPVSeKjoc") == "https://openreview.net/forum?id=RlPVSeKjoc"
    assert openreview_url("a b&c", "N1") == "https://openreview.net/forum?id=a%20b%26c&noteId=N1"
    assert web_link("javascript:alert(1)", "X1") == "https://openreview.net/forum?id=X1"
    assert web_link("https://example.org/p", "X1") == "https://example.org/p"


@pytest.mark.parametrize("text, english", [
    ("What papers explain hidden混淆 phenomena in federated causal inference?",
     "What papers explain hidden phenomena in federated causal inference?"),  # one term left untranslated
    ("Which papers compress the KV cache?", "Which papers compress the KV cache?"),
    ("该论文使用LLM和RL方法", ""),  # Chinese with English names: not a translation
    ("还是中文的回答", ""),
])
def test_a_translation_keeps_its_english_and_drops_a_few_untranslated_characters(text, english):
    assert english_only(text) == english


# an abstract pasted from a PDF, its lines broken where the page broke them (a quarter of ICLR 2026's abstracts)
WRAPPED = ("Can off-the-shelf LLMs conduct effective secu-\nrity evaluations without training? Motivated by this,\n"
           "we study multi-round jailbreaks, which de-\nmand deeper strategies in real-\nworld settings.\n"
           "Our contributions:\n(1) a benchmark.\n\nA second paragraph.")


def test_a_pdf_line_break_inside_a_sentence_is_a_space_and_a_broken_word_is_joined():
    assert unwrapped(WRAPPED) == ("Can off-the-shelf LLMs conduct effective security evaluations without training? "
                                  "Motivated by this, we study multi-round jailbreaks, which demand deeper strategies "
                                  "in real-world settings.\nOur contributions:\n(1) a benchmark.\n\nA second paragraph.")
    assert abstract_sentences(WRAPPED) == [
        "Can off-the-shelf LLMs conduct effective security evaluations without training?",
        "Motivated by this, we study multi-round jailbreaks, which demand deeper strategies in real-world settings.",
        "Our contributions:", "(1) a benchmark.", "A second paragraph."]
    # a word broken at a hyphen that is no ordinary word joined keeps its hyphen; text without breaks is unchanged
    assert unwrapped("the Kolmogorov-\nArnold networks and post-\ntraining") == "the Kolmogorov-Arnold networks and post-training"
    assert unwrapped("No breaks here.") == "No breaks here."
    # a model's answer keeps its lines: split_sentences is for text whose lines are items
    assert split_sentences("- first point [1]\n- second point [2]") == ["- first point [1]", "- second point [2]"]
