"""Should PaperChat decline before the model writes? The coverage check (rag.answer.coverage) against the
obvious alternative, a threshold on the best paper's relevance score, on the dev questions.

    PAPERCHAT_DATA_DIR=/work/fullidx .venv/bin/python benchmarks/refusal_gate.py

For every single-question kind (lookup, compare, filtered: should be answered; unanswerable: should be
declined) it retrieves the k=4 papers the app would show, the way the app does (stated filters, the
model's English query for Chinese questions), and prints: the coverage check's refusal rate per kind, and
for a threshold on the top paper's dense cosine similarity, the best threshold found on these very
questions (an optimistic figure for the threshold: it is tuned on what it is scored on). The index must
hold the full corpus (benchmarks/README.md). Reads ../shared by path.
"""

from __future__ import annotations

import argparse
import json
import sys
from collections import defaultdict
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from rag.eval.evaluate import load_questions  # noqa: E402
from rag.pipeline import build_pipeline  # noqa: E402
from rag.settings import load_settings  # noqa: E402

SHARED = ROOT.parent / "shared"


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--questions", default=str(SHARED / "eval/dev/questions.jsonl"))
    ap.add_argument("--json", help="write the per-question rows here")
    args = ap.parse_args()
    rows = []
    with build_pipeline(load_settings(env_file=None)) as pipeline:
        for q in load_questions(args.questions):
            if q["kind"] == "followup":
                continue
            question = q["question"]
            intent = pipeline.route(question)
            filters = intent.filters
            query = pipeline.search_query(intent)
            sources = pipeline.retrieve(query.all, filters)
            cover = pipeline.coverage(intent, query, sources, filters)
            dense = pipeline.index.search(query.text, k=1, filters=filters)
            rows.append({"qid": q["qid"], "kind": q["kind"], "lang": q["lang"], "query": query.text,
                         "declined": not cover.answerable, "unknown_names": cover.unknown_names,
                         "rare_terms": cover.rare_terms, "best_coverage": cover.best_coverage,
                         "probability": cover.probability,
                         "top_cosine": round(dense[0][1], 4) if dense else 0.0})
            print(json.dumps(rows[-1], ensure_ascii=False), flush=True)

    by_kind = defaultdict(list)
    for r in rows:
        by_kind[r["kind"]].append(r)
    print("\n| kind | n | coverage check declines |\n|---|---|---|")
    for kind, rs in by_kind.items():
        print(f"| {kind} | {len(rs)} | {sum(r['declined'] for r in rs) / len(rs):.2f} |")

    should = [r for r in rows if r["kind"] == "unanswerable"]
    answerable = [r for r in rows if r["kind"] != "unanswerable"]
    best = None
    for t in sorted({r["top_cosine"] for r in rows}):
        refused = sum(r["top_cosine"] < t for r in should) / len(should)
        kept = sum(r["top_cosine"] >= t for r in answerable) / len(answerable)
        if best is None or min(refused, kept) > min(best[1], best[2]):
            best = (t, refused, kept)
    t, refused, kept = best
    print(f"\nthreshold on top cosine (best on these questions): decline below {t}: "
          f"unanswerable declined {refused:.2f}, answerable kept {kept:.2f}")
    gate_refused = sum(r["declined"] for r in should) / len(should)
    gate_kept = sum(not r["declined"] for r in answerable) / len(answerable)
    print(f"coverage check (fixed rule): unanswerable declined {gate_refused:.2f}, answerable kept {gate_kept:.2f}")
    if args.json:
        Path(args.json).write_text(json.dumps(rows, indent=1, ensure_ascii=False))


if __name__ == "__main__":
    main()
