"""One real download from OpenReview: runs only with PAPERCHAT_LIVE_TESTS=1 and the API reachable.

    PAPERCHAT_LIVE_TESTS=1 .venv/bin/python -m pytest tests/integration/test_fetch_live.py -q
"""

from __future__ import annotations

import json
import os

import pytest

from rag.corpus.papers import load_file
from rag.corpus.fetch import API, HttpxTransport, fetch_venue

pytestmark = pytest.mark.skipif(os.environ.get("PAPERCHAT_LIVE_TESTS") != "1",
                                reason="live OpenReview test: set PAPERCHAT_LIVE_TESTS=1")


@pytest.fixture
def real_network(monkeypatch):
    """The suite's network guard (tests/netguard) is lifted for this opted-in test only."""
    import socket

    import sitecustomize as netguard

    monkeypatch.setattr(socket.socket, "connect", netguard._real_connect)
    monkeypatch.setattr(socket.socket, "connect_ex", netguard._real_connect_ex)
    monkeypatch.setattr(socket, "getaddrinfo", netguard._real_getaddrinfo)


class FirstPages(HttpxTransport):
    """The real API, but only two small pages: a test, not a conference download."""

    def get(self, path, params):
        answer = super().get(path, params)
        answer["count"] = min(answer.get("count", 0), 2 * params["limit"])
        return answer


def test_two_live_pages_of_iclr2026_with_reviews(tmp_path, real_network):
    import httpx

    try:
        httpx.get(API + "/notes", params={"id": "RnRHNEeqvI"}, timeout=10)
    except httpx.TransportError as exc:
        pytest.skip(f"OpenReview API not reachable: {exc}")
    out = tmp_path / "live.jsonl"
    result = fetch_venue(FirstPages(), "ICLR.cc/2026/Conference", out, with_reviews=True, page=5)
    assert result.papers == 10
    loaded = load_file(out)
    assert len(loaded.papers) == 10 and all(p.abstract for p in loaded.papers)
    reviews = [json.loads(line) for line in (tmp_path / "live.reviews.jsonl").read_text().splitlines()]
    assert {r["id"] for r in reviews} == {p.id for p in loaded.papers}
    assert any(r["reviews"] and isinstance(r["reviews"][0]["rating"], int) for r in reviews)
