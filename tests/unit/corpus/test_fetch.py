"""`paperchat fetch` against replayed OpenReview API v2 answers (no network).

The replayed shape is that of `GET https://api2.openreview.net/notes?invitation=<venue>/-/Submission
&details=directReplies&limit=..&offset=..`: `{"notes": [...], "count": <total>}`, where each note is
`{"id", "forum" (= id for a submission), "number", "cdate", "invitations": ["ICLR.cc/2026/Conference/-/Submission",
...], "content": {"title": {"value"}, "abstract": {"value"}, "keywords": {"value": [...]}, "primary_area": {"value"},
"TLDR": {"value"}, "venue": {"value": "ICLR 2026 Poster"}, "venueid": {"value": "ICLR.cc/2026/Conference"}},
"details": {"directReplies": [...]}}` (`"replies"` with details=replies, which adds the discussion threads). Replies carry `invitations` ending in `/-/Official_Review` (content
rating/confidence/soundness/presentation/contribution as `{"value": int}`, summary/strengths/weaknesses/questions
as `{"value": str}`) or `/-/Decision` (content `{"decision": {"value": "Accept (Oral)"}}`), plus `replyto`/`forum`.
Notes are built from the committed seed papers (corpus/iclr2026_seed.jsonl); the reviews are synthetic.
"""

from __future__ import annotations

import json
from pathlib import Path

import httpx
import pytest

from rag import cli
from rag.corpus import fetch
from rag.corpus.fetch import FetchError, RetryableError, fetch_venue

SEED = Path(__file__).resolve().parents[3] / "corpus" / "iclr2026_seed.jsonl"
VENUE = "ICLR.cc/2026/Conference"


def _papers() -> list[dict]:
    return [json.loads(line) for line in SEED.read_text().splitlines() if line.strip()]


def _note(paper: dict, n: int) -> dict:
    pid = paper["id"]
    replies = [
        {"id": f"{pid}_r{i}", "forum": pid, "replyto": pid, "invitations": [f"{VENUE}/Submission{n}/-/Official_Review"],
         "content": {"rating": {"value": 2 + 2 * i}, "confidence": {"value": 3}, "soundness": {"value": 3},
                     "presentation": {"value": 2}, "contribution": {"value": 3},
                     "summary": {"value": f"summary {i} of {pid}"}, "strengths": {"value": "s"},
                     "weaknesses": {"value": "w"}, "questions": {"value": "q"}}}
        for i in range(n % 3 + 1)
    ]
    replies.append({"id": f"{pid}_c", "forum": pid, "replyto": pid,
                    "invitations": [f"{VENUE}/Submission{n}/-/Official_Comment"],
                    "content": {"comment": {"value": "x"}}})
    if n % 2 == 0:
        replies.append({"id": f"{pid}_d", "forum": pid, "replyto": pid,
                        "invitations": [f"{VENUE}/Submission{n}/-/Decision"],
                        "content": {"decision": {"value": "Accept (Oral)" if n % 4 == 0 else "Reject"}}})
    return {"id": pid, "forum": pid, "number": n, "cdate": 1758000000000 + n,
            "invitations": [f"{VENUE}/-/Submission"],
            "content": {"title": {"value": paper["title"]}, "abstract": {"value": paper["abstract"]},
                        "keywords": {"value": list(paper.get("keywords") or [])},
                        "primary_area": {"value": paper.get("primary_area", "")},
                        "venue": {"value": "Submitted to ICLR 2026"}, "venueid": {"value": f"{VENUE}/Submission"}},
            "details": {"directReplies": replies}}


class Replay:
    """Answers /notes pages from the seed notes; `fail` maps a call number to an exception to raise first."""

    def __init__(self, fail: dict[int, BaseException] | None = None):
        self.notes = [_note(p, i + 1) for i, p in enumerate(_papers())]
        self.fail, self.calls = dict(fail or {}), []

    def get(self, path: str, params: dict) -> dict:
        self.calls.append(dict(params))
        if len(self.calls) in self.fail:
            raise self.fail.pop(len(self.calls))
        assert path == "/notes" and params["invitation"] == f"{VENUE}/-/Submission"
        assert params.get("details") in (None, "directReplies")
        start = params["offset"]
        return {"notes": self.notes[start:start + params["limit"]], "count": len(self.notes)}


