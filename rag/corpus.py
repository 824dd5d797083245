"""Stage 1, corpus: read paper records from JSONL (plain or .gz) and validate them line by line.

A bad line never stops the load: it is reported with its file and line number, and every valid
record is still returned.
"""

from __future__ import annotations

import gzip
import hashlib
import json
from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path

from rag.errors import CorpusError

# Fields of the corpus schema (corpus/README.md). Others from the full ICLR dump are accepted silently.
REQUIRED = ("id", "title", "abstract")
OPTIONAL = ("keywords", "primary_area", "status", "url", "tldr")
KNOWN_EXTRA = {
    "number", "authors", "authorids", "pdf", "rating_avg", "n_reviews", "title_submission",
    "abstract_submission", "text_version", "venue", "decision",
}
MAX_ABSTRACT_CHARS = 20_000  # real abstracts are < 5,000; larger is a full text or a broken export
MAX_TITLE_CHARS = 1_000


@dataclass(frozen=True)
class Paper:
    """One paper's record, as ingested."""

    id: str
    title: str
    abstract: str
    keywords: tuple[str, ...] = ()
    primary_area: str = ""
    status: str = ""
    url: str = ""
    tldr: str = ""

    @property
    def link(self) -> str:
        return self.url or f"https://openreview.net/forum?id={self.id}"

    def content_hash(self) -> str:
        """Changes whenever anything that is embedded or shown changes."""
        payload = json.dumps(
            [self.id, self.title, self.abstract, list(self.keywords), self.primary_area, self.status,
             self.url, self.tldr],
            ensure_ascii=False,
        )
        return hashlib.sha256(payload.encode("utf-8")).hexdigest()[:16]

    def to_record(self) -> dict:
        return {
            "id": self.id, "title": self.title, "abstract": self.abstract, "keywords": list(self.keywords),
            "primary_area": self.primary_area, "status": self.status, "url": self.url, "tldr": self.tldr,
        }


@dataclass(frozen=True)
class Problem:
    """A line that was skipped (or a record loaded with a warning)."""

    path: str
    line: int
    message: str
    skipped: bool = True

    def __str__(self) -> str:
        kind = "skipped" if self.skipped else "warning"
        return f"{self.path}:{self.line}: {kind}: {self.message}"


@dataclass
class LoadReport:
    papers: list[Paper] = field(default_factory=list)
    problems: list[Problem] = field(default_factory=list)

    @property
    def skipped(self) -> list[Problem]:
        return [p for p in self.problems if p.skipped]

    def summary(self) -> str:
        text = f"{len(self.papers)} papers loaded, {len(self.skipped)} lines skipped"
        warnings = len(self.problems) - len(self.skipped)
        return text + (f", {warnings} warnings" if warnings else "")


def _text(value: object, name: str) -> str:
    if value is None:
        return ""
    if not isinstance(value, str):
        raise ValueError(f"field '{name}' must be a string, got {type(value).__name__}")
    return " ".join(value.split()) if name == "title" else value.strip()


def _keywords(value: object) -> tuple[str, ...]:
    if value is None or value == "":
        return ()
    if isinstance(value, str):  # "a, b; c" exports
        value = [v for part in value.split(";") for v in part.split(",")]
    if not isinstance(value, list) or not all(isinstance(v, str) for v in value):
        raise ValueError("field 'keywords' must be a list of strings")
    return tuple(v.strip() for v in value if v.strip())


