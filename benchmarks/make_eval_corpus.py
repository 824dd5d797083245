"""Build a reduced ICLR 2026 corpus for quick evals: every paper the dev questions name, plus a random
sample of the rest (seeded), written as corpus JSONL.

    python benchmarks/make_eval_corpus.py --size 1000 -o /tmp/iclr2026-1k.jsonl

Reads ../shared by path (benchmarks may; the product never does).
"""

from __future__ import annotations

import argparse
import gzip
import json
import random
from pathlib import Path

SHARED = Path(__file__).resolve().parents[2] / "shared"
FIELDS = ("id", "title", "abstract", "keywords", "primary_area", "status", "url", "tldr")


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--size", type=int, default=1000)
    ap.add_argument("--seed", type=int, default=20261202)
    ap.add_argument("--questions", default=str(SHARED / "eval/dev/questions.jsonl"))
    ap.add_argument("-o", "--out", required=True)
    args = ap.parse_args()
    named: set[str] = set()
    for line in Path(args.questions).read_text().splitlines():
        q = json.loads(line)
        named |= set(q.get("gold", [])) | set(q.get("also_relevant", []))
        for turn in q.get("turns", []):
            named |= set(turn.get("gold", []))
    rows = [json.loads(line) for line in gzip.open(SHARED / "data/iclr2026.jsonl.gz", "rt")]
    keep = [r for r in rows if r["id"] in named]
    rest = [r for r in rows if r["id"] not in named]
    random.Random(args.seed).shuffle(rest)
    keep += rest[: max(0, args.size - len(keep))]
    with open(args.out, "w") as f:
        for r in keep:
            f.write(json.dumps({k: r[k] for k in FIELDS if r.get(k) not in (None, "")}, ensure_ascii=False) + "\n")
    print(f"{len(keep)} papers ({len(named)} named by the questions) -> {args.out}")


if __name__ == "__main__":
    main()
