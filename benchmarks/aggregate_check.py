"""Aggregate answers on the full corpus against a direct computation over the data files.

    PAPERCHAT_DATA_DIR=<full index, reviews ingested> python benchmarks/aggregate_check.py \
        ../shared/data/iclr2026.jsonl.gz ../shared/data/reviews.jsonl.gz

For each question: the figure in PaperChat's answer (`Pipeline.ask`, computed by rag/answer/aggregate.py over the
index's metadata and the reviews store) and the figure from a plain scan of the JSONL files with the same
definition (phrase as whole words in title, abstract or keywords, case-insensitive, hyphens and spaces
alike, an optional plural, walked by tests/direct.py; status group;
primary area; a paper's score = the mean of its reviews', a repeated (paper, review) id counted once, the
last one kept), and the answer time. Rankings agree when the listed ids are the same, in the same order.
"""

from __future__ import annotations

import gzip
import json
import re
import statistics
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from rag.pipeline import build_pipeline  # noqa: E402
from rag.retrieve.filters import STATUS_GROUPS, Filters  # noqa: E402
from rag.settings import load_settings  # noqa: E402
from tests.direct import phrase_in  # noqa: E402

ORAL, POSTER, ACCEPTED = STATUS_GROUPS["Oral"], STATUS_GROUPS["Poster"], STATUS_GROUPS["All accepted"]
QUESTIONS = [
    ("How many oral papers on KV cache?", dict(phrase="KV cache", statuses=ORAL)),
    ("How many papers mention positional embeddings?", dict(phrase="positional embeddings")),
    ("How many papers about speculative decoding?", dict(phrase="speculative decoding")),
    ("How many posters are about diffusion language models?", dict(phrase="diffusion language models", statuses=POSTER)),
    ("How many accepted papers on KV cache?", dict(phrase="KV cache", statuses=ACCEPTED)),
    ("How many papers in the reinforcement learning area were accepted?",
     dict(statuses=ACCEPTED, areas=("reinforcement learning",))),
    ("How many papers are there?", dict()),
    ("How many orals are there?", dict(statuses=ORAL)),
    ("How many accepted papers on graph neural networks?", dict(phrase="graph neural networks", statuses=ACCEPTED)),
    ("How many papers on machine unlearning?", dict(phrase="machine unlearning")),
    ("How many oral papers about reinforcement learning from human feedback?",
     dict(phrase="reinforcement learning from human feedback", statuses=ORAL)),
    ("How many papers on quantum chromodynamics?", dict(phrase="quantum chromodynamics")),
]


SCORE_QUESTIONS = [  # (question, direct arguments, kind, field, top / threshold predicate)
    ("Which KV-cache papers had the highest ratings?", dict(phrase="KV cache"), "highest", "rating", 10),
    ("Which oral papers had the highest ratings?", dict(statuses=ORAL), "highest", "rating", 10),
    ("What are the 5 lowest rated papers on speculative decoding?", dict(phrase="speculative decoding"),
     "lowest", "rating", 5),
    ("Which accepted papers about diffusion language models have the highest soundness scores?",
     dict(phrase="diffusion language models", statuses=ACCEPTED), "highest", "soundness", 10),
    ("What is the average rating of oral papers?", dict(statuses=ORAL), "average", "rating", None),
    ("What is the average rating of accepted papers?", dict(statuses=ACCEPTED), "average", "rating", None),
    ("What is the average rating of papers on KV cache?", dict(phrase="KV cache"), "average", "rating", None),
    ("What was DroPE's average rating?", dict(phrase="DroPE"), "average", "rating", None),
    ("What is the mean presentation score of papers in the reinforcement learning area?",
     dict(areas=("reinforcement learning",)), "average", "presentation", None),
    ("How many papers have an average rating above 6?", dict(), "count", "rating", lambda m: m > 6),
    ("How many oral papers on KV cache were rated at least 6 on average?", dict(phrase="KV cache", statuses=ORAL),
     "count", "rating", lambda m: m >= 6),
    ("How many papers on machine unlearning have reviews?", dict(phrase="machine unlearning"), "count", "rating",
     lambda m: True),
]


