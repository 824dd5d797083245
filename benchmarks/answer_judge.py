"""Can the model itself tell whether the sources answer a question? A one-word "Yes"/"No" asked after the same
sources and question the answer prompt holds (so the model server reuses what it already read), read as a
probability from the first token's log-probabilities, next to the decline score (benchmarks/README.md: measured,
not shipped).

For each single question of a generated set (lookups, comparisons, unanswerable ones), searched the way the app
searches it (a Chinese question through the model's translation), it writes one row: the decline score's
signals and probability, and for each wording in JUDGES the probability that the sources answer, with the
seconds each call took (the first reads the whole prompt; the others only their own instructions); a Chinese
question is also asked the plain wording with its English search query in its place (`plain_en`); and the sources'
closeness to the question (`close`: rag.answer.judge.closeness, no model call). `--reuse` takes the model's columns
from earlier rows of a question searched again with the same query to the same papers, so a new column costs no
model time:

    PAPERCHAT_DATA_DIR=<the set's test index> python benchmarks/answer_judge.py DIR/questions.jsonl \
        --corpus DIR/corpus.jsonl.gz -o judge_rows.jsonl [--reuse earlier_rows.jsonl]
    python benchmarks/answer_judge.py --report judge_rows.jsonl [more rows ...]
    python benchmarks/answer_judge.py --choose rows_to_fit.jsonl ... --test fresh_rows.jsonl ...
    python benchmarks/answer_judge.py --shipped judge_rows.jsonl ...   # the shipped rule, by kind and language

The report prints each wording's AUC (answerable against unanswerable), then the share declined at >= 0.95 kept
by a logistic of the score's and the wording's logits (5-fold cross-validated), after declining first under a
few pre-model thresholds, next to the score alone; and the mean over 5 shuffles for each combination. `--choose`
fits the logistic of the score and the plain wording (and then also the closeness, when the rows have it) on some
rows, chooses there both thresholds together (before
the model, on the score; after its yes/no, on the combination), and applies them unchanged to other rows
(rag.settings.MEASURED_JUDGE holds what it printed).
"""

from __future__ import annotations

import argparse
import dataclasses
import json
import math
import random
import sys
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
sys.path.insert(0, str(Path(__file__).resolve().parent))

from decline_extra_signals import auc, declined_at_target  # noqa: E402
from decline_fit import KEPT_TARGET, fit  # noqa: E402
from rag.answer.coverage import Signals  # noqa: E402
from rag.answer.grounded import ANSWER_PROMPT, prompt_inputs  # noqa: E402
from rag.answer.judge import JudgedScore, yes_probability  # noqa: E402
from rag.eval.evaluate import load_questions  # noqa: E402
from rag.prompts import JUDGE_INSTRUCTIONS  # noqa: E402
from rag.retrieve.filters import Filters  # noqa: E402

BEFORE_GRID = (0.0, 0.01, 0.02, 0.05, 0.08, 0.1, 0.15)  # thresholds before the model that `--shipped` compares

JUDGES = {
    "specific": "Instructions: Does any source above answer the question, about the specific thing it asks and not "
                "only its general topic? Reply with one word: Yes or No.",
    "plain": JUDGE_INSTRUCTIONS,  # the wording the product asks (rag.answer.judge)
    # the same asked the other way round (a small model leans to "Yes"): P(answer) = P(No)
    "none": "Instructions: Is it true that none of the sources above answers the question? Reply with one word: "
            "Yes or No.",
    # a choice instead of a yes/no: P(answer) = 1 - P("0")
    "which": "Instructions: Which source above answers the question? Reply with the source's number only, or 0 if "
             "none of them answers it.",
}
def p_yes(top: list) -> float:
    """P(yes) / (P(yes) + P(no)) over the first token's top log-probabilities (0.5 when neither is there)."""
    found = yes_probability([(t.token, t.logprob) for t in top])
    return 0.5 if found is None else found


