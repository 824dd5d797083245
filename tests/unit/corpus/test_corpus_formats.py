"""CSV and OpenReview API v2 notes load to the same papers as the corpus JSONL.

The fixtures in tests/fixtures hold five real, public records of /work/shared/data/iclr2026.jsonl.gz
(ids Y9UAgPehqo Oral, 0eM74HjPQA Poster with a line break in its abstract, RExGGPD5tw Poster without
TL;DR, t7ccrWjX2r Withdrawn, XRfhMI7zRI Not accepted), built once with a throw-away script:

* `iclr2026_sample.jsonl`: the records cut to id, number, title, abstract, keywords, primary_area,
  status, url, tldr, as in the dump.
* `iclr2026_sample.csv`: the same columns written by `csv.writer`, keywords joined with "; ".
* `openreview_notes.json`: {"notes": [...]}, `json.dump(indent=2)`, one note per record in the API v2
  shape: id = forum = the record id, number, replyto null, domain, invitations, and `content` fields
  wrapped as {"value": ...}: title, authors, keywords, TLDR, abstract, primary_area, pdf (path part of
  the record's pdf link), and venue/venueid from the status ("ICLR 2026 Oral"/"ICLR 2026 Poster" with
  venueid ICLR.cc/2026/Conference; "ICLR 2026 Conference Withdrawn Submission" with .../Withdrawn_Submission;
  "Submitted to ICLR 2026" with .../Rejected_Submission). Empty fields are left out, as OpenReview does.
  Dates, signatures, readers and the like are not in the dump and are not invented.
"""

import gzip
import json
import shutil
from pathlib import Path

import pytest

from rag.corpus.papers import NOT_ACCEPTED, load_corpus, load_file, venue_status

FIXTURES = Path(__file__).resolve().parents[2] / "fixtures"
RECORDS = FIXTURES / "iclr2026_sample.jsonl"
NOTES = FIXTURES / "openreview_notes.json"
CSV = FIXTURES / "iclr2026_sample.csv"


@pytest.fixture
def reference():
    report = load_file(RECORDS)
    assert len(report.papers) == 5 and not report.problems
    return report.papers


def notes() -> list[dict]:
    return json.loads(NOTES.read_text(encoding="utf-8"))["notes"]


def note(pid="Note000001", replyto=None, **content):
    fields = {"title": "A Title", "abstract": "An abstract.", "venue": "ICLR 2026 Poster"} | content
    return {"id": pid, "forum": pid, "replyto": replyto, "content": {k: {"value": v} for k, v in fields.items()}}


def test_every_format_gives_the_same_papers(reference, tmp_path):
    notes_jsonl = tmp_path / "notes.jsonl"  # a JSONL export of the same notes
    notes_jsonl.write_text("".join(json.dumps(n) + "\n" for n in notes()), encoding="utf-8")
    notes_list = tmp_path / "notes-list.json.gz"  # a bare list, one line, gzipped
    with gzip.open(notes_list, "wt", encoding="utf-8") as f:
        json.dump(notes(), f)
    csv_gz = tmp_path / "sample.csv.gz"
    with open(CSV, "rb") as src, gzip.open(csv_gz, "wb") as dst:
        shutil.copyfileobj(src, dst)
    for path in (NOTES, notes_jsonl, notes_list, CSV, csv_gz):
        report = load_file(path)
        assert not report.problems, (path, report.problems)
        assert report.papers == reference, path  # same content hashes: switching format re-embeds nothing
    statuses = [p.status for p in reference]
    assert statuses == ["Oral", "Poster", "Poster", "Withdrawn", NOT_ACCEPTED]
    assert "\n" in reference[1].abstract and reference[2].tldr == ""


def test_notes_are_recognised_by_content_not_by_file_name(reference, tmp_path):
    mixed = tmp_path / "export.txt"  # a corpus record and notes in one JSONL, under an unhelpful name
    lines = [RECORDS.read_text(encoding="utf-8").splitlines()[0]] + [json.dumps(n) for n in notes()[1:]]
    mixed.write_text("\n".join(lines) + "\n", encoding="utf-8")
    report = load_file(mixed)
    assert report.papers == reference and not report.problems


@pytest.mark.parametrize("venue, venueid, status", [
    ("ICLR 2026 Oral", "ICLR.cc/2026/Conference", "Oral"),
    ("ICLR 2026 Poster", "ICLR.cc/2026/Conference", "Poster"),
    ("ICLR 2026 Poster (conditional)", "", "Poster (conditional)"),
    ("Submitted to ICLR 2026", "ICLR.cc/2026/Conference/Rejected_Submission", NOT_ACCEPTED),
    ("ICLR 2026 Conference Desk Rejected Submission", "", NOT_ACCEPTED),
    ("ICLR 2026 Conference Withdrawn Submission", "", "Withdrawn"),
    ("", "ICLR.cc/2026/Conference/Withdrawn_Submission", "Withdrawn"),
    ("", "ICLR.cc/2026/Conference/Desk_Rejected_Submission", NOT_ACCEPTED),
    ("NeurIPS 2025 Workshop", "", None),
])
def test_venues_map_to_the_corpus_statuses(venue, venueid, status):
    assert venue_status(venue, venueid) == status


