"""`paperchat import`: papercopilot paperlists JSON and OpenReview notes dumps -> corpus JSONL.

The paperlists entries below follow the real files' shape (papercopilot/paperlists, e.g. iclr/iclr2023.json:
flat dicts, `keywords` one ';'-separated string, `status` "Poster"/"Reject"/"Withdraw", ratings as "3;5;6"
strings and `*_avg` floats; newer years add `abstract`, `tldr`, `primary_area`, `site`, `aff`...). Texts are
from the committed seed papers.
"""

from __future__ import annotations

import json
from pathlib import Path

from rag import cli
from rag.corpus.papers import load_file
from rag.corpus.paperlists import import_file

ROOT = Path(__file__).resolve().parents[3]
SEED = [json.loads(x) for x in (ROOT / "corpus" / "iclr2026_seed.jsonl").read_text().splitlines() if x.strip()]


def _entry(paper: dict, status: str) -> dict:
    return {"id": paper["id"], "title": paper["title"], "track": "main", "status": status,
            "keywords": ";".join(paper.get("keywords") or []), "abstract": paper["abstract"],
            "primary_area": paper.get("primary_area", ""), "tldr": "", "author": "A. Author;B. Author",
            "aff": "Uni A;Uni B", "rating": "3;5;6", "rating_avg": 4.67, "confidence": "",
            "site": f"https://openreview.net/forum?id={paper['id']}"}


def test_paperlists_maps_fields_status_and_reports_the_rest(tmp_path):
    entries = [_entry(SEED[0], "Oral"), _entry(SEED[1], "Reject"), _entry(SEED[2], "Withdraw"),
               _entry(SEED[3], "Journal Track"), {**_entry(SEED[4], "Poster"), "abstract": ""},
               _entry(SEED[0], "Poster")]
    src = tmp_path / "iclr2026.json"
    src.write_text(json.dumps(entries))
    report = import_file(src)
    by_id = {r["id"]: r for r in report.records}
    assert [r["id"] for r in report.records] == [p["id"] for p in SEED[:4]]
    assert by_id[SEED[0]["id"]]["status"] == "Oral"
    assert by_id[SEED[1]["id"]]["status"].startswith("Not accepted")
    assert by_id[SEED[2]["id"]]["status"] == "Withdrawn"
    assert by_id[SEED[0]["id"]]["keywords"] == list(SEED[0]["keywords"])
    assert by_id[SEED[0]["id"]]["url"].endswith(SEED[0]["id"])
    assert report.unmapped == {"track": 6, "author": 6, "aff": 6, "rating": 6, "rating_avg": 6}
    assert report.statuses_kept == {"Journal Track": 1}
    assert sum(report.skipped.values()) == 2  # the empty abstract and the duplicate id
    text = "\n".join(report.lines("iclr2026.json"))
    assert "rating_avg (6)" in text and "Journal Track" in text


def test_import_command_writes_a_corpus_that_ingest_reads(tmp_path, monkeypatch, capsys):
    src = tmp_path / "iclr2026.json"
    src.write_text(json.dumps([_entry(p, "Poster") for p in SEED]))
    monkeypatch.chdir(tmp_path)
    assert cli.main(["import", str(src)]) == 0
    out = tmp_path / "iclr2026.corpus.jsonl"
    loaded = load_file(out)
    assert len(loaded.papers) == len(SEED) and not loaded.problems
    assert "fields not mapped" in capsys.readouterr().err


def test_notes_dump_reports_unmapped_content_fields(tmp_path):
    report = import_file(ROOT / "tests" / "fixtures" / "openreview_notes.json")
    assert report.records and all(r["abstract"] for r in report.records)
    assert report.unmapped["content.pdf"] == len(report.records) and "content.title" not in report.unmapped


def test_not_a_paper_list_is_a_clear_error(tmp_path, capsys):
    src = tmp_path / "x.json"
    src.write_text('"hello"')
    assert cli.main(["import", str(src)]) == 2
    assert "expected a JSON array" in capsys.readouterr().err


def test_a_notes_dump_one_note_a_line_keeps_texts_with_unicode_line_separators(tmp_path):
    notes = json.loads((ROOT / "tests" / "fixtures" / "openreview_notes.json").read_text())
    notes = notes if isinstance(notes, list) else notes["notes"]
    notes[0]["content"]["abstract"] = {"value": "Split\u2028here\x85and here."}
    src = tmp_path / "dump.jsonl"
    src.write_text("\n".join(json.dumps(n, ensure_ascii=False) for n in notes) + "\n", encoding="utf-8")
    report = import_file(src)
    assert len(report.records) == len(notes) and report.records[0]["abstract"] == "Split\u2028here\x85and here."
