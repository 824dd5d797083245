"""Every kind of bad corpus input, through `paperchat ingest` as a user runs it: each bad line is named
with its file and line and why; every valid record is still ingested; the exit code says whether
anything was skipped; the summary counts what was skipped, by reason."""

import gzip
import json

import pytest

from rag.cli import EXIT_ERROR, EXIT_OK, EXIT_SKIPPED, main
from rag.pipeline import build_pipeline
from rag.settings import SEED_CORPUS
from tests.fakes import WordHashEmbeddings, fake_chat

SEED = [json.loads(line) for line in SEED_CORPUS.read_text().splitlines()]


def good(i: int) -> bytes:
    return json.dumps(SEED[i], ensure_ascii=False).encode()


# (line bytes, what the report must say about it, or None for a line that loads)
LINES = [
    (good(0), None),
    (b'{"id": "Broken01", "title": "Unclosed', "malformed JSON"),
    (json.dumps({**SEED[1], "title": ""}).encode(), "missing or empty 'title'"),
    (json.dumps({k: v for k, v in SEED[2].items() if k != "abstract"}).encode(), "missing or empty 'abstract'"),
    (good(0), f"duplicate id '{SEED[0]['id']}': kept the first record"),
    (json.dumps({**SEED[3], "id": "HugeAbs001", "abstract": "w" * 1_000_000}).encode(), "abstract has 1,000,000 characters"),
    (b'{"id": "Latin1xx01", "title": "Caf\xe9", "abstract": "bad bytes"}', "not valid UTF-8"),
    (json.dumps({**SEED[4], "shoe_size": 44}).encode(), None),  # unknown field: loaded, with a warning
    (b"[1, 2, 3]", "expected a JSON object, got list"),
    (json.dumps({**SEED[5], "keywords": 7}).encode(), "field 'keywords' must be a list of strings"),
    (good(6), None),
]


@pytest.fixture
def factory():
    made = []

    def make(settings):
        made.append(build_pipeline(settings, embeddings=WordHashEmbeddings(), llm=fake_chat("x")))
        return made[-1]
    make.made = made
    return make


@pytest.mark.parametrize("gz", [False, True])
def test_every_bad_line_is_named_and_the_valid_ones_are_ingested(tmp_path, capsys, factory, gz):
    data = b"\n".join(line for line, _ in LINES) + b"\n"
    path = tmp_path / ("corpus.jsonl.gz" if gz else "corpus.jsonl")
    path.write_bytes(gzip.compress(data) if gz else data)
    assert main(["ingest", str(path)], pipeline_factory=factory) == EXIT_SKIPPED
    out, err = capsys.readouterr()
    for lineno, (_, says) in enumerate(LINES, start=1):
        if says:
            assert f"{path}:{lineno}: skipped: {says}" in err, (lineno, err)
    assert f"{path}:8: warning: ignored unknown field(s) shoe_size" in err
    assert ("3 papers loaded, 8 lines skipped (2 missing or empty title/abstract/id, 1 malformed JSON, "
            "1 duplicate id, 1 abstract too long, 1 invalid UTF-8, 1 not a JSON object, 1 wrong field type)") in out, out
    assert "Traceback" not in err
    assert factory.made[-1].index.paper_ids() == {SEED[0]["id"], SEED[4]["id"], SEED[6]["id"]}


def test_a_clean_file_exits_0_and_an_empty_or_missing_one_says_so(tmp_path, capsys, factory):
    clean = tmp_path / "clean.jsonl"
    clean.write_bytes(good(0) + b"\n")
    assert main(["ingest", str(clean)], pipeline_factory=factory) == EXIT_OK
    empty = tmp_path / "empty.jsonl"
    empty.write_bytes(b"")
    assert main(["ingest", str(empty)], pipeline_factory=factory) == EXIT_SKIPPED
    assert f"{empty}:0: skipped: the file holds no records" in capsys.readouterr().err
    assert main(["ingest", str(tmp_path / "nope.jsonl")], pipeline_factory=factory) == EXIT_ERROR
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "nope.jsonl: no such file" in err


def test_more_problems_than_shown_are_still_counted_by_reason(tmp_path, capsys, factory):
    path = tmp_path / "many.jsonl"
    path.write_bytes(good(0) + b"\n" + b"{oops\n" * 30 + json.dumps({**SEED[1], "title": " "}).encode() + b"\n")
    assert main(["ingest", str(path)], pipeline_factory=factory) == EXIT_SKIPPED
    out, err = capsys.readouterr()
    assert "... and 11 more problems" in err  # 31 problems, 20 shown
    assert "1 papers loaded, 31 lines skipped (30 malformed JSON, 1 missing or empty title/abstract/id)" in out
