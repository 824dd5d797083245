"""Corpus: read paper records and validate them line by line.

Formats (plain or .gz): JSONL of corpus records, CSV with the same columns (by the `.csv` suffix), and
OpenReview API v2 notes, as JSONL or as one JSON document (a list, or {"notes": [...]}), recognised by
their `content` dict. A bad line never stops the load: it is reported with its file and line number,
and every valid record is still returned.
"""

from __future__ import annotations

import csv
import gzip
import hashlib
import io
import itertools
import json
import re
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field
from pathlib import Path

from rag.errors import CorpusError
from rag.text import web_link
from rag.corpus.openreview import NOT_ACCEPTED, is_note, note_to_record, venue_status  # noqa: F401 (re-exported)

# Fields of the corpus schema (corpus/README.md). Others from the full ICLR dump are accepted silently.
REQUIRED = ("id", "title", "abstract")
OPTIONAL = ("keywords", "primary_area", "status", "url", "tldr")
KNOWN_EXTRA = {
    "number", "authors", "authorids", "pdf", "rating_avg", "n_reviews", "title_submission",
    "abstract_submission", "text_version", "venue", "decision",
}
MAX_ABSTRACT_CHARS = 20_000  # real abstracts are < 5,000; larger is a full text or a broken export
MAX_TITLE_CHARS = 1_000
# The corpus's status for every ICLR 2026 submission that was not accepted and not withdrawn early.


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
        return web_link(self.url, self.id)

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


# Why a line was skipped, by the start of its message: the summary counts lines per reason.
REASONS = (
    ("malformed JSON", "malformed JSON"), ("malformed CSV", "malformed CSV"), ("not valid UTF-8", "invalid UTF-8"),
    ("missing or empty", "missing or empty title/abstract/id"), ("duplicate id", "duplicate id"),
    ("abstract has", "abstract too long"), ("title has", "title too long"), ("expected a JSON object", "not a JSON object"),
    ("field '", "wrong field type"), ("'id' must be", "bad id"), ("row has", "wrong number of CSV fields"),
    ("CSV header lacks", "CSV header without title/abstract/id"), ("file is truncated", "truncated or corrupt file"),
    ("the file holds no records", "empty file"),
)


def reason_of(message: str) -> str:
    return next((reason for prefix, reason in REASONS if message.startswith(prefix)), "other")


@dataclass
class LoadReport:
    papers: list[Paper] = field(default_factory=list)
    problems: list[Problem] = field(default_factory=list)

    @property
    def skipped(self) -> list[Problem]:
        return [p for p in self.problems if p.skipped]

    def skipped_by_reason(self) -> dict[str, int]:
        counts: dict[str, int] = {}
        for problem in self.skipped:
            counts[reason_of(problem.message)] = counts.get(reason_of(problem.message), 0) + 1
        return dict(sorted(counts.items(), key=lambda kv: -kv[1]))

    def summary(self) -> str:
        text = f"{len(self.papers)} papers loaded, {len(self.skipped)} lines skipped"
        if self.skipped:
            text += " (" + ", ".join(f"{n} {reason}" for reason, n in self.skipped_by_reason().items()) + ")"
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


def parse_entry(obj: object) -> tuple[Paper, list[str]]:
    """A corpus record or an OpenReview note, validated."""
    if not is_note(obj):
        return parse_record(obj)
    record, warnings = note_to_record(obj)
    paper, more = parse_record(record)
    return paper, warnings + more


# -- reading files: each reader yields (line number, decoded value or Problem) -------------------
Entry = tuple[int, object]
_DECODER = json.JSONDecoder()
_SPACE = re.compile(r"[ \t\n\r]*")


def _skip(text: str, pos: int) -> int:
    return _SPACE.match(text, pos).end()


def _is_export(obj: object) -> bool:
    """{"notes": [...]}: a whole export in one value."""
    return isinstance(obj, dict) and isinstance(obj.get("notes"), list) and not is_note(obj)


