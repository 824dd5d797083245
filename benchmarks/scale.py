"""Scale curve (issue 5): ingest throughput and query latency at 1k, 5k and 19,630 papers, and query
latency on synthetic stores of 100k and 1M vectors, in the embedded store and against a `chroma run`
server on 127.0.0.1. Prints a Markdown table (and JSON with --json).

    .venv/bin/python benchmarks/scale.py real --sizes 1000,5000 --full-index /work/fullidx
    .venv/bin/python benchmarks/scale.py synthetic --sizes 100000,1000000 --from-index /work/fullidx

`real`: for each size, a seeded sample of the corpus (always the same papers) is ingested into a fresh
data dir, once per mode, with the default embedder and chunking, and then queried with the dev
questions as written. Two latencies: `search` is PaperChat's whole retrieval (embed the question,
Chroma, the BM25 twin, fusion, grouping per paper, k=4) and `vector` is one Chroma nearest-neighbour
query (k=40, the fetch size) with the question's vector already computed. `--full-index` points at the
data dir of an existing full-corpus ingest (`PAPERCHAT_DATA_DIR=... paperchat ingest
../shared/data/iclr2026.jsonl.gz`, timed on its own in benchmarks/README.md): the 19,630 point is
queried there, embedded, and through a server started on that same Chroma directory.

`synthetic`: N vectors made from the real MiniLM vectors of `--from-index` (each a real vector plus
Gaussian noise, re-normalised, with the real paper's status as metadata) go into a fresh cosine HNSW
collection; the dev questions' real query vectors are then searched, unfiltered and with the
"All accepted" status filter the UI applies by default. The build time and the store's peak memory
are reported too. Reads ../shared by path (benchmarks may; the product never does).
"""

from __future__ import annotations

import argparse
import json
import os
import random
import shutil
import socket
import statistics
import subprocess
import sys
import tempfile
import time
import urllib.request
from contextlib import contextmanager
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

import chromadb  # noqa: E402
import numpy as np  # noqa: E402
from chromadb.config import Settings as ChromaClientSettings  # noqa: E402

from rag.corpus.papers import load_corpus  # noqa: E402
from rag.eval.evaluate import load_questions  # noqa: E402
from rag.pipeline import build_pipeline  # noqa: E402
from rag.retrieve.filters import STATUS_GROUPS, Filters  # noqa: E402
from rag.settings import Settings  # noqa: E402

SHARED = ROOT.parent / "shared"
CHROMA = Path(sys.executable).with_name("chroma")
FETCH_K = 40
NOISE = 0.05  # per-dimension noise on unit vectors of 384 dims: neighbours stay near their source paper


def pct(values: list[float]) -> dict:
    ordered = sorted(values)
    p95 = ordered[min(len(ordered) - 1, round(0.95 * (len(ordered) - 1)))]
    return {"p50": round(statistics.median(ordered), 1), "p95": round(p95, 1)}


def peak_rss_mb(pid: int | None = None) -> float:
    status = Path(f"/proc/{pid or 'self'}/status").read_text()
    line = next(x for x in status.splitlines() if x.startswith("VmHWM:"))
    return round(int(line.split()[1]) / 1024, 0)


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@contextmanager
def chroma_server(path: Path):
    """`chroma run` on a free loopback port over `path`; yields (port, pid)."""
    port = free_port()
    log = open(path.parent / f"chroma-{port}.log", "w")
    proc = subprocess.Popen([sys.executable, str(CHROMA), "run", "--host", "127.0.0.1", "--port", str(port),
                             "--path", str(path)], stdout=log, stderr=subprocess.STDOUT,
                            env=dict(os.environ, ANONYMIZED_TELEMETRY="False"))
    try:
        for _ in range(240):
            try:
                urllib.request.urlopen(f"http://127.0.0.1:{port}/api/v2/heartbeat", timeout=1)
                break
            except OSError:
                time.sleep(0.5)
        else:
            raise RuntimeError(f"chroma run did not start; see {log.name}")
        yield port, proc.pid
    finally:
        proc.terminate()
        proc.wait(30)
        log.close()


def questions(path: str) -> list[str]:
    """The dev questions' texts as written (every kind: the mix a chat sees)."""
    texts = []
    for q in load_questions(path):
        if q.get("turns"):
            texts.extend(t["question"] for t in q["turns"])
        else:
            texts.append(q["question"])
    return texts


