"""Figures for the embedded default on this machine: first start, ingest, retrieval, answer latency, memory.

    python benchmarks/embedded_default.py [--questions N] [--data-dir DIR]

Starts from an empty data dir (so the model assembly and first ingest are counted), uses the shipped
seed corpus, and prints one JSON object plus a Markdown table.
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import statistics
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from rag.answer.grounded import prompt_inputs, ANSWER_PROMPT  # noqa: E402
from rag.models.llm import make_local_server  # noqa: E402
from rag.models.local_llm import assemble_model  # noqa: E402
from rag.pipeline import DoneEvent, SourcesEvent, TokenEvent, build_pipeline  # noqa: E402
from rag.settings import Settings  # noqa: E402

QUESTIONS = [
    "What is DroPE and why does it extend context?",
    "How can KV cache eviction be made accurate without generating a draft response?",
    "有没有关于KV缓存压缩的论文？",
    "Which paper benchmarks optical flow models under image corruptions?",
    "How do language models store procedural memory as tokens?",
]
RETRIEVAL_QUERIES = QUESTIONS + [
    "off-policy reinforcement learning for LLM reasoning", "federated learning with heterogeneous clients",
    "optical music recognition", "visual cortex natural stimuli", "model merging loss landscape",
    "multi-agent chemistry reasoning", "epistemic and aleatoric uncertainty calibration",
    "proactive personalized assistants", "interactive coding agents policy optimization",
    "temporal knowledge graph event causality", "egocentric hand object parsing",
    "differentiable simulators policy gradients", "value conflicts in LLMs", "compositional generalization maps",
]


def pct(values, q):
    values = sorted(values)
    return values[min(len(values) - 1, int(round(q * (len(values) - 1))))]


def vm_hwm_mb(pid: int) -> float:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmHWM:"):
            return int(line.split()[1]) / 1024
    return float("nan")


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--questions", type=int, default=len(QUESTIONS))
    ap.add_argument("--data-dir", default=None)
    args = ap.parse_args()
    data_dir = Path(args.data_dir or tempfile.mkdtemp(prefix="paperchat-bench-"))
    os.environ["PAPERCHAT_DATA_DIR"] = str(data_dir)
    settings = Settings()
    out: dict = {"data_dir": str(data_dir), "cpus": os.cpu_count()}

    t0 = time.perf_counter()
    assemble_model(settings.models_dir)
    out["model_assembly_s"] = round(time.perf_counter() - t0, 2)

    t0 = time.perf_counter()
    pipeline = build_pipeline(settings)
    out["pipeline_build_s"] = round(time.perf_counter() - t0, 2)
    t0 = time.perf_counter()
    report, stats = pipeline.ensure_ingested()
    out["ingest_seed_s"] = round(time.perf_counter() - t0, 2)
    out["ingest_seed"] = {"papers": len(report.papers), "chunks": stats.chunks_written}
    t0 = time.perf_counter()
    _, again = pipeline.ingest_files(settings.corpus)
    out["reingest_unchanged_s"] = round(time.perf_counter() - t0, 2)

    pipeline.retrieve("warm up the embedder")
    lat = []
    for q in RETRIEVAL_QUERIES * 3:
        t0 = time.perf_counter()
        pipeline.retrieve(q)
        lat.append((time.perf_counter() - t0) * 1000)
    out["retrieval_ms"] = {"n": len(lat), "p50": round(pct(lat, 0.5), 1), "p95": round(pct(lat, 0.95), 1)}

    server = make_local_server(settings)
    t0 = time.perf_counter()
    server.start()
    out["model_server_start_s"] = round(time.perf_counter() - t0, 2)
    from rag.models.llm import make_chat_model

    pipeline._server, pipeline._llm = server, make_chat_model(settings, server)
    runs = []
    import tiktoken

    enc = tiktoken.get_encoding("cl100k_base")
    for q in QUESTIONS[: args.questions]:
        t0 = time.perf_counter()
        t_sources = t_first = None
        for event in pipeline.stream(q):
            now = time.perf_counter() - t0
            if isinstance(event, SourcesEvent):
                t_sources = now
                msgs = ANSWER_PROMPT.format_messages(**prompt_inputs(pipeline.route(q), event.sources))
                prompt_tokens = sum(len(enc.encode(m.content)) for m in msgs)
            elif isinstance(event, TokenEvent) and t_first is None:
                t_first = now
            elif isinstance(event, DoneEvent):
                answer = event.answer
        total = time.perf_counter() - t0
        runs.append({"question": q, "sources_s": round(t_sources, 2), "first_token_s": round(t_first or total, 2),
                     "total_s": round(total, 2), "prompt_tokens_cl100k": prompt_tokens,
                     "answer_chars": len(answer.text), "cited": [c.id for c in answer.citations]})
    out["answers"] = runs
    out["first_token_s_median"] = round(statistics.median(r["first_token_s"] for r in runs), 2)
    out["total_s_median"] = round(statistics.median(r["total_s"] for r in runs), 2)
    out["peak_rss_mb"] = {
        "app": round(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024, 0),
        "model_server": round(vm_hwm_mb(server._proc.pid), 0),
    }
    server.stop()
    print(json.dumps(out, ensure_ascii=False, indent=2))
    print("\n| question | sources (s) | first token (s) | full answer (s) | prompt tokens | cited |")
    print("|---|---|---|---|---|---|")
    for r in runs:
        print(f"| {r['question']} | {r['sources_s']} | {r['first_token_s']} | {r['total_s']} | "
              f"{r['prompt_tokens_cl100k']} | {', '.join(r['cited']) or '-'} |")


if __name__ == "__main__":
    main()