def p_answer(name: str, top: list) -> float:
    """The probability that the sources answer, as each judge wording is read."""
    if name == "none":
        return 1.0 - p_yes(top)
    if name == "which":
        digits = {t.token.strip(): math.exp(t.logprob) for t in top if t.token.strip().isdigit()}
        total = sum(digits.values())
        return 1.0 - digits.get("0", 0.0) / total if total else 0.5
    return p_yes(top)


def collect(args) -> int:
    from langchain_openai.chat_models.base import _convert_message_to_dict
    from openai import OpenAI

    from rag.pipeline import build_pipeline
    from rag.settings import load_settings

    settings = load_settings()
    with build_pipeline(settings) as pipeline:
        if args.corpus:
            pipeline.ingest_files([args.corpus])
        llm = pipeline.llm
        client = OpenAI(base_url=llm.openai_api_base, api_key="local")
        k = settings.retrieval.k
        # rows of an earlier run whose model columns stand for a question searched the same way again
        reused = {r["qid"]: r for p in args.reuse or [] for r in map(json.loads, Path(p).read_text(encoding="utf-8").splitlines())}
        questions = [q for q in load_questions(args.questions)
                     if q["kind"] in ("lookup", "compare", "unanswerable") and "turns" not in q]
        with open(args.out, "w", encoding="utf-8") as out:
            for i, q in enumerate(questions, 1):
                intent = pipeline.route(q["question"])
                query = pipeline.search_query(intent)
                filters = Filters().narrowed_by(intent.filters)
                sources = pipeline.retrieve(query.all, filters, k, query.referred, query.described)[:k]
                cover = pipeline.coverage(intent, query, sources, filters)
                row = {"qid": q["qid"], "kind": q["kind"], "lang": q["lang"], "generated": q.get("generated", ""),
                       "query": query.text, "retrieved": [s.paper.id for s in sources],
                       "named": bool(cover and cover.unknown_names),
                       "signals": dict(zip(Signals.names(), cover.signals.values())) if cover and cover.signals else None,
                       "probability": cover.probability if cover else None}
                t0 = time.perf_counter()
                row["close"] = pipeline.closeness(query, sources)
                row["close_s"] = round(time.perf_counter() - t0, 2)
                earlier = reused.get(q["qid"])
                if earlier is not None and earlier["retrieved"] == row["retrieved"] and earlier["query"] == row["query"]:
                    row.update({key: earlier[key] for key in earlier if key not in row})  # the yes/no columns
                    out.write(json.dumps(row, ensure_ascii=False) + "\n")
                    print(f"{i}/{len(questions)} {q['qid']} close={row['close']} (yes/no columns reused)", flush=True)
                    continue
                inputs = prompt_inputs(intent, sources)

                def asked(name: str, instruction: str, question: str | None = None) -> tuple[float | None, float, str]:
                    """P(answer) as `name` reads it, the seconds the call took, and the token written."""
                    messages = ANSWER_PROMPT.format_messages(**{**inputs, "instructions": instruction,
                                                                **({"question": question} if question else {})})
                    t0 = time.perf_counter()
                    reply = client.chat.completions.create(
                        model=llm.model_name, messages=[_convert_message_to_dict(m) for m in messages],
                        max_tokens=1, temperature=0, logprobs=True, top_logprobs=10)
                    choice = reply.choices[0]
                    p = round(p_answer(name, choice.logprobs.content[0].top_logprobs), 4) if choice.logprobs else None
                    return p, round(time.perf_counter() - t0, 2), choice.message.content

                for name, instruction in JUDGES.items():
                    row[name], row[f"{name}_s"], row[f"{name}_token"] = asked(name, instruction)
                # a Chinese question asked again with its English search query in its place (the sources stay)
                row["plain_en"] = row["plain_en_s"] = None
                if intent.chinese and query.text.strip() and query.text.strip() != intent.question.strip():
                    row["plain_en"], row["plain_en_s"], _ = asked("plain", JUDGES["plain"], query.text.strip())
                out.write(json.dumps(row, ensure_ascii=False) + "\n")
                out.flush()
                print(f"{i}/{len(questions)} {q['qid']} {q['kind']} {q['lang']} p={row['probability']} "
                      + " ".join(f"{n}={row[n]} ({row[n + '_s']} s)" for n in JUDGES), flush=True)
    return 0


