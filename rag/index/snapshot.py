"""An index snapshot: the vectors of a corpus's chunks, stored next to the corpus file so a first start loads
them instead of embedding every paper again (the slow part of ingesting: 99% of its time).

A snapshot names what made it (the index identity: embedding model, chunking, schema) and, per chunk, its id
and its paper's content hash. It is used only where all of these match; any paper that is new or changed
is embedded as usual. Vectors are stored as float16 (half the size of float32; on the dev questions the
top-10 papers of every query came out in the same order). `paperchat snapshot build` writes one; the bytes
are the same for the same index, so an unchanged snapshot never shows up as a change.
"""

from __future__ import annotations

import io
import json
import zipfile
from dataclasses import dataclass
from pathlib import Path

import numpy as np

FORMAT = 1
SUFFIX = ".index.npz"
_EPOCH = (1980, 1, 1, 0, 0, 0)  # fixed zip timestamps: the same index writes the same bytes


def snapshot_path(corpus: str | Path) -> Path:
    """Where a corpus file's snapshot lives: corpus/iclr2026.jsonl.gz -> corpus/iclr2026.index.npz."""
    path = Path(corpus)
    stem = path.name.split(".")[0]
    return path.with_name(stem + SUFFIX)


@dataclass
class Snapshot:
    identity: dict
    ids: list[str]  # chunk ids
    hashes: list[str]  # each chunk's paper content hash
    vectors: np.ndarray  # float16, one row per chunk

    def vector(self, chunk_id: str, paper_hash: str) -> list[float] | None:
        """The stored vector of a chunk, if its paper is unchanged since the snapshot was made."""
        if not hasattr(self, "_rows"):
            self._rows = {cid: i for i, cid in enumerate(self.ids)}
        row = self._rows.get(chunk_id)
        if row is None or self.hashes[row] != paper_hash:
            return None
        return self.vectors[row].astype(np.float32).tolist()

    def papers(self) -> dict[str, str]:
        """paper id -> content hash, for every paper in the snapshot."""
        return {cid.rsplit(":", 1)[0]: h for cid, h in zip(self.ids, self.hashes)}


def write_snapshot(path: Path, snapshot: Snapshot) -> bool:
    """Write the snapshot; False (and nothing written) when the file already holds exactly this content."""
    header = json.dumps({"format": FORMAT, "identity": snapshot.identity, "ids": snapshot.ids,
                         "hashes": snapshot.hashes}, sort_keys=True).encode()
    vectors = io.BytesIO()
    np.save(vectors, np.ascontiguousarray(snapshot.vectors, dtype=np.float16), allow_pickle=False)
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w", zipfile.ZIP_DEFLATED, compresslevel=9) as archive:
        for name, data in (("header.json", header), ("vectors.npy", vectors.getvalue())):
            info = zipfile.ZipInfo(name, date_time=_EPOCH)
            info.compress_type = zipfile.ZIP_DEFLATED
            archive.writestr(info, data)
    data = buffer.getvalue()
    if path.is_file() and path.read_bytes() == data:
        return False
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_suffix(".tmp")
    tmp.write_bytes(data)
    tmp.replace(path)
    return True


def read_snapshot(path: Path) -> Snapshot | None:
    """The snapshot at `path`, or None when there is none or it cannot be read (then everything is embedded)."""
    try:
        with zipfile.ZipFile(path) as archive:
            header = json.loads(archive.read("header.json"))
            vectors = np.load(io.BytesIO(archive.read("vectors.npy")), allow_pickle=False)
    except (OSError, KeyError, ValueError, zipfile.BadZipFile):
        return None
    if header.get("format") != FORMAT or len(header["ids"]) != len(vectors):
        return None
    return Snapshot(header["identity"], header["ids"], header["hashes"], vectors)
