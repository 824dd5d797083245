"""Fit the decline score (rag.answer.coverage.DeclineScore) on a generated question set, print its curve.

The rows come from the retrieval-only eval of a generated set, which records, for every question and every
follow-up turn, the signals of the check before the model:

    paperchat evalset --seed 1 --n 320 --out /tmp/set1
    PAPERCHAT_DATA_DIR=/tmp/set1/data paperchat eval /tmp/set1/questions.jsonl --retrieval-only \
        --corpus /tmp/set1/corpus.jsonl.gz --rows /tmp/set1/rows.jsonl
    python benchmarks/decline_fit.py /tmp/set1/rows.jsonl             # fit, curve, operating point
    python benchmarks/decline_fit.py /tmp/small/rows.jsonl --apply     # the shipped score on other rows

An answerable question is a lookup, a comparison or a follow-up turn; an unanswerable one was written about papers
left out of the test index, or pairs a real topic with a platform or domain no paper mentions. Questions a name
already declines (no indexed paper mentions it) are counted as declined and left out of the fit. The figures at
the chosen point are from 5-fold cross-validation (each fold scored by a fit on the other four), so the printed
curve is not the fit's own training data; the weights printed at the end are fitted on all rows.
"""

from __future__ import annotations

import argparse
import json
import random
import re
import sys
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from rag.answer.coverage import DeclineScore, Signals  # noqa: E402
from rag.settings import MEASURED_DECLINE  # noqa: E402

KEPT_TARGET = 0.95  # the share of answerable questions the operating point must keep (the bar)
L2 = 1e-2
THRESHOLDS = [round(t, 2) for t in np.arange(0.05, 0.96, 0.05)]


def load_rows(paths: list[str]) -> list[dict]:
    """One example per question or turn: (signals or None when a name declined it, answerable?, lang, kind)."""
    out = []
    for path in paths:
        for line in Path(path).read_text(encoding="utf-8").splitlines():
            row = json.loads(line)
            if "gate" not in row or "answer" in row:
                continue
            for i, gate in enumerate(row["gate"]):
                out.append({"qid": row["qid"], "turn": i, "lang": row["lang"], "kind": row["kind"],
                            "answerable": row["kind"] != "unanswerable", "named": bool(gate["unknown_names"]),
                            "x": [_signal(gate["signals"], n, row["lang"]) for n in Signals.names()]
                            if gate["signals"] else None})
    return out


def _signal(signals: dict, name: str, lang: str) -> float:
    """A signal of a row; rows written before `rewritten` was recorded: a Chinese question's text was the model's."""
    if name == "rewritten" and name not in signals:
        return float(lang != "en")
    return signals[name]


def fit(x: np.ndarray, y: np.ndarray, l2: float = L2, steps: int = 50) -> tuple[float, np.ndarray]:
    """Logistic regression by Newton's method (L2 on the weights, not the bias)."""
    a = np.hstack([np.ones((len(x), 1)), x])
    w = np.zeros(a.shape[1])
    penalty = np.diag([0.0] + [l2] * x.shape[1])
    for _ in range(steps):
        p = 1.0 / (1.0 + np.exp(-np.clip(a @ w, -60, 60)))
        grad = a.T @ (p - y) + penalty @ w
        hess = a.T @ (a * (p * (1 - p))[:, None]) + penalty + 1e-9 * np.eye(len(w))
        step = np.linalg.solve(hess, grad)
        w -= step
        if np.abs(step).max() < 1e-8:
            break
    return float(w[0]), w[1:]


def score_of(bias: float, weights: np.ndarray, threshold: float) -> DeclineScore:
    return DeclineScore(round(bias, 4), {n: round(float(v), 4) for n, v in zip(Signals.names(), weights)}, threshold)


def curve(examples: list[dict], probability: list[float | None], where=lambda e: True) -> list[tuple[float, float, float]]:
    """(threshold, unanswerable declined, answerable kept) for each threshold; a name decline counts as declined."""
    rows = []
    for t in THRESHOLDS:
        dec = [e["named"] or p < t for e, p in zip(examples, probability) if where(e) and not e["answerable"]]
        kept = [not (e["named"] or p < t) for e, p in zip(examples, probability) if where(e) and e["answerable"]]
        rows.append((t, sum(dec) / max(1, len(dec)), sum(kept) / max(1, len(kept))))
    return rows


