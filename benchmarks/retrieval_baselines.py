"""Retrieval on the dev questions: plain BM25 and dense-only baselines beside PaperChat's hybrid, with and
without model query rewriting, on one index of one corpus. Prints a Markdown table (and JSON with --json).

    PAPERCHAT_DATA_DIR=/tmp/pc-full .venv/bin/python benchmarks/retrieval_baselines.py \
        --corpus ../shared/data/iclr2026.jsonl.gz

Ingesting the corpus is skipped for papers already in the index (first run on the full corpus: ~20 min).
Every configuration searches the same index: `lexical` is the FTS5 BM25 twin alone (title + abstract,
stop words removed), `dense` the MiniLM vectors alone, `hybrid` both fused by reciprocal rank. With
rewrite `auto` the embedded chat model writes the standalone English query for follow-ups and Chinese
questions (the same query is reused across configurations: the model call is cached per question and
history). Reads ../shared by path (benchmarks may; the product never does).
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from rag.eval.evaluate import evaluate_retrieval, load_questions  # noqa: E402
from rag.pipeline import build_pipeline  # noqa: E402
from rag.settings import load_settings  # noqa: E402

SHARED = ROOT.parent / "shared"
CONFIGS = [  # (label, mode, rewrite)
    ("BM25 (FTS5), question as written", "lexical", "off"),
    ("dense MiniLM-int8, question as written", "dense", "off"),
    ("hybrid RRF, question as written", "hybrid", "off"),
    ("BM25 + model rewrite", "lexical", "auto"),
    ("dense + model rewrite", "dense", "auto"),
    ("hybrid + model rewrite (default)", "hybrid", "auto"),
]


def row(label: str, r: dict) -> str:
    lk, lang = r["lookup"], r["lookup"]["by_lang"]
    rw = r.get("rewrite_latency_ms") or {}
    cells = [label, lang["en"]["recall@5"], lang["zh"]["recall@5"], lk["recall@1"], lk["recall@5"], lk["recall@10"],
             lk["mrr@10"], r["compare"]["both_gold_top10"], r["followup"]["turn_recall@5"],
             r["filtered"]["constraint_precision@5"], r["filtered"]["recall@5"],
             f"{r['latency_ms']['p50']} / {r['latency_ms']['p95']}", f"{rw['p50']} / {rw['p95']}" if rw else "-"]
    return "| " + " | ".join(str(c) for c in cells) + " |"


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--questions", default=str(SHARED / "eval/dev/questions.jsonl"))
    ap.add_argument("--corpus", default=str(SHARED / "data/iclr2026.jsonl.gz"))
    ap.add_argument("--only", help="comma-separated config numbers (1-based) to run")
    ap.add_argument("--json", help="write all reports and per-question rows to this file")
    args = ap.parse_args()

    settings = load_settings(env_file=None)
    pipeline = build_pipeline(settings)
    t0 = time.monotonic()
    report, stats = pipeline.ingest_files([args.corpus])
    print(f"index: {pipeline.index.count_chunks()} chunks ({stats}) in {time.monotonic() - t0:.0f} s", file=sys.stderr)
    questions = load_questions(args.questions)
    k = max(10, settings.retrieval.k)
    cache: dict = {}

    def rewrite(question, history):
        """pipeline.search_query under the current settings; model rewrites cached with their first latency."""
        if pipeline.settings.retrieval.rewrite == "off":
            return pipeline.search_query(pipeline.route(question, history), history)
        key = (question, tuple(history))
        if key not in cache:
            t = time.perf_counter()
            cache[key] = (pipeline.search_query(pipeline.route(question, history), history), time.perf_counter() - t)
        return cache[key][0]

    header = ("| configuration | lookup R@5 en | lookup R@5 zh | R@1 | R@5 | R@10 | MRR@10 | compare both@10 | "
              "followup turn R@5 | filtered constraint P@5 | filtered R@5 | search p50 / p95 ms | rewrite p50 / p95 ms |")
    lines = [header, "|" + "---|" * (header.count("|") - 1)]
    out = {}
    picked = [int(i) - 1 for i in args.only.split(",")] if args.only else range(len(CONFIGS))
    for i in picked:
        label, mode, rewrite_mode = CONFIGS[i]
        pipeline.settings = settings.model_copy(
            update={"retrieval": settings.retrieval.model_copy(update={"mode": mode, "rewrite": rewrite_mode})})
        fresh = len(cache)
        result, rows = evaluate_retrieval(
            questions, lambda query, filters: pipeline.retrieve(query.all, filters, k=k, referred=query.referred),
            lambda question: pipeline.route(question).filters, rewrite)
        if rewrite_mode == "auto":  # report the model's own time, measured when each rewrite was first made
            ms = sorted(seconds * 1000 for query, seconds in cache.values() if query.rewritten)
            if ms:
                result["rewrite_latency_ms"] = {"p50": round(ms[len(ms) // 2], 1),
                                                "p95": round(ms[min(len(ms) - 1, int(0.95 * (len(ms) - 1) + 0.5))], 1),
                                                "n": len(ms)}
            print(f"{label}: {len(cache) - fresh} new model rewrites", file=sys.stderr)
        lines.append(row(label, result))
        out[label] = {"report": result, "rows": rows}
        print(lines[-1], file=sys.stderr)
    pipeline.close()
    print("\n".join(lines))
    if args.json:
        Path(args.json).write_text(json.dumps(out, ensure_ascii=False, indent=1))


if __name__ == "__main__":
    main()