def _lines(path: Path) -> list[dict]:
    return [json.loads(line) for line in path.read_text().splitlines()]


def test_pages_until_count_and_writes_every_paper_once(tmp_path):
    replay = Replay()
    result = fetch_venue(replay, VENUE, tmp_path / "out.jsonl", page=5, sleep=lambda s: None)
    ids = [r["id"] for r in _lines(tmp_path / "out.jsonl")]
    assert ids == [p["id"] for p in _papers()] and result.papers == 19
    assert [c["offset"] for c in replay.calls] == [0, 5, 10, 15]
    assert not list(tmp_path.glob("*.partial")) and not list(tmp_path.glob("*.checkpoint.json"))


def test_rate_limit_is_retried_after_retry_after(tmp_path):
    slept = []
    replay = Replay(fail={2: RetryableError("HTTP 429", retry_after=7), 3: RetryableError("HTTP 503")})
    fetch_venue(replay, VENUE, tmp_path / "out.jsonl", page=10, sleep=slept.append)
    assert len(_lines(tmp_path / "out.jsonl")) == 19
    assert 7 <= slept[0] < 9 and 4 <= slept[1] < 6  # Retry-After honoured, then 2 s * 2**1 backoff + jitter
    assert [c["offset"] for c in replay.calls] == [0, 10, 10, 10]


def test_gives_up_after_bounded_attempts(tmp_path):
    replay = Replay(fail={i: RetryableError("HTTP 502") for i in range(1, 10)})
    with pytest.raises(FetchError, match="after 6 attempts"):
        fetch_venue(replay, VENUE, tmp_path / "out.jsonl", sleep=lambda s: None)
    assert len(replay.calls) == 6


@pytest.mark.parametrize("interruption", [KeyboardInterrupt(), ConnectionError("reset")])
def test_interrupted_after_page_two_resumes_with_every_paper_once(tmp_path, interruption):
    out = tmp_path / "out.jsonl"
    with pytest.raises((KeyboardInterrupt, FetchError)):
        fetch_venue(Replay(fail={3: interruption}), VENUE, out, page=4, with_reviews=True, sleep=lambda s: None)
    assert not out.exists() and (tmp_path / "out.jsonl.partial").exists()
    second = Replay()
    result = fetch_venue(second, VENUE, out, page=4, with_reviews=True, sleep=lambda s: None)
    assert result.resumed_from == 8 and second.calls[0]["offset"] == 8
    ids = [r["id"] for r in _lines(out)]
    assert sorted(ids) == sorted(p["id"] for p in _papers()) and len(ids) == len(set(ids))
    assert len(_lines(tmp_path / "out.reviews.jsonl")) == 19


def test_a_changed_request_does_not_resume_a_stale_checkpoint(tmp_path):
    out = tmp_path / "out.jsonl"
    with pytest.raises(KeyboardInterrupt):
        fetch_venue(Replay(fail={2: KeyboardInterrupt()}), VENUE, out, page=4, sleep=lambda s: None)
    result = fetch_venue(Replay(), VENUE, out, page=4, with_reviews=True, sleep=lambda s: None)
    assert result.resumed_from == 0 and len(_lines(out)) == 19