def settings_for(data_dir: Path, mode: str, port: int | None) -> Settings:
    chroma = {"mode": "http", "host": "127.0.0.1", "port": port} if mode == "http" else {}
    return Settings(data_dir=data_dir, chroma=chroma, retrieval={"rewrite": "off"})


def query_figures(settings: Settings, texts: list[str]) -> dict:
    with build_pipeline(settings) as pipeline:
        index = pipeline.index
        search, vector = [], []
        pipeline.retrieve(texts[0])  # warm: first query opens the HNSW segment
        for text in texts:
            t = time.perf_counter()
            pipeline.retrieve(text)
            search.append((time.perf_counter() - t) * 1000)
            v = index.embeddings.embed_query(text)
            t = time.perf_counter()
            index.nearest([v], FETCH_K)
            vector.append((time.perf_counter() - t) * 1000)
        return {"chunks": index.count_chunks(), "search_ms": pct(search), "vector_ms": pct(vector)}


def run_real(args) -> list[dict]:
    papers = load_corpus([args.corpus]).papers
    texts = questions(args.questions)
    rows = []
    for size in [int(s) for s in args.sizes.split(",") if s]:
        sample = random.Random(size).sample(papers, min(size, len(papers)))
        for mode in args.modes.split(","):
            work = Path(tempfile.mkdtemp(prefix=f"scale-{size}-{mode}-", dir=args.workdir))
            chroma_dir = work / "server-db"
            chroma_dir.mkdir()
            with (chroma_server(chroma_dir) if mode == "http" else _nothing()) as server:
                settings = settings_for(work, mode, server[0] if server else None)
                with build_pipeline(settings) as pipeline:
                    t = time.perf_counter()
                    stats = pipeline.index.ingest(sample)
                    seconds = time.perf_counter() - t
                row = {"papers": len(sample), "mode": mode, "ingest_s": round(seconds, 1),
                       "papers_per_s": round(len(sample) / seconds, 1), "chunks_written": stats.chunks_written}
                row.update(query_figures(settings, texts))
                row["store_peak_rss_mb"] = peak_rss_mb(server[1]) if server else None
            rows.append(row)
            print(json.dumps(row), flush=True)
            shutil.rmtree(work, ignore_errors=True)
    if args.full_index:
        full = Path(args.full_index)
        for mode in args.modes.split(","):
            with (chroma_server(full / "chroma") if mode == "http" else _nothing()) as server:
                settings = settings_for(full, mode, server[0] if server else None)
                row = {"papers": len(papers), "mode": mode, "ingest_s": None, "papers_per_s": None}
                row.update(query_figures(settings, texts))
                row["store_peak_rss_mb"] = peak_rss_mb(server[1]) if server else None
            rows.append(row)
            print(json.dumps(row), flush=True)
    return rows


@contextmanager
def _nothing():
    yield None


def real_vectors(data_dir: Path) -> tuple[np.ndarray, list[str]]:
    """Every stored vector of the full index (and its paper's status)."""
    settings = Settings(data_dir=data_dir)
    with build_pipeline(settings) as pipeline:
        chunks = list(pipeline.index.chunks(vectors=True))
        return np.asarray([c.vector for c in chunks], dtype=np.float32), [c.metadata.get("status", "") for c in chunks]


