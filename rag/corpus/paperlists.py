"""`paperchat import`: conference lists users already have -> corpus JSONL (the schema of `corpus/`).

Reads papercopilot `paperlists` JSON (e.g. `iclr/iclr2026.json`: a JSON array of flat dicts with `id`, `title`,
`abstract`, `keywords` as one ';'-separated string, `primary_area`, `status` ("Oral", "Poster", "Reject",
"Withdraw", ...), `site` / `openreview` URLs, `tldr`, and many author / affiliation / rating fields) and
OpenReview notes dumps (mapped by `rag.corpus.openreview.note_to_record`). Every field that has no place in the
corpus schema is reported once per file with how many papers had it.
"""

from __future__ import annotations

import gzip
import json
import re
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path

from rag.errors import CorpusError
from rag.corpus.openreview import NOT_ACCEPTED, NOTE_FIELDS, is_note, note_to_record

# paperlists field -> corpus field
DIRECT = {"id": "id", "title": "title", "abstract": "abstract", "tldr": "tldr", "primary_area": "primary_area",
          "keywords": "keywords", "status": "status"}
URL_FIELDS = ("openreview", "site", "url")
STATUS = {"oral": "Oral", "poster": "Poster", "spotlight": "Spotlight", "reject": NOT_ACCEPTED,
          "desk reject": NOT_ACCEPTED, "withdraw": "Withdrawn", "withdrawn": "Withdrawn"}
_FORUM_ID = re.compile(r"openreview\.net/(?:forum|pdf)\?id=([\w-]+)")
NOTE_USED = {key for key, _ in NOTE_FIELDS} | {"venue", "venueid"}


@dataclass
class ImportReport:
    records: list[dict] = field(default_factory=list)
    skipped: Counter = field(default_factory=Counter)  # reason -> papers
    unmapped: Counter = field(default_factory=Counter)  # field -> papers that had it
    statuses_kept: Counter = field(default_factory=Counter)  # status wording we do not know -> papers

    def lines(self, name: str) -> list[str]:
        out = [f"{name}: {len(self.records)} papers mapped"]
        out += [f"{name}: skipped {n} papers: {reason}" for reason, n in self.skipped.most_common()]
        if self.unmapped:
            fields = ", ".join(f"{f} ({n})" for f, n in sorted(self.unmapped.items()))
            out.append(f"{name}: fields not mapped (papers that had them): {fields}")
        if self.statuses_kept:
            kept = ", ".join(f"{s!r} ({n})" for s, n in self.statuses_kept.most_common())
            out.append(f"{name}: status wording kept as is: {kept}")
        return out


def paperlists_record(entry: dict, report: ImportReport) -> dict | None:
    record = {}
    for key, value in entry.items():
        if key in DIRECT:
            if value not in (None, ""):
                record[DIRECT[key]] = value
        elif key not in URL_FIELDS and value not in (None, "", -1, []):
            report.unmapped[key] += 1
    url = next((entry[k] for k in URL_FIELDS if isinstance(entry.get(k), str) and entry[k].strip()), "")
    if url:
        record["url"] = url.strip()
    if "id" not in record:
        match = _FORUM_ID.search(url)
        if match:
            record["id"] = match.group(1)
    if isinstance(record.get("keywords"), str):
        record["keywords"] = [k.strip() for k in record["keywords"].split(";") if k.strip()]
    if isinstance(record.get("status"), str):
        status = record["status"].strip()
        record["status"] = STATUS.get(status.lower(), status)
        if status.lower() not in STATUS:
            report.statuses_kept[status] += 1
    missing = [f for f in ("id", "title", "abstract") if not isinstance(record.get(f), str) or not record[f].strip()]
    if missing:
        report.skipped[f"no {' / '.join(missing)} (the corpus needs id, title and abstract)"] += 1
        return None
    return record


def note_record(note: dict, report: ImportReport) -> dict | None:
    try:
        record, _ = note_to_record(note)
    except (ValueError, KeyError, TypeError) as exc:
        report.skipped[str(exc).split(":")[0]] += 1
        return None
    for key, value in note["content"].items():
        if key not in NOTE_USED and value not in (None, "", {}):
            report.unmapped[f"content.{key}"] += 1
    if not (isinstance(record.get("abstract"), str) and record["abstract"].strip()):
        report.skipped["no abstract (the corpus needs id, title and abstract)"] += 1
        return None
    return record


def _entries(path: Path) -> list:
    opener = gzip.open if path.suffix == ".gz" else open
    try:
        with opener(path, "rt", encoding="utf-8") as f:
            text = f.read()
    except OSError as exc:
        raise CorpusError(f"cannot read {path}: {exc}") from None
    try:
        data = json.loads(text)
    except json.JSONDecodeError:
        try:  # JSONL (e.g. a notes dump written one note a line)
            return [json.loads(line) for line in text.split("\n") if line.strip()]  # JSON strings may hold U+2028
        except json.JSONDecodeError as exc:
            raise CorpusError(f"{path} is neither JSON nor JSONL ({exc}); expected a paperlists JSON array "
                              "or an OpenReview notes dump") from None
    if isinstance(data, dict):
        data = data.get("notes", data.get("papers"))
    if not isinstance(data, list):
        raise CorpusError(f"{path}: expected a JSON array of papers (paperlists) or {{\"notes\": [...]}} "
                          "(OpenReview), got something else")
    return data


def import_file(path: str | Path) -> ImportReport:
    """Map every paper of a paperlists JSON or OpenReview notes dump; duplicates keep the first."""
    path, report, seen = Path(path), ImportReport(), set()
    for entry in _entries(path):
        if not isinstance(entry, dict):
            report.skipped["not a JSON object"] += 1
            continue
        record = note_record(entry, report) if is_note(entry) else paperlists_record(entry, report)
        if record is None:
            continue
        if record["id"] in seen:
            report.skipped["duplicate id (first kept)"] += 1
            continue
        seen.add(record["id"])
        report.records.append(record)
    return report


def write_jsonl(records: list[dict], out: str | Path) -> None:
    out = Path(out)
    tmp = out.with_name(out.name + ".tmp")
    tmp.write_text("".join(json.dumps(r, ensure_ascii=False) + "\n" for r in records), encoding="utf-8")
    tmp.replace(out)