def test_decisions_join_status_and_reviews_attach_to_their_paper(tmp_path):
    out = tmp_path / "iclr.jsonl"
    fetch_venue(Replay(), VENUE, out, with_reviews=True, sleep=lambda s: None)
    papers = _papers()
    status = {r["id"]: r["status"] for r in _lines(out)}
    assert status[papers[3]["id"]] == "Oral"  # number 4: Accept (Oral)
    assert status[papers[1]["id"]].startswith("Not accepted")  # number 2: Reject
    assert status[papers[0]["id"]].startswith("Not accepted")  # no decision: "Submitted to ICLR 2026"
    reviews = {r["id"]: r["reviews"] for r in _lines(tmp_path / "iclr.reviews.jsonl")}
    for n, paper in enumerate(papers, start=1):
        got = reviews[paper["id"]]
        assert len(got) == n % 3 + 1 and all(r["review_id"].startswith(paper["id"]) for r in got)
        assert got[0]["summary"] == f"summary 0 of {paper['id']}"
    shared = Path("/work/shared/data/reviews.jsonl.gz")  # the shape review ingestion reads, field for field
    expected = ["rating", "confidence", "soundness", "presentation", "contribution", "summary", "strengths",
                "weaknesses", "questions", "review_id"]
    if shared.exists():
        import gzip

        with gzip.open(shared, "rt") as f:
            expected = list(json.loads(f.readline())["reviews"][0])
    assert list(got[0]) == expected and isinstance(got[0]["rating"], int)


def test_accepted_only_keeps_accepted_papers(tmp_path):
    replay = Replay()
    fetch_venue(replay, VENUE, tmp_path / "a.jsonl", accepted_only=True, with_reviews=True, sleep=lambda s: None)
    assert replay.calls[0]["content.venueid"] == VENUE
    assert {r["status"] for r in _lines(tmp_path / "a.jsonl")} == {"Oral"}


def test_texts_with_unicode_line_separators_survive(tmp_path):
    """Real reviews hold U+2028 and NEL (\\x85) inside their text: JSON keeps them raw (ensure_ascii=False), and
    str.splitlines() would cut a line there; the whole ICLR 2026 replay (benchmarks/fetch_replay.py) did."""
    replay = Replay()
    odd = "first\u2028second\x85third\u2029fourth\x1cfifth"
    replay.notes[0]["details"]["directReplies"][0]["content"]["weaknesses"] = {"value": odd}
    replay.notes[1]["content"]["abstract"] = {"value": f"An abstract {odd}."}
    out = tmp_path / "o.jsonl"
    fetch_venue(replay, VENUE, out, with_reviews=True, sleep=lambda s: None)
    reviews = [json.loads(line) for line in (tmp_path / "o.reviews.jsonl").read_text().split("\n") if line]
    papers = [json.loads(line) for line in out.read_text().split("\n") if line]
    assert len(reviews) == len(papers) == 19
    assert reviews[0]["reviews"][0]["weaknesses"] == odd and papers[1]["abstract"] == f"An abstract {odd}."


def test_accepted_only_keeps_conditionally_accepted_papers(tmp_path):
    replay = Replay()
    for note, venue in zip(replay.notes, ["ICLR 2026 Poster (conditional)", "ICLR 2026 Oral (conditional)"]):
        note["content"]["venue"] = {"value": venue}
        note["details"] = {"directReplies": []}  # no decision reply: the venue says it
    fetch_venue(replay, VENUE, tmp_path / "a.jsonl", accepted_only=True, sleep=lambda s: None)
    assert {r["status"] for r in _lines(tmp_path / "a.jsonl")} >= {"Poster (conditional)", "Oral (conditional)"}


def test_old_style_string_scores_become_ints():
    assert fetch.review_record({"id": "r", "content": {"rating": {"value": "6: marginally above"}}})["rating"] == 6


def test_offline_is_one_clear_line_and_exit_2(tmp_path, monkeypatch, capsys):
    class Offline(fetch.HttpxTransport):
        def __init__(self, *a, **k):
            super().__init__(*a, **k)
            self._client = httpx.Client(transport=httpx.MockTransport(self._refuse), base_url=self.base_url)

        @staticmethod
        def _refuse(request):
            raise httpx.ConnectError("[Errno -3] Temporary failure in name resolution", request=request)

    monkeypatch.setattr(fetch, "HttpxTransport", Offline)
    monkeypatch.setenv("PAPERCHAT_OPENREVIEW__USERNAME", "me@example.org")
    monkeypatch.setenv("PAPERCHAT_OPENREVIEW__PASSWORD", "hunter2-secret")
    monkeypatch.chdir(tmp_path)
    code = cli.main(["fetch", "--venue", VENUE], pipeline_factory=lambda s: pytest.fail("fetch needs no pipeline"))
    err = capsys.readouterr()
    assert code == 2
    lines = err.err.strip().splitlines()
    assert lines[-1].startswith("paperchat: error: cannot reach api2.openreview.net") and "offline" in lines[-1]
    assert "Traceback" not in err.err and "hunter2-secret" not in err.out + err.err


