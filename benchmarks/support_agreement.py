"""How far can the sentence-support judge be trusted? Its verdicts against sentences labeled by hand.

    .venv/bin/python benchmarks/support_agreement.py            # benchmarks/support_labels.jsonl

Each line of the labels file is one cited sentence of a real answer of the embedded model (from
`paperchat eval ... --rows`), with `cited` mapping each of its [n] to a paper id, and a hand label: `true` when the
cited abstracts state what the sentence says, `false` when they do not (wrong claim, wrong number,
claim from another paper, or invented detail). The abstracts are read from ../shared by path.

Judges compared: the shipped rule (rag.answer.support: content words held >= MIN_SUPPORT and every number
present), the same with other word thresholds, numbers alone, and MiniLM cosine between the sentence and
its closest abstract sentence at several thresholds (the embedding the app already has). Printed:
agreement with the hand labels, Cohen's kappa, and how many unsupported sentences each judge catches.
"""

from __future__ import annotations

import argparse
import gzip
import json
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

import numpy as np  # noqa: E402

from rag.corpus.papers import Paper  # noqa: E402
from rag.retrieve.search import Source  # noqa: E402
from rag.answer.support import MIN_SUPPORT, check_sentence  # noqa: E402
from rag.text import language, split_sentences  # noqa: E402

SHARED = ROOT.parent / "shared"


def kappa(pred: list[bool], gold: list[bool]) -> float:
    n = len(gold)
    agree = sum(p == g for p, g in zip(pred, gold)) / n
    p_yes = (sum(pred) / n) * (sum(gold) / n)
    p_no = (1 - sum(pred) / n) * (1 - sum(gold) / n)
    chance = p_yes + p_no
    return round((agree - chance) / (1 - chance), 3) if chance < 1 else 1.0