def _logit(p: np.ndarray) -> np.ndarray:
    p = np.clip(p, 1e-4, 1 - 1e-4)
    return np.log(p / (1 - p))


def judged_cv(x: np.ndarray, y: np.ndarray, groups: list[str], folds: int = 5, seed: int = 0) -> np.ndarray:
    """Each row's combined probability from a fit (decline_fit.fit) on the folds it is not in, grouped by question."""
    order = sorted(set(groups))
    random.Random(seed).shuffle(order)
    fold_of = {g: i % folds for i, g in enumerate(order)}
    out = np.zeros(len(y))
    for f in range(folds):
        test = np.array([fold_of[g] == f for g in groups])
        bias, w = fit(x[~test], y[~test])
        out[test] = 1 / (1 + np.exp(-(bias + x[test] @ w)))
    return out


def _best_point(p: np.ndarray, y: np.ndarray, keep: float, before: np.ndarray | None = None,
                step: float = 0.005) -> tuple[float, np.ndarray] | None:
    """The threshold on `p` that declines the most unanswerable questions (with those declined `before`) while
    keeping `keep` of the answerable ones, and what it declines; None when no threshold keeps that many."""
    best = None
    for t in np.arange(0.0, 1.0, step):
        declined = (p < t) if before is None else before | (p < t)
        if 1 - declined[y == 1].mean() >= keep and (best is None or declined[y == 0].mean() >= best[1][y == 0].mean()):
            best = (t, declined)
    return best


def operating(declined_before: np.ndarray, combined: np.ndarray, y: np.ndarray, lang: np.ndarray) -> str:
    """The most declined while keeping >= KEPT_TARGET answerable, over the second threshold; by language."""
    best = _best_point(combined, y, KEPT_TARGET, declined_before, step=0.01)
    if best is None:
        return "no threshold keeps enough"
    t2, declined = best
    per = " ".join(f"{g}: declined {declined[(y == 0) & (lang == g)].mean():.3f} kept {1 - declined[(y == 1) & (lang == g)].mean():.3f}"
                   for g in ("en", "zh"))
    return f"t2 {t2:.2f}: declined {declined[y == 0].mean():.3f}, kept {1 - declined[y == 1].mean():.3f} ({per})"


