import gzip
import json

import pytest

from rag.corpus.papers import MAX_ABSTRACT_CHARS, load_corpus, load_jsonl
from rag.errors import CorpusError
from rag.settings import SEED_CORPUS


def record(pid="Abc123XYZ0", **kw):
    base = {"id": pid, "title": "A Title", "abstract": "An abstract.", "keywords": ["k1"], "status": "Poster"}
    base.update(kw)
    return json.dumps(base)


def test_shipped_seed_corpus_is_valid():
    report = load_jsonl(SEED_CORPUS)
    assert len(report.papers) == 19 and not report.problems
    drope = next(p for p in report.papers if p.id == "RlPVSeKjoc")
    assert "Positional Embedding" in drope.title and drope.status == "Poster"
    assert drope.link == "https://openreview.net/forum?id=RlPVSeKjoc"


def test_bad_lines_are_reported_with_line_numbers_and_the_rest_is_kept(tmp_path):
    path = tmp_path / "c.jsonl"
    lines = [
        record("Good000001"),
        "{not json",
        record("NoAbstract1", abstract="  "),
        record("Good000001", title="dup"),
        json.dumps(["a", "list"]),
        record("Good000002", keywords="a, b; c", extra_field=1),
        record("Huge000001", abstract="x" * (MAX_ABSTRACT_CHARS + 1)),
    ]
    path.write_text("\n".join(lines) + "\n\n")
    report = load_jsonl(path)
    assert [p.id for p in report.papers] == ["Good000001", "Good000002"]
    skipped = {p.line: p.message for p in report.skipped}
    assert set(skipped) == {2, 3, 4, 5, 7}
    assert "malformed JSON" in skipped[2]
    assert "'abstract'" in skipped[3]
    assert "duplicate id" in skipped[4]
    assert "JSON object" in skipped[5]
    assert "full text" in skipped[7]
    assert report.papers[1].keywords == ("a", "b", "c")
    warnings = [p for p in report.problems if not p.skipped]
    assert len(warnings) == 1 and warnings[0].line == 6 and "extra_field" in warnings[0].message
    assert str(report.skipped[0]).startswith(f"{path}:2: skipped:")


def test_invalid_utf8_line_is_skipped(tmp_path):
    path = tmp_path / "c.jsonl"
    path.write_bytes(record("Good000001").encode() + b"\n" + b'{"id": "\xff\xfe"}\n' + record("Good000002").encode())
    report = load_jsonl(path)
    assert [p.id for p in report.papers] == ["Good000001", "Good000002"]
    assert report.skipped[0].line == 2 and "UTF-8" in report.skipped[0].message


def test_gzip_and_several_files(tmp_path):
    a = tmp_path / "a.jsonl.gz"
    with gzip.open(a, "wt") as f:
        f.write(record("Gz00000001") + "\n")
    b = tmp_path / "b.jsonl"
    b.write_text(record("Pl00000001") + "\n" + record("Gz00000001") + "\n")
    report = load_corpus([a, b])
    assert [p.id for p in report.papers] == ["Gz00000001", "Pl00000001"]
    assert "duplicate" in report.skipped[0].message and report.skipped[0].path == str(b)


def test_missing_path_and_empty_file(tmp_path):
    with pytest.raises(CorpusError, match="no such file"):
        load_jsonl(tmp_path / "nope.jsonl")
    empty = tmp_path / "empty.jsonl"
    empty.write_text("")
    report = load_jsonl(empty)
    assert not report.papers and "no records" in report.problems[0].message


def test_content_hash_changes_with_the_abstract():
    from rag.corpus.papers import Paper

    a = Paper(id="x", title="t", abstract="one")
    assert a.content_hash() == Paper(id="x", title="t", abstract="one").content_hash()
    assert a.content_hash() != Paper(id="x", title="t", abstract="two").content_hash()
