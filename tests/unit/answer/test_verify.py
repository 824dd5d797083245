"""Plain-code checks around the answer: can the retrieved papers answer at all, and does each sentence's
cited abstract hold its words and numbers."""

import math

import pytest

from rag.corpus.papers import Paper
from rag.index.lexical import LexicalIndex
from rag.retrieve.search import Source
from rag.answer.coverage import DeclineScore, coverage
from rag.answer.support import check_sentences
from rag.text import coined_names, split_sentences
from tests.unit.index.test_lexical import chunk

DROPE = Paper(id="RlPVSeKjoc", title="Extending the Context of Pretrained LLMs by Dropping their Positional Embeddings",
              abstract="DroPE removes positional embeddings after pretraining and recalibrates briefly. "
                       "It extends context to 8x the training length with 99.1% retrieval accuracy.")
KV = Paper(id="RVLMGPXt2i", title="LookaheadKV: fast KV cache eviction",
           abstract="LookaheadKV predicts future attention to evict key value cache entries, cutting memory by 60%.")
SOURCES = [Source(1, DROPE, 0.9, (DROPE.abstract,)), Source(2, KV, 0.5, (KV.abstract,))]


def make_index(tmp_path):
    lex = LexicalIndex(tmp_path / "lex.sqlite")
    lex.upsert([chunk(f"{p.id}:0", p.title, p.abstract) for p in (DROPE, KV)]
               + [chunk(f"P{i}:0", f"Paper {i}", "language models attention memory training") for i in range(40)])
    return lex


def test_document_frequency_is_stemmed_and_counts_chunks(tmp_path):
    lex = make_index(tmp_path)
    assert lex.document_frequency(["embeddings", "embedding", "memory", "honeybee"]) == {
        "embeddings": 1, "embedding": 1, "memory": 41, "honeybee": 0}


def test_a_name_no_paper_mentions_means_no_answer(tmp_path):
    lex = make_index(tmp_path)
    assert coined_names("How does TetraPrune compare with LookaheadKV and Qwen2?") == ["TetraPrune", "LookaheadKV", "Qwen2"]
    got = coverage(["What pruning criterion does TetraPrune use?"], SOURCES, lex.document_frequency, lex.count())
    assert not got.answerable and got.unknown_names == ("TetraPrune",)
    ok = coverage(["How does LookaheadKV evict entries?"], SOURCES, lex.document_frequency, lex.count())
    assert ok.answerable


# A score that leans on the papers holding the question's rare words (the fitted ones weigh all four signals)
RARE_WORDS = DeclineScore(bias=-2.0, weights={"rare_coverage": 4.0, "closest": 3.0}, threshold=0.5)


def test_rare_topic_words_the_best_papers_never_use_mean_no_answer(tmp_path):
    lex = make_index(tmp_path)
    bees = coverage(["Monitoring honeybee hive health from audio recordings?"], SOURCES, lex.document_frequency,
                    lex.count(), nearest=lambda: [("RVLMGPXt2i", 0.2)], score=RARE_WORDS)
    assert not bees.answerable and "honeybee" in bees.missing_terms and bees.best_coverage < 0.5
    assert bees.signals.closest == 0.2 and bees.probability < 0.5
    # an embedder without a fitted score: the missing rare words alone never decline
    assert coverage(["Monitoring honeybee hive health from audio recordings?"], SOURCES, lex.document_frequency,
                    lex.count()).answerable
    # a paper very close in meaning can outweigh the missing words
    close = coverage(["Monitoring honeybee hive health from audio recordings?"], SOURCES, lex.document_frequency,
                     lex.count(), nearest=lambda: [("RVLMGPXt2i", 0.95)], score=RARE_WORDS)
    assert close.answerable and close.signals.closest == 0.95
    asked = coverage(["Has anyone compressed the KV cache in oral papers?"], SOURCES, lex.document_frequency, lex.count())
    assert "anyone" not in asked.rare_terms and "oral" not in asked.rare_terms
    # typed in a chat, the same question is held as much as written plainly
    plain, chat = (coverage([q], SOURCES, lex.document_frequency, lex.count()).signals for q in
                   ("Which paper drops positional embeddings?", "Has anyone ever seen a paper that drops positional embeddings?"))
    assert chat.term_coverage == plain.term_coverage > 0 and chat.rare_coverage == plain.rare_coverage
    # so is the frame of a formal question: the paper that answers need not say "main contribution" or "impact"
    framed = coverage(["What is the main contribution of the paper that drops positional embeddings, and its impact?"],
                      SOURCES, lex.document_frequency, lex.count()).signals
    assert framed.term_coverage == plain.term_coverage
    drope = coverage(["Which paper drops positional embeddings to extend context?"], SOURCES,
                     lex.document_frequency, lex.count(), nearest=lambda: [("RlPVSeKjoc", 0.3)], score=RARE_WORDS)
    assert drope.answerable and drope.best_coverage >= 0.5 and not drope.missing_terms
    assert not coverage(["anything"], [], lex.document_frequency, lex.count()).answerable


