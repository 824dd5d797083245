"""The eval harness on a scripted retriever: the figures are computed from ranks, not guessed."""

import json

import pytest

from rag.corpus.papers import Paper
from rag.errors import CorpusError
from rag.eval.evaluate import evaluate_retrieval, format_report, load_questions
from rag.question.router import stated_filters as constraints_in
from rag.retrieve.filters import Filters
from rag.retrieve.search import Source

QUESTIONS = [
    {"qid": "L1", "kind": "lookup", "lang": "en", "question": "q1", "gold": ["A"], "also_relevant": []},
    {"qid": "L2", "kind": "lookup", "lang": "zh", "question": "q2", "gold": ["B"], "also_relevant": ["C"]},
    {"qid": "L3", "kind": "lookup", "lang": "en", "question": "q3", "gold": ["Z"], "also_relevant": []},
    {"qid": "C1", "kind": "compare", "lang": "en", "question": "q4", "gold": ["A", "B"], "also_relevant": []},
    {"qid": "F1", "kind": "followup", "lang": "en", "turns": [{"question": "t1", "gold": ["A"]},
                                                                {"question": "t2", "gold": ["Z"]}], "gold": ["A", "Z"]},
    {"qid": "X1", "kind": "filtered", "lang": "en", "question": "Which oral papers q5", "gold": ["A"]},
]
RANKING = {"q1": "ABCD", "q2": "DCBA", "q3": "ABCD", "q4": "BXYZA", "t1": "ABCD", "t2": "ABCD",
           "Which oral papers q5": "ABCD"}
STATUS = {"A": "Oral", "B": "Poster", "C": "Oral", "D": "Poster", "X": "Poster", "Y": "Poster", "Z": "Poster"}


def retrieve(query, filters):
    question = query.text
    return [Source(n, Paper(id=pid, title=pid, abstract="a", status=STATUS[pid]), 1.0 / n)
            for n, pid in enumerate(RANKING[question], start=1)]


def test_figures_follow_the_ranks():
    report, rows = evaluate_retrieval(QUESTIONS, retrieve, lambda q: constraints_in(q))
    lookup = report["lookup"]
    assert lookup["recall@1"] == round(1 / 3, 3)  # only L1 has its paper first
    assert lookup["recall@5"] == round(2 / 3, 3)  # L2 finds also_relevant C at rank 2; L3 never
    assert lookup["mrr@10"] == round((1 + 1 / 2 + 0) / 3, 3)
    assert lookup["by_lang"]["zh"] == {"recall@1": 0.0, "recall@5": 1.0, "recall@10": 1.0, "mrr@10": 0.5, "n": 1}
    assert report["compare"]["both_gold_top10"] == 1.0
    assert report["followup"]["turn_recall@5"] == 0.5
    assert report["filtered"]["constraint_precision@5"] == 0.5  # A and C are orals among A B C D
    assert report["latency_ms"]["n"] == 7
    assert "lookup" in format_report(report) and "p95" in format_report(report)
    assert json.loads(json.dumps(report)) == report  # --json prints it as is


def test_questions_file_errors_name_the_line(tmp_path):
    path = tmp_path / "q.jsonl"
    path.write_text(json.dumps(QUESTIONS[0]) + "\n{oops\n")
    with pytest.raises(CorpusError, match=":2: malformed JSON"):
        load_questions(path)
    path.write_text(json.dumps(dict(QUESTIONS[0], kind="trivia")) + "\n")
    with pytest.raises(CorpusError, match="unknown kind 'trivia'"):
        load_questions(path)


@pytest.mark.parametrize("question, statuses, areas", [
    ("Which ORAL papers distill video diffusion?", ("Oral", "Oral (conditional)"), ()),
    ("Which accepted papers in the datasets and benchmarks area evaluate LLMs?",
     ("Oral", "Oral (conditional)", "Poster", "Poster (conditional)"), ("datasets and benchmarks",)),
    ("哪些已录用的论文研究元认知？", ("Oral", "Oral (conditional)", "Poster", "Poster (conditional)"), ()),
    ("Papers in the made-up area about cats", (), ()),  # unknown areas never filter everything out
    ("What is DroPE?", (), ()),
])
def test_constraints_stated_in_questions(question, statuses, areas):
    got = constraints_in(question, ["datasets and benchmarks", "reinforcement learning"])
    assert got == Filters(statuses=statuses, primary_areas=areas)