def _unwrap(obj: object) -> list[object]:
    return obj["notes"] if _is_export(obj) else [obj]


def _jsonl_entries(lines: Iterable[bytes], name: str) -> Iterator[Entry]:
    for lineno, raw in enumerate(lines, start=1):
        if not raw.strip():
            continue
        try:
            text = raw.decode("utf-8")
        except UnicodeDecodeError as exc:
            yield lineno, Problem(name, lineno, f"not valid UTF-8 ({exc.reason} at byte {exc.start})")
            continue
        try:
            obj = json.loads(text)
        except json.JSONDecodeError as exc:
            yield lineno, Problem(name, lineno, f"malformed JSON: {exc.msg} at column {exc.colno}")
            continue
        for entry in _unwrap(obj):
            yield lineno, entry


def _array_elements(text: str, pos: int) -> Iterator[Entry]:
    """(line, value) of each element of the valid JSON array that starts at text[pos]."""
    line, last = 1 + text.count("\n", 0, pos), pos
    pos = _skip(text, pos + 1)
    while text[pos] != "]":
        value, end = _DECODER.raw_decode(text, pos)
        line, last = line + text.count("\n", last, pos), pos
        yield line, value
        pos = _skip(text, end)
        if text[pos] == ",":
            pos = _skip(text, pos + 1)


def _member_start(text: str, pos: int, key: str) -> int:
    """Where the value of `key` starts in the valid JSON object at text[pos] (the key is known to exist)."""
    pos = _skip(text, pos + 1)
    while True:
        name, pos = _DECODER.raw_decode(text, pos)
        pos = _skip(text, _skip(text, pos) + 1)  # past the ':'
        if name == key:
            return pos
        _, pos = _DECODER.raw_decode(text, pos)
        pos = _skip(text, _skip(text, pos) + 1)  # past the ','


def _document_entries(data: bytes, name: str) -> Iterator[Entry]:
    """Entries of one JSON document, each with the line it starts on; JSONL if the bytes are not one document."""
    try:
        text = data.decode("utf-8")
        doc = json.loads(text)
    except UnicodeDecodeError as exc:
        line = data.count(b"\n", 0, exc.start) + 1
        yield line, Problem(name, line, f"not valid UTF-8 ({exc.reason}): nothing loaded from this JSON document")
        return
    except json.JSONDecodeError as exc:
        if exc.msg == "Extra data" or exc.lineno == 1:  # several values, or a broken first line: JSONL
            yield from _jsonl_entries(io.BytesIO(data), name)
            return
        yield exc.lineno, Problem(name, exc.lineno, f"malformed JSON: {exc.msg} at column {exc.colno}; "
                                                    "nothing loaded from this JSON document")
        return
    pos = _skip(text, 0)
    if _is_export(doc):
        pos = _member_start(text, pos, "notes")
    if text[pos] == "[":
        yield from _array_elements(text, pos)
    else:
        yield 1 + text.count("\n", 0, pos), doc


def _starts_a_document(first: bytes) -> bool:
    """A first line that is a JSON list, or no whole JSON value, starts one (pretty-printed) JSON document."""
    try:
        return not isinstance(json.loads(first), dict)
    except UnicodeDecodeError:  # a bad line of JSONL, reported as such
        return False
    except ValueError:
        return True


def _json_entries(stream, name: str) -> Iterator[Entry]:
    """JSONL streamed line by line, or the entries of one JSON document, as the first line shows."""
    head: list[bytes] = []
    for raw in stream:
        head.append(raw)
        if raw.strip():
            break
    if head and _starts_a_document(head[-1]):
        yield from _document_entries(b"".join(head) + stream.read(), name)
    else:
        yield from _jsonl_entries(itertools.chain(head, stream), name)


