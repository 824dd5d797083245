"""Would a dense, sentence-level match, or a phrase-level word match, add to the decline score? (tried on set 3; not
kept: benchmarks/README.md)

For each single-turn question of a retrieval-only eval's rows, embeds its English text and every sentence of its 4
best papers' abstracts with the shipped embedder, and computes candidate signals: the best sentence cosine (of the 4
papers, of the first only, the mean of the best two), and whole-abstract cosines of the top 10 (the best, the mean,
the gap between the 1st and 2nd and between the 1st and 10th). Two word-order signals too: the share of the
question's adjacent content-word pairs that stand side by side in a paper's title and abstract, and the longest run of
the question's content words found in the same order (the best of the 4 papers, and the first's). Prints each one's AUC (answerable against
unanswerable), then the share declined while keeping >= 0.95 when each is added to the score's own signals,
5-fold cross-validated, the mean of 5 shuffles:

    python benchmarks/decline_extra_signals.py rows3.jsonl DIR/corpus.jsonl.gz
"""

from __future__ import annotations

import argparse
import gzip
import json
import random
import sys
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
sys.path.insert(0, str(Path(__file__).resolve().parent))

from decline_fit import KEPT_TARGET, fit  # noqa: E402
from rag.answer.coverage import Signals  # noqa: E402
from rag.models.embeddings import MiniLMEmbeddings  # noqa: E402
from rag.text import STOP_WORDS, split_sentences, stem, words  # noqa: E402

MIN_SENTENCE_WORDS = 5


def unit(v) -> np.ndarray:
    v = np.asarray(v, dtype=np.float32)
    return v / (np.linalg.norm(v, axis=-1, keepdims=True) + 1e-9)


def stems(text: str) -> list[str]:
    """The content words of `text` in order, stemmed, repeats kept."""
    return [stem(w) for w in words(text) if len(w) > 1 and w not in STOP_WORDS]


def in_order(question: list[str], text: str) -> tuple[float, int]:
    """The share of the question's adjacent word pairs that `text` holds side by side, and its longest run of the
    question's words found in the same order."""
    found = stems(text)
    pairs, held = set(zip(question, question[1:])), set(zip(found, found[1:]))
    joined = f" {' '.join(found)} "
    longest = max((end - start for start in range(len(question)) for end in range(start + 1, len(question) + 1)
                   if f" {' '.join(question[start:end])} " in joined), default=0)
    return (len(pairs & held) / len(pairs) if pairs else 0.0), longest


def candidates(rows: list[dict], papers: dict[str, dict]) -> list[dict]:
    embedder = MiniLMEmbeddings()
    out = []
    for row in rows:
        q = unit(embedder.embed_query(row["query"]))
        ids = [i for i in row["retrieved"][:10] if i in papers]
        whole = unit(embedder.embed_documents([f"{papers[i]['title']}. {papers[i]['abstract']}" for i in ids])) @ q
        sentences = [(rank, s) for rank, i in enumerate(ids[:4]) for s in split_sentences(papers[i]["abstract"])
                     if len(s.split()) >= MIN_SENTENCE_WORDS]
        cos = unit(embedder.embed_documents([s for _, s in sentences])) @ q
        ordered = sorted(whole, reverse=True)
        ordered_words = [in_order(stems(row["query"]), f"{papers[i]['title']}. {papers[i]['abstract']}") for i in ids[:4]]
        out.append({"pairs_best": max(p for p, _ in ordered_words), "pairs_first": ordered_words[0][0],
                    "run_best": float(max(r for _, r in ordered_words)), "run_first": float(ordered_words[0][1]),
                    "sentence_best": float(cos.max()),
                    "sentence_best_first": float(max(c for (r, _), c in zip(sentences, cos) if r == 0)),
                    "sentence_best_two": float(np.mean(sorted(cos)[-2:])),
                    "abstract_best": float(ordered[0]), "abstract_mean10": float(np.mean(whole)),
                    "gap_1_2": float(ordered[0] - ordered[1]), "gap_1_10": float(ordered[0] - ordered[-1])})
    return out


def auc(score: np.ndarray, y: np.ndarray) -> float:
    pos, neg = score[y == 1], score[y == 0]
    return float(np.mean([(p > n) + 0.5 * (p == n) for p in pos for n in neg]))


def declined_at_target(x: np.ndarray, y: np.ndarray, named: np.ndarray, seeds: int = 5, folds: int = 5,
                       thresholds: np.ndarray = np.arange(0.02, 0.98, 0.01)) -> float:
    """Mean over shuffles of the cross-validated share declined at the most-declining threshold (of `thresholds`)
    keeping the target."""
    shares = []
    for seed in range(seeds):
        order = list(range(len(y)))
        random.Random(seed).shuffle(order)
        p = np.zeros(len(y))
        for f in range(folds):
            test = [i for k, i in enumerate(order) if k % folds == f]
            train = [i for k, i in enumerate(order) if k % folds != f]
            bias, w = fit(x[train], y[train])
            p[test] = 1 / (1 + np.exp(-(bias + x[test] @ w)))
        best = 0.0
        for t in thresholds:
            declined = (p < t) | named
            if 1 - declined[y == 1].mean() >= KEPT_TARGET:
                best = max(best, declined[y == 0].mean())
        shares.append(best)
    return float(np.mean(shares))


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("rows", help="rows of `paperchat eval --retrieval-only --rows` on a generated set")
    ap.add_argument("corpus", help="that set's test corpus (corpus.jsonl.gz)")
    args = ap.parse_args()
    papers = {}
    with gzip.open(args.corpus, "rt", encoding="utf-8") as f:
        for line in f:
            record = json.loads(line)
            papers[record["id"]] = record
    rows = [r for r in map(json.loads, Path(args.rows).read_text(encoding="utf-8").splitlines())
            if r["kind"] != "followup" and r.get("gate") and r["gate"][0]["signals"]]
    extra = candidates(rows, papers)
    y = np.array([float(r["kind"] != "unanswerable") for r in rows])
    named = np.array([bool(r["gate"][0]["unknown_names"]) for r in rows])
    base = np.array([[r["gate"][0]["signals"].get(n, 0.0) for n in Signals.names()] for r in rows])
    print(f"{len(rows)} questions, {int(y.sum())} answerable")
    for name in extra[0]:
        print(f"  AUC {name:20s} {auc(np.array([e[name] for e in extra]), y):.3f}")
    print(f"declined at kept >= {KEPT_TARGET}, cross-validated: the score's signals {declined_at_target(base, y, named):.3f}")
    for name in extra[0]:
        x = np.hstack([base, np.array([[e[name]] for e in extra])])
        print(f"  + {name:20s} {declined_at_target(x, y, named):.3f}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