def test_bad_notes_are_reported_at_the_line_they_start_on(tmp_path):
    items = [
        note("Good000001"),
        note("NoAbstract", abstract=""),
        note("Review0001", replyto="Good000001", title="Official review"),
        note("Good000001", title="duplicate"),
        note("Workshop01", venue="Some Workshop 2026"),
        {"id": "Raw0000001", "title": "A corpus record", "abstract": "Abstract."},
    ]
    path = tmp_path / "notes.json"
    path.write_text(json.dumps(items, indent=2), encoding="utf-8")
    starts = [n for n, line in enumerate(path.read_text().splitlines(), start=1) if line == "  {"]
    report = load_file(path)
    assert [p.id for p in report.papers] == ["Good000001", "Workshop01", "Raw0000001"]
    skipped = {p.line: p.message for p in report.skipped}
    assert set(skipped) == {starts[1], starts[2], starts[3]}
    assert "'abstract'" in skipped[starts[1]]
    assert "not a submission" in skipped[starts[2]]
    assert "duplicate id" in skipped[starts[3]]
    warning = next(p for p in report.problems if not p.skipped)
    assert warning.line == starts[4] and "not an ICLR decision" in warning.message
    assert report.papers[1].status == "Some Workshop 2026"


def test_a_broken_json_document_is_reported_at_its_line(tmp_path):
    path = tmp_path / "notes.json"
    text = json.dumps({"notes": notes()}, indent=2).splitlines()
    text[40] += ","  # a stray comma inside the first note
    path.write_text("\n".join(text), encoding="utf-8")
    report = load_file(path)
    assert not report.papers
    [problem] = report.problems
    assert problem.line in (41, 42) and "malformed JSON" in problem.message and "nothing loaded" in problem.message


def test_jsonl_whose_first_line_is_broken_still_loads_the_rest(tmp_path):
    good = RECORDS.read_bytes().splitlines()[:2]
    for first in (b"{broken", b'["a", "list"]', b'{"id": "\xff"}'):
        path = tmp_path / "c.jsonl"
        path.write_bytes(b"\n".join([first, *good]) + b"\n")
        report = load_file(path)
        assert len(report.papers) == 2, first
        assert [p.line for p in report.skipped] == [1]


def test_csv_rows_are_checked_one_by_one(tmp_path):
    path = tmp_path / "c.csv"
    path.write_bytes(
        b"id,title,abstract,keywords,status,shoe_size\n"
        b'Csv0000001,One,"A first line.\nA second line.","a, b",Poster,44\n'  # lines 2-3
        b"Csv0000002,Two,,x,Poster,44\n"                                       # no abstract
        b"Csv0000003,Three,Three fields\n"                                     # too few fields
        b"Csv0000004,F\xffour,Abstract.,x,Oral,44\n"                           # not UTF-8
        b"\n"
        b'Csv0000005,Five,Abstract.,"k1; k2",Oral,44\n'                        # line 8
        b'Csv0000001,Dup,"Two\nlines.",,Oral,44\n'                               # lines 9-10
        b"Csv0000006,Six,Abstract.,,Oral,44,extra\n"                            # too many fields
    )
    report = load_file(path)
    assert [p.id for p in report.papers] == ["Csv0000001", "Csv0000005"]
    assert report.papers[0].abstract == "A first line.\nA second line." and report.papers[0].keywords == ("a", "b")
    assert report.papers[1].keywords == ("k1", "k2")
    skipped = {p.line: p.message for p in report.skipped}
    assert set(skipped) == {4, 5, 6, 9, 11}
    assert "'abstract'" in skipped[4] and "3 fields" in skipped[5]
    assert "UTF-8" in skipped[6] and "duplicate" in skipped[9] and "7 fields" in skipped[11]
    [warning] = [p for p in report.problems if not p.skipped]  # once for the file, not once per row
    assert warning.line == 1 and "shoe_size" in warning.message


def test_csv_without_the_required_columns_loads_nothing_and_says_why(tmp_path):
    path = tmp_path / "c.csv"
    path.write_text("id,name\nX,Y\n", encoding="utf-8")
    other = tmp_path / "ok.csv"
    shutil.copy(CSV, other)
    report = load_corpus([path, other])
    assert len(report.papers) == 5
    [problem] = report.skipped
    assert problem.path == str(path) and problem.line == 1
    assert "'title', 'abstract'" in problem.message