def test_answer_figures_come_from_the_answers():
    from rag.answer.types import Answer
    from rag.answer.citations import Citation
    from rag.eval.evaluate import evaluate_answers, merge_answer_figures

    questions = [
        {"qid": "L1", "kind": "lookup", "lang": "en", "question": "q1", "gold": ["A"]},
        {"qid": "L2", "kind": "lookup", "lang": "zh", "question": "问题二", "gold": ["B"]},
        {"qid": "C1", "kind": "compare", "lang": "en", "question": "q4", "gold": ["A", "B"]},
        {"qid": "U1", "kind": "unanswerable", "lang": "en", "question": "u1", "gold": []},
        {"qid": "U2", "kind": "unanswerable", "lang": "en", "question": "u2", "gold": []},
    ]
    papers = {pid: Paper(id=pid, title=pid, abstract="a", status="Poster") for pid in "ABC"}
    sources = [Source(n, papers[pid], 1.0) for n, pid in enumerate("ABC", start=1)]

    def cite(*ids):
        return [Citation(n=sources["ABC".index(i)].n, id=i, title=i, status="Poster", url="") for i in ids]

    scripted = {
        "q1": Answer("q1", "A does it [1].", sources, cite("A")),
        "问题二": Answer("问题二", "The answer is in English [3].", sources, cite("C")),  # wrong paper, wrong language
        "q4": Answer("q4", "A [1] and B [2].", sources, cite("A", "B")),
        "u1": Answer("u1", "The retrieved papers do not cover this question.", sources, [], refusal="model"),
        "u2": Answer("u2", "C invents an answer [3].", sources, cite("C")),
    }
    report, rows = evaluate_answers(questions, lambda q, f: scripted[q])
    assert report["lookup"]["cites_gold"] == 0.5 and report["lookup"]["refusal_rate"] == 0.0
    assert report["lookup"]["by_lang"]["zh"]["in_question_language"] == 0.0
    assert report["compare"]["cites_both_gold"] == 1.0
    assert report["unanswerable"]["refusal_rate"] == 0.5
    assert report["lookup"]["cited_not_retrieved"] == 0
    retrieval, _ = evaluate_retrieval(QUESTIONS, retrieve)
    merge_answer_figures(retrieval, report)
    assert retrieval["unanswerable"]["answer_refusal_rate"] == 0.5
    assert retrieval["lookup"]["by_lang"]["zh"]["answer_cites_gold"] == 0.0
    assert json.loads(json.dumps(retrieval)) == retrieval


def test_the_check_before_the_model_is_scored_per_question_and_turn():
    from rag.answer.coverage import Coverage, Signals

    unanswerable = {"qid": "U1", "kind": "unanswerable", "lang": "en", "question": "q1", "gold": []}
    declined_ones = {"q1", "t2"}  # U1 declined (right), L1 declined (wrong), the follow-up's second turn declined

    def judge(question, history, sources, filters):
        s = Signals(closest=0.3, rare_coverage=0.0, term_coverage=0.2, agreement=0.4)
        return Coverage(question not in declined_ones, signals=s, probability=0.1)

    questions = [unanswerable, QUESTIONS[0], QUESTIONS[3], QUESTIONS[4]]
    report, rows = evaluate_retrieval(questions, retrieve, judge=judge)
    assert report["unanswerable"]["declined"] == 1.0
    assert report["lookup"]["kept"] == 0.0 and report["compare"]["kept"] == 1.0
    assert report["followup"]["kept"] == 0.5  # one of its two turns
    follow = next(r for r in rows if r["qid"] == "F1")
    assert follow["declined"] == [False, True] and follow["gate"][0]["signals"]["agreement"] == 0.4
    assert "declined" not in evaluate_retrieval(questions, retrieve)[0]["unanswerable"]  # no judge, no figure


class _Pipeline:
    """Just enough of a Pipeline for `run`: the query of a follow-up is the paper the previous turn showed first."""

    class settings:
        class retrieval:
            k = 4

    def route(self, question, history=()):
        from rag.question.router import Intent

        return Intent(question=question, followup=bool(history))

    def search_query(self, intent, history=()):
        from rag.question.rewrite import Query

        return Query(f"{history[-1].papers[0]} {intent.question}" if history else intent.question, bool(history))

    def retrieve(self, queries, filters=None, k=10, referred=(), described=()):
        first = queries[0].split()[0]
        return [Source(n, Paper(id=pid, title=pid, abstract="a"), 1.0 / n)
                for n, pid in enumerate(RANKING.get(first, first), start=1)]

    def coverage(self, *args):
        return None


def test_the_same_follow_up_in_two_conversations_is_rewritten_for_each(tmp_path):
    from rag.eval.evaluate import run

    path = tmp_path / "q.jsonl"
    conversations = [{"qid": f"F{i}", "kind": "followup", "lang": "en", "gold": [first],
                      "turns": [{"question": first, "gold": [first]}, {"question": "limits?", "gold": [first]}]}
                     for i, first in enumerate("AB")]
    path.write_text("".join(json.dumps(c) + "\n" for c in conversations))
    report, rows = run(_Pipeline(), path)
    assert [r["queries"][1] for r in rows] == ["A limits?", "B limits?"]
    assert report["followup"]["turn_recall@5"] == 1.0