def _csv_entries(stream, name: str) -> Iterator[Entry]:
    """Rows of a CSV file with a header of corpus field names; quoted cells may span lines."""
    # errors="replace" keeps one bad byte from ending the file; rows holding U+FFFD are then skipped
    text = io.TextIOWrapper(stream, encoding="utf-8-sig", errors="replace", newline="")
    reader = csv.reader(text)
    header = [h.strip() for h in next(reader, [])]
    if not header:
        return
    missing = [c for c in REQUIRED if c not in header]
    if missing:
        yield 1, Problem(name, 1, f"CSV header lacks column(s) {', '.join(map(repr, missing))}: "
                                  "nothing loaded from this file")
        return
    unknown = sorted(set(header) - set(REQUIRED) - set(OPTIONAL) - KNOWN_EXTRA)
    if unknown:  # once for the file, not once per row
        yield 1, Problem(name, 1, f"ignored unknown column(s) {', '.join(unknown)}", skipped=False)
    columns = set(REQUIRED) | set(OPTIONAL)
    start = reader.line_num + 1
    while True:
        try:
            row = next(reader)
        except StopIteration:
            return
        except csv.Error as exc:
            yield start, Problem(name, start, f"malformed CSV: {exc}")
            start = reader.line_num + 1
            continue
        lineno, start = start, reader.line_num + 1
        if not any(cell.strip() for cell in row):
            continue
        if len(row) != len(header):
            yield lineno, Problem(name, lineno, f"row has {len(row)} fields, the header has {len(header)}")
        elif any("\ufffd" in cell for cell in row):
            yield lineno, Problem(name, lineno, "not valid UTF-8")
        else:
            yield lineno, {h: cell for h, cell in zip(header, row) if h in columns}


def is_csv(path: Path) -> bool:
    return path.name.lower().endswith((".csv", ".csv.gz"))


def _open_binary(path: Path):
    if path.suffix == ".gz":
        return gzip.open(path, "rb")
    return path.open("rb")


def _add(report: LoadReport, seen: set[str], name: str, lineno: int, obj: object) -> None:
    try:
        paper, warnings = parse_entry(obj)
    except ValueError as exc:
        report.problems.append(Problem(name, lineno, str(exc)))
        return
    if paper.id in seen:
        report.problems.append(Problem(name, lineno, f"duplicate id {paper.id!r}: kept the first record"))
        return
    seen.add(paper.id)
    report.papers.append(paper)
    report.problems.extend(Problem(name, lineno, w, skipped=False) for w in warnings)


def load_file(path: str | Path, report: LoadReport | None = None, seen: set[str] | None = None) -> LoadReport:
    """Load one corpus file (JSONL, JSON notes or CSV; plain or .gz) into `report`, reporting bad lines."""
    path = Path(path)
    report = report if report is not None else LoadReport()
    seen = seen if seen is not None else {p.id for p in report.papers}
    if not path.exists():
        raise CorpusError(f"{path}: no such file. Pass the path of a corpus file (JSONL, JSON or CSV; plain or .gz).")
    if path.is_dir():
        raise CorpusError(f"{path} is a directory: pass the corpus file(s) inside it.")
    name = str(path)
    entries = _csv_entries if is_csv(path) else _json_entries
    lineno = 0
    try:
        with _open_binary(path) as stream:
            for lineno, entry in entries(stream, name):
                if isinstance(entry, Problem):
                    report.problems.append(entry)
                else:
                    _add(report, seen, name, lineno, entry)
    except (OSError, EOFError) as exc:  # gzip.BadGzipFile is an OSError
        if lineno == 0 and not report.papers:
            raise CorpusError(f"{path}: cannot be read ({exc}). Is it a JSONL, JSON or CSV file (plain or .gz)?") from exc
        report.problems.append(Problem(name, lineno + 1, f"file is truncated or corrupt from here on ({exc})"))
    if not report.papers and not report.problems:
        report.problems.append(Problem(name, 0, "the file holds no records"))
    return report


load_jsonl = load_file  # its name from before CSV and OpenReview notes were read too


def load_corpus(paths: Iterable[str | Path]) -> LoadReport:
    """Load several corpus files; ids must be unique across all of them."""
    report = LoadReport()
    seen: set[str] = set()
    for path in paths:
        load_file(path, report, seen)
    return report