def masked_fit(x: np.ndarray, y: np.ndarray, use: list[bool]) -> tuple[float, np.ndarray]:
    """`fit` on the signals marked in `use`; the others get weight 0."""
    bias, w = fit(x[:, use], y)
    full = np.zeros(x.shape[1])
    full[use] = w
    return bias, full


def _group(qid: str) -> str:
    """The question a row was made from: a question asked again in other words (benchmarks/chat_voice.py: "-V")
    falls in its original's fold, so no fold is scored by a fit that saw the same question."""
    return re.sub(r"-V$", "", qid)


def cross_validated(examples: list[dict], use: list[bool], folds: int = 5, seed: int = 0) -> list[float | None]:
    """Each example's probability from a fit on the folds it is not in (grouped by question)."""
    groups = sorted({_group(e["qid"]) for e in examples})
    random.Random(seed).shuffle(groups)
    fold_of = {q: i % folds for i, q in enumerate(groups)}
    out: list[float | None] = [None] * len(examples)
    for f in range(folds):
        train = [e for e in examples if fold_of[_group(e["qid"])] != f and e["x"] is not None]
        bias, w = masked_fit(np.array([e["x"] for e in train]), np.array([float(e["answerable"]) for e in train]), use)
        model = score_of(bias, w, 0.5)
        for i, e in enumerate(examples):
            if fold_of[_group(e["qid"])] == f and e["x"] is not None:
                out[i] = model.probability(Signals(*e["x"]))
    return out


def print_curve(title: str, examples: list[dict], probability: list[float | None]) -> None:
    probability = [1.0 if p is None else p for p in probability]  # a name decline is counted in `curve`
    print(f"\n{title}\nthreshold  declined(all/en/zh)   kept(all/en/zh)")
    by = {lang: curve(examples, probability, lambda e, lang=lang: e["lang"] == lang) for lang in ("en", "zh")}
    for i, (t, dec, kept) in enumerate(curve(examples, probability)):
        print(f"  {t:4.2f}     {dec:.3f} {by['en'][i][1]:.3f} {by['zh'][i][1]:.3f}   "
              f"{kept:.3f} {by['en'][i][2]:.3f} {by['zh'][i][2]:.3f}")


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("rows", nargs="+", help="rows files of `paperchat eval --retrieval-only --rows`")
    ap.add_argument("--apply", action="store_true", help="score the rows with the shipped score (no fit)")
    ap.add_argument("--embedder", default="minilm")
    ap.add_argument("--signals", default=",".join(Signals.names()),
                    help="comma-separated signals to fit on (the others get weight 0); default: all")
    args = ap.parse_args()
    chosen = set(args.signals.split(","))
    unknown = chosen - set(Signals.names())
    if unknown:
        ap.error(f"unknown signals {sorted(unknown)}; choose from {','.join(Signals.names())}")
    use = [n in chosen for n in Signals.names()]
    examples = load_rows(args.rows)
    answerable = sum(e["answerable"] for e in examples)
    print(f"{len(examples)} questions and turns: {answerable} answerable, {len(examples) - answerable} unanswerable "
          f"({sum(e['named'] for e in examples)} declined by a name no paper mentions); "
          f"zh {sum(e['lang'] == 'zh' for e in examples)}")
    if args.apply:
        shipped = DeclineScore.of(MEASURED_DECLINE[args.embedder])
        probability = [shipped.probability(Signals(*e["x"])) if e["x"] else None for e in examples]
        print_curve(f"shipped score for {args.embedder} (threshold {shipped.threshold})", examples, probability)
        return 0
    cv = cross_validated(examples, use)
    print_curve("5-fold cross-validated curve", examples, cv)
    table = curve(examples, [1.0 if p is None else p for p in cv])
    meeting = [row for row in table if row[2] >= KEPT_TARGET]
    t, dec, kept = max(meeting, key=lambda row: (row[1], row[0])) if meeting else max(table, key=lambda row: row[2])
    print(f"\noperating point: threshold {t} (most declined while keeping >= {KEPT_TARGET} answerable): "
          f"unanswerable declined {dec:.3f}, answerable kept {kept:.3f} (cross-validated)")
    train = [e for e in examples if e["x"] is not None]
    bias, w = masked_fit(np.array([e["x"] for e in train]), np.array([float(e["answerable"]) for e in train]), use)
    fitted = score_of(bias, w, t)
    print(f"fitted on all {len(train)} rows; for rag/settings.py MEASURED_DECLINE:\n"
          f'  "{args.embedder}": {json.dumps({"bias": fitted.bias, **fitted.weights, "threshold": t})}')
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
