"""The generated evaluation set: kinds in their shares, left-out papers nobody's gold, near-miss terms absent
from the corpus, questions that name their paper rejected, and files `paperchat eval` reads."""

import json

import numpy as np

from rag.corpus.papers import Paper, load_file
from rag.eval.evaluate import load_questions
from rag.eval.generate import (FOLLOWUP_TURNS, FOLLOWUP_TURNS_BARE, FOLLOWUP_TURNS_BARE_ZH, FOLLOWUP_TURNS_ZH, absent,
                                describe, in_chinese, keeps_content, make_set, names_the_paper, rare_name_set,
                                to_chinese, write_set)
from rag.index.snapshot import Snapshot, read_snapshot, snapshot_path
from rag.question.glossary import chinese_of
from rag.question.router import descriptions, is_followup

TOPICS = ["graph learning", "speculative decoding", "protein design", "image segmentation", "kv cache"]


def corpus(n=120):
    rng = np.random.default_rng(0)
    centres = rng.normal(size=(len(TOPICS), 16))
    papers, vectors = [], []
    for i in range(n):
        t = i % len(TOPICS)
        papers.append(Paper(id=f"P{i:04d}", title=f"FooNet{i}: a study of {TOPICS[t]}",
                            abstract=f"We study {TOPICS[t]} in setting {i}. We introduce FooNet{i}, which works well.",
                            keywords=(TOPICS[t],), status="Poster" if i % 7 else "Withdrawn"))
        v = centres[t] + 0.9 * rng.normal(size=16)
        vectors.append(v / np.linalg.norm(v))
    snap = Snapshot({"schema": 0}, [f"{p.id}:0" for p in papers], [p.content_hash() for p in papers],
                    np.asarray(vectors, dtype=np.float16))
    return papers, snap


def scripted(prompt: str) -> str:
    """A stand-in for the model: questions from the abstract's first words, Chinese on request."""
    if "Translate the phrase above" in prompt:  # a comparison's description, translated on its own
        phrase = prompt.split("Phrase: ")[1].split("\n")[0]
        return f"研究{phrase.split('studies ')[-1].split(' in setting')[0]}，在第{phrase.split()[-1]}个设置中的表现"
    if "Translate the question above" in prompt:
        if "numbered 1" in prompt:  # the small model sometimes echoes the English: not a translation
            return prompt.split("Question: ")[1].split("\n")[0]
        return "这篇论文研究了什么？" if "FooNet" not in prompt else "FooNet是什么？"
    setting = prompt.split("in setting ")[1].split(".")[0] if "in setting " in prompt else "0"
    if "at most 12 words" in prompt:
        return f"studies {prompt.split('We study ')[1].split(' in setting')[0]} in setting {setting}"
    if int(setting) % 9 == 0:
        return f"What does FooNet{setting} do?"  # names the paper: must be rejected
    return f"Which paper studies this problem in the setting numbered {setting}?"


def test_a_set_has_every_kind_and_keeps_its_labels_honest(tmp_path):
    papers, snap = corpus()
    made = make_set(papers, snap, scripted, seed=3, n=60)
    kinds = {}
    for q in made.questions:
        kinds[q["generated"]] = kinds.get(q["generated"], 0) + 1
    assert set(kinds) == {"lookup", "leave_out", "near_miss", "compare", "followup"}
    unanswerable = sum(q["kind"] == "unanswerable" for q in made.questions)
    assert unanswerable >= len(made.questions) / 3
    # echoed translations are not Chinese, and the share is topped up to 30% by translating other questions
    chinese = [q for q in made.questions if q["lang"] == "zh"]
    assert len(chinese) >= 0.3 * len(made.questions) and all("numbered 1" not in q.get("question", "") for q in chinese)
    assert all(q["english"].endswith("?") for q in chinese if "question" in q and q["kind"] != "compare")
    gone = set(made.left_out)
    for q in made.questions:
        assert not set(q["gold"]) & gone, q  # a left-out paper is nobody's answer
        assert "FooNet" not in q.get("question", "")  # questions naming their paper were rejected
    by_id = {p.id: p for p in papers}
    assert all(q["gold"][0] in by_id and by_id[q["gold"][0]].status == "Poster" for q in made.questions
               if q["kind"] == "lookup")
    out = write_set(tmp_path / "set", made, papers, snap, 3, tmp_path / "corpus.jsonl.gz")
    assert len(load_questions(out)) == len(made.questions)
    test_corpus = load_file(tmp_path / "set" / "corpus.jsonl.gz").papers
    assert {p.id for p in test_corpus} == {p.id for p in papers} - gone
    assert len(read_snapshot(snapshot_path(tmp_path / "set" / "corpus.jsonl.gz")).ids) == len(test_corpus)
    manifest = json.loads((tmp_path / "set" / "manifest.json").read_text())
    assert manifest["left_out_papers"] == len(gone) and manifest["questions"] == len(made.questions)
    again = make_set(papers, snap, scripted, seed=3, n=60)  # the same seed makes the same set
    assert again.questions == made.questions


