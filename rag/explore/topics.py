"""Explore, topic map: one vector per indexed paper, clustered and laid out in 2-D, each cluster labeled
by its top keywords. Built once (at the end of `paperchat ingest`, or on first start) and stored under
the data dir, keyed by the index's content, so a stale map is rebuilt and never served.

Numpy only, bounded: PCA to at most 50 dimensions (one SVD), k-means with k = sqrt(N/10) clamped to
2..40 (k-means++ seeding, fixed seed, at most 40 rounds), then a 2-D layout in which the cluster centres
are placed by classical MDS of their 50-D distances and each paper sits near its centre, offset by its
own top-2 principal components inside the cluster. Cost is O(N·k·rounds); no t-SNE.
"""

from __future__ import annotations

import hashlib
import json
import math
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from rag.index.chunking import KEYWORD_SEPARATOR
from rag.index.store import PaperIndex
from rag.retrieve.filters import keyword_key
from rag.text import STOP_WORDS, words

LABEL_CANDIDATES = 30  # a cluster's best-scored terms considered for its label
PHRASE_OVER_WORD = 0.5  # a phrase replaces chosen words inside it at this share of their score (see pick_terms)
MAP_SCHEMA = 3  # bump when the stored layout or labels change meaning (2: no repeated terms; 3: phrases win)
PCA_DIMS = 50
MAX_CLUSTERS = 40
ROUNDS = 40
SEED = 2026


@dataclass(frozen=True)
class TopicMap:
    key: str
    ids: list[str]
    titles: list[str]
    x: list[float]
    y: list[float]
    cluster: list[int]
    labels: list[str]  # one per cluster

    def members(self, cluster: int) -> list[str]:
        return [pid for pid, c in zip(self.ids, self.cluster) if c == cluster]

    def in_region(self, x: tuple[float, float], y: tuple[float, float]) -> list[str]:
        (x0, x1), (y0, y1) = sorted(x), sorted(y)
        return [pid for pid, px, py in zip(self.ids, self.x, self.y) if x0 <= px <= x1 and y0 <= py <= y1]

    def in_polygon(self, polygon: Sequence[tuple[float, float]]) -> list[str]:
        """Papers inside a closed polygon in map coordinates (even-odd rule; a lasso drawn on the map)."""
        if len(polygon) < 3:
            return []
        edges = list(zip(polygon, [*polygon[1:], polygon[0]]))
        found = []
        for pid, px, py in zip(self.ids, self.x, self.y):
            inside = False
            for (ax, ay), (bx, by) in edges:
                if (ay > py) != (by > py) and px < ax + (py - ay) * (bx - ax) / (by - ay):
                    inside = not inside
            if inside:
                found.append(pid)
        return found

    def to_json(self) -> dict:
        return {"schema": MAP_SCHEMA, **self.__dict__}


def _papers(index: PaperIndex) -> tuple[list[str], list[str], list[str], np.ndarray, list[str]]:
    """(ids, titles, keyword strings, one unit vector per paper (mean of its chunks), content hashes)."""
    sums: dict[str, np.ndarray] = {}
    info: dict[str, tuple[str, str, str]] = {}
    for chunk in index.chunks(vectors=True):
        meta, pid = chunk.metadata, chunk.metadata["paper_id"]
        v = np.asarray(chunk.vector, dtype=np.float32)
        sums[pid] = sums[pid] + v if pid in sums else v.copy()
        info.setdefault(pid, (meta.get("title", ""), meta.get("keywords", ""), meta.get("content_hash", "")))
    ids = sorted(sums)
    matrix = np.stack([sums[i] for i in ids]) if ids else np.zeros((0, 1), dtype=np.float32)
    matrix /= np.maximum(np.linalg.norm(matrix, axis=1, keepdims=True), 1e-9)
    return ids, [info[i][0] for i in ids], [info[i][1] for i in ids], matrix, [info[i][2] for i in ids]


def content_key(collection: str, ids: list[str], hashes: list[str]) -> str:
    """What the map was made from: the collection and every paper's id and content hash."""
    digest = hashlib.sha256(f"{MAP_SCHEMA}|{collection}".encode())
    for pid, h in sorted(zip(ids, hashes)):
        digest.update(f"\n{pid}\t{h}".encode())
    return digest.hexdigest()[:16]


