"""Browser-side latency of the embedded default: send -> sources -> cited quotes -> model's first token -> done.

    python benchmarks/ui_latency.py [--runs N]

Starts `paperchat serve` on a fresh data dir (the default corpus: the whole conference, from its snapshot), drives Debian's Chromium with Playwright
like a person, and prints one JSON object plus a Markdown table. Timings are taken by polling the page
every 100 ms, so each is accurate to about 0.1 s.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from benchmarks.latency import cpu_line  # noqa: E402
from tests.integration.appserver import ask, chromium, running_app, wait_for_answer  # noqa: E402

QUESTIONS = [
    "What is DroPE and why does it extend context?",
    "How can KV cache eviction be made accurate without generating a draft response?",
    "DroPE是什么？它为什么能扩展上下文？",
    "Which paper benchmarks optical flow models under image corruptions?",
    "How do language models store procedural memory as tokens?",
]


STAGES = ("sources", "quotes", "first_token", "done")


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--runs", type=int, default=len(QUESTIONS))
    args = ap.parse_args()
    root = Path(tempfile.mkdtemp(prefix="paperchat-ui-bench-"))
    env = dict(os.environ, PAPERCHAT_DATA_DIR=str(root / "data"))
    rows = []
    with running_app(env, root / "app.log") as url, chromium() as browser:
        for q in QUESTIONS[: args.runs]:
            page = browser.new_page(viewport={"width": 1400, "height": 1000})
            page.goto(url)
            page.wait_for_selector("#question textarea")
            t0 = ask(page, q)
            seen = wait_for_answer(page, q, timeout_s=300)
            at = {key: round(seen[key] - t0, 2) if key in seen else None for key in STAGES}
            rows.append({"question": q, **{f"{key}_s": at[key] for key in STAGES}})
            page.close()
    summary = {f"{key}_s": {"median": round(statistics.median(got), 2), "max": round(max(got), 2)}
               for key in STAGES if (got := [r[f"{key}_s"] for r in rows if r[f"{key}_s"] is not None])}
    print(json.dumps({"cpu": cpu_line(), "runs": rows, "summary": summary}, ensure_ascii=False, indent=2))
    print("\n| question | sources (s) | cited quotes (s) | model's first token (s) | finished (s) |\n|---|---|---|---|---|")
    for r in rows:
        print(f"| {r['question']} | {r['sources_s']} | {r['quotes_s']} | {r['first_token_s']} | {r['done_s']} |")


if __name__ == "__main__":
    main()