def test_http_errors_never_show_the_password(tmp_path, monkeypatch, capsys):
    class Denied(fetch.HttpxTransport):
        def __init__(self, *a, **k):
            super().__init__(*a, **k)
            self._client = httpx.Client(transport=httpx.MockTransport(
                lambda r: httpx.Response(403, text=r.content.decode() or "forbidden")), base_url=self.base_url)

    monkeypatch.setattr(fetch, "HttpxTransport", Denied)
    monkeypatch.setenv("PAPERCHAT_OPENREVIEW__USERNAME", "me@example.org")
    monkeypatch.setenv("PAPERCHAT_OPENREVIEW__PASSWORD", "hunter2-secret")
    monkeypatch.chdir(tmp_path)
    code = cli.main(["fetch", "--venue", VENUE])
    err = capsys.readouterr()
    assert code == 2 and "login failed" in err.err and "hunter2-secret" not in err.out + err.err


def test_429_answer_becomes_retryable_with_retry_after():
    t = fetch.HttpxTransport()
    t._client = httpx.Client(transport=httpx.MockTransport(
        lambda r: httpx.Response(429, headers={"Retry-After": "12"})), base_url=t.base_url)
    with pytest.raises(RetryableError) as info:
        t.get("/notes", {})
    assert info.value.retry_after == 12.0
    t._client = httpx.Client(transport=httpx.MockTransport(lambda r: httpx.Response(404, text="no")),
                             base_url=t.base_url)
    with pytest.raises(FetchError, match="HTTP 404"):
        t.get("/notes", {})


def test_live_tests_variable_does_not_stop_the_app(monkeypatch):
    from rag.settings import load_settings

    monkeypatch.setenv("PAPERCHAT_LIVE_TESTS", "1")
    assert load_settings(env_file=None).openreview.base_url.startswith("https://")


def test_fetch_command_writes_corpus_and_reviews_then_resumes_after_ctrl_c(tmp_path, monkeypatch, capsys):
    replays = iter([Replay(fail={2: KeyboardInterrupt()}), Replay()])
    monkeypatch.setattr(fetch, "HttpxTransport", lambda *a, **k: next(replays))
    monkeypatch.setattr(fetch, "PAGE", 10)
    monkeypatch.chdir(tmp_path)
    assert cli.main(["fetch", "--venue", VENUE, "--with-reviews"]) == 130
    assert "run the same command again to resume" in capsys.readouterr().err
    assert cli.main(["fetch", "--venue", VENUE, "--with-reviews"]) == 0
    captured = capsys.readouterr()
    assert "resumed at note 10" in captured.out
    assert "notes" not in captured.err  # the progress bar is quiet when stderr is not a terminal
    assert len(_lines(tmp_path / "iclr2026.jsonl")) == 19 and len(_lines(tmp_path / "iclr2026.reviews.jsonl")) == 19


def test_a_page_written_but_not_checkpointed_is_not_duplicated(tmp_path):
    out = tmp_path / "out.jsonl"
    with pytest.raises(KeyboardInterrupt):
        fetch_venue(Replay(fail={3: KeyboardInterrupt()}), VENUE, out, page=4, sleep=lambda s: None)
    ckpt = tmp_path / "out.jsonl.checkpoint.json"
    saved = json.loads(ckpt.read_text())
    ckpt.write_text(json.dumps({**saved, "offset": 4}))  # killed after page 2 was appended, before its checkpoint
    fetch_venue(Replay(), VENUE, out, page=4, sleep=lambda s: None)
    ids = [r["id"] for r in _lines(out)]
    assert len(ids) == 19 == len(set(ids))