def report(paths: list[str]) -> int:
    rows = [json.loads(line) for p in paths for line in Path(p).read_text(encoding="utf-8").splitlines()]
    y = np.array([float(r["kind"] != "unanswerable") for r in rows])
    lang = np.array([r["lang"] for r in rows])
    named = np.array([bool(r["named"]) for r in rows])
    score = np.array([1.0 if r["probability"] is None else r["probability"] for r in rows])
    kinds = sorted({(r["kind"], r.get("generated", "")) for r in rows})
    print(f"{len(rows)} questions: " + ", ".join(f"{k}/{g or '-'} {sum((r['kind'], r.get('generated', '')) == (k, g) for r in rows)}"
                                                   for k, g in kinds) + f"; zh {int((lang == 'zh').sum())}; "
          f"{int(named.sum())} declined by a name")
    groups = [r["qid"] for r in rows]
    for name in [n for n in JUDGES if all(n in r for r in rows)]:
        judge = np.array([0.5 if r[name] is None else r[name] for r in rows])
        print(f"\njudge `{name}`: AUC {auc(judge, y):.3f} (en {auc(judge[lang == 'en'], y[lang == 'en']):.3f}, "
              f"zh {auc(judge[lang == 'zh'], y[lang == 'zh']):.3f}); the score's AUC {auc(score, y):.3f}; "
              f"{np.mean([r[name + '_s'] for r in rows]):.2f} s a call")
        x = np.stack([_logit(score), _logit(judge)], axis=1)
        combined = judged_cv(x, y, groups)
        for t1 in (0.0, 0.1, 0.2, 0.35):
            before = named | (score < t1)
            print(f"  declined before the model under {t1:.2f}, then the combined score: "
                  f"{operating(before, combined, y, lang)}")
        print(f"  the score alone (shipped form): {operating(named, score, y, lang)}")
        bias, w = fit(x, y)
        print(f"  fitted on all rows: bias {bias:.3f}, score {w[0]:.3f}, judge {w[1]:.3f}")
    # steadier figures: declined at >= KEPT_TARGET kept, cross-validated, the mean of 5 shuffles
    names = [n for n in JUDGES if all(r.get(n) is not None for r in rows)]
    print("\nmean of 5 shuffled 5-fold fits, declined at kept >= 0.95 (all / en / zh):")
    closes = all(r.get("close") is not None for r in rows)  # the sources' closeness (raw cosine, not a logit)
    for label, cols in [("the score", []), *[(f"the score + {n}", [n]) for n in names],
                        (f"the score + {' + '.join(names)}", names),
                        *([("the score + closeness", ["close"]), ("the score + plain + closeness", ["plain", "close"])]
                          if closes and "plain" in names else [])]:
        x = np.stack([_logit(score), *[np.array([r[n] for r in rows]) if n == "close" else
                                       _logit(np.array([r[n] for r in rows])) for n in cols]], axis=1)
        parts = [declined_at_target(x[m], y[m], named[m]) for m in (lang == lang, lang == "en", lang == "zh")]
        print(f"  {label:40s} " + " / ".join(f"{v:.3f}" for v in parts))
    # the whole curve, one shuffle at a time: the score alone against the score and each wording
    for name in names:
        x = np.stack([_logit(score), _logit(np.array([r[name] for r in rows]))], axis=1)
        print(f"\nthe score alone -> the score + {name}, cross-validated (declined at kept >= each level):")
        for seed in range(3):
            alone, both = judged_cv(x[:, :1], y, groups, seed=seed), judged_cv(x, y, groups, seed=seed)
            levels = " ".join(f"{keep}: {_declined_at(alone, y, keep):.3f}->{_declined_at(both, y, keep):.3f}"
                              for keep in (0.98, 0.95, 0.92, 0.90, 0.85))
            print(f"  shuffle {seed}: AUC {auc(alone, y):.3f}->{auc(both, y):.3f}; {levels}")
    return 0


def _arrays(paths: list[str], judge: str = "plain") -> dict[str, np.ndarray]:
    rows = [json.loads(line) for p in paths for line in Path(p).read_text(encoding="utf-8").splitlines()]
    return {"y": np.array([float(r["kind"] != "unanswerable") for r in rows]),
            "lang": np.array([r["lang"] for r in rows]),
            "named": np.array([bool(r["named"]) for r in rows]),
            "score": np.array([1.0 if r["probability"] is None else r["probability"] for r in rows]),
            "judge": np.array([0.5 if r.get(judge) is None else r[judge] for r in rows]),
            "close": np.array([np.nan if r.get("close") is None else r["close"] for r in rows])}


def _shares(declined: np.ndarray, a: dict[str, np.ndarray]) -> str:
    y, lang = a["y"], a["lang"]
    part = " ".join(f"{g} {declined[(y == 0) & (lang == g)].mean():.3f} / {1 - declined[(y == 1) & (lang == g)].mean():.3f}"
                    for g in ("en", "zh"))
    return f"declined {declined[y == 0].mean():.3f}, kept {1 - declined[y == 1].mean():.3f} ({part})"


