"""Aggregate questions are computed in code: each answer's numbers and ids equal a direct computation over
the same records and reviews, written here independently (plain loops, str.lower()/in, statistics)."""

import json
import re
import statistics

import pytest

from rag.question.aggregate import parse_aggregate
from rag.prompts import NO_REVIEW_SCORES
from rag.corpus.reviews import parse_line
from rag.pipeline import build_pipeline
from rag.retrieve.filters import STATUS_GROUPS, Filters
from rag.settings import SEED_CORPUS, Settings
from tests.direct import phrase_in
from tests.fakes import WordHashEmbeddings, fake_chat

SEED = [json.loads(line) for line in SEED_CORPUS.read_text().splitlines()]
STATUSES = ["Oral", "Poster", "Poster", "Not accepted (rejected / desk-rejected / withdrawn after 2025-11-22)"]
AREAS = ["generative models", "reinforcement learning", "optimization"]
TOPICS = ["KV cache", "diffusion language models", "speculative decoding", "positional embeddings"]
# Synthetic papers with known statuses, areas and topics, next to the real seed records.
# Every fifth title writes its topic hyphenated ("KV-cache"), which a question's "KV cache" must match.
SYNTHETIC = [{"id": f"Synth{i:05d}", "title": (f"Study {i} of " + (TOPICS[i % 4].replace(" ", "-") if i % 5 == 0
                                                                     else TOPICS[i % 4])) if i % 3 else f"Study {i}",
              "abstract": f"We look at {TOPICS[(i + 1) % 4]} in setting {i}.", "keywords": [TOPICS[i % 4].lower()],
              "status": STATUSES[i % 4], "primary_area": AREAS[i % 3]} for i in range(60)]
RECORDS = SEED + SYNTHETIC


# Reviews of every paper but each seventh, with ratings 0-10 (even) and soundness 1-4 from a fixed formula.
REVIEWS = [{"id": r["id"], "reviews": [{"review_id": f"R{i}x{j}", "rating": (i * 3 + j * 5) % 6 * 2,
                                        "soundness": 1 + (i + 2 * j) % 4, "summary": "s"} for j in range(1 + i % 4)]}
           for i, r in enumerate(RECORDS) if i % 7]


def direct(records, phrase="", statuses=(), areas=()):
    """Independent of rag.answer.aggregate: a plain scan (tests/direct.py walks the strings)."""
    out = set()
    for r in records:
        text = " \n ".join([r["title"], r["abstract"], *r.get("keywords", [])])
        if phrase and not phrase_in(text, phrase):
            continue
        if statuses and r.get("status") not in statuses:
            continue
        if areas and r.get("primary_area") not in areas:
            continue
        out.add(r["id"])
    return out


ORAL, POSTER, ACCEPTED = STATUS_GROUPS["Oral"], STATUS_GROUPS["Poster"], STATUS_GROUPS["All accepted"]
QUESTIONS = [  # (question, UI filters, the direct computation's arguments)
    ("How many oral papers on KV cache?", Filters(), dict(phrase="KV cache", statuses=ORAL)),
    ("How many papers mention positional embeddings?", Filters(), dict(phrase="positional embeddings")),
    ("how many papers about speculative decoding?", Filters(), dict(phrase="speculative decoding")),
    ("How many posters are about diffusion language models at ICLR 2026?", Filters(),
     dict(phrase="diffusion language models", statuses=POSTER)),
    ("How many accepted papers on KV cache?", Filters(), dict(phrase="KV cache", statuses=ACCEPTED)),
    ("How many papers in the reinforcement learning area were accepted?", Filters(),
     dict(statuses=ACCEPTED, areas=("reinforcement learning",))),
    ("How many papers are there?", Filters(), dict()),
    ("Number of papers about KV cache", Filters(statuses=ORAL), dict(phrase="KV cache", statuses=ORAL)),
    ("How many orals are there?", Filters(), dict(statuses=ORAL)),
    ("How many papers using diffusion language models in the generative models area?", Filters(),
     dict(phrase="diffusion language models", areas=("generative models",))),
    ("How many submissions on positional embeddings?", Filters(primary_areas=("optimization",)),
     dict(phrase="positional embeddings", areas=("optimization",))),
    ("How many papers on quantum chromodynamics?", Filters(), dict(phrase="quantum chromodynamics")),
]


@pytest.fixture(scope="module")
def pipeline(tmp_path_factory):
    path = tmp_path_factory.mktemp("agg") / "corpus.jsonl"
    path.write_text("\n".join(json.dumps(r) for r in RECORDS) + "\n")
    settings = Settings(data_dir=tmp_path_factory.mktemp("data"))

    class Never(type(fake_chat())):
        def _stream(self, *a, **k):
            raise AssertionError("an aggregate question reached the model")

    p = build_pipeline(settings, embeddings=WordHashEmbeddings(), llm=Never(messages=iter([])))
    report, _ = p.ingest_files([path])
    assert not report.skipped
    p.ingest_reviews([review for line in REVIEWS for review in parse_line(line)])
    return p


