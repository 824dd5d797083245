"""PaperChat's latency against a naive RAG call to the same model server, side by side in one run.

    python benchmarks/latency.py [--data-dir DIR] [--corpus FILE] [--rounds N] [--json OUT]

For each question (English, Chinese, a follow-up), in the same minute on the same model server:
* **PaperChat**: `Pipeline.stream` as the app runs it: time to the sources, to the first answer text (the
  quoted sentences or a table, built in code), to the model's first token, to the finished answer.
* **before**: the prompt PaperChat sent until this change (the same 4 papers as 300-token excerpts, the
  4-sentence instructions, up to 320 tokens), to compare the model's own time.
* **naive**: the same 4 papers PaperChat found, full abstracts, one plain prompt, up to 320 tokens.
Each model call's prompt size and the server's own timings are recorded. The CPU's model and flags are
printed with the figures. With no --data-dir, a fresh data dir with the default corpus (PAPERCHAT_CORPUS; the seed
corpus: `PAPERCHAT_CORPUS=corpus/iclr2026_seed.jsonl`).
"""

from __future__ import annotations

import argparse
import json
import os
import re
import statistics
import sys
import tempfile
import time
from pathlib import Path

import httpx
import tiktoken

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from rag.pipeline import (DoneEvent, Exchange, QuoteEvent, SourcesEvent, TokenEvent, WaitEvent,  # noqa: E402
                          build_pipeline)
from rag.prompts import CANNOT_ANSWER_ZH, SYSTEM_PROMPT  # noqa: E402
from rag.settings import Settings  # noqa: E402

QUESTIONS = [  # (label, question, earlier turn for a follow-up)
    ("en", "What is DroPE and why does it extend context?", None),
    ("en", "How can KV cache eviction be made accurate without generating a draft response?", None),
    ("en", "How do language models store procedural memory as tokens?", None),
    ("zh", "有没有关于KV缓存压缩的论文？", None),
    ("zh", "DroPE是什么？它为什么能扩展上下文？", None),
    ("followup", "What are its limitations?", "How do language models store procedural memory as tokens?"),
]
NAIVE_MAX_TOKENS = 320
# The answer prompt as it was before this change (rag/prompts.py at fc1d31f): excerpts of 300 tokens.
BEFORE_EXCERPT_TOKENS = 300
BEFORE_INSTRUCTIONS_EN = (
    "Instructions: Answer the question in at most 4 sentences, in your own words, using only the sources above. "
    "After each sentence, write the number of the source it comes from in square brackets, like [1]. "
    "If the sources say nothing about the question, say that the retrieved papers do not cover it.")
BEFORE_INSTRUCTIONS_ZH = (
    "要求：只根据上面的论文摘要，用简体中文回答问题，最多4句话，论文标题保留英文。用完整的中文句子说明论文做了什么，不要只列出论文标题。"
    "每句话末尾用方括号写出它来自的来源编号，例如[1]。如果这些来源与问题无关，就说" + CANNOT_ANSWER_ZH)


def cpu_line() -> str:
    """The CPU's model name (with its family/model numbers: a virtual machine may only say "Xeon Processor"), the
    vector-instruction flags that decide llama.cpp's and onnxruntime's speed, and the instructions the installed
    llama.cpp build was compiled for (a wheel built for AVX2 uses AVX2 kernels on an AVX-512 CPU too)."""
    info = Path("/proc/cpuinfo").read_text() if Path("/proc/cpuinfo").exists() else ""

    def field(name: str) -> str:
        return next((line.split(":", 1)[1].strip() for line in info.splitlines() if line.split(":")[0].strip() == name),
                    "?")

    shown = [f for f in field("flags").split() if re.match(r"avx|fma|f16c|amx|vnni|sse4_2", f)]
    try:
        import xllamacpp

        parts = xllamacpp.get_system_info().replace("CPU :", "").split("|")
        build = f"; llama.cpp build: {' '.join(k.split('=')[0].strip() for k in parts if k.strip().endswith('= 1'))}"
    except Exception:  # another model server: its build is not ours to read
        build = ""
    return (f"{field('model name')} (family {field('cpu family')}, model {field('model')}), {os.cpu_count()} cores; "
            f"flags: {' '.join(shown)}{build}")


def server_system_info(log: Path) -> str:
    """llama.cpp's own report of the CPU features its build uses (from the model server's log)."""
    try:
        lines = [line for line in log.read_text(errors="replace").splitlines() if "system_info" in line or "CPU :" in line]
    except OSError:
        return "?"
    return lines[-1].strip() if lines else "?"