def parse_record(obj: object) -> tuple[Paper, list[str]]:
    """Validate one decoded JSON value. Returns the paper and warnings; raises ValueError to skip it."""
    if not isinstance(obj, dict):
        raise ValueError(f"expected a JSON object, got {type(obj).__name__}")
    missing = [name for name in REQUIRED if not (isinstance(obj.get(name), str) and obj[name].strip())]
    if missing:
        raise ValueError(f"missing or empty {', '.join(repr(m) for m in missing)}")
    paper = Paper(
        id=obj["id"].strip(),
        title=_text(obj["title"], "title"),
        abstract=_text(obj["abstract"], "abstract"),
        keywords=_keywords(obj.get("keywords")),
        primary_area=_text(obj.get("primary_area"), "primary_area"),
        status=_text(obj.get("status"), "status"),
        url=_text(obj.get("url"), "url"),
        tldr=_text(obj.get("tldr"), "tldr"),
    )
    if any(c.isspace() for c in paper.id) or len(paper.id) > 128:
        raise ValueError(f"'id' must be a short token without spaces, got {paper.id[:40]!r}")
    if len(paper.abstract) > MAX_ABSTRACT_CHARS:
        raise ValueError(
            f"abstract has {len(paper.abstract):,} characters (limit {MAX_ABSTRACT_CHARS:,}); "
            "is this a full text instead of an abstract?"
        )
    if len(paper.title) > MAX_TITLE_CHARS:
        raise ValueError(f"title has {len(paper.title):,} characters (limit {MAX_TITLE_CHARS:,})")
    warnings = []
    unknown = sorted(set(obj) - set(REQUIRED) - set(OPTIONAL) - KNOWN_EXTRA)
    if unknown:
        warnings.append(f"ignored unknown field(s) {', '.join(unknown)}")
    return paper, warnings


def _open_lines(path: Path) -> Iterable[bytes]:
    if path.suffix == ".gz":
        return gzip.open(path, "rb")
    return path.open("rb")


def load_jsonl(path: str | Path, report: LoadReport | None = None, seen: set[str] | None = None) -> LoadReport:
    """Load one JSONL file (plain or .gz) into `report`, skipping and reporting bad lines."""
    path = Path(path)
    report = report if report is not None else LoadReport()
    seen = seen if seen is not None else {p.id for p in report.papers}
    if not path.exists():
        raise CorpusError(f"{path}: no such file. Pass the path of a corpus JSONL file (plain or .gz).")
    if path.is_dir():
        raise CorpusError(f"{path} is a directory: pass the JSONL file(s) inside it.")
    name = str(path)
    lineno = 0
    try:
        with _open_lines(path) as lines:
            for lineno, raw in enumerate(lines, start=1):
                if not raw.strip():
                    continue
                try:
                    text = raw.decode("utf-8")
                except UnicodeDecodeError as exc:
                    report.problems.append(Problem(name, lineno, f"not valid UTF-8 ({exc.reason} at byte {exc.start})"))
                    continue
                try:
                    obj = json.loads(text)
                except json.JSONDecodeError as exc:
                    report.problems.append(Problem(name, lineno, f"malformed JSON: {exc.msg} at column {exc.colno}"))
                    continue
                try:
                    paper, warnings = parse_record(obj)
                except ValueError as exc:
                    report.problems.append(Problem(name, lineno, str(exc)))
                    continue
                if paper.id in seen:
                    report.problems.append(Problem(name, lineno, f"duplicate id {paper.id!r}: kept the first record"))
                    continue
                seen.add(paper.id)
                report.papers.append(paper)
                report.problems.extend(Problem(name, lineno, w, skipped=False) for w in warnings)
    except (OSError, EOFError) as exc:  # gzip.BadGzipFile is an OSError
        if lineno == 0 and not report.papers:
            raise CorpusError(f"{path}: cannot be read ({exc}). Is it a JSONL or JSONL.gz file?") from exc
        report.problems.append(Problem(name, lineno + 1, f"file is truncated or corrupt from here on ({exc})"))
    if not report.papers and not report.problems:
        report.problems.append(Problem(name, 0, "the file holds no records"))
    return report


def load_corpus(paths: Iterable[str | Path]) -> LoadReport:
    """Load several corpus files; ids must be unique across all of them."""
    report = LoadReport()
    seen: set[str] = set()
    for path in paths:
        load_jsonl(path, report, seen)
    return report