def test_the_signals_are_shares_and_the_score_is_a_logistic_of_them(tmp_path):
    lex = make_index(tmp_path)
    got = coverage(["Which paper drops positional embeddings to extend context?"], SOURCES, lex.document_frequency,
                   lex.count(), nearest=lambda: [("RlPVSeKjoc", 0.61), ("RVLMGPXt2i", 0.4)],
                   lexical_top=lambda: ["RlPVSeKjoc", "P1"])
    s = got.signals
    assert s.closest == 0.61 and s.rare_coverage == 1.0 and 0.5 < s.term_coverage <= 1.0
    assert s.agreement == 1 / 2  # of the two papers of the shorter list, one is in both tops
    # a lexical search that found one paper, the dense search's second: full agreement, however small the index
    one = coverage(["Which paper drops positional embeddings to extend context?"], SOURCES, lex.document_frequency,
                   lex.count(), nearest=lambda: [("RVLMGPXt2i", 0.4), ("RlPVSeKjoc", 0.3)],
                   lexical_top=lambda: ["RlPVSeKjoc"])
    assert one.signals.agreement == 1.0
    # nothing found lexically: no agreement
    assert coverage(["Which paper drops positional embeddings to extend context?"], SOURCES, lex.document_frequency,
                    lex.count(), nearest=lambda: [("RlPVSeKjoc", 0.3)]).signals.agreement == 0.0
    flat = DeclineScore(bias=0.0, weights={}, threshold=0.5)
    assert flat.probability(s) == 0.5
    assert DeclineScore.of({"bias": 1.0, "closest": 2.0, "threshold": 0.3}).probability(s) == \
        pytest.approx(1 / (1 + math.exp(-(1.0 + 2.0 * 0.61))))
    assert DeclineScore.of({"bias": 1.0, "threshold": 0.3}, threshold=0.9).threshold == 0.9  # a setting overrides


def test_sentences_split_at_full_stops_keeping_their_markers():
    text = "DroPE drops embeddings [1]. It reaches 99.1% accuracy, e.g. on NIAH [1][2]. 它延长了上下文[1]。还有呢"
    assert split_sentences(text) == ["DroPE drops embeddings [1].", "It reaches 99.1% accuracy, e.g. on NIAH [1][2].",
                                     "它延长了上下文[1]。", "还有呢"]
    # markers written first go with the sentence after them
    assert split_sentences("[1] DroPE：去掉位置编码。[2] LookaheadKV：预测注意力。") == [
        "[1] DroPE：去掉位置编码。", "[2] LookaheadKV：预测注意力。"]


def test_supported_unsupported_and_unchecked_sentences():
    text = ("DroPE removes positional embeddings after pretraining [1]. "
            "LookaheadKV cuts memory by 60% [2]. "
            "LookaheadKV cuts memory by 75% [2]. "
            "DroPE was trained on protein folding trajectories with reinforcement learning [1]. "
            "Both are interesting. "
            "该方法[1]。")
    checks = check_sentences(text, SOURCES)
    assert [c.supported for c in checks] == [True, True, False, False, None, None]
    assert checks[2].missing_numbers == ("75",)
    assert checks[0].cited == (1,) and checks[0].support == 1.0
    assert checks[3].support < 0.5