def test_broad_questions_ask_about_a_shared_topic_with_every_paper_of_it_as_gold():
    papers, snap = corpus()
    default = make_set(papers, snap, scripted, seed=3, n=60)
    assert not [q for q in default.questions if q["generated"] == "broad"]  # not in the usual mix
    tagged = {}
    for p in papers:
        if p.status == "Poster":
            for k in p.keywords:
                tagged.setdefault(k.lower(), set()).add(p.id)
    made = make_set(papers, snap, scripted, seed=3, n=4, mix={"broad": 1.0})
    broad = [q for q in made.questions if q["generated"] == "broad"]
    assert broad and all(q["kind"] == "lookup" for q in broad)
    for q in broad:
        topic = q["note"].split("'")[1]
        assert len(tagged[topic]) >= 5 and set(q["gold"]) == tagged[topic]
        assert topic in q.get("english", q["question"]) and q["topic"] == topic
    # a Chinese one is its Chinese frame, with the glossary's Chinese for the topic or the topic as written
    assert chinese_of("KV cache") == "KV缓存" and chinese_of("contrastive learning") == "对比学习"
    assert chinese_of("web agent") is None
    assert all((chinese_of(q["topic"]) or q["topic"]) in q["question"] for q in broad if q["lang"] == "zh")
    assert [q for q in broad if q["lang"] == "zh"] and all(q["question"].startswith(("哪些", "有没有", "针对", "最近"))
                                                            or "的主要挑战" in q["question"] for q in broad if q["lang"] == "zh")
    assert make_set(papers, snap, scripted, seed=3, n=4, mix={"broad": 1.0}).questions == made.questions


def test_near_miss_terms_are_absent_and_naming_is_caught():
    papers, _ = corpus(10)
    papers.append(Paper(id="B1", title="Robots for beekeeping", abstract="Hives."))
    assert absent(["beekeeping", "curling", "the Apple Watch"], papers) == ["curling", "the Apple Watch"]
    drope = Paper(id="D", title="DroPE: Dropping Positional Embeddings to Extend Context",
                  abstract="We introduce DroPE, a recipe.")
    assert names_the_paper("How does DroPE extend context?", drope)
    assert names_the_paper("Which work studies dropping positional embeddings to extend context?", drope)
    assert not names_the_paper("Which paper removes position information after pretraining?", drope)


def test_a_name_few_papers_use_gives_the_paper_away_but_the_fields_words_do_not():
    cramf = Paper(id="C", title="Automated Formalization via Conceptual Retrieval",
                  abstract="To address these issues, we propose CRAMF, a framework. It uses LLM agents and the Disco sampler.")
    others = [Paper(id=f"O{i}", title=f"Study {i}", abstract="Our LLM agents use a Transformer.") for i in range(30)]
    rare = rare_name_set([cramf, *others])
    assert {"cramf", "disco"} <= rare and not {"llm", "transformer"} & rare
    assert names_the_paper("What does CRAMF add to LLM-based autoformalization?", cramf, rare)
    assert names_the_paper("How is the Disco sampler used in formalization?", cramf, rare)
    assert not names_the_paper("How can LLM agents retrieve concepts to formalize mathematics?", cramf, rare)
    assert not names_the_paper("What does CRAMF add?", others[0], rare)  # a name of another paper is not this one's
    mgp = Paper(id="M", title="Policies that unmask actions", abstract="We propose Masked Generative Policy (MGP) for imitation.")
    rare = rare_name_set([mgp, *others])
    assert names_the_paper("What does the Masked Generative Policy (MGP) framework add to imitation learning?", mgp, rare)
    assert names_the_paper("Why does (MGP) help?", mgp, rare)


