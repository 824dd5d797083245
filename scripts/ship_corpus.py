"""Write the shipped ICLR 2026 files of corpus/ from the public OpenReview data (CC BY 4.0):

    python scripts/ship_corpus.py PAPERS.jsonl.gz REVIEWS.jsonl.gz [--out corpus]

PAPERS: one submission per line (id, title, abstract, keywords, primary_area, status, tldr, url, pdf,
rating_avg, n_reviews), e.g. the file `paperchat fetch --venue ICLR.cc/2026/Conference --with-reviews` writes.
REVIEWS: one line per paper, {"id", "reviews": [...]} as `paperchat ingest --reviews` reads. Writes
`iclr2026.jsonl.gz` (the papers, the fields above only) and `iclr2026.scores.csv.gz` (each official review's
scores, not its text). The output is byte-for-byte the same for the same input (gzip without a timestamp).
"""

from __future__ import annotations

import argparse
import csv
import gzip
import io
import json
from pathlib import Path

FIELDS = ("id", "title", "abstract", "keywords", "primary_area", "status", "tldr", "url", "pdf", "rating_avg",
          "n_reviews")
SCORES = ("rating", "confidence", "soundness", "presentation", "contribution")


def _lines(path: Path):
    with gzip.open(path, "rt", encoding="utf-8") if path.suffix == ".gz" else path.open(encoding="utf-8") as f:
        for line in f:
            if line.strip():
                yield json.loads(line)


def _gzip(path: Path, text: str) -> None:
    with path.open("wb") as raw, gzip.GzipFile(fileobj=raw, mode="wb", mtime=0, filename="", compresslevel=9) as out:
        out.write(text.encode("utf-8"))


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("papers")
    ap.add_argument("reviews")
    ap.add_argument("--out", default=str(Path(__file__).resolve().parents[1] / "corpus"))
    args = ap.parse_args()
    out = Path(args.out)
    papers = []
    for record in _lines(Path(args.papers)):
        kept = {k: record[k] for k in FIELDS if record.get(k) not in (None, "", [])}
        if kept.get("rating_avg") is not None:
            kept["rating_avg"] = float(kept["rating_avg"])
        if kept.get("n_reviews") is not None:
            kept["n_reviews"] = int(kept["n_reviews"])
        papers.append(kept)
    papers.sort(key=lambda p: p["id"])
    _gzip(out / "iclr2026.jsonl.gz", "".join(json.dumps(p, ensure_ascii=False, sort_keys=False) + "\n" for p in papers))
    rows = io.StringIO()
    writer = csv.writer(rows, lineterminator="\n")
    writer.writerow(["paper_id", "review_id", *SCORES])
    n = 0
    for line in sorted(_lines(Path(args.reviews)), key=lambda r: r["id"]):
        for review in sorted(line["reviews"], key=lambda r: str(r.get("review_id"))):
            writer.writerow([line["id"], review["review_id"], *(review.get(s) if review.get(s) not in (None, "")
                                                                else "" for s in SCORES)])
            n += 1
    _gzip(out / "iclr2026.scores.csv.gz", rows.getvalue())
    print(f"{len(papers)} papers, {n} reviews' scores written to {out}")


if __name__ == "__main__":
    main()