def test_an_uncited_sentence_restating_one_abstract_gets_its_citation():
    from rag.answer.support import attribute_uncited

    text = ("DroPE removes positional embeddings after pretraining and recalibrates briefly. "
            "LookaheadKV cuts memory [2]. Both matter for long contexts in practice somehow.")
    cited, done, added = attribute_uncited(text, SOURCES)
    assert cited.startswith("DroPE removes positional embeddings after pretraining and recalibrates briefly [1].")
    assert added == [1] and done == ["DroPE removes positional embeddings after pretraining and recalibrates briefly [1]."]
    assert cited.endswith("Both matter for long contexts in practice somehow.")  # no source holds it: left uncited
    checks = check_sentences(cited, SOURCES, done)
    assert [(c.supported, c.attributed) for c in checks] == [(True, True), (True, False), (None, False)]


def test_sentences_that_only_point_at_a_source_are_not_judged():
    checks = check_sentences("This work is described in [1]. The retrieved papers [1] and [2] provide details.", SOURCES)
    assert [c.supported for c in checks] == [None, None]


def test_an_extra_citation_that_holds_none_of_the_sentence_makes_it_unsupported():
    text = ("DroPE removes positional embeddings after pretraining [1][2]. "
            "DroPE removes positional embeddings while LookaheadKV predicts future attention [1][2].")
    assert [c.supported for c in check_sentences(text, SOURCES)] == [False, True]


def test_a_comparison_may_find_its_rare_terms_across_the_papers_compared():
    a = Source(1, Paper(id="A", title="LookaheadKV: fast eviction", abstract="LookaheadKV evicts cache entries."), 1.0)
    b = Source(2, Paper(id="B", title="TokMem: token memory", abstract="TokMem stores procedures as tokens."), 0.9)
    c = Source(3, Paper(id="C", title="Zebra stripes", abstract="Stripes deter flies."), 0.8)
    freq = lambda terms: {t: 1 for t in terms}  # noqa: E731  every term is rare
    q = ["Compare LookaheadKV, TokMem and zebra"]
    assert not coverage(q, [a, b, c], freq, 1000, score=RARE_WORDS).answerable  # no single paper holds half of them
    assert coverage(q, [a, b, c], freq, 1000, comparison=True, score=RARE_WORDS).answerable  # together they do
    # ... but terms no paper holds still decline it
    assert not coverage(["Compare LookaheadKV with quokkas and wombats"], [a, b], freq, 1000, comparison=True,
                        nearest=lambda: [("A", 0.1)], score=RARE_WORDS).answerable


ZEBRA = Paper(id="ZebraPaper", title="Zebra stripes deter biting flies",
              abstract="Stripes on zebras reduce landings of horseflies in field trials.")


def test_a_cited_paper_holding_none_of_a_sentences_words_is_taken_out_when_others_support_it():
    from rag.answer.support import drop_extra_citations

    sources = [*SOURCES, Source(3, ZEBRA, 0.2, (ZEBRA.abstract,))]
    text = ("DroPE removes positional embeddings after pretraining and extends context. [1], [3] "
            "Zebra stripes reduce horseflies [3]. It evicts cache entries and removes embeddings [1][2].")
    assert split_sentences(text)[0].endswith("context. [1], [3]")  # a comma-separated run stays with its sentence
    pruned, removed = drop_extra_citations(text, sources)
    assert pruned == ("DroPE removes positional embeddings after pretraining and extends context. [1] "
                      "Zebra stripes reduce horseflies [3]. It evicts cache entries and removes embeddings [1][2].")
    assert removed == [3]  # [3] stays where it supports; [1][2] each hold part of the last sentence: both kept
    nobody = "Honeybees dance to point at flowers [1][3]."  # nothing supports it: left as written, to be flagged
    assert drop_extra_citations(nobody, sources) == (nobody, [])
    assert check_sentences(pruned, sources)[0].supported and not check_sentences(text, sources)[0].supported


