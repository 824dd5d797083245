"""Download a venue's submissions (and optionally reviews and decisions) from the OpenReview API v2.

Uses the documented REST endpoint `GET https://api2.openreview.net/notes` (params `invitation`,
`details=directReplies`, `limit`, `offset`; answer `{"notes": [...], "count": N}`) through httpx (already installed
with gradio) rather than `openreview-py`: 2.9.1 installs from PyPI but needs ten packages, seven of them new
here (pycryptodome, future, tld, pylatexenc, editdistance, pyjwt, Deprecated), for what is one paged
GET. The network sits behind `Transport.get(path, params) -> dict`, so tests replay
recorded-shape answers. Notes map to corpus records through `rag.corpus.openreview.note_to_record`.

Resumable: every page is appended to `<out>.partial` (and `<reviews>.partial`) and the next offset is
saved in `<out>.checkpoint.json`; a re-run continues there, and the final files are renamed into
place only when the last page is in.
"""

from __future__ import annotations

import json
import os
import random
import re
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Protocol

from rag.errors import PaperChatError
from rag.corpus.openreview import NOT_ACCEPTED, _value, note_to_record

API = "https://api2.openreview.net"
PAGE = 1000
REVIEW_FIELDS = ("rating", "confidence", "soundness", "presentation", "contribution",
                 "summary", "strengths", "weaknesses", "questions")
_SCORES = {"rating", "confidence", "soundness", "presentation", "contribution"}


class FetchError(PaperChatError):
    """OpenReview could not be reached or refused the request."""


class RetryableError(Exception):
    """A 429 or 5xx answer: worth trying again (after `retry_after` seconds if the server said so)."""

    def __init__(self, message: str, retry_after: float | None = None):
        super().__init__(message)
        self.retry_after = retry_after


class Transport(Protocol):
    def get(self, path: str, params: dict) -> dict: ...


class HttpxTransport:
    """The real network. Credentials (optional) buy a token once; they are never logged or shown."""

    def __init__(self, base_url: str = API, username: str | None = None, password: str | None = None,
                 timeout: float = 60.0):
        import httpx

        self._httpx, self.base_url = httpx, base_url
        self._client = httpx.Client(base_url=base_url, timeout=timeout)
        self._login = (username, password) if username and password else None

    def _authenticate(self) -> None:
        username, password = self._login
        self._login = None
        resp = self._client.post("/login", json={"id": username, "password": password})
        if resp.status_code != 200:
            raise FetchError(f"OpenReview login failed (HTTP {resp.status_code}): check "
                             "PAPERCHAT_OPENREVIEW__USERNAME and PAPERCHAT_OPENREVIEW__PASSWORD")
        self._client.headers["Authorization"] = f"Bearer {resp.json()['token']}"

    def get(self, path: str, params: dict) -> dict:
        httpx = self._httpx
        try:
            if self._login:
                self._authenticate()
            resp = self._client.get(path, params=params)
        except (httpx.ConnectError, httpx.ConnectTimeout) as exc:
            raise ConnectionError(str(exc) or type(exc).__name__) from None
        except httpx.TransportError as exc:  # read timeouts, dropped connections: try again
            raise RetryableError(f"{type(exc).__name__}: {exc}") from None
        if resp.status_code == 429 or resp.status_code >= 500:
            after = resp.headers.get("Retry-After")
            raise RetryableError(f"HTTP {resp.status_code}",
                                 float(after) if after and after.replace(".", "", 1).isdigit() else None)
        if resp.status_code != 200:
            raise FetchError(f"OpenReview answered HTTP {resp.status_code} for {path} {params}: "
                             f"{resp.text[:200]} (check the --venue id, e.g. ICLR.cc/2026/Conference)")
        return resp.json()


def get_with_retry(transport: Transport, path: str, params: dict, attempts: int = 6, base_delay: float = 2.0,
                   sleep: Callable[[float], None] = time.sleep, host: str = "api2.openreview.net") -> dict:
    """One GET, retried with exponential backoff and jitter on 429/5xx; offline is a FetchError."""
    for attempt in range(attempts):
        try:
            return transport.get(path, params)
        except ConnectionError as exc:
            raise FetchError(f"cannot reach {host} ({exc}): this machine looks offline. Connect to the "
                             "internet and run the same command again; it resumes where it stopped.") from None
        except RetryableError as exc:
            if attempt == attempts - 1:
                raise FetchError(f"OpenReview kept failing ({exc}) after {attempts} attempts; "
                                 "wait a few minutes and run the same command again (it resumes).") from None
            delay = exc.retry_after if exc.retry_after is not None else base_delay * 2 ** attempt
            sleep(delay + random.uniform(0, base_delay))
    raise AssertionError("unreachable")


def _score(value: object) -> object:
    """API v2 scores are ints for ICLR 2026; older venues say "6: marginally above" -> 6."""
    if isinstance(value, str):
        match = re.match(r"\s*(\d+)", value)
        return int(match.group(1)) if match else value
    return value


def _kind(reply: dict) -> str:
    invitations = reply.get("invitations") or [reply.get("invitation", "")]
    return next((i.rsplit("/-/", 1)[-1] for i in invitations if "/-/" in i), "")


def review_record(reply: dict) -> dict:
    """One Official_Review reply -> the reviews.jsonl shape (scores as ints, texts as strings)."""
    content = reply.get("content") or {}
    out = {}
    for name in REVIEW_FIELDS:
        value = _value(content.get(name))
        out[name] = _score(value) if name in _SCORES else value
    out["review_id"] = reply.get("id")
    return out


