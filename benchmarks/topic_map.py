"""Topic map on the full corpus: build time, peak RSS and stored size, then the load (cache hit) time.

    PAPERCHAT_DATA_DIR=/work/fullidx8b .venv/bin/python benchmarks/topic_map.py
"""

from __future__ import annotations

import json
import re
import time
from collections import Counter
from pathlib import Path

from rag.pipeline import build_pipeline
from rag.settings import load_settings
from rag.explore.topics import build_map, ensure_map, index_key, map_path


def peak_rss_mb() -> float:
    status = Path("/proc/self/status").read_text()
    return int(re.search(r"VmHWM:\s+(\d+) kB", status).group(1)) / 1024


def main() -> None:
    settings = load_settings(None)
    pipeline = build_pipeline(settings)
    before = peak_rss_mb()
    t0 = time.perf_counter()
    topic_map = build_map(pipeline.index)
    built_s = time.perf_counter() - t0
    path = map_path(settings.data_dir, pipeline.index.name)
    path.unlink(missing_ok=True)
    ensure_map(pipeline.index, settings.data_dir)  # stores it
    t1 = time.perf_counter()
    key = index_key(pipeline.index)
    key_s = time.perf_counter() - t1
    t2 = time.perf_counter()
    _, rebuilt = ensure_map(pipeline.index, settings.data_dir)
    load_s = time.perf_counter() - t2
    sizes = Counter(topic_map.cluster)
    print(json.dumps({
        "papers": len(topic_map.ids), "clusters": len(topic_map.labels),
        "cluster_sizes_min_median_max": [min(sizes.values()), sorted(sizes.values())[len(sizes) // 2], max(sizes.values())],
        "build_s": round(built_s, 1), "peak_rss_mb_before": round(before), "peak_rss_mb_after": round(peak_rss_mb()),
        "stored_mb": round(path.stat().st_size / 2**20, 2), "key_check_s": round(key_s, 2),
        "load_s_incl_key_check": round(load_s, 2), "rebuilt_on_load": rebuilt, "key": key,
        "labels_sample": topic_map.labels[:8],
    }, indent=2, ensure_ascii=False))


if __name__ == "__main__":
    main()