def index_key(index: PaperIndex) -> str:
    """The current key of the index (reads ids and hashes only, not vectors)."""
    firsts = [c.metadata for c in index.chunks(first_only=True)]
    return content_key(index.name, [m["paper_id"] for m in firsts], [m.get("content_hash", "") for m in firsts])


def _kmeans(points: np.ndarray, k: int, rng: np.random.Generator) -> np.ndarray:
    """Cluster of each point (k-means++ seeding, then Lloyd rounds until nothing moves or ROUNDS)."""
    n = len(points)
    centres = [points[rng.integers(n)]]
    closest = ((points - centres[0]) ** 2).sum(1)
    for _ in range(1, k):
        centres.append(points[rng.choice(n, p=closest / closest.sum()) if closest.sum() > 0 else rng.integers(n)])
        closest = np.minimum(closest, ((points - centres[-1]) ** 2).sum(1))
    c = np.stack(centres)
    assign = np.full(n, -1)
    for _ in range(ROUNDS):
        dist = (points ** 2).sum(1)[:, None] - 2 * points @ c.T + (c ** 2).sum(1)[None, :]
        new = dist.argmin(1)
        if np.array_equal(new, assign):
            break
        assign = new
        for j in range(k):
            if (assign == j).any():
                c[j] = points[assign == j].mean(0)
    return assign


def _mds(centres: np.ndarray) -> np.ndarray:
    """Classical MDS of the centres to 2-D."""
    d2 = ((centres[:, None, :] - centres[None, :, :]) ** 2).sum(-1)
    m = len(centres)
    j = np.eye(m) - 1.0 / m
    b = -0.5 * j @ d2 @ j
    values, vectors = np.linalg.eigh(b)
    top = np.argsort(values)[::-1][:2]
    return vectors[:, top] * np.sqrt(np.maximum(values[top], 1e-12))


def label_clusters(texts: list[str], assign: np.ndarray, k: int, top: int = 3) -> list[str]:
    """c-TF-IDF: each cluster's terms (keywords as phrases, title words) weighted by how much more often
    they occur there than in the whole corpus; the top ones joined by " · ". Ties break alphabetically."""
    per = [Counter() for _ in range(k)]
    for text, c in zip(texts, assign):
        per[c].update(set(_terms(text)))
    total = Counter()
    for counts in per:
        total.update(counts)
    avg = sum(sum(c.values()) for c in per) / max(k, 1)
    labels = []
    for counts in per:
        size = sum(counts.values()) or 1
        scored = sorted((((cnt / size) * math.log(1 + avg / total[t]), t) for t, cnt in counts.items() if cnt >= 2),
                        key=lambda pair: (-pair[0], pair[1]))
        labels.append(" · ".join(pick_terms(scored, top)) or "misc")
    return labels


def pick_terms(scored: Sequence[tuple[float, str]], top: int = 3) -> list[str]:
    """A label's terms from (score, term) pairs, best first, none saying what another says (`same_topic`).
    A phrase replaces the shorter terms inside it when it scores at least PHRASE_OVER_WORD of each ("graph
    neural networks" 80 replaces "graph" 127); a phrase passed over leaves its other words out too, so a
    label never reads "graph · networks · neural"."""
    best: list[tuple[float, str]] = []
    passed: list[str] = []
    for score, term in scored[:LABEL_CANDIDATES]:
        if any(_words(term) < _words(phrase) and same_topic(term, phrase) for phrase in passed):
            continue
        same = [pair for pair in best if same_topic(term, pair[1])]
        if not same:
            best.append((score, term))
        elif all(_words(term) > _words(t) and score >= PHRASE_OVER_WORD * s for s, t in same):
            at = best.index(same[0])
            best = [pair for pair in best if pair not in same]
            best.insert(min(at, len(best)), (score, term))
        elif _words(term) > 1:
            passed.append(term)
    return [t for _, t in best[:top]]


def _spaced(term: str) -> str:
    return term.replace("-", " ")


def _words(term: str) -> int:
    return len(_spaced(term).split())