def direct_scores(field):
    """paper id -> its reviews' values of `field`, from REVIEWS (not from the store)."""
    return {line["id"]: [r[field] for r in line["reviews"]] for line in REVIEWS}


@pytest.mark.parametrize("question, filters, expect", QUESTIONS, ids=[q for q, _, _ in QUESTIONS])
def test_the_count_and_ids_match_a_direct_computation(pipeline, question, filters, expect):
    answer = pipeline.ask(question, filters=filters)
    want = direct(RECORDS, **expect)
    number = int(re.match(r"\*\*([\d,]+) papers?\*\*", answer.text).group(1).replace(",", ""))
    listed = set(re.findall(r"\[(\w+)\]\(https://openreview\.net/forum\?id=\1\)", answer.text))
    if "more:" in answer.text:  # past the first 50, ids are listed bare
        listed |= {i.strip() for i in answer.text.split("more:", 1)[1].split(",")}
    assert number == len(want), (question, number, len(want))
    assert listed == want, (question, listed ^ want)
    assert f"counted over the {len(RECORDS)} indexed papers" in answer.text and not answer.refused


@pytest.mark.parametrize("english, chinese, expect", [
    ("How many oral papers are about KV cache?", "有多少篇关于KV缓存的口头报告论文？", dict(phrase="KV cache", statuses=ORAL)),
    ("How many posters are about speculative decoding?", "有多少篇关于投机解码的海报论文？",
     dict(phrase="speculative decoding", statuses=POSTER)),
    ("How many accepted papers are there?", "被录用的论文有多少篇？", dict(statuses=ACCEPTED)),
])
def test_a_count_asked_in_chinese_equals_the_english_one_and_a_direct_computation(pipeline, english, chinese, expect):
    want = len(direct(RECORDS, **expect))
    counts = []
    for question in (english, chinese):
        answer = pipeline.ask(question)  # the fixture's model raises if it is called
        counts.append(int(re.match(r"\*\*([\d,]+) papers?\*\*", answer.text).group(1).replace(",", "")))
        assert answer.counted and answer.kind == "aggregate" and not answer.refused
    assert counts == [want, want] and want > 0


def test_only_count_questions_are_aggregates():
    assert parse_aggregate("How many layers does DroPE use?") is None
    assert parse_aggregate("Which papers study KV cache eviction?") is None
    assert parse_aggregate("how many papers on KV cache?").topic == "KV cache"


def test_topic_phrases_are_whole_words_across_hyphens_and_plurals():
    from rag.answer.counts import topic_pattern

    cases = [("KV cache", "a KV-cache policy", True), ("KV cache", "KVcache", True), ("KV cache", "KV  caches", True),
             ("DroPE", "DropEdge graphs", False), ("DroPE", "DroPE's recipe", True), ("learning", "unlearning", False),
             ("positional embeddings", "positional embeddings.", True), ("graph", "graphon", False)]
    for topic, text, hit in cases:
        assert bool(topic_pattern(topic).search(text)) is hit is phrase_in(text, topic), (topic, text)


def test_a_hyphenated_topic_is_the_same_topic():
    assert any("KV-cache" in r["title"] for r in SYNTHETIC)
    spaced = parse_aggregate("How many papers on KV cache?")
    hyphened = parse_aggregate("How many papers on KV-cache?")
    assert (spaced.topic, hyphened.topic) == ("KV cache", "KV-cache")


# (question, UI filters, the direct computation's arguments, the kind, the score field, how many listed)
SCORE_QUESTIONS = [
    ("Which KV-cache papers had the highest ratings?", Filters(), dict(phrase="KV cache"), "highest", "rating", 10),
    ("What is the average rating of oral papers on KV cache?", Filters(), dict(phrase="KV cache", statuses=ORAL),
     "average", "rating", None),
    ("Which papers on speculative decoding had the lowest ratings?", Filters(), dict(phrase="speculative decoding"),
     "lowest", "rating", 10),
    ("What are the 3 highest rated posters about diffusion language models?", Filters(),
     dict(phrase="diffusion language models", statuses=POSTER), "highest", "rating", 3),
    ("What is the mean soundness score of papers mentioning positional embeddings?", Filters(),
     dict(phrase="positional embeddings"), "average", "soundness", None),
    ("Which papers in the reinforcement learning area had the highest soundness scores?", Filters(),
     dict(areas=("reinforcement learning",)), "highest", "soundness", 10),
    ("What is the average rating of papers about KV cache?", Filters(statuses=ACCEPTED),
     dict(phrase="KV cache", statuses=ACCEPTED), "average", "rating", None),
    ("What was DroPE's average rating?", Filters(), dict(phrase="DroPE"), "average", "rating", None),
    ("top 5 lowest-rated papers", Filters(), dict(), "lowest", "rating", 5),
    ("What is the average rating of accepted papers?", Filters(), dict(statuses=ACCEPTED), "average", "rating", None),
]