def test_rare_is_a_share_of_the_index_and_common_ml_words_are_never_rare():
    """The README's example "有没有关于KV缓存压缩的论文？" was declined on 19 papers: every word was "rare" there."""
    kv = [Source(1, KV, 0.5, (KV.abstract,))]
    none = lambda terms: {t: 0 for t in terms}  # noqa: E731  no paper of the index uses any of the words
    # "compression" is in no paper of a 19-paper index, but hundreds of the conference's: not a topic word
    small = coverage(["papers on KV cache compression"], kv, none, 19, nearest=lambda: [("RVLMGPXt2i", 0.3)],
                     score=RARE_WORDS)
    assert small.answerable and "compression" not in small.rare_terms
    # "honeybee" is exotic in ML abstracts at large: rare in any index, and unheld, so declined when nothing is close
    bees = coverage(["honeybee hive audio"], kv, none, 19, nearest=lambda: [("RVLMGPXt2i", 0.3)], score=RARE_WORDS)
    assert not bees.answerable and "honeybee" in bees.rare_terms
    one = lambda terms: {t: 1 for t in terms}  # noqa: E731
    assert coverage(["honeybee hive audio"], kv, one, 19_657).rare_terms  # 1 in 19,657
    assert not coverage(["honeybee hive audio"], kv, lambda t: {x: 100 for x in t}, 19_657).rare_terms  # 100 in 19,657


def test_a_key_term_the_cited_abstract_lacks_is_never_supported_whatever_the_overlap():
    # every other word is in DroPE's abstract (overlap 0.83), but it never mentions FPGAs
    fpga = check_sentences("DroPE removes positional embeddings after pretraining on FPGAs [1].", SOURCES)[0]
    assert fpga.supported is False and fpga.support > 0.8 and fpga.missing_names == ("FPGAs",)
    tpu = check_sentences("LookaheadKV evicts KV cache entries on TPUs [2].", SOURCES)[0]
    assert tpu.supported is False and tpu.missing_names == ("TPUs",)
    qwen = check_sentences("DroPE extends Qwen2 to 8x the training length [1].", SOURCES)[0]
    assert qwen.supported is False and qwen.missing_names == ("Qwen2",)
    # an acronym the abstract spells out is held: "key value" for KV is too short to count, "LLMs" is in the title
    assert check_sentences("DroPE extends the context of pretrained LLMs [1].", SOURCES)[0].supported is True


def test_a_sentence_that_copies_the_source_header_is_judged_on_its_claim_not_on_the_id():
    # the model read "[1] Title (Status, id XXX)" and often copies it; the id is no unknown name
    poster = Paper(id=DROPE.id, title=DROPE.title, abstract=DROPE.abstract, status="Poster")
    sources = [Source(1, poster, 0.9, (poster.abstract,))]
    header = "(Poster, id RlPVSeKjoc)"
    copied = check_sentences(f"Dropping Positional Embeddings {header} 去掉了位置编码，并延长了上下文 [1]。", sources)[0]
    assert copied.supported is True and copied.missing_names == ()
    wrong = check_sentences(f"Dropping Positional Embeddings {header} 在 FPGA 上训练 [1]。", sources)[0]
    assert wrong.supported is False and wrong.missing_names == ("FPGA",)


def test_chinese_sentences_are_judged_by_their_names_numbers_and_glossary_terms():
    assert check_sentences("DroPE 去掉了位置编码，并延长了上下文 [1]。", SOURCES)[0].supported is True
    assert check_sentences("DroPE 在 FPGA 上去掉了位置编码 [1]。", SOURCES)[0].supported is False  # FPGA: nowhere
    assert check_sentences("DroPE 使用强化学习训练蛋白质折叠模型 [1]。", SOURCES)[0].supported is False
    assert check_sentences("LookaheadKV 把内存减少了 75% [2]。", SOURCES)[0].missing_numbers == ("75",)


def test_an_uncited_claim_is_judged_on_its_key_terms_against_all_the_sources():
    invented = check_sentences("Several papers implement speculative decoding on FPGAs.", SOURCES)[0]
    assert invented.supported is False and invented.missing_names == ("FPGAs",)
    assert check_sentences("No paper implements decoding on FPGAs.", SOURCES)[0].supported is None  # says it is absent
    assert check_sentences("Both ideas matter for long contexts.", SOURCES)[0].supported is None  # no key term: not judged