def decision_status(decision: str) -> str | None:
    """'Accept (Oral)' -> 'Oral', 'Reject' -> the not-accepted status; None for wording we do not know."""
    match = re.fullmatch(r"\s*Accept\s*\((\w+)\)\s*", decision or "", re.IGNORECASE)
    if match:
        return match.group(1).capitalize()
    return NOT_ACCEPTED if "reject" in (decision or "").lower() else None


@dataclass
class FetchResult:
    papers: int = 0
    reviews: int = 0
    skipped: list[str] = field(default_factory=list)
    resumed_from: int = 0


def _paths(out: Path, with_reviews: bool) -> tuple[Path | None, Path]:
    reviews = out.with_name(out.name.removesuffix(".jsonl") + ".reviews.jsonl") if with_reviews else None
    return reviews, out.with_name(out.name + ".checkpoint.json")


def _partial(path: Path) -> Path:
    return path.with_name(path.name + ".partial")


def fetch_venue(transport: Transport, venue: str, out: str | Path, *, accepted_only: bool = False,
                with_reviews: bool = False, page: int | None = None, progress: Callable[[int, int], None] | None = None,
                sleep: Callable[[float], None] = time.sleep) -> FetchResult:
    """Write `out` (corpus JSONL) and, with reviews, `<stem>.reviews.jsonl`; resumes an interrupted run."""
    out, page = Path(out), page or PAGE
    reviews_path, ckpt_path = _paths(out, with_reviews)
    params = {"invitation": f"{venue}/-/Submission", "limit": page}
    if accepted_only:
        params["content.venueid"] = venue  # accepted papers carry the conference id as venueid
    if with_reviews:
        params["details"] = "directReplies"  # reviews and decisions reply to the paper itself: no threads
    result, offset = FetchResult(), 0
    key = {"venue": venue, "params": {k: v for k, v in params.items() if k != "limit"}}
    if ckpt_path.is_file() and _partial(out).is_file():
        saved = json.loads(ckpt_path.read_text())
        if saved.get("key") == key:
            offset = result.resumed_from = saved["offset"]
    if offset == 0:
        for p in (_partial(out), reviews_path and _partial(reviews_path)):
            if p and p.exists():
                p.unlink()
    total = None
    while total is None or offset < total:
        answer = get_with_retry(transport, "/notes", {**params, "offset": offset}, sleep=sleep)
        notes = answer.get("notes")
        if not isinstance(notes, list):
            raise FetchError(f"OpenReview's answer has no 'notes' list (keys: {sorted(answer)}); "
                             "is the API v2 endpoint right?")
        total = answer.get("count", offset + len(notes))
        papers, reviews = [], []
        for note in notes:
            record, extra = _paper(note, with_reviews, accepted_only, result)
            if record:
                papers.append(record)
                if extra is not None:
                    reviews.append(extra)
        with open(_partial(out), "a", encoding="utf-8") as f:
            f.writelines(json.dumps(r, ensure_ascii=False) + "\n" for r in papers)
        if reviews_path:
            with open(_partial(reviews_path), "a", encoding="utf-8") as f:
                f.writelines(json.dumps(r, ensure_ascii=False) + "\n" for r in reviews)
        offset += len(notes)
        ckpt_path.write_text(json.dumps({"key": key, "offset": offset}))
        if progress:
            progress(min(offset, total), total)
        if not notes:
            break
    result.papers = _finish(_partial(out), out)
    if reviews_path:
        result.reviews = _finish(_partial(reviews_path), reviews_path)
    ckpt_path.unlink()
    return result


ACCEPTED = ("Oral", "Poster", "Spotlight")  # each also "... (conditional)", as ICLR 2026 accepted some


def _paper(note: dict, with_reviews: bool, accepted_only: bool, result: FetchResult):
    try:
        record, warnings = note_to_record(note)
    except (ValueError, KeyError, TypeError) as exc:
        result.skipped.append(f"note {note.get('id')!r}: {exc}")
        return None, None
    details = note.get("details") or {}
    replies = details.get("directReplies") or details.get("replies") or []
    decisions = [_value((r.get("content") or {}).get("decision")) for r in replies if _kind(r) == "Decision"]
    status = decision_status(decisions[-1]) if decisions else None
    if status:
        record["status"] = status
    if accepted_only and str(record.get("status")).removesuffix(" (conditional)") not in ACCEPTED:
        return None, None
    if not with_reviews:
        return record, None
    reviews = [review_record(r) for r in replies if _kind(r) == "Official_Review"]
    return record, {"id": record["id"], "reviews": reviews}


def _finish(partial: Path, final: Path) -> int:
    """Dedupe by id (a page re-fetched after a crash appears twice: the last copy wins) and rename into place
    atomically. Streams: two passes over the file, only the ids held in memory (ICLR 2026's reviews are 249 MB).
    Lines are split on "\n" only: texts hold U+2028 and NEL, where str.splitlines() would cut them."""
    last: dict[str, int] = {}
    with open(partial, encoding="utf-8", newline="\n") as f:
        for n, line in enumerate(f):
            if line.strip():
                last[json.loads(line)["id"]] = n
    keep = set(last.values())
    tmp = final.with_name(final.name + ".tmp")
    with open(partial, encoding="utf-8", newline="\n") as f, open(tmp, "w", encoding="utf-8", newline="\n") as out:
        out.writelines(line if line.endswith("\n") else line + "\n" for n, line in enumerate(f) if n in keep)
    os.replace(tmp, final)
    partial.unlink()
    return len(last)