def same_topic(a: str, b: str) -> bool:
    """Whether two label terms say the same thing: one inside the other ("language", "large language
    models"; "graph learning", "graph representation learning"), a plural ("llm", "llms") or an acronym of
    the other ("llms", "large language models")."""
    def norm(term: str) -> str:  # hyphens as spaces: "time-series" is inside "time series forecasting"
        return " ".join(w[:-1] if len(w) > 3 and w.endswith("s") else w for w in _spaced(term).split())

    na, nb = norm(a), norm(b)
    if f" {na} " in f" {nb} " or f" {nb} " in f" {na} ":
        return True
    wa, wb = set(na.split()), set(nb.split())
    if len(wa) >= 2 and len(wb) >= 2 and (wa <= wb or wb <= wa):  # every word of one among the other's
        return True
    return any(" " not in x and len(y.split()) >= 2 and x == "".join(w[0] for w in y.split())
               for x, y in ((na, nb), (nb, na)))


def _terms(text: str) -> list[str]:
    title, _, keywords = text.partition("\x00")
    phrases = [keyword_key(k) for k in keywords.split(KEYWORD_SEPARATOR) if k.strip()]
    return phrases + [w for w in words(title, hyphens=True)
                      if len(w) >= 3 and w.isascii() and w[0].isalpha() and w not in STOP_WORDS]


def build_map(index: PaperIndex) -> TopicMap:
    ids, titles, keywords, matrix, hashes = _papers(index)
    key = content_key(index.name, ids, hashes)
    n = len(ids)
    if n == 0:
        return TopicMap(key, [], [], [], [], [], [])
    rng = np.random.default_rng(SEED)
    centred = matrix - matrix.mean(0)
    _, _, vt = np.linalg.svd(centred, full_matrices=False)
    reduced = centred @ vt[:min(PCA_DIMS, vt.shape[0])].T
    k = max(1, min(MAX_CLUSTERS, n, round(math.sqrt(n / 10)))) if n >= 2 else 1
    k = max(k, min(2, n))
    assign = _kmeans(reduced, k, rng)
    centres = np.stack([reduced[assign == j].mean(0) if (assign == j).any() else reduced.mean(0) for j in range(k)])
    spread = np.sqrt(((centres[:, None] - centres[None]) ** 2).sum(-1) + 1e-12)
    place = _mds(centres) if k >= 3 else np.array([[-1.0, 0.0], [1.0, 0.0]])[:k]
    gap = np.sort(spread + np.eye(k) * 1e9, axis=1)[:, 0].mean() if k > 1 else 1.0
    xy = np.zeros((n, 2))
    for j in range(k):
        mask = assign == j
        local = reduced[mask] - centres[j]
        if mask.sum() >= 3:
            _, _, lvt = np.linalg.svd(local, full_matrices=False)
            local2 = local @ lvt[:2].T
        else:
            local2 = np.zeros((mask.sum(), 2))
        scale = np.abs(local2).max() or 1.0
        xy[mask] = place[j] + local2 / scale * gap * 0.45
    labels = label_clusters([f"{t}\x00{kw}" for t, kw in zip(titles, keywords)], assign, k)
    return TopicMap(key, ids, titles, [round(float(v), 4) for v in xy[:, 0]], [round(float(v), 4) for v in xy[:, 1]],
                    [int(c) for c in assign], labels)


def map_path(data_dir: Path, collection: str) -> Path:
    return data_dir / "topics" / f"{collection}.json"


def load_map(path: Path, key: str) -> TopicMap | None:
    """The stored map if it was made from exactly this index content, else None."""
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None
    if data.pop("schema", None) != MAP_SCHEMA or data.get("key") != key:
        return None
    return TopicMap(**data)


def ensure_map(index: PaperIndex, data_dir: Path) -> tuple[TopicMap, bool]:
    """The stored map, rebuilt first if the index changed since; True when it was (re)built."""
    path = map_path(data_dir, index.name)
    found = load_map(path, index_key(index))
    if found is not None:
        return found, False
    built = build_map(index)
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_suffix(".tmp")
    tmp.write_text(json.dumps(built.to_json()), encoding="utf-8")
    tmp.replace(path)
    return built, True
