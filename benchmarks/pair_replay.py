"""Replay the described-comparison pairing (rag.retrieve.search: paired) on a retrieval-only eval's rows.

The rows were written by code without the pairing (each description's best paper first, taking turns: the sources
are [first's 1st, second's 1st, first's 2nd, second's 2nd, ...]). For each comparison whose query holds two
descriptions, the pair the pairing would put first is compared with the first two sources as retrieved; printed per
margin: how many comparisons hold both gold papers in the first two before, and how many the pairing gains and loses.

    PAPERCHAT_DATA_DIR=<dir> paperchat eval DIR/questions.jsonl --corpus DIR/corpus.jsonl.gz --retrieval-only \\
        --rows rows.jsonl                     # at a commit before the pairing (e.g. in a git worktree)
    python benchmarks/pair_replay.py DIR/questions.jsonl rows.jsonl DIR/corpus.jsonl.gz 0 0.05 0.1 0.15
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from rag.eval.generate import load_for_generation  # noqa: E402
from rag.question.router import descriptions  # noqa: E402
from rag.retrieve.search import paired  # noqa: E402


def main() -> None:
    questions, rows_file, corpus = sys.argv[1:4]
    margins = [float(m) for m in sys.argv[4:]] or [0.1]
    papers, snapshot = load_for_generation(Path(corpus))
    chunks: dict[str, list[list[float]]] = {}
    for chunk_id, vector in zip(snapshot.ids, snapshot.vectors.astype(np.float32)):
        chunks.setdefault(chunk_id.rsplit(":", 1)[0], []).append(vector.tolist())

    class Vectors:  # the stored vectors of a paper's chunks, as PaperIndex.vectors_of gives them
        def vectors_of(self, pid: str) -> list[list[float]]:
            return chunks[pid]

    records = {p.id: p for p in papers}
    gold = {(q := json.loads(line))["qid"]: set(q["gold"]) for line in open(questions, encoding="utf-8")}
    rows = [r for line in open(rows_file, encoding="utf-8") if (r := json.loads(line)).get("kind") == "compare"
            and "query" in r]
    for margin in margins:
        n = before = gained = lost = 0
        for r in rows:
            described, ranked = descriptions(r["query"].split(" | ")[0]), r["retrieved"]
            if len(described) != 2 or len(ranked) < 4:
                continue
            n += 1
            each = paired([ranked[0::2], ranked[1::2]], described, records, Vectors(), margin)
            old, new = gold[r["qid"]] <= {ranked[0], ranked[1]}, gold[r["qid"]] <= {each[0][0], each[1][0]}
            before += old
            gained += new and not old
            lost += old and not new
            if new != old:
                print(f"  {'+' if new else '-'} {r['qid']} {r['lang']}")
        print(f"margin {margin}: {n} comparisons, both gold first before {before}, gained {gained}, lost {lost}")


if __name__ == "__main__":
    main()
