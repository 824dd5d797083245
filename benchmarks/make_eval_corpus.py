"""Build a reduced ICLR 2026 corpus for quick evals: every paper the dev questions name, plus a random
sample of the rest (seeded), written as corpus JSONL.

    python benchmarks/make_eval_corpus.py --size 1000 -o /tmp/iclr2026-1k.jsonl
    # a small version of a generated set's test corpus, with its index snapshot (no embedding needed):
    python benchmarks/make_eval_corpus.py --size 400 --questions /tmp/set1/questions.jsonl \
        --corpus /tmp/set1/corpus.jsonl.gz -o /tmp/set1-small.jsonl.gz

Reads ../shared by path (benchmarks may; the product never does).
"""

from __future__ import annotations

import argparse
import gzip
import json
import random
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from rag.index.snapshot import Snapshot, read_snapshot, snapshot_path, write_snapshot  # noqa: E402

SHARED = Path(__file__).resolve().parents[2] / "shared"
DEFAULT_CORPUS = str(SHARED / "data/iclr2026.jsonl.gz")
FIELDS = ("id", "title", "abstract", "keywords", "primary_area", "status", "url", "tldr")


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--size", type=int, default=1000)
    ap.add_argument("--seed", type=int, default=20261202)
    ap.add_argument("--questions", default=str(SHARED / "eval/dev/questions.jsonl"))
    ap.add_argument("--corpus", default=DEFAULT_CORPUS, help="the corpus to sample from")
    ap.add_argument("-o", "--out", required=True)
    args = ap.parse_args()
    named: set[str] = set()
    for line in Path(args.questions).read_text().splitlines():
        q = json.loads(line)
        named |= set(q.get("gold", [])) | set(q.get("also_relevant", []))
        for turn in q.get("turns", []):
            named |= set(turn.get("gold", []))
    rows = [json.loads(line) for line in gzip.open(args.corpus, "rt")]
    keep = [r for r in rows if r["id"] in named]
    rest = [r for r in rows if r["id"] not in named]
    random.Random(args.seed).shuffle(rest)
    keep += rest[: max(0, args.size - len(keep))]
    with (gzip.open if args.out.endswith(".gz") else open)(args.out, "wt", encoding="utf-8") as f:
        for r in keep:
            own = r if args.corpus != DEFAULT_CORPUS else {k: r.get(k) for k in FIELDS}  # a PaperChat corpus: as is
            f.write(json.dumps({k: v for k, v in own.items() if v not in (None, "")}, ensure_ascii=False) + "\n")
    print(f"{len(keep)} papers ({len(named)} named by the questions) -> {args.out}")
    snapshot = read_snapshot(snapshot_path(args.corpus))
    if snapshot is not None:  # the sampled papers' vectors, so the small index loads without embedding
        ids = {r["id"] for r in keep}
        rows_kept = [i for i, cid in enumerate(snapshot.ids) if cid.rsplit(":", 1)[0] in ids]
        write_snapshot(snapshot_path(args.out), Snapshot(snapshot.identity, [snapshot.ids[i] for i in rows_kept],
                                                         [snapshot.hashes[i] for i in rows_kept],
                                                         snapshot.vectors[rows_kept]))
        print(f"  and its snapshot {snapshot_path(args.out)}")


if __name__ == "__main__":
    main()