def run_synthetic(args) -> list[dict]:
    base, statuses = real_vectors(Path(args.from_index))
    settings = Settings(data_dir=Path(args.from_index))
    with build_pipeline(settings) as pipeline:  # the dev questions' real query vectors
        queries = pipeline.index.embeddings.embed_documents(questions(args.questions))
    accepted = Filters(statuses=STATUS_GROUPS["All accepted"]).where()
    rows = []
    for size in [int(s) for s in args.sizes.split(",") if s]:
        for mode in args.modes.split(","):
            work = Path(tempfile.mkdtemp(prefix=f"synth-{size}-{mode}-", dir=args.workdir))
            with (chroma_server(work / "db") if mode == "http" else _nothing()) as server:
                client_settings = ChromaClientSettings(anonymized_telemetry=False)
                client = (chromadb.HttpClient(host="127.0.0.1", port=server[0], settings=client_settings) if server
                          else chromadb.PersistentClient(path=str(work / "db"), settings=client_settings))
                collection = client.create_collection("synthetic", configuration={"hnsw": {"space": "cosine"}})
                batch = min(5000, client.get_max_batch_size())
                rng = np.random.default_rng(size)
                t = time.perf_counter()
                for start in range(0, size, batch):
                    n = min(batch, size - start)
                    src = rng.integers(0, len(base), n)
                    vecs = base[src] + rng.normal(0, NOISE, (n, base.shape[1])).astype(np.float32)
                    vecs /= np.linalg.norm(vecs, axis=1, keepdims=True)
                    collection.add(ids=[f"s{start + i}" for i in range(n)], embeddings=vecs,
                                   metadatas=[{"status": statuses[j]} for j in src])
                build_s = time.perf_counter() - t
                collection.query(query_embeddings=[queries[0]], n_results=FETCH_K)  # warm
                plain, filtered = [], []
                for v in queries:
                    t = time.perf_counter()
                    collection.query(query_embeddings=[v], n_results=FETCH_K, include=["metadatas", "distances"])
                    plain.append((time.perf_counter() - t) * 1000)
                    t = time.perf_counter()
                    collection.query(query_embeddings=[v], n_results=FETCH_K, where=accepted,
                                     include=["metadatas", "distances"])
                    filtered.append((time.perf_counter() - t) * 1000)
                row = {"vectors": collection.count(), "mode": mode, "build_s": round(build_s, 1),
                       "vectors_per_s": round(size / build_s), "vector_ms": pct(plain),
                       "vector_accepted_ms": pct(filtered),
                       "store_peak_rss_mb": peak_rss_mb(server[1]) if server else peak_rss_mb(),
                       "disk_mb": round(sum(f.stat().st_size for f in (work / "db").rglob("*") if f.is_file()) / 2**20)}
            rows.append(row)
            print(json.dumps(row), flush=True)
            shutil.rmtree(work, ignore_errors=True)
    return rows


def _pair(figures: dict | None) -> str:
    return f"{figures['p50']} / {figures['p95']}" if figures else "-"


def table(rows: list[dict]) -> str:
    out = ["| store size | mode | ingest / build | rate | search p50 / p95 ms | vector k=40 p50 / p95 ms "
           "| accepted-filter p50 / p95 ms | store peak RSS MB |", "|---|---|---|---|---|---|---|---|"]
    for r in rows:
        size = f"{r['papers']:,} papers ({r['chunks']:,} chunks)" if "papers" in r else f"{r['vectors']:,} vectors"
        took = r.get("ingest_s") or r.get("build_s")
        rate = (f"{r['papers_per_s']} papers/s" if r.get("papers_per_s") else
                f"{r['vectors_per_s']:,} vectors/s" if r.get("vectors_per_s") else "-")
        cells = [size, r["mode"], f"{took} s" if took else "-", rate, _pair(r.get("search_ms")),
                 _pair(r.get("vector_ms")), _pair(r.get("vector_accepted_ms")), str(r.get("store_peak_rss_mb") or "-")]
        out.append("| " + " | ".join(cells) + " |")
    return "\n".join(out)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("what", choices=["real", "synthetic"])
    ap.add_argument("--sizes", required=True, help="comma-separated store sizes")
    ap.add_argument("--modes", default="embedded,http")
    ap.add_argument("--corpus", default=str(SHARED / "data/iclr2026.jsonl.gz"))
    ap.add_argument("--questions", default=str(SHARED / "eval/dev/questions.jsonl"))
    ap.add_argument("--full-index", help="data dir of a full-corpus ingest (real: adds the 19,630 point)")
    ap.add_argument("--from-index", help="data dir of a full-corpus ingest (synthetic: the real vectors)")
    ap.add_argument("--workdir", default=None, help="where the temporary stores go (default: $TMPDIR)")
    ap.add_argument("--json", help="also write the rows to this file")
    args = ap.parse_args()
    rows = run_real(args) if args.what == "real" else run_synthetic(args)
    print(table(rows))
    if args.json:
        Path(args.json).write_text(json.dumps(rows, indent=1))


if __name__ == "__main__":
    main()
