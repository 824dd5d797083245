"""Evaluation: retrieval (and, optionally, answer) figures on labeled questions, per kind and language.

Question format: ../shared/eval/README.md (`qid`, `kind`, `lang`, `question` or `turns`, `gold`,
`also_relevant`). A hit is a gold or `also_relevant` paper.
"""

from __future__ import annotations

import json
import statistics
import time
from collections import defaultdict
from collections.abc import Callable, Iterable, Sequence
from pathlib import Path
from typing import TYPE_CHECKING

from rag.errors import CorpusError
from rag.question.rewrite import Query
from rag.question.turns import Exchange
from rag.retrieve.filters import Filters
from rag.retrieve.search import Source
from rag.text import language

if TYPE_CHECKING:
    from rag.answer.coverage import Coverage
    from rag.answer.types import Answer

KINDS = ("lookup", "compare", "followup", "filtered", "unanswerable")
SHOWN = 4  # papers an earlier turn "showed" (the app's default k): what "the second one" can point to

Retrieve = Callable[[Query, Filters | None], list[Source]]  # (query, filters) -> papers, best first
# (question, history) -> what to search (its queries, the earlier papers it points back to, whether the model wrote it)
Rewrite = Callable[[str, list[Exchange]], Query]
# (question, history, sources, filters) -> the check before the model (rag.answer.coverage), None when off
Judge = Callable[[str, list[Exchange], list[Source], Filters | None], "Coverage | None"]


def load_questions(path: str | Path) -> list[dict]:
    path = Path(path)
    if not path.is_file():
        raise CorpusError(f"{path}: no such questions file (JSONL, one labeled question per line).")
    questions = []
    for lineno, line in enumerate(path.read_text(encoding="utf-8").split("\n"), start=1):
        if not line.strip():
            continue
        try:
            q = json.loads(line)
        except json.JSONDecodeError as exc:
            raise CorpusError(f"{path}:{lineno}: malformed JSON ({exc.msg}).") from exc
        if q.get("kind") not in KINDS:
            raise CorpusError(f"{path}:{lineno}: unknown kind {q.get('kind')!r}; expected one of {', '.join(KINDS)}.")
        questions.append(q)
    return questions


def _rank_of(ids: list[str], relevant: set[str]) -> int | None:
    return next((i for i, pid in enumerate(ids, start=1) if pid in relevant), None)


def _mean(values: Iterable[float]) -> float | None:
    values = list(values)
    return round(statistics.fmean(values), 3) if values else None


def _group(rows: list[dict], metrics: dict[str, Callable[[list[dict]], float | None]]) -> dict:
    out = {name: fn(rows) for name, fn in metrics.items()}
    out["n"] = len(rows)
    by_lang = defaultdict(list)
    for r in rows:
        by_lang[r["lang"]].append(r)
    out["by_lang"] = {lang: {**{name: fn(rs) for name, fn in metrics.items()}, "n": len(rs)}
                      for lang, rs in sorted(by_lang.items())}
    return out


