"""Reviews, the second kind of source: ICLR's official reviews, stored next to the index and given to the
model as reviewers' opinions, never as the paper's own claims.

Input: JSONL (plain or .gz) with one line per paper, {"id": paper id, "reviews": [{"review_id", "rating",
"confidence", "soundness", "presentation", "contribution", "summary", "strengths", "weaknesses",
"questions"}]}: the shape of `../shared/data/reviews.jsonl.gz` and of `paperchat fetch --with-reviews`.
They are kept in SQLite (not embedded: a question about reviews first finds its papers, then reads their
reviews, rag.answer.reviews), keyed by (paper id, review id), so ingesting the same file again changes nothing.
"""

from __future__ import annotations

import re
import sqlite3
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path

from rag.corpus.papers import LoadReport, Problem, _json_entries, _open_binary
from rag.errors import CorpusError
from rag.text import openreview_url

SCORES = ("rating", "confidence", "soundness", "presentation", "contribution")
TEXTS = ("summary", "strengths", "weaknesses", "questions")
@dataclass(frozen=True)
class Review:
    paper_id: str
    review_id: str
    rating: int | None = None
    confidence: int | None = None
    soundness: int | None = None
    presentation: int | None = None
    contribution: int | None = None
    summary: str = ""
    strengths: str = ""
    weaknesses: str = ""
    questions: str = ""

    @property
    def link(self) -> str:
        return openreview_url(self.paper_id, self.review_id)

    def scores(self) -> str:
        return ", ".join(f"{name} {getattr(self, name)}" for name in SCORES if getattr(self, name) is not None)


def _score(value: object) -> int | None:
    if value is None or value == "":
        return None
    if isinstance(value, bool) or not isinstance(value, (int, float, str)):
        raise ValueError(f"a score must be a number, got {type(value).__name__}")
    if isinstance(value, str):  # "6: marginally above the acceptance threshold"
        head = re.match(r"\s*(\d+)", value)
        if not head:
            raise ValueError(f"a score must be a number, got {value[:30]!r}")
        return int(head.group(1))
    return int(value)


def parse_line(obj: object) -> list[Review]:
    if not isinstance(obj, dict) or not isinstance(obj.get("id"), str) or not obj["id"].strip():
        raise ValueError("expected {\"id\": paper id, \"reviews\": [...]}")
    if not isinstance(obj.get("reviews"), list):
        raise ValueError("missing 'reviews' list")
    reviews = []
    for i, r in enumerate(obj["reviews"], start=1):
        if not isinstance(r, dict) or not str(r.get("review_id") or "").strip():
            raise ValueError(f"review {i} has no 'review_id'")
        texts = {name: str(r.get(name) or "").strip() for name in TEXTS}
        reviews.append(Review(obj["id"].strip(), str(r["review_id"]).strip(),
                              **{name: _score(r.get(name)) for name in SCORES}, **texts))
    return reviews


def load_reviews(paths: Iterable[str | Path]) -> tuple[list[Review], LoadReport]:
    """Every review in the files; bad lines are reported with file and line (as corpus files are)."""
    reviews: list[Review] = []
    report = LoadReport()
    for path in map(Path, paths):
        if not path.is_file():
            raise CorpusError(f"{path}: no such file. Pass a reviews JSONL file (plain or .gz).")
        with _open_binary(path) as stream:
            for lineno, entry in _json_entries(stream, str(path)):
                if isinstance(entry, Problem):
                    report.problems.append(entry)
                    continue
                try:
                    reviews.extend(parse_line(entry))
                except ValueError as exc:
                    report.problems.append(Problem(str(path), lineno, str(exc)))
    return reviews, report


SCORES_SUFFIX = ".scores.csv.gz"


def scores_path(corpus: str | Path) -> Path:
    """Where a corpus file's review scores live: corpus/iclr2026.jsonl.gz -> corpus/iclr2026.scores.csv.gz."""
    path = Path(corpus)
    return path.with_name(path.name.split(".")[0] + SCORES_SUFFIX)