def direct_ids(records, phrase="", statuses=(), areas=()):
    out = []
    for r in records:
        text = " \n ".join([r.get("title") or "", r.get("abstract") or "", *(r.get("keywords") or [])])
        if (not phrase or phrase_in(text, phrase)) and (not statuses or r.get("status") in statuses) \
                and (not areas or r.get("primary_area") in areas):
            out.append(r["id"])
    return out


def direct(records, **kw):
    return len(direct_ids(records, **kw))


def review_scores(path, field):
    kept = {}
    for line in gzip.open(path, "rt", encoding="utf-8"):
        obj = json.loads(line)
        for r in obj["reviews"]:
            kept[(obj["id"], str(r["review_id"]))] = r.get(field)
    out = {}
    for (paper, _), value in sorted(kept.items()):
        if value is not None:
            out.setdefault(paper, []).append(int(value))
    return out


def score_direct(records, titles, scores, expect, kind, top):
    """The figure the answer must show, computed from the files."""
    reviewed = [i for i in direct_ids(records, **expect) if scores.get(i)]
    means = {i: statistics.fmean(scores[i]) for i in reviewed}
    if kind == "average":
        values = [v for i in reviewed for v in scores[i]]
        return (f"{statistics.fmean(values):.2f} over {len(values):,} review{'s' * (len(values) != 1)} of "
                f"{len(reviewed):,} paper{'s' * (len(reviewed) != 1)}")
    if kind == "count":
        return f"{sum(1 for i in reviewed if top(means[i])):,}"
    sign = -1 if kind == "highest" else 1
    ranked = sorted(reviewed, key=lambda i: (sign * means[i], -len(scores[i]), titles[i].lower()))[:top]
    return f"{len(ranked)} ids, first {ranked[0]} ({means[ranked[0]]:.2f})" + "|" + ",".join(ranked)


def score_answer(text, kind, field):
    if kind == "average":
        m = re.search(rf"\*\*Average {field} ([\d.]+)\*\* over ([\d,]+) (reviews?) of ([\d,]+) (papers?)", text)
        return f"{m.group(1)} over {m.group(2)} {m.group(3)} of {m.group(4)} {m.group(5)}" if m else text[:80]
    if kind == "count":
        return re.match(r"\*\*([\d,]+) papers?\*\*", text).group(1)
    ranked = re.findall(r"^\d+\. .*?\*\*([\d.]+)\*\*.*\[(\w+)\]\(https://openreview", text, re.MULTILINE)
    if not ranked:
        return text[:80]
    return f"{len(ranked)} ids, first {ranked[0][1]} ({ranked[0][0]})" + "|" + ",".join(i for _, i in ranked)


def main() -> None:
    records = [json.loads(line) for line in gzip.open(sys.argv[1], "rt", encoding="utf-8")]
    titles = {r["id"]: r.get("title") or "" for r in records}
    rows, agree = [], 0
    with build_pipeline(load_settings()) as pipeline:
        for question, expect in QUESTIONS:
            t0 = time.monotonic()
            text = pipeline.ask(question, filters=Filters()).text
            seconds = time.monotonic() - t0
            got = int(re.match(r"\*\*([\d,]+) papers?\*\*", text).group(1).replace(",", ""))
            want = direct(records, **expect)
            agree += got == want
            rows.append((question, f"{got:,}", f"{want:,}", seconds))
        if len(sys.argv) > 2:
            by_field = {}
            for question, expect, kind, field, top in SCORE_QUESTIONS:
                scores = by_field.setdefault(field, review_scores(sys.argv[2], field))
                t0 = time.monotonic()
                text = pipeline.ask(question, filters=Filters()).text
                seconds = time.monotonic() - t0
                got, want = score_answer(text, kind, field), score_direct(records, titles, scores, expect, kind, top)
                agree += got == want
                rows.append((question, got.split("|")[0], want.split("|")[0] + ("" if got == want else " (DIFFERS)"),
                             seconds))
    print("| question | PaperChat | direct scan | time |\n|---|---|---|---|")
    for q, got, want, s in rows:
        print(f"| {q} | {got} | {want} | {s:.2f} s |")
    print(f"\n{agree}/{len(rows)} agree")


if __name__ == "__main__":
    main()