def evaluate_retrieval(questions: list[dict], retrieve: Retrieve,
                       stated: Callable[[str], Filters] = lambda q: Filters(),
                       rewrite: Rewrite = lambda question, history: Query(question, False),
                       judge: Judge | None = None) -> tuple[dict, list[dict]]:
    """Retrieval figures (top 10 papers per question) and one row per question for inspection.

    Search latency and model rewriting latency are timed apart (rewriting only when the model ran). With a
    `judge`, each question (each turn of a follow-up) also gets the check before the model: the share of
    unanswerable questions declined and of the others kept, and each row its signals (for fitting the score).
    """
    rows: list[dict] = []
    latencies: list[float] = []
    rewrite_ms: list[float] = []

    def search(question: str, history: list[Exchange], filters: Filters | None) -> tuple[str, list[Source]]:
        t0 = time.perf_counter()
        query = rewrite(question, history)
        t1 = time.perf_counter()
        sources = retrieve(query, filters)
        latencies.append((time.perf_counter() - t1) * 1000)
        if query.rewritten:
            rewrite_ms.append((t1 - t0) * 1000)
        return " | ".join(query.all), sources

    def gate(row: dict, question: str, history: list[Exchange], sources: list[Source], filters: Filters | None) -> None:
        cover = judge(question, history, sources, filters) if judge else None
        if cover is None:
            return
        row.setdefault("declined", []).append(not cover.answerable)
        row.setdefault("gate", []).append({"signals": cover.signals and dict(zip(cover.signals.names(), cover.signals.values())),
                                           "probability": cover.probability, "unknown_names": list(cover.unknown_names)})

    for q in questions:
        relevant = set(q.get("gold", [])) | set(q.get("also_relevant", []))
        row = {"qid": q["qid"], "kind": q["kind"], "lang": q["lang"]}
        if q["kind"] == "followup":
            history: list[Exchange] = []
            hits, queries = [], []
            for turn in q["turns"]:
                query, sources = search(turn["question"], history, None)
                gate(row, turn["question"], history, sources, None)
                ids = [s.paper.id for s in sources]
                hits.append(bool(set(ids[:5]) & set(turn["gold"])))
                queries.append(query)
                # The eval has no answer model: the next turn sees the papers the app would have shown.
                shown = sources[:SHOWN]
                history.append(Exchange(turn["question"], "", tuple(s.paper.title for s in shown),
                                        tuple(s.paper.id for s in shown)))
            row["turn_hits"] = hits
            row["queries"] = queries
        else:
            filters = stated(q["question"])
            row["query"], sources = search(q["question"], [], filters)
            gate(row, q["question"], [], sources, filters)
            ids = [s.paper.id for s in sources]
            row["retrieved"] = ids
            row["rank"] = _rank_of(ids, relevant)
            row["both_gold_top10"] = set(q.get("gold", [])) <= set(ids[:10])
            if q["kind"] == "filtered":
                top = sources[:5]
                row["constraint5"] = sum(filters.admits(s.paper) for s in top) / len(top) if top else 0.0
        rows.append(row)

    def recall(k):
        return lambda rs: _mean(1.0 if r["rank"] and r["rank"] <= k else 0.0 for r in rs)

    def mrr(rs):
        return _mean(1.0 / r["rank"] if r["rank"] and r["rank"] <= 10 else 0.0 for r in rs)

    def declined(rs):  # the share of questions (every turn of a follow-up) declined before the model
        return _mean(float(d) for r in rs for d in r.get("declined", []))

    def kept(rs):
        share = declined(rs)
        return None if share is None else round(1.0 - share, 3)

    gated = {"kept": kept} if judge else {}
    by_kind = defaultdict(list)
    for r in rows:
        by_kind[r["kind"]].append(r)
    report = {
        "lookup": _group(by_kind["lookup"], {**gated, "recall@1": recall(1), "recall@5": recall(5),
                                             "recall@10": recall(10), "mrr@10": mrr}),
        "compare": _group(by_kind["compare"], {**gated, "both_gold_top10": lambda rs: _mean(float(r["both_gold_top10"]) for r in rs)}),
        "followup": _group(by_kind["followup"], {**gated, "turn_recall@5": lambda rs: _mean(float(h) for r in rs for h in r["turn_hits"])}),
        "filtered": _group(by_kind["filtered"], {**gated, "recall@5": recall(5),
                                                 "constraint_precision@5": lambda rs: _mean(r["constraint5"] for r in rs)}),
        "unanswerable": _group(by_kind["unanswerable"], {"declined": declined} if judge else {}),
        "latency_ms": _latency(latencies),
        "rewrite_latency_ms": _latency(rewrite_ms),
    }
    return report, rows


def _latency(values: list[float]) -> dict:
    if not values:
        return {}
    return {"p50": round(_pct(values, 0.5), 1), "p95": round(_pct(values, 0.95), 1), "n": len(values)}


def _pct(values: list[float], q: float) -> float:
    values = sorted(values)
    return values[min(len(values) - 1, int(round(q * (len(values) - 1))))]


def format_report(report: dict) -> str:
    """A short plain-text table of the figures."""
    lines = []
    for kind in KINDS:
        figures = report.get(kind) or {}
        shown = {k: v for k, v in figures.items() if k not in ("by_lang",)}
        langs = "; ".join(f"{lang}: " + ", ".join(f"{k} {v}" for k, v in vals.items())
                          for lang, vals in figures.get("by_lang", {}).items())
        lines.append(f"{kind:13s} " + ", ".join(f"{k} {v}" for k, v in shown.items()) + (f"  [{langs}]" if langs else ""))
    if report.get("latency_ms"):
        lat = report["latency_ms"]
        lines.append(f"retrieval latency p50 {lat['p50']} ms, p95 {lat['p95']} ms over {lat['n']} queries")
    if report.get("rewrite_latency_ms"):
        lat = report["rewrite_latency_ms"]
        lines.append(f"model query rewriting p50 {lat['p50']} ms, p95 {lat['p95']} ms over {lat['n']} rewrites")
    return "\n".join(lines)


# (question, filters) -> the finished answer, as the app would give it (k papers, model written)
AnswerFn = Callable[[str, Filters | None], "Answer"]