def choose(fit_paths: list[str], test_paths: list[str], keep: float) -> int:
    """Fit the logistic of the score and the plain wording (and, when every row has it, the closeness) on
    `fit_paths`' rows and choose there, together, the threshold before the model (on the score) and the one after
    its yes/no (on the combination) that decline the most while keeping `keep`; then apply all of it unchanged to
    `test_paths`' rows, next to the score alone."""
    a, b = _arrays(fit_paths), _arrays(test_paths)
    print(f"fit on {len(a['y'])} rows ({int(a['y'].sum())} answerable), tested on {len(b['y'])} "
          f"({int(b['y'].sum())} answerable); declined / kept, and per language declined / kept")
    rules = [("the shipped score (0.35)", lambda d: d["named"] | (d["score"] < 0.35))]
    alone = _best_point(a["score"], a["y"], keep, a["named"], step=0.01)
    if alone:
        rules.append((f"the score alone, chosen: {alone[0]:.2f}", lambda d: d["named"] | (d["score"] < alone[0])))
    forms = [("score + yes/no", ["judge"])]
    if not (np.isnan(a["close"]).any() or np.isnan(b["close"]).any()):
        forms.append(("score + yes/no + closeness", ["judge", "close"]))
    for label, extra in forms:
        x = lambda d, extra=extra: np.stack([_logit(d["score"]), *(  # noqa: E731
            _logit(d[c]) if c == "judge" else d[c] for c in extra)], axis=1)
        bias, w = fit(x(a), a["y"])
        combined = lambda d, x=x, bias=bias, w=w: 1 / (1 + np.exp(-(bias + x(d) @ w)))  # noqa: E731
        best = None
        for t1 in np.arange(0.0, 0.41, 0.01):
            point = _best_point(combined(a), a["y"], keep, a["named"] | (a["score"] < t1), step=0.01)
            # the most declined, then the most kept, then the higher t1 (more clear cases declined without the model)
            rank = lambda declined: (declined[a["y"] == 0].mean(), 1 - declined[a["y"] == 1].mean())  # noqa: E731
            if point and (best is None or rank(point[1]) >= rank(best[2])):
                best = (t1, point[0], point[1])
        print(f"{label}: weights bias {bias:.3f}, " + ", ".join(f"{n} {v:.3f}" for n, v in zip(["score", *extra], w)))
        if best:
            rules.append((f"{label}: score < {best[0]:.2f}, then < {best[1]:.2f}",
                          lambda d, t1=best[0], t2=best[1], combined=combined: d["named"] | (d["score"] < t1)
                          | (combined(d) < t2)))
    for label, rule in rules:
        print(f"  {label:52s} fit: {_shares(rule(a), a)}\n  {'':52s} test: {_shares(rule(b), b)}")
    return 0


def declined(row: dict, judged: JudgedScore, alone: float) -> bool:
    """The shipped decision on a row, as rag.pipeline makes it for a first lookup: a name no paper mentions or a
    score under `before` declines before the model; then the score weighed with the yes/no and the closeness, under
    `threshold`; without a yes/no (a failed call, neither word) the score alone under its own threshold `alone`."""
    p = row["probability"]
    if row["named"]:
        return True
    if p is None:
        return False
    return p < judged.before or judged.declines(p, row.get("plain"), row.get("close") or 0.0, alone)


def shipped_rule(settings=None) -> tuple[JudgedScore, float]:
    """The fitted yes/no rule of `settings` (default: loaded from the environment) and the decline score's own
    threshold."""
    from rag.settings import load_settings

    settings = settings or load_settings()
    judged, score = settings.judged_score(), settings.embedding.decline_score()
    if judged is None or score is None:
        raise SystemExit("no fitted yes/no rule for these settings (rag.settings.MEASURED_JUDGE)")
    return judged, score.threshold