def call(base_url: str, messages: list[dict], max_tokens: int) -> dict:
    """One streamed chat call: time to first token, total, and the server's timings."""
    t0 = time.perf_counter()
    first, text, timings = None, [], {}
    body = {"model": "paperchat-embedded", "messages": messages, "max_tokens": max_tokens, "temperature": 0.0,
            "stream": True}
    with httpx.stream("POST", f"{base_url}/chat/completions", json=body, timeout=900) as response:
        for line in response.iter_lines():
            if not line.startswith("data: ") or line == "data: [DONE]":
                continue
            chunk = json.loads(line[6:])
            timings = chunk.get("timings") or timings
            delta = (chunk.get("choices") or [{}])[0].get("delta", {}).get("content") or ""
            if delta and first is None:
                first = time.perf_counter() - t0
            text.append(delta)
    total = time.perf_counter() - t0
    return {"first_token_s": round(first if first is not None else total, 2), "total_s": round(total, 2),
            "prompt_n": timings.get("prompt_n"), "prompt_per_s": round(timings.get("prompt_per_second") or 0, 1),
            "predicted_n": timings.get("predicted_n"), "text": "".join(text)}


def naive_messages(question: str, sources) -> list[dict]:
    papers = "\n\n".join(f"[{s.n}] {s.paper.title}\n{s.paper.abstract}" for s in sources)
    return [{"role": "user", "content": f"Answer the question using these papers, citing them as [n].\n\n{papers}\n\n"
                                        f"Question: {question}"}]


def before_messages(question: str, sources, chinese: bool, encoding) -> list[dict]:
    def excerpt(text: str) -> str:
        tokens = encoding.encode(text, disallowed_special=())
        return text if len(tokens) <= BEFORE_EXCERPT_TOKENS else encoding.decode(tokens[:BEFORE_EXCERPT_TOKENS]) + " ..."

    blocks = "\n\n".join(f"[{s.n}] {s.paper.title} ({s.paper.status or 'status unknown'}, id {s.paper.id})\n"
                         f"{excerpt(s.paper.abstract)}" for s in sources)
    instructions = BEFORE_INSTRUCTIONS_ZH if chinese else BEFORE_INSTRUCTIONS_EN
    return [{"role": "system", "content": SYSTEM_PROMPT},
            {"role": "user", "content": f"Sources:\n\n{blocks}\n\nQuestion: {question}\n\n{instructions}"}]


def paperchat(pipeline, question: str, history) -> dict:
    """One question through Pipeline.stream, each event timed from the moment it was asked."""
    t0 = time.perf_counter()
    got: dict = {"sources_s": None, "first_text_s": None, "model_request_s": None, "first_model_token_s": None,
                 "prompt_tokens": None, "estimate_s": None}  # the last two stay None when no model call was made
    answer = None
    for event in pipeline.stream(question, history):
        now = round(time.perf_counter() - t0, 2)
        if isinstance(event, SourcesEvent) and got["sources_s"] is None:
            got["sources_s"] = now
        if isinstance(event, (QuoteEvent, TokenEvent)) and got["first_text_s"] is None:
            got["first_text_s"] = now
        if isinstance(event, WaitEvent) and not event.ahead:
            got["model_request_s"], got["prompt_tokens"], got["estimate_s"] = now, event.prompt_tokens, event.estimate_s
        if isinstance(event, TokenEvent) and got["model_request_s"] is not None and got["first_model_token_s"] is None:
            got["first_model_token_s"] = now
        if isinstance(event, DoneEvent):
            answer = event.answer
    got["finished_s"] = round(time.perf_counter() - t0, 2)
    if got["estimate_s"] is not None:
        got["estimate_s"] = round(got["estimate_s"], 1)
    got["model_first_token_s"] = (round(got["first_model_token_s"] - got["model_request_s"], 2)
                                  if got["first_model_token_s"] is not None else None)
    got["model_total_s"] = round(got["finished_s"] - got["model_request_s"], 2) if got["model_request_s"] else None
    got["cited"] = [c.id for c in answer.citations]
    got["answer"] = answer
    return got


