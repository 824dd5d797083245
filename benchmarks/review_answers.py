"""Review-grounded answers on the full corpus with the real reviews: does a review question find its paper,
cite only that paper's reviews (as reviews), and say what the reviews say?

    PAPERCHAT_DATA_DIR=<full index, reviews ingested> python benchmarks/review_answers.py \
        ../shared/data/iclr2026.jsonl.gz --n 12 --seed 8

Questions are built from papers whose title opens with a coined one-word name ("DroPE: ..."), that have
reviews, chosen at random with `--seed`; the name is asked about in four templates (weaknesses, strengths,
reviewers' questions, a Chinese weaknesses question). Per question:
- paper found: the first source is the paper the name belongs to;
- cited as reviews: the answer cites at least one source, and every citation is a review (review id set) of
  that paper;
- supported: the share of checked sentences that rag.answer.support finds supported by the cited review text;
- refused, and the time of the whole answer (on the embedded model unless settings say otherwise).
"""

from __future__ import annotations

import argparse
import gzip
import json
import random
import re
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from rag.pipeline import build_pipeline  # noqa: E402
from rag.settings import load_settings  # noqa: E402

TEMPLATES = ["What weaknesses did reviewers raise about {name}?", "What strengths did reviewers see in {name}?",
             "What questions did reviewers ask about {name}?", "审稿人对{name}提出了哪些缺点？"]
_NAME = re.compile(r"^([A-Z][A-Za-z0-9]*[A-Z][A-Za-z0-9-]*):\s")  # "DroPE: ...", "LookaheadKV: ..."


def pick(records, reviewed: set[str], n: int, seed: int) -> list[tuple[str, str]]:
    names: dict[str, list[str]] = {}
    for r in records:
        m = _NAME.match(r.get("title") or "")
        if m:
            names.setdefault(m.group(1), []).append(r["id"])
    unique = sorted((name, ids[0]) for name, ids in names.items() if len(ids) == 1 and ids[0] in reviewed
                    and len(name) >= 4)
    return random.Random(seed).sample(unique, n)


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("corpus")
    ap.add_argument("--n", type=int, default=12)
    ap.add_argument("--seed", type=int, default=8)
    args = ap.parse_args()
    records = [json.loads(line) for line in gzip.open(args.corpus, "rt", encoding="utf-8")]
    rows = []
    with build_pipeline(load_settings()) as pipeline:
        store = pipeline.review_store()
        if store is None:
            sys.exit("no reviews in this data dir: run `paperchat ingest --reviews reviews.jsonl.gz` first")
        reviewed = set(store.scores("rating"))
        for i, (name, paper_id) in enumerate(pick(records, reviewed, args.n, args.seed)):
            question = TEMPLATES[i % len(TEMPLATES)].format(name=name)
            t0 = time.monotonic()
            answer = pipeline.ask(question)
            seconds = time.monotonic() - t0
            found = bool(answer.sources) and answer.sources[0].paper.id == paper_id
            cites = answer.citations
            as_reviews = bool(cites) and all(c.review_id and c.id == paper_id for c in cites)
            checked = [s for s in answer.sentences if s.supported is not None]
            supported = sum(bool(s.supported) for s in checked)
            rows.append((question, paper_id, found, as_reviews, supported, len(checked), answer.refused, seconds))
            print(f"{question} | {paper_id} | found {found} | as reviews {as_reviews} ({len(cites)} cites) | "
                  f"supported {supported}/{len(checked)} | refused {answer.refused} | {seconds:.1f} s",
                  flush=True)
    n = len(rows)
    times = sorted(r[7] for r in rows)
    sup, chk = sum(r[4] for r in rows), sum(r[5] for r in rows)
    print("\n| questions | paper found first | cited only as its reviews | sentences supported | refused | "
          "p50 time | max time |\n|---|---|---|---|---|---|---|")
    print(f"| {n} | {sum(r[2] for r in rows)}/{n} | {sum(r[3] for r in rows)}/{n} | {sup}/{chk} "
          f"({sup / max(chk, 1):.0%}) | {sum(r[6] for r in rows)}/{n} | {times[n // 2]:.1f} s | {times[-1]:.1f} s |")


if __name__ == "__main__":
    main()
