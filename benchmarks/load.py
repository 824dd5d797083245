"""Load on the embedded default: N chat sessions at once through `gradio_client`, against a real
`paperchat serve` (seed corpus, bundled model on 127.0.0.1), each asking its questions in turn.

    python benchmarks/load.py [--sessions 8] [--turns 1]

Prints one JSON object and a Markdown row: questions answered, busy replies, errors, latency p50/p95
(seconds from a session sending to its final answer, queueing included), the app's and the model
server's peak memory (VmHWM from /proc), and whether any session saw another's turns.
"""

from __future__ import annotations

import argparse
import concurrent.futures as cf
import json
import os
import statistics
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from gradio_client import Client  # noqa: E402

from tests.integration.appserver import api_ask, app_pid, rss_mb, running_app, texts  # noqa: E402

QUESTIONS = [
    "What is DroPE and why does it extend context?",
    "How can KV cache eviction be made accurate without generating a draft response?",
    "Which paper benchmarks optical flow models under image corruptions?",
    "How do language models store procedural memory as tokens?",
    "DroPE是什么？它为什么能扩展上下文？",
    "Which papers study length generalization in map worlds?",
    "What is LookaheadKV?",
    "有没有关于KV缓存压缩的论文？",
]
FOLLOW_UP = "What are its limitations?"


def children(pid: int) -> list[int]:
    found = []
    for proc in Path("/proc").iterdir():
        try:
            if proc.name.isdigit() and int((proc / "stat").read_text().rsplit(")", 1)[1].split()[1]) == pid:
                found.append(int(proc.name))
        except (OSError, ValueError, IndexError):
            continue
    return found


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--sessions", type=int, default=8)
    parser.add_argument("--turns", type=int, default=1, help="questions per session (the later ones are follow-ups)")
    args = parser.parse_args()
    root = Path(tempfile.mkdtemp(prefix="paperchat-load-"))
    env = {k: v for k, v in os.environ.items() if not k.startswith("PAPERCHAT_") and k != "OPENAI_API_KEY"}
    env.update(PAPERCHAT_DATA_DIR=str(root / "data"), GRADIO_ANALYTICS_ENABLED="False", ANONYMIZED_TELEMETRY="False")
    with running_app(env, root / "app.log", timeout=600) as url:
        pid = app_pid(root / "data")
        model_pids = children(pid)
        clients = [Client(url, verbose=False, download_files=False) for _ in range(args.sessions)]

        def session(i: int) -> dict:
            chat, rows = [], []
            asked = [QUESTIONS[i % len(QUESTIONS)]] + [FOLLOW_UP] * (args.turns - 1)
            for question in asked:
                try:
                    chat, seconds = api_ask(clients[i], question, chat)
                    final = texts(chat)[-1]
                    kind = ("busy" if "PaperChat is busy" in final else "error" if final.startswith("⚠️")
                            else "answered")
                except Exception as exc:  # a failure of the app, counted, never hidden
                    seconds, kind, final = float("nan"), f"exception {exc.__class__.__name__}", ""
                rows.append({"session": i, "seconds": round(seconds, 1), "kind": kind})
            users = [t for m, t in zip(chat, texts(chat)) if m["role"] == "user"]
            return {"rows": rows, "isolated": users == asked}

        t0 = time.monotonic()
        with cf.ThreadPoolExecutor(args.sessions) as pool:
            results = list(pool.map(session, range(args.sessions)))
        wall = time.monotonic() - t0
        peak_app = rss_mb(pid, "VmHWM")
        peak_model = max((rss_mb(p, "VmHWM") for p in model_pids), default=0.0)
    rows = [r for res in results for r in res["rows"]]
    answered = sorted(r["seconds"] for r in rows if r["kind"] == "answered")
    q = statistics.quantiles(answered, n=20, method="inclusive") if len(answered) >= 2 else answered * 19
    report = {
        "sessions": args.sessions, "questions": len(rows), "answered": len(answered),
        "busy": sum(r["kind"] == "busy" for r in rows), "errors": [r for r in rows if r["kind"] not in ("answered", "busy")],
        "latency_p50_s": round(statistics.median(answered), 1) if answered else None,
        "latency_p95_s": round(q[18], 1) if answered else None, "latency_max_s": max(answered, default=None),
        "per_answer_s": round(wall / max(len(answered), 1), 1), "wall_s": round(wall, 1),
        "peak_rss_app_mb": round(peak_app), "peak_rss_model_server_mb": round(peak_model),
        "sessions_isolated": all(res["isolated"] for res in results), "rows": rows,
    }
    print(json.dumps(report, indent=2))
    print(f"| {args.sessions} x {args.turns} | {len(answered)}/{len(rows)} | {report['busy']} | {len(report['errors'])} | "
          f"{report['latency_p50_s']} / {report['latency_p95_s']} s | {report['wall_s']} s | "
          f"{report['peak_rss_app_mb']} MB / {report['peak_rss_model_server_mb']} MB | {report['sessions_isolated']} |")


if __name__ == "__main__":
    main()