@pytest.mark.parametrize("question, filters, expect, kind, field, top", SCORE_QUESTIONS,
                         ids=[q[0] for q in SCORE_QUESTIONS])
def test_averages_and_rankings_match_a_direct_computation_over_the_reviews(pipeline, question, filters, expect,
                                                                          kind, field, top):
    answer = pipeline.ask(question, filters=filters)
    scores = direct_scores(field)
    reviewed = {i for i in direct(RECORDS, **expect) if scores.get(i)}
    assert reviewed, "the case must cover some reviewed papers"
    means = {i: statistics.fmean(scores[i]) for i in reviewed}
    ids = re.findall(r"\[(\w+)\]\(https://openreview\.net/forum\?id=\1\)", answer.text)
    assert answer.counted and not answer.sources
    if kind == "average":
        values = [v for i in reviewed for v in scores[i]]
        head = re.search(rf"\*\*Average {field} ([\d.]+)\*\* over ([\d,]+) reviews? of ([\d,]+) papers?\b", answer.text)
        assert head, answer.text[:300]
        assert float(head.group(1)) == pytest.approx(statistics.fmean(values), abs=0.005)
        assert (int(head.group(2)), int(head.group(3))) == (len(values), len(reviewed))
        assert (" 1 papers" not in answer.text) and (" 1 reviews" not in answer.text)
        assert f"papers' own averages is {statistics.fmean(means.values()):.2f}" in answer.text
        if "more:" in answer.text:  # past the first 50, ids are listed bare
            ids += [i.strip() for i in answer.text.split("more:", 1)[1].split(",")]
        assert set(ids) == reviewed
    else:
        titles = {r["id"]: r["title"].lower() for r in RECORDS}
        sign = -1 if kind == "highest" else 1
        want = sorted(reviewed, key=lambda i: (sign * means[i], -len(scores[i]), titles[i]))[:top]
        assert ids == want, (question, ids, want)
        for i in want:
            assert f"**{means[i]:.2f}** ({len(scores[i])} reviews" in answer.text


COUNTS_WITH_SCORES = [  # (question, direct arguments, predicate on a paper's mean rating; None = any review)
    ("How many papers have an average rating above 6?", dict(), lambda m: m > 6),
    ("How many accepted papers on KV cache were rated at least 4 on average?",
     dict(phrase="KV cache", statuses=ACCEPTED), lambda m: m >= 4),
    ("How many papers on positional embeddings have an average rating below 5?",
     dict(phrase="positional embeddings"), lambda m: m < 5),
    ("How many papers on KV cache have reviews?", dict(phrase="KV cache"), None),
]


@pytest.mark.parametrize("question, expect, keep", COUNTS_WITH_SCORES, ids=[q[0] for q in COUNTS_WITH_SCORES])
def test_counts_over_review_scores_match_a_direct_computation(pipeline, question, expect, keep):
    answer = pipeline.ask(question)
    scores = direct_scores("rating")
    want = {i for i in direct(RECORDS, **expect) if scores.get(i)
            and (keep is None or keep(statistics.fmean(scores[i])))}
    number = int(re.match(r"\*\*([\d,]+) papers?\*\*", answer.text).group(1).replace(",", ""))
    listed = set(re.findall(r"\[(\w+)\]\(https://openreview\.net/forum\?id=\1\)", answer.text))
    assert (number, listed) == (len(want), want), (question, listed ^ want)
    assert "official reviews" in answer.text


def test_a_topic_no_paper_has_is_said_so(pipeline):
    answer = pipeline.ask("What was the average rating of papers on quantum chromodynamics?")
    assert answer.text.startswith("No paper with loaded reviews matches") and "0 indexed papers match" in answer.text


def test_scores_without_reviews_loaded_say_how_to_load_them(tmp_path):
    path = tmp_path / "corpus.jsonl"
    path.write_text("\n".join(json.dumps(r) for r in SEED) + "\n")
    p = build_pipeline(Settings(data_dir=tmp_path / "data"), embeddings=WordHashEmbeddings(), llm=fake_chat())
    p.ingest_files([path])
    answer = p.ask("Which KV-cache papers had the highest ratings?")
    assert answer.text == NO_REVIEW_SCORES and "paperchat ingest --reviews" in answer.text
    assert p.ask("How many papers on KV cache?").text.startswith("**")  # plain counts need no reviews


def test_review_score_questions_are_told_from_other_questions():
    for question in ["Which method achieves the highest scores on GSM8K?", "What is the best method for KV cache?",
                     "What weaknesses did reviewers raise about DroPE?", "Which model has the highest confidence?",
                     "What ratings did DroPE get?"]:
        assert parse_aggregate(question) is None, question
    ranked = parse_aggregate("top 3 lowest-rated papers on unlearning")
    assert (ranked.kind, ranked.top, ranked.topic) == ("lowest", 3, "unlearning")
    assert parse_aggregate("Which KV cache papers have the highest reviewer confidence?").field == "confidence"
    assert parse_aggregate("highest rated orals").statuses == ORAL
