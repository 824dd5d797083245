"""Ingestion survives kill -9: the rerun completes every paper, duplicates nothing, leaves nothing stray.

`python -m rag.cli ingest corpus/iclr2026_seed.jsonl` runs with the real default embedder (MiniLM) in a fresh
data dir and is SIGKILLed as soon as the store holds some but not all chunks; then it is run again
and the store is compared with a clean ingest (same chunking, word-hash vectors: chunk ids, texts and
metadata do not depend on the embedder).
"""

import os
import re
import signal
import sqlite3
import subprocess
import sys
import time

import pytest

from rag.corpus.papers import load_file
from rag.index.store import PaperIndex, make_client
from rag.offline import prepare_offline
from rag.settings import SEED_CORPUS, Settings
from tests.fakes import WordHashEmbeddings
from tests.unit.index.index_checks import assert_complete

pytestmark = pytest.mark.integration
STATS = re.compile(r"(\d+) new, (\d+) changed, (\d+) unchanged papers; (\d+) chunks embedded")
# Embedding calls of 4 chunks (the batch size is not part of the collection identity): the seed's
# first 4 chunks end inside its fourth paper, so a kill after the first write leaves a paper half written.
BATCH = "4"


def stored_chunk_ids(chroma_dir) -> list[str]:
    """Chunk ids in Chroma's own metadata table, read-only: the test never opens (so never repairs) the store."""
    path = chroma_dir / "chroma.sqlite3"
    if not path.exists():
        return []
    try:
        with sqlite3.connect(f"file:{path}?mode=ro", uri=True, timeout=1) as db:
            return [row[0] for row in db.execute("SELECT embedding_id FROM embeddings")]
    except sqlite3.OperationalError:  # the tables are not created yet, or the writer holds a lock
        return []


def clean_ingest(data_dir) -> dict:
    """id -> (document, metadata) of a clean ingest of the seed."""
    settings = Settings(data_dir=data_dir)
    prepare_offline(settings.cache_dir)
    index = PaperIndex(make_client(settings), WordHashEmbeddings(), settings)
    index.ingest(load_file(SEED_CORPUS).papers)
    got = index.collection.get(include=["documents", "metadatas"])
    return {i: (d, m) for i, d, m in zip(got["ids"], got["documents"], got["metadatas"])}


def ingest_cmd():
    return [sys.executable, "-m", "rag.cli", "ingest", str(SEED_CORPUS)]


def test_a_killed_ingest_resumes_to_exactly_a_clean_ingest(tmp_path, guarded_env):
    reference = clean_ingest(tmp_path / "reference")
    papers: dict[str, set[str]] = {}
    for chunk_id, (_, meta) in reference.items():
        papers.setdefault(meta["paper_id"], set()).add(chunk_id)
    data_dir = tmp_path / "data"
    env = dict(guarded_env, PAPERCHAT_DATA_DIR=str(data_dir), PAPERCHAT_EMBEDDING__BATCH_SIZE=BATCH,
               ANONYMIZED_TELEMETRY="False")

    t0 = time.monotonic()
    with open(tmp_path / "first.log", "w") as log:
        first = subprocess.Popen(ingest_cmd(), env=env, stdout=log, stderr=subprocess.STDOUT)
    try:
        deadline = time.monotonic() + 300
        while not stored_chunk_ids(data_dir / "chroma"):
            assert first.poll() is None, f"ingest ended before it could be killed:\n{(tmp_path / 'first.log').read_text()}"
            assert time.monotonic() < deadline, "no chunk was written in 300 s"
            time.sleep(0.05)
        first.send_signal(signal.SIGKILL)
        assert first.wait(timeout=30) == -signal.SIGKILL  # killed, not finished
    finally:
        if first.poll() is None:
            first.kill()
    killed_after = time.monotonic() - t0

    written = set(stored_chunk_ids(data_dir / "chroma"))
    assert 0 < len(written) < len(reference), f"the kill did not land mid-way: {len(written)}/{len(reference)}"
    assert written <= set(reference)
    complete = {pid for pid, chunks in papers.items() if chunks <= written}
    partial = {pid for pid, chunks in papers.items() if chunks & written and not chunks <= written}

    t1 = time.monotonic()
    rerun = subprocess.run(ingest_cmd(), env=env, capture_output=True, text=True, timeout=600)
    rerun_s = time.monotonic() - t1
    assert rerun.returncode == 0, rerun.stderr[-3000:]
    new, changed, unchanged, embedded = map(int, STATS.search(rerun.stdout).groups())
    # complete papers are kept, partly written ones written again whole, the rest written for the first time
    assert (unchanged, changed, new) == (len(complete), len(partial), len(papers) - len(complete) - len(partial))
    assert embedded == len(reference) - sum(len(papers[pid]) for pid in complete)

    index = PaperIndex(make_client(Settings(data_dir=data_dir)), WordHashEmbeddings(), Settings(data_dir=data_dir))
    got = index.collection.get(include=["documents", "metadatas", "embeddings"])
    assert len(got["ids"]) == len(set(got["ids"])) == index.count_chunks() == len(reference)
    assert {i: (d, m) for i, d, m in zip(got["ids"], got["documents"], got["metadatas"])} == reference
    assert_complete(index)
    assert all(len(vector) == 384 for vector in got["embeddings"])  # multilingual-e5-small
    # the vector index holds every chunk too, not only the metadata table
    nearest = index.collection.query(query_embeddings=[got["embeddings"][0]], n_results=len(reference))
    assert set(nearest["ids"][0]) == set(reference) and nearest["ids"][0][0] == got["ids"][0]
    assert not os.path.exists(env["NETGUARD_LOG"]), open(env["NETGUARD_LOG"]).read()
    print(f"\nkilled after {killed_after:.1f} s with {len(written)}/{len(reference)} chunks "
          f"({len(complete)} papers complete, {len(partial)} partial); rerun {rerun_s:.1f} s: {rerun.stdout.strip()}")
