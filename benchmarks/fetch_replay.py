"""`paperchat fetch` on the whole of ICLR 2026, replayed: what the download carries, what fetch's own work
costs, and whether the files it writes hold the conference as the data files do.

    .venv/bin/python benchmarks/fetch_replay.py ../shared/data/iclr2026.jsonl.gz ../shared/data/reviews.jsonl.gz

No internet here, so the network is replaced by the seam `rag.corpus.fetch` already has (a Transport): every paper
becomes an OpenReview API v2 submission note (the shape documented in tests/unit/corpus/test_fetch.py) with its
official reviews and a decision as direct replies, pages of 1,000 are serialised to JSON bytes (the body the
server would send, uncompressed) and parsed back on each request, as httpx would. Measured: the bytes of
those pages, fetch_venue's own time and peak memory, the sizes of the files it writes, and a field-by-field
comparison of those files with the data files. Not measured: the network time, which depends on
OpenReview's server.
"""

from __future__ import annotations

import argparse
import gzip
import json
import resource
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from rag.corpus.fetch import PAGE, fetch_venue  # noqa: E402
from rag.corpus.openreview import NOT_ACCEPTED  # noqa: E402

VENUE = "ICLR.cc/2026/Conference"
SCORES = ("rating", "confidence", "soundness", "presentation", "contribution")
TEXTS = ("summary", "strengths", "weaknesses", "questions")
# The corpus status -> (content.venue, content.venueid suffix, the Decision reply's text or None).
VENUES = {"Oral": ("ICLR 2026 Oral", "", "Accept (Oral)"), "Poster": ("ICLR 2026 Poster", "", "Accept (Poster)"),
          "Oral (conditional)": ("ICLR 2026 Oral (conditional)", "", None),
          "Poster (conditional)": ("ICLR 2026 Poster (conditional)", "", None),
          "Withdrawn": ("Withdrawn Submission", "/Withdrawn_Submission", None),
          NOT_ACCEPTED: ("Submitted to ICLR 2026", "/Rejected_Submission", "Reject")}


def note(paper: dict, reviews: list[dict]) -> dict:
    pid, number = paper["id"], paper.get("number") or 0
    venue, suffix, decision = VENUES[paper["status"]]
    replies = [{"id": r["review_id"], "forum": pid, "replyto": pid,
                "invitations": [f"{VENUE}/Submission{number}/-/Official_Review"],
                "content": {name: {"value": r.get(name)} for name in SCORES + TEXTS}} for r in reviews]
    if decision:
        replies.append({"id": f"{pid}_decision", "forum": pid, "replyto": pid,
                        "invitations": [f"{VENUE}/Submission{number}/-/Decision"],
                        "content": {"decision": {"value": decision}}})
    content = {"title": {"value": paper["title"]}, "abstract": {"value": paper["abstract"]},
               "keywords": {"value": paper.get("keywords") or []}, "primary_area": {"value": paper.get("primary_area", "")},
               "venue": {"value": venue}, "venueid": {"value": VENUE + suffix}}
    if paper.get("tldr"):
        content["TLDR"] = {"value": paper["tldr"]}
    return {"id": pid, "forum": pid, "number": number, "invitations": [f"{VENUE}/-/Submission"],
            "content": content, "details": {"directReplies": replies}}


class PagedReplay:
    """Serves `/notes` pages as JSON bytes parsed on each request; counts requests and bytes."""

    def __init__(self, notes: list[dict]):
        self.notes, self.requests, self.bytes = notes, 0, 0

    def get(self, path: str, params: dict) -> dict:
        start = params["offset"]
        body = json.dumps({"notes": self.notes[start:start + params["limit"]], "count": len(self.notes)}).encode()
        self.requests += 1
        self.bytes += len(body)
        return json.loads(body)


