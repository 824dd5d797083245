"""A new user's first start: `paperchat serve` on an empty data dir, with no network, to HTTP 200.

    python benchmarks/first_start.py [--keep DIR]

Runs the README's command (`paperchat serve`, the default corpus: the whole conference, loaded from the shipped
index snapshot) in a fresh data dir without PAPERCHAT_CORPUS or OPENAI_API_KEY, and prints one JSON object:
seconds from start to HTTP 200, the app's peak memory, the app log's loading lines, and the CPU's model and
flags. Install time is not included (the venv must exist).
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from benchmarks.latency import cpu_line  # noqa: E402
from tests.integration.appserver import app_pid, rss_mb, running_app  # noqa: E402


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--keep", help="use this (empty) data dir and keep it afterwards")
    args = ap.parse_args()
    root = Path(args.keep) if args.keep else Path(tempfile.mkdtemp(prefix="paperchat-first-start-")) / "data"
    env = {k: v for k, v in os.environ.items() if k not in ("PAPERCHAT_CORPUS", "OPENAI_API_KEY", "PAPERCHAT_DATA_DIR")}
    env["PAPERCHAT_DATA_DIR"] = str(root)
    log = root.parent / f"{root.name}-serve.log"
    t0 = time.monotonic()
    with running_app(env, log, timeout=1200):
        ready_s = time.monotonic() - t0
        peak = rss_mb(app_pid(root), "VmHWM")
    lines = [line for line in log.read_text(errors="replace").splitlines()
             if any(w in line for w in ("papers", "snapshot", "Loading", "loaded", "embedding"))]
    print(json.dumps({"cpu": cpu_line(), "http_200_s": round(ready_s, 1), "app_peak_rss_mb": round(peak),
                      "log": lines[-12:]}, ensure_ascii=False, indent=2))
    if not args.keep:
        shutil.rmtree(root.parent, ignore_errors=True)


if __name__ == "__main__":
    main()