def evaluate_answers(questions: list[dict], answer: AnswerFn,
                     stated: Callable[[str], Filters] = lambda q: Filters(),
                     progress: Callable[[dict], None] = lambda row: None) -> tuple[dict, list[dict]]:
    """Answer-level figures for single-question kinds (follow-ups are retrieval-only here):
    refusals (wanted for unanswerable, unwanted for the rest), gold cited, citations outside the
    retrieved papers (must be 0), Chinese questions answered in Chinese (judged on the prose, not the
    comparison table), and the share of cited sentences the support check judged supported."""
    rows = []
    for q in questions:
        if q["kind"] == "followup":
            continue
        t0 = time.perf_counter()
        got = answer(q["question"], stated(q["question"]))
        relevant = set(q.get("gold", [])) | set(q.get("also_relevant", []))
        cited = [c.id for c in got.citations]
        retrieved = {s.paper.id for s in got.sources}
        checked = [c for c in got.sentences if c.supported is not None]
        rows.append({"qid": q["qid"], "kind": q["kind"], "lang": q["lang"], "refused": got.refused,
                     "refusal": got.refusal, "cited": cited, "cites_gold": bool(relevant & set(cited)),
                     "gold_retrieved": bool(relevant & retrieved),
                     "cites_all_gold": set(q.get("gold", [])) <= set(cited),
                     "cited_not_retrieved": len(set(cited) - retrieved),
                     "in_question_language": (language(got.prose) == "zh") == (q["lang"] == "zh"),
                     "sentences_checked": len(checked), "sentences_supported": sum(bool(c.supported) for c in checked),
                     "seconds": round(time.perf_counter() - t0, 1), "answer": got.text,
                     "retrieved": [s.paper.id for s in got.sources],
                     "sentences": [c.to_json() for c in got.sentences]})
        progress(rows[-1])

    def share(key, where=lambda r: True):
        return lambda rs: _mean(float(r[key]) for r in rs if where(r))

    def supported(rs):
        checked = sum(r["sentences_checked"] for r in rs)
        return round(sum(r["sentences_supported"] for r in rs) / checked, 3) if checked else None

    common = {"refusal_rate": share("refused"), "in_question_language": share("in_question_language"),
              "cited_not_retrieved": lambda rs: sum(r["cited_not_retrieved"] for r in rs) if rs else None}
    by_kind = defaultdict(list)
    for r in rows:
        by_kind[r["kind"]].append(r)
    answered = {"cites_gold": share("cites_gold"),
                "cites_gold_when_retrieved": share("cites_gold", lambda r: r["gold_retrieved"]),
                "supported_sentences": supported}
    report = {
        "lookup": _group(by_kind["lookup"], {**common, **answered}),
        "compare": _group(by_kind["compare"], {**common, "cites_both_gold": share("cites_all_gold"),
                                               "supported_sentences": supported}),
        "filtered": _group(by_kind["filtered"], {**common, **answered}),
        "unanswerable": _group(by_kind["unanswerable"], common),
        "answer_seconds": _latency([r["seconds"] * 1000 for r in rows]),
    }
    return report, rows


def run(pipeline, questions_path: str | Path, corpus: list[str] | None = None,
        answers: bool = False, progress: Callable[[dict], None] = lambda row: None,
        kinds: Sequence[str] = (), langs: Sequence[str] = ()) -> tuple[dict, list[dict]]:
    """Ingest `corpus` (if given; unchanged papers cost nothing), then evaluate retrieval on the questions,
    and with `answers` also the model's answers (slow on CPU: one full answer per question)."""
    if corpus:
        pipeline.ingest_files(corpus)
    questions = [q for q in load_questions(questions_path)
                 if (not kinds or q["kind"] in kinds) and (not langs or q["lang"] in langs)]
    k = max(10, pipeline.settings.retrieval.k)

    # (question, the turns before it) -> (intent, query): routed once. The whole history is the key: the same
    # follow-up ("What are its limitations?") means another paper in another conversation.
    asked: dict[tuple[str, tuple[Exchange, ...]], tuple] = {}

    def routed(question, history):
        key = (question, tuple(history))
        if key not in asked:
            intent = pipeline.route(question, history)
            asked[key] = (intent, pipeline.search_query(intent, history))
        return asked[key]

    def rewrite(question, history):
        return routed(question, history)[1]

    def retrieve(query, filters):
        return pipeline.retrieve(query.all, filters, k=k, referred=query.referred, described=query.described)

    def stated(question):
        return pipeline.route(question).filters

    def judge(question, history, sources, filters):
        intent, query = routed(question, history)
        return pipeline.coverage(intent, query, sources[:pipeline.settings.retrieval.k], filters, history)

    report, rows = evaluate_retrieval(questions, retrieve, stated, rewrite, judge)
    if answers:
        answer_report, answer_rows = evaluate_answers(
            questions, lambda question, filters: pipeline.ask(question, filters=filters), stated, progress)
        merge_answer_figures(report, answer_report)
        rows += answer_rows
    return report, rows


def merge_answer_figures(report: dict, answer_report: dict) -> None:
    """Answer figures go under the same kind keys (and by_lang) as the retrieval figures, prefixed `answer_`."""
    for kind, figures in answer_report.items():
        if kind == "answer_seconds":
            report["answer_latency_ms"] = figures
            continue
        target = report.setdefault(kind, {})
        for name, value in figures.items():
            if name == "by_lang":
                for lang, vals in value.items():
                    target.setdefault("by_lang", {}).setdefault(lang, {}).update(
                        {f"answer_{k}" if k != "n" else "answered_n": v for k, v in vals.items()})
            else:
                target[f"answer_{name}" if name != "n" else "answered_n"] = value