def rss_mb() -> float:
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("corpus")
    ap.add_argument("reviews")
    args = ap.parse_args()
    papers = [json.loads(line) for line in gzip.open(args.corpus, "rt", encoding="utf-8")]
    by_paper: dict[str, list[dict]] = {}
    for line in gzip.open(args.reviews, "rt", encoding="utf-8"):
        obj = json.loads(line)
        by_paper.setdefault(obj["id"], []).extend(obj["reviews"])
    replay = PagedReplay([note(p, by_paper.get(p["id"], [])) for p in papers])
    before = rss_mb()
    with tempfile.TemporaryDirectory() as tmp:
        out = Path(tmp) / "iclr2026.jsonl"
        t0 = time.monotonic()
        result = fetch_venue(replay, VENUE, out, with_reviews=True, sleep=lambda s: None)
        seconds = time.monotonic() - t0
        peak = rss_mb()
        corpus_bytes, reviews_bytes = out.stat().st_size, out.with_name("iclr2026.reviews.jsonl").stat().st_size
        got = {r["id"]: r for r in map(json.loads, out.open(encoding="utf-8"))}
        got_reviews = {r["id"]: r["reviews"] for r in map(json.loads, out.with_name("iclr2026.reviews.jsonl").open())}
        t1 = time.monotonic()
        accepted = fetch_venue(PagedReplay([n for n, p in zip(replay.notes, papers)
                                            if p["status"] in ("Oral", "Poster", "Oral (conditional)",
                                                               "Poster (conditional)")]),
                               VENUE, Path(tmp) / "accepted.jsonl", accepted_only=True, sleep=lambda s: None)
        accepted_s = time.monotonic() - t1

    fields = ("title", "abstract", "keywords", "primary_area", "status", "url")
    differ = {f: sum(1 for p in papers if got.get(p["id"], {}).get(f, "" if f != "keywords" else []) !=
                     (p.get(f) or ([] if f == "keywords" else ""))) for f in fields}
    tldr = sum(1 for p in papers if (got.get(p["id"], {}).get("tldr") or "") != (p.get("tldr") or ""))
    reviews_same = sum(1 for pid, rs in by_paper.items() if pid in got and
                       [{k: r.get(k) for k in SCORES + TEXTS + ("review_id",)} for r in rs] ==
                       [{k: r.get(k) for k in SCORES + TEXTS + ("review_id",)} for r in got_reviews.get(pid, [])])
    n_reviews = sum(len(rs) for rs in got_reviews.values())
    print(f"papers in the data file: {len(papers):,}; reviews: {sum(len(v) for v in by_paper.values()):,} "
          f"of {sum(1 for v in by_paper.values() if v):,} papers")
    print(f"requests: {replay.requests} pages of {PAGE:,} notes; bytes the server would send (JSON, uncompressed): "
          f"{replay.bytes / 1e6:,.1f} MB")
    print(f"fetch_venue (parse pages, map notes, write, dedupe, rename): {seconds:.1f} s; peak RSS {peak:,.0f} MB, "
          f"{peak - before:,.0f} MB above the {before:,.0f} MB the replayed notes took before it (page bodies included)")
    print(f"written: {result.papers:,} papers ({corpus_bytes / 1e6:,.1f} MB), {n_reviews:,} reviews of "
          f"{sum(1 for v in got_reviews.values() if v):,} papers ({reviews_bytes / 1e6:,.1f} MB, a line for each of "
          f"{len(got_reviews):,} papers); skipped notes: {len(result.skipped)}")
    print("papers whose field differs from the data file: " + ", ".join(f"{f} {n}" for f, n in differ.items())
          + f", tldr {tldr}; papers missing: {sum(1 for p in papers if p['id'] not in got)}")
    print(f"papers whose reviews equal the data file's, field for field and in order: {reviews_same:,} "
          f"of {len(by_paper):,}")
    print(f"--accepted-only: {accepted.papers:,} papers in {accepted_s:.1f} s")


if __name__ == "__main__":
    main()