def load_scores(path: str | Path) -> list[Review]:
    """Reviews' scores (no text) from a CSV of paper_id, review_id and the score columns (the shipped
    corpus/iclr2026.scores.csv.gz); a bad row raises CorpusError naming its line."""
    import csv
    import gzip

    path = Path(path)
    found: list[Review] = []
    with (gzip.open(path, "rt", encoding="utf-8", newline="") if path.suffix == ".gz"
          else path.open(encoding="utf-8", newline="")) as f:
        for lineno, row in enumerate(csv.DictReader(f), start=2):
            try:
                found.append(Review(row["paper_id"], row["review_id"], **{s: _score(row.get(s)) for s in SCORES}))
            except (KeyError, ValueError) as exc:
                raise CorpusError(f"{path}:{lineno}: not a review scores row ({exc}).") from exc
    return found


class ReviewStore:
    """Reviews in SQLite under the data dir; one row per (paper id, review id)."""

    def __init__(self, path: Path):
        path.parent.mkdir(parents=True, exist_ok=True)
        self.db = sqlite3.connect(path, check_same_thread=False)
        columns = ", ".join([*(f"{s} INTEGER" for s in SCORES), *(f"{t} TEXT" for t in TEXTS)])
        self.db.execute(f"CREATE TABLE IF NOT EXISTS reviews (paper_id TEXT, review_id TEXT, {columns}, "
                        "PRIMARY KEY (paper_id, review_id))")
        self.db.commit()

    def add(self, reviews: Sequence[Review]) -> int:
        """Insert or replace; returns how many rows are new."""
        before = self.count()
        names = ["paper_id", "review_id", *SCORES, *TEXTS]
        self.db.executemany(f"INSERT OR REPLACE INTO reviews ({', '.join(names)}) VALUES ({', '.join('?' * len(names))})",
                            [tuple(getattr(r, n) for n in names) for r in reviews])
        self.db.commit()
        return self.count() - before

    def add_scores(self, reviews: Sequence[Review]) -> int:
        """Insert reviews' scores, keeping any text already stored for them; returns how many rows are new."""
        before = self.count()
        names = ["paper_id", "review_id", *SCORES]
        updates = ", ".join(f"{name} = excluded.{name}" for name in SCORES)
        self.db.executemany(f"INSERT INTO reviews ({', '.join(names)}) VALUES ({', '.join('?' * len(names))}) "
                            f"ON CONFLICT (paper_id, review_id) DO UPDATE SET {updates}",
                            [tuple(getattr(r, n) for n in names) for r in reviews])
        self.db.commit()
        return self.count() - before

    def count(self) -> int:
        return self.db.execute("SELECT COUNT(*) FROM reviews").fetchone()[0]

    def scores(self, field: str) -> dict[str, list[int]]:
        """Paper id -> its reviews' values of one score field (reviews without that score left out)."""
        if field not in SCORES:
            raise ValueError(f"unknown review score {field!r}; one of {', '.join(SCORES)}")
        found: dict[str, list[int]] = {}
        for paper_id, value in self.db.execute(f"SELECT paper_id, {field} FROM reviews WHERE {field} IS NOT NULL "
                                               "ORDER BY paper_id, review_id"):
            found.setdefault(paper_id, []).append(value)
        return found

    def for_papers(self, paper_ids: Sequence[str]) -> dict[str, list[Review]]:
        found: dict[str, list[Review]] = {pid: [] for pid in paper_ids}
        if not paper_ids:
            return found
        names = ["paper_id", "review_id", *SCORES, *TEXTS]
        rows = self.db.execute(f"SELECT {', '.join(names)} FROM reviews WHERE paper_id IN ({', '.join('?' * len(paper_ids))}) "
                               "ORDER BY paper_id, review_id", list(paper_ids))
        for row in rows:
            found[row[0]].append(Review(**dict(zip(names, row))))
        return found