def shipped(paths: list[str]) -> int:
    """The shipped rule (rag.settings.MEASURED_JUDGE for these settings) on recorded rows, by the kind each question
    was generated as and by language: the unanswerable share declined, the answerable share kept."""
    judged, alone = shipped_rule()
    rows = [json.loads(line) for p in paths for line in Path(p).read_text(encoding="utf-8").splitlines()]
    print(f"shipped rule: before {judged.before}, threshold {judged.threshold}; unanswerable: declined share, "
          f"answerable: kept share")
    print("| generated as | all | English | Chinese |\n|---|---|---|---|")
    for kind in sorted({r["generated"] or r["kind"] for r in rows}) + ["unanswerable, all", "answerable, all"]:
        chosen = [r for r in rows if (r["generated"] or r["kind"]) == kind
                  or kind == "unanswerable, all" and r["kind"] == "unanswerable"
                  or kind == "answerable, all" and r["kind"] != "unanswerable"]
        cells = []
        for langs in (("en", "zh"), ("en",), ("zh",)):
            part = [r for r in chosen if r["lang"] in langs]
            hits = sum(declined(r, judged, alone) == (r["kind"] == "unanswerable") for r in part)
            cells.append(f"{hits / len(part):.3f} (n {len(part)})" if part else "-")
        print(f"| {kind} | " + " | ".join(cells) + " |")
    # the threshold before the model: what it declines at once (no wait for the model to read the prompt), at what cost
    answerable = [r for r in rows if r["kind"] != "unanswerable"]
    unanswerable = [r for r in rows if r["kind"] == "unanswerable"]
    print("\n| declined before the model under | unanswerable declined | answerable kept | unanswerable declined "
          "at once | answerable declined at once |\n|---|---|---|---|---|")
    for before in BEFORE_GRID:
        rule = dataclasses.replace(judged, before=before)
        at_once = lambda r, before=before: bool(r["named"]) or (r["probability"] is not None  # noqa: E731
                                                                 and r["probability"] < before)
        print(f"| {before:.2f}{' (shipped)' if before == judged.before else ''} | "
              f"{_share(unanswerable, lambda r, rule=rule: declined(r, rule, alone))} | "
              f"{_share(answerable, lambda r, rule=rule: not declined(r, rule, alone))} | "
              f"{_share(unanswerable, at_once)} | {_share(answerable, at_once)} |")
    return 0


def _share(rows: list[dict], holds) -> str:
    return f"{sum(map(holds, rows)) / len(rows):.3f}" if rows else "-"


def _declined_at(p: np.ndarray, y: np.ndarray, keep: float) -> float:
    """The most unanswerable questions declined by one threshold on `p` while keeping `keep` of the answerable."""
    best = _best_point(p, y, keep)
    return best[1][y == 0].mean() if best else 0.0


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("questions", nargs="?", help="questions.jsonl of a generated set")
    ap.add_argument("--corpus", help="the set's test corpus (ingested first; unchanged papers cost nothing)")
    ap.add_argument("-o", "--out", help="rows to write")
    ap.add_argument("--reuse", nargs="+", help="earlier rows of these questions: a question searched with the same query "
                    "to the same papers keeps its yes/no columns (no model call for them); new columns are computed")
    ap.add_argument("--report", nargs="+", help="rows files to report on (no model call)")
    ap.add_argument("--choose", nargs="+", help="rows to fit and choose both thresholds on (no model call) ...")
    ap.add_argument("--test", nargs="+", help="... and rows to test that choice on")
    ap.add_argument("--shipped", nargs="+", help="rows to apply the shipped rule to, by kind and language (no model call)")
    ap.add_argument("--keep", type=float, default=KEPT_TARGET, help="the answerable share to keep (default %(default)s)")
    args = ap.parse_args()
    if args.report:
        return report(args.report)
    if args.shipped:
        return shipped(args.shipped)
    if args.choose:
        return choose(args.choose, args.test or args.choose, args.keep)
    if not (args.questions and args.out):
        ap.error("give QUESTIONS and -o OUT, or --report ROWS")
    return collect(args)


if __name__ == "__main__":
    raise SystemExit(main())
