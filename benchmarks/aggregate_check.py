"""Aggregate answers on the full corpus against a direct computation over the data file.

    PAPERCHAT_DATA_DIR=<full index> python benchmarks/aggregate_check.py ../shared/data/iclr2026.jsonl.gz

For each question: the number in PaperChat's answer (`Pipeline.ask`, counted by rag/aggregate.py over the
index's metadata) and the number from a plain scan of the JSONL file with the same definition (phrase in
title, abstract or keywords, case-insensitive; status group; primary area), and the answer time.
"""

from __future__ import annotations

import gzip
import json
import re
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from rag.pipeline import build_pipeline  # noqa: E402
from rag.retrieve import STATUS_GROUPS, Filters  # noqa: E402
from rag.settings import load_settings  # noqa: E402

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


def direct(records, phrase="", statuses=(), areas=()):
    n = 0
    for r in records:
        text = " ".join([r.get("title") or "", r.get("abstract") or "", *(r.get("keywords") or [])]).lower()
        if (not phrase or phrase.lower() in text) and (not statuses or r.get("status") in statuses) \
                and (not areas or r.get("primary_area") in areas):
            n += 1
    return n


def main() -> None:
    records = [json.loads(line) for line in gzip.open(sys.argv[1], "rt", encoding="utf-8")]
    rows, agree = [], 0
    with build_pipeline(load_settings()) as pipeline:
        for question, expect in QUESTIONS:
            t0 = time.monotonic()
            text = pipeline.ask(question, filters=Filters()).text
            seconds = time.monotonic() - t0
            got = int(re.match(r"\*\*([\d,]+) papers?\*\*", text).group(1).replace(",", ""))
            want = direct(records, **expect)
            agree += got == want
            rows.append((question, got, want, seconds))
    print("| question | PaperChat | direct scan | time |\n|---|---|---|---|")
    for q, got, want, s in rows:
        print(f"| {q} | {got:,} | {want:,} | {s:.2f} s |")
    print(f"\n{agree}/{len(rows)} agree")


if __name__ == "__main__":
    main()
