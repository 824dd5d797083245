"""The embedder's speed on this CPU: passages/s for each thread count and run batch, and other ONNX builds of the
same model against the shipped one (speed, and the cosine of their vectors to the shipped model's), and the run batch chosen at run time.

    python benchmarks/embedder_speed.py [--n 512] [--threads 1,2] [--batches 4,8,16,32] [--variant NAME=FILE.onnx ...]

The passages are chunks as ingest makes them (title + abstract) of a seeded random draw of the conference
(../shared/data, which benchmarks may read). Each setting embeds the same passages once after a warm-up call; the
CPU's model and flags are printed with the figures. A variant is any ONNX file with the shipped model's inputs and
output (for example one made with `onnxruntime.quantization.quantize_dynamic`); its vectors are compared with the
shipped model's, passage by passage.
"""

from __future__ import annotations

import argparse
import gzip
import json
import random
import sys
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from benchmarks.latency import cpu_line  # noqa: E402
from rag.index.chunking import chunk_text  # noqa: E402
from rag.models.embeddings import MiniLMEmbeddings, RunBatchTuner  # noqa: E402
from rag.settings import Settings  # noqa: E402

CONFERENCE = Path(__file__).resolve().parent.parent.parent / "shared" / "data" / "iclr2026.jsonl.gz"


def passages(n: int, seed: int) -> list[str]:
    with gzip.open(CONFERENCE, "rt") as f:
        rows = [json.loads(line) for line in f]
    random.Random(seed).shuffle(rows)
    return [chunk_text(r["title"], r["abstract"]) for r in rows if r.get("abstract")][:n]


def timed(embedder: MiniLMEmbeddings, texts: list[str], call: int) -> tuple[float, np.ndarray]:
    """Passages/s embedding `texts` in calls of `call` texts, as ingest does (EmbeddingSettings.batch_size)."""
    embedder.embed_query(texts[0])  # loads the session
    start = time.perf_counter()
    vectors = np.array([v for i in range(0, len(texts), call) for v in embedder.embed_documents(texts[i:i + call])])
    return len(texts) / (time.perf_counter() - start), vectors


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--n", type=int, default=512)
    ap.add_argument("--seed", type=int, default=7)
    ap.add_argument("--threads", default="2", help="comma-separated; 0 is onnxruntime's default (every core)")
    ap.add_argument("--batches", default="4,8,16,32,0", help="texts per onnxruntime call, comma-separated; 0 is the "
                    "run-time choice (timed on the first calls)")
    ap.add_argument("--variant", action="append", default=[], help="NAME=FILE.onnx, timed at the first thread count "
                                                                   "and the shipped run batch")
    args = ap.parse_args()
    texts = passages(args.n, args.seed)
    call = Settings().embedding.batch_size
    print(f"CPU: {cpu_line()}", flush=True)
    print(f"{len(texts)} passages (title + abstract), {MiniLMEmbeddings.MAX_WORD_PIECES} word pieces at most, "
          f"embedded {call} per call as ingest does\n")
    print("| model | threads | run batch | passages/s | cosine to shipped: min / mean |")
    print("|---|---|---|---|---|")
    reference = None
    for threads in [int(t) for t in args.threads.split(",")]:
        for batch in [int(b) for b in args.batches.split(",")]:
            embedder = MiniLMEmbeddings(threads=threads, run_batch=batch)
            rate, vectors = timed(embedder, texts, call)
            reference = vectors if reference is None else reference
            cos = (vectors * reference).sum(axis=1)
            shown = batch or f"run-time choice: {embedder.tuner.chosen}"
            print(f"| shipped | {threads or 'default'} | {shown} | {rate:.1f} | {cos.min():.4f} / {cos.mean():.4f} |",
                  flush=True)
    first_threads = int(args.threads.split(",")[0])
    for spec in args.variant:
        name, _, path = spec.partition("=")
        embedder = MiniLMEmbeddings(threads=first_threads, run_batch=RunBatchTuner.DEFAULT, model_file=Path(path))
        rate, vectors = timed(embedder, texts, call)
        cos = (vectors * reference).sum(axis=1)
        print(f"| {name} | {first_threads or 'default'} | {RunBatchTuner.DEFAULT} | {rate:.1f} | "
              f"{cos.min():.4f} / {cos.mean():.4f} |", flush=True)


if __name__ == "__main__":
    main()