def test_a_question_with_no_english_text_is_still_scored_and_holds_no_word(tmp_path):
    """A Chinese question whose translation failed reaches the check with Chinese text only: it is not waved through."""
    lex = make_index(tmp_path)
    got = coverage(["蜜蜂蜂巢的音频监测"], SOURCES, lex.document_frequency, lex.count(),
                   nearest=lambda: [("RlPVSeKjoc", 0.2)], score=RARE_WORDS)
    assert got.signals.rare_coverage == 0.0 and got.signals.term_coverage == 0.0 and not got.answerable


def test_a_follow_up_is_judged_by_the_models_standalone_query_not_by_its_pronouns():
    from rag.pipeline import build_pipeline
    from rag.question.turns import Exchange
    from rag.settings import Settings
    from tests.fakes import WordHashEmbeddings, fake_chat

    pipeline = build_pipeline(Settings(), embeddings=WordHashEmbeddings(),
                              llm=fake_chat("dropping positional embeddings to extend the context of pretrained LLMs"))
    pipeline.ensure_ingested()
    history = [Exchange("Which paper drops positional embeddings?", "DroPE does [1].",
                        ("Extending the Context of Pretrained LLMs by Dropping their Positional Embeddings",))]
    intent = pipeline.route("What are its limitations?", history)
    query = pipeline.search_query(intent, history)
    cover = pipeline.coverage(intent, query, pipeline.retrieve(query.all))
    assert query.rewritten and cover.signals.rewritten == 1.0
    assert cover.signals.term_coverage > 0.8  # the rewrite's words, which the paper holds; not "limitations"
    asked = pipeline.route("Which paper drops positional embeddings?")
    first = pipeline.coverage(asked, pipeline.search_query(asked), pipeline.retrieve(asked.question))
    assert first.signals.rewritten == 0.0


def test_a_chinese_question_with_english_terms_of_its_own_is_judged_by_them():
    """"有没有关于<English terms>的论文？" is searched by its English words, with no translation: the check reads the same
    words (read as written, its Chinese left it no English text, and it was declined for holding no word)."""
    from rag.pipeline import build_pipeline
    from rag.settings import Settings
    from tests.fakes import WordHashEmbeddings, fake_chat

    pipeline = build_pipeline(Settings(), embeddings=WordHashEmbeddings(), llm=fake_chat("unused"))
    pipeline.ensure_ingested()
    intent = pipeline.route("有没有关于dropping positional embeddings to extend context的论文？")
    query = pipeline.search_query(intent)
    assert intent.chinese and not intent.foreign and not query.rewritten
    cover = pipeline.coverage(intent, query, pipeline.retrieve(query.all))
    assert cover.signals.term_coverage > 0.8 and cover.signals.rare_coverage > 0.8


class _Similarity:
    """A multilingual embedder stand-in: a claim holding a Chinese word is close to a sentence holding its English."""

    floor = 0.5

    def __init__(self, words):
        self.words, self.calls = words, []

    def __call__(self, text, sentences):
        self.calls.append(text)
        return max((0.9 if any(zh in text and en in s.lower() for zh, en in self.words.items()) else 0.2)
                   for s in sentences)


def test_a_chinese_claim_is_judged_by_what_it_cites_in_any_language():
    similar = _Similarity({"位置": "positional"})
    about_positions = "这篇论文在训练后去掉位置嵌入 positional embeddings, 从而扩展上下文 context。"
    # cited to the paper that says it: supported; the same claim given to the KV-cache paper: not, although its
    # English words ("embeddings", "context") are common to both abstracts
    right, wrong = check_sentences(f"{about_positions}[1] {about_positions}[2]", SOURCES, similarity=similar)
    assert right.supported is True and right.closeness == 0.9
    assert wrong.supported is False and wrong.closeness == 0.2
    # a Chinese claim with too few English words: without the multilingual judge it is not judged; with it, it is
    bare = "这篇论文去掉了位置编码。[1]"
    assert check_sentences(bare, SOURCES)[0].supported is None
    assert check_sentences(bare, SOURCES, similarity=similar)[0].supported is True
    assert check_sentences("这篇论文去掉了缓存条目。[1]", SOURCES, similarity=similar)[0].supported is False
    # English sentences never reach it
    similar.calls.clear()
    check_sentences("DroPE drops positional embeddings after training [1].", SOURCES, similarity=similar)
    assert similar.calls == []