def test_a_description_must_start_with_a_verb_and_use_its_papers_words():
    paper = Paper(id="K", title="Learning to Evict: Attention Forecasting for KV Cache Compression",
                  abstract="We predict which cached tokens future queries will attend to and evict the rest of the cache.")
    other = Paper(id="M", title="Molecular Patches", abstract="We split molecules into patches for property prediction.")
    phrase = "predicts future attention to evict cache entries"
    assert describe(lambda prompt: phrase, paper) == phrase
    assert describe(lambda prompt: phrase, other) is None  # an echoed example, not this paper
    assert describe(lambda prompt: "KVForecast evicts cache entries by predicted attention", paper) is None
    assert describe(lambda prompt: "We predict future attention to evict the cache", paper) is None


def test_a_translation_that_drops_the_questions_topic_is_not_a_chinese_question():
    english = "What is the main contribution of the paper in estimating epistemic uncertainty in deep ensembles?"
    assert not keeps_content("这篇论文的主要贡献是什么？", english)  # the topic is gone: no paper answers it
    assert keeps_content("这篇论文在估计深度集成的认知不确定性方面的主要贡献是什么？", english)
    assert keeps_content("是否在Kindle e-readers上部署了分布式训练？", "Has anyone deployed distributed training on Kindle e-readers?")

    def ask(prompt):
        return "该论文的主要贡献是什么？"

    assert to_chinese(ask, english) is None


def test_a_chinese_comparison_keeps_both_papers_descriptions():
    one = "proposes a benchmark for collaborative long-term navigation with role specialization"
    other = "proposes a benchmark for evaluating robot policies across diverse environments"
    english = f"How does the paper that {one} differ from the one that {other}?"

    def ask(prompt):
        if "Translate the phrase above" in prompt:
            return {one: "提出了一个关于协作式长期导航与角色分工的基准", other: "提出了一个在多种环境中评测机器人策略的基准。"}[
                prompt.split("Phrase: ")[1].split("\n")[0]]
        # translated whole, the small model kept one paper: "compared with another paper, this one proposes ..."
        return "该论文与另一篇论文相比，提出了一个新的基准，专注于角色特化和并行性。"

    got = in_chinese(ask, english, [one, other])
    assert got == "提出了一个关于协作式长期导航与角色分工的基准的论文与提出了一个在多种环境中评测机器人策略的基准的论文有什么不同？"
    assert in_chinese(ask, english) == "该论文与另一篇论文相比，提出了一个新的基准，专注于角色特化和并行性。"  # whole: one paper
    # a description the model echoed in English is no translation: no Chinese question at all
    assert in_chinese(lambda prompt: prompt.split("Phrase: ")[1].split("\n")[0], english, [one, other]) is None
    papers, snap = corpus()
    made = make_set(papers, snap, scripted, seed=3, n=60)
    compared = [q for q in made.questions if q["kind"] == "compare"]
    chinese = [q for q in compared if q["lang"] == "zh"]
    assert chinese and all(q["question"].count("研究") == 2 for q in chinese)  # both scripted descriptions kept
    # every phrasing, in both languages, is read back by the router as the two descriptions it was written from
    assert len({q["frame"] for q in compared}) >= 3
    for q in compared:
        one, other = descriptions(q["question"])
        assert (one.endswith(q["described"][0]) and other.endswith(q["described"][1])) if q["lang"] == "en" else \
            (one.startswith("研究") and other.startswith("研究"))


def test_a_set_of_one_kind_holds_only_that_kind():
    papers, snap = corpus()
    made = make_set(papers, snap, scripted, seed=3, n=12, mix={"followup": 1.0})
    assert {q["generated"] for q in made.questions} == {"followup"} and len(made.questions) == 12
    assert made.left_out == [] and all(len(q["turns"]) >= 2 for q in made.questions)
    # the second turns come with and without a word that points back, and the router reads both as follow-ups
    second = [q["turns"][1]["question"] for q in made.questions]
    assert set(second) & set(FOLLOWUP_TURNS + FOLLOWUP_TURNS_ZH)
    assert set(second) & set(FOLLOWUP_TURNS_BARE + FOLLOWUP_TURNS_BARE_ZH)
    assert all(is_followup(text) for text in second)
