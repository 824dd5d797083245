"""Browser-side latency of the embedded default: send -> sources visible -> first answer token -> done.

    python benchmarks/ui_latency.py [--runs N]

Starts `paperchat serve` on a fresh data dir (seed corpus), drives Debian's Chromium with Playwright
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

from tests.integration.appserver import ask, chromium, running_app, wait_for_answer  # noqa: E402

QUESTIONS = [
    "What is DroPE and why does it extend context?",
    "How can KV cache eviction be made accurate without generating a draft response?",
    "DroPE是什么？它为什么能扩展上下文？",
    "Which paper benchmarks optical flow models under image corruptions?",
    "How do language models store procedural memory as tokens?",
]


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
            rows.append({"question": q, "sources_s": round(seen["sources"] - t0, 2),
                         "first_token_s": round(seen["first_token"] - t0, 2), "done_s": round(seen["done"] - t0, 2)})
            page.close()
    summary = {key: {"median": round(statistics.median(r[key] for r in rows), 2),
                     "max": round(max(r[key] for r in rows), 2)} for key in ("sources_s", "first_token_s", "done_s")}
    print(json.dumps({"runs": rows, "summary": summary}, ensure_ascii=False, indent=2))
    print("\n| question | sources visible (s) | first token (s) | finished (s) |\n|---|---|---|---|")
    for r in rows:
        print(f"| {r['question']} | {r['sources_s']} | {r['first_token_s']} | {r['done_s']} |")


if __name__ == "__main__":
    main()