def report(name: str, pred: list[bool], gold: list[bool]) -> str:
    agree = sum(p == g for p, g in zip(pred, gold)) / len(gold)
    bad = [i for i, g in enumerate(gold) if not g]
    caught = sum(not pred[i] for i in bad)
    flagged = sum(not p for p in pred)
    precision = f"{sum(not pred[i] for i in bad) / flagged:.2f}" if flagged else "-"
    return f"| {name} | {agree:.3f} | {kappa(pred, gold)} | {caught} / {len(bad)} | {precision} |"


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--labels", default=str(ROOT / "benchmarks/support_labels.jsonl"))
    ap.add_argument("--corpus", default=str(SHARED / "data/iclr2026.jsonl.gz"))
    ap.add_argument("--rows", help="answer rows of `paperchat eval --rows`: also judge every cited sentence in them")
    args = ap.parse_args()
    labels = [json.loads(line) for line in Path(args.labels).read_text(encoding="utf-8").splitlines() if line.strip()]
    answers = [json.loads(line) for line in Path(args.rows).read_text(encoding="utf-8").splitlines()
               if '"answer"' in line] if args.rows else []
    wanted = {pid for row in labels for pid in row["cited"].values()} | {p for a in answers for p in a["retrieved"]}
    papers = {}
    with gzip.open(args.corpus, "rt", encoding="utf-8") as f:
        for line in f:
            rec = json.loads(line)
            if rec["id"] in wanted:
                papers[rec["id"]] = Paper(id=rec["id"], title=rec["title"], abstract=rec["abstract"])
    gold_all = [bool(r["label"]) for r in labels]
    print(f"{len(labels)} hand-labeled sentences: {sum(gold_all)} supported, {len(gold_all) - sum(gold_all)} not")

    from rag.models.embeddings import SentenceSimilarity

    similarity = SentenceSimilarity()  # the claim check's multilingual reading of Chinese sentences
    checks, lexical = [], []
    for r in labels:  # `cited` maps each [n] of the sentence to the paper id it stood for in that answer
        by_n = {int(n): Source(int(n), papers[pid], 0.0, (papers[pid].abstract,)) for n, pid in r["cited"].items()}
        checks.append(check_sentence(r["sentence"], by_n, similarity))
        lexical.append(check_sentence(r["sentence"], by_n))

    from rag.models.embeddings import make_embeddings
    from rag.settings import Settings

    embed = make_embeddings(Settings().embedding)
    cosines = []
    for r in labels:
        pieces = [s for pid in r["cited"].values() for s in split_sentences(papers[pid].abstract)]
        vecs = np.asarray(embed.embed_documents([r["sentence"], *pieces]))
        cosines.append(float(np.max(vecs[1:] @ vecs[0])))

    # The shipped judge abstains (None) on sentences it cannot read (Chinese with < 3 English words) or that
    # claim nothing ("This is described in [1]."): every judge is scored on the sentences it does judge.
    judged = [i for i, c in enumerate(checks) if c.supported is not None]
    skipped = [i for i in range(len(labels)) if i not in judged]
    print(f"the shipped judge abstains on {len(skipped)} of them "
          f"({sum(not gold_all[i] for i in skipped)} of those are unsupported); scored below: the {len(judged)} it judges\n")
    full_checks = checks
    checks = [checks[i] for i in judged]
    cosines = [cosines[i] for i in judged]
    gold = [gold_all[i] for i in judged]
    rows = ["| judge | agreement | Cohen's kappa | unsupported caught | precision of 'unsupported' |", "|---|---|---|---|---|"]
    rows.append(report(f"shipped: words >= {MIN_SUPPORT} and numbers present", [bool(c.supported) for c in checks], gold))
    for t in (0.3, 0.4, 0.6, 0.7):
        rows.append(report(f"words >= {t} and numbers present (no per-source rule)",
                           [c.support >= t and not c.missing_numbers for c in checks], gold))
    rows.append(report("numbers present only", [not c.missing_numbers for c in checks], gold))
    for t in (0.5, 0.6, 0.7):
        rows.append(report(f"MiniLM cosine to best abstract sentence >= {t}", [c >= t for c in cosines], gold))
        rows.append(report(f"shipped rule and cosine >= {t}",
                           [bool(c.supported) and x >= t for c, x in zip(checks, cosines)], gold))
    rows.append(report("always 'supported'", [True] * len(gold), gold))
    print("\n".join(rows))
    print("\nThe judge per language (judged: the share of labeled sentences it gives a verdict on); 'lexical' is "
          "without the multilingual similarity, 'shipped' with it (floor {:.3f}):\n".format(similarity.floor))
    print("| judge | language | labeled | judged | agreement | Cohen's kappa | unsupported caught | "
          "precision of 'unsupported' |")
    print("|---|---|---|---|---|---|---|---|")
    for name, verdicts_of in (("lexical", lexical), ("shipped", full_checks)):
        for lang in ("en", "zh"):
            mine = [i for i, r in enumerate(labels) if (language(r["sentence"]) == "zh") == (lang == "zh")]
            seen = [i for i in mine if verdicts_of[i].supported is not None]
            verdicts = [bool(verdicts_of[i].supported) for i in seen]
            row = report(lang, verdicts, [gold_all[i] for i in seen]) if seen else f"| {lang} | - | - | - | - |"
            print(row.replace(f"| {lang} |", f"| {name} | {lang} | {len(mine)} | {len(seen)} |", 1))
    if answers:
        judge_answers(answers, papers, similarity)


def judge_answers(answers: list[dict], papers: dict[str, Paper], similarity=None) -> None:
    """Every cited sentence of the eval's answers (the prose, not comparison tables), per language, by the lexical
    judge alone and by the shipped one (with the multilingual similarity)."""
    from rag.answer.support import check_sentences

    for name, judge in (("lexical", None), ("shipped", similarity)):
        for lang in ("en", "zh"):
            verdicts = []
            for a in answers:
                if a.get("refusal") or a["lang"] != lang:
                    continue
                prose = "\n".join(line for line in a["answer"].splitlines() if not line.startswith("|"))
                sources = [Source(i, papers[pid], 0.0, (papers[pid].abstract,)) for i, pid in enumerate(a["retrieved"], 1)]
                verdicts += [c.supported for c in check_sentences(prose, sources, similarity=judge) if c.cited]
            judged = [v for v in verdicts if v is not None]
            share = f"{sum(judged) / len(judged):.3f}" if judged else "-"
            print(f"answers, {name} judge, {lang}: {len(verdicts)} cited sentences; judged {len(judged)}, "
                  f"supported {sum(judged)} ({share} of judged)")


if __name__ == "__main__":
    main()