def median(rows, key):
    values = [r[key] for r in rows if r.get(key) is not None]
    return round(statistics.median(values), 2) if values else None


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--data-dir", default=None, help="an existing data dir (index); default: a fresh one")
    ap.add_argument("--corpus", action="append", help="corpus file(s) to ingest first")
    ap.add_argument("--rounds", type=int, default=1, help="times to run the question set")
    ap.add_argument("--json", help="write every measurement here")
    args = ap.parse_args()
    data_dir = Path(args.data_dir or tempfile.mkdtemp(prefix="paperchat-latency-"))
    os.environ["PAPERCHAT_DATA_DIR"] = str(data_dir)
    settings = Settings()
    print(f"CPU: {cpu_line()}", flush=True)
    with build_pipeline(settings) as pipeline:
        encoding = tiktoken.get_encoding("cl100k_base")  # after build_pipeline, which installs its offline copy
        if args.corpus:
            pipeline.ingest_files(args.corpus)
        pipeline.ensure_ingested()
        t0 = time.perf_counter()
        pipeline.warm_up()
        base_url = pipeline._server.base_url
        print(f"model server up in {time.perf_counter() - t0:.1f} s; measured read rate "
              f"{pipeline.read_rate.tokens_per_s:.1f} cl100k tokens/s", flush=True)
        print(f"llama.cpp: {server_system_info(settings.logs_dir / 'llm-server.log')}", flush=True)
        rows = []
        for round_ in range(args.rounds):
            for label, question, earlier in QUESTIONS:
                history = []
                if earlier:  # the turn before the follow-up, answered as the app would (not timed)
                    first = paperchat(pipeline, earlier, [])["answer"]
                    history = [Exchange(earlier, first.prose, tuple(s.paper.title for s in first.sources))]
                now = paperchat(pipeline, question, history)
                sources = now.pop("answer").sources
                naive = call(base_url, naive_messages(question, sources), NAIVE_MAX_TOKENS)
                before = call(base_url, before_messages(question, sources, label == "zh", encoding), NAIVE_MAX_TOKENS)
                row = {"round": round_, "kind": label, "question": question, "paperchat": now,
                       "before": {k: v for k, v in before.items() if k != "text"},
                       "naive": {k: v for k, v in naive.items() if k != "text"}}
                rows.append(row)
                print(json.dumps(row, ensure_ascii=False), flush=True)

    print(f"\nCPU: {cpu_line()}")
    print("\n| kind | question | sources s | first answer text s | first model token s | finished s | naive first token s "
          "| naive finished s | model first token s: now / before | model total s: now / before | prompt tokens: now / before / naive |")
    print("|" + "---|" * 11)
    for r in rows:
        p, b, n = r["paperchat"], r["before"], r["naive"]
        print(f"| {r['kind']} | {r['question']} | {p['sources_s']} | {p['first_text_s']} | {p['first_model_token_s']} | "
              f"{p['finished_s']} | {n['first_token_s']} | {n['total_s']} | {p['model_first_token_s']} / "
              f"{b['first_token_s']} | {p['model_total_s']} / {b['total_s']} | {p.get('prompt_tokens')} / "
              f"{b['prompt_n']} / {n['prompt_n']} |")
    ours = [r["paperchat"] for r in rows]
    ratios = {
        "first_text_over_naive_first_token": median([{"v": r["paperchat"]["first_text_s"] / r["naive"]["first_token_s"]}
                                                     for r in rows], "v"),
        "finished_over_naive_finished": median([{"v": r["paperchat"]["finished_s"] / r["naive"]["total_s"]}
                                                for r in rows], "v"),
        "model_first_token_now_over_before": median(
            [{"v": r["paperchat"]["model_first_token_s"] / r["before"]["first_token_s"]} for r in rows
             if r["paperchat"]["model_first_token_s"]], "v"),
        "model_total_now_over_before": median(
            [{"v": r["paperchat"]["model_total_s"] / r["before"]["total_s"]} for r in rows
             if r["paperchat"]["model_total_s"]], "v"),
    }
    summary = {"sources_s_p50": median(ours, "sources_s"), "first_text_s_p50": median(ours, "first_text_s"),
               "finished_s_p50": median(ours, "finished_s"),
               "chinese_sources_s": [r["paperchat"]["sources_s"] for r in rows if r["kind"] == "zh"], **ratios}
    print("\n" + json.dumps(summary, ensure_ascii=False, indent=2))
    if args.json:
        Path(args.json).write_text(json.dumps({"cpu": cpu_line(), "rows": rows, "summary": summary},
                                              ensure_ascii=False, indent=2))


if __name__ == "__main__":
    main()
