"""Aggregate questions are counted in code: each answer's number and ids equal a direct computation over
the same records, written here independently (plain loops over the corpus file)."""

import json
import re

import pytest

from rag.aggregate import parse_aggregate
from rag.pipeline import build_pipeline
from rag.retrieve import STATUS_GROUPS, Filters
from rag.settings import SHIPPED_CORPUS, Settings
from tests.fakes import WordHashEmbeddings, fake_chat

SEED = [json.loads(line) for line in SHIPPED_CORPUS.read_text().splitlines()]
STATUSES = ["Oral", "Poster", "Poster", "Not accepted (rejected / desk-rejected / withdrawn after 2025-11-22)"]
AREAS = ["generative models", "reinforcement learning", "optimization"]
TOPICS = ["KV cache", "diffusion language models", "speculative decoding", "positional embeddings"]
# Synthetic papers with known statuses, areas and topics, next to the real seed records.
SYNTHETIC = [{"id": f"Synth{i:05d}", "title": f"Study {i} of {TOPICS[i % 4]}" if i % 3 else f"Study {i}",
              "abstract": f"We look at {TOPICS[(i + 1) % 4]} in setting {i}.", "keywords": [TOPICS[i % 4].lower()],
              "status": STATUSES[i % 4], "primary_area": AREAS[i % 3]} for i in range(60)]
RECORDS = SEED + SYNTHETIC


def direct(records, phrase="", statuses=(), areas=()):
    """Independent of rag.aggregate: a plain scan with str.lower()/in."""
    out = set()
    for r in records:
        text = " ".join([r["title"], r["abstract"], *r.get("keywords", [])]).lower()
        if phrase and phrase.lower() not in text:
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
    return p


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


def test_only_count_questions_are_aggregates():
    assert parse_aggregate("How many layers does DroPE use?") is None
    assert parse_aggregate("Which papers study KV cache eviction?") is None
    assert parse_aggregate("how many papers on KV cache?").topic == "KV cache"
