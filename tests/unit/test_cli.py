import json

import pytest

from rag.cli import EXIT_ERROR, EXIT_OK, EXIT_SKIPPED, main
from rag.pipeline import build_pipeline
from rag.settings import SEED_CORPUS, Settings
from tests.fakes import WordHashEmbeddings, fake_chat


@pytest.fixture
def factory():
    def make(settings, reply="DroPE drops positional embeddings after pretraining [1]. Unrelated [9]."):
        return build_pipeline(settings, embeddings=WordHashEmbeddings(), llm=fake_chat(reply))
    return make


def test_ingest_then_ask_json(factory, capsys):
    assert main(["ingest", str(SEED_CORPUS)], pipeline_factory=factory) == EXIT_OK
    assert "19 new" in capsys.readouterr().out
    assert main(["ask", "--json", "Dropping positional embedding extends context of pretrained LLMs?"], pipeline_factory=factory) == EXIT_OK
    out = json.loads(capsys.readouterr().out)
    assert set(out) >= {"answer", "citations", "retrieved"}
    assert out["retrieved"][0] == "RlPVSeKjoc" and len(out["retrieved"]) == 4
    assert out["citations"] == [{"n": 1, "id": "RlPVSeKjoc", "title": "Extending the Context of Pretrained LLMs by Dropping Their Positional Embedding"}]
    assert "[9]" not in out["answer"]


def test_ask_prints_answer_then_numbered_references(factory, capsys):
    assert main(["ask", "Dropping positional embedding extends context of pretrained LLMs?"], pipeline_factory=factory) == EXIT_OK
    out = capsys.readouterr().out  # the shipped corpus is ingested on first use
    answer, refs = out.split("References")
    assert "[1]" in answer
    assert "[1] Extending the Context of Pretrained LLMs" in refs and "(Poster)" in refs
    assert "https://openreview.net/forum?id=RlPVSeKjoc" in refs


def test_ingest_with_bad_lines_exits_1_and_names_them(factory, tmp_path, capsys):
    path = tmp_path / "c.jsonl"
    path.write_text(SEED_CORPUS.read_text().splitlines()[0] + "\n{broken\n")
    assert main(["ingest", str(path)], pipeline_factory=factory) == EXIT_SKIPPED
    captured = capsys.readouterr()
    assert f"{path}:2: skipped: malformed JSON" in captured.err
    assert "1 papers loaded, 1 lines skipped" in captured.out


def test_errors_are_one_line_not_a_traceback(factory, tmp_path, capsys):
    assert main(["ingest", str(tmp_path / "missing.jsonl")], pipeline_factory=factory) == EXIT_ERROR
    err = capsys.readouterr().err
    assert err.startswith("paperchat: error:") and "no such file" in err and "Traceback" not in err


def test_ingest_prune_deletes_papers_not_in_the_files(factory, tmp_path, capsys):
    assert main(["ingest", str(SEED_CORPUS)], pipeline_factory=factory) == EXIT_OK
    subset = tmp_path / "subset.jsonl"
    subset.write_text("\n".join(SEED_CORPUS.read_text().splitlines()[:5]) + "\n")
    capsys.readouterr()
    assert main(["ingest", "--prune", str(subset)], pipeline_factory=factory) == EXIT_OK
    out = capsys.readouterr().out
    assert "5 unchanged" in out and "pruned 14 papers that are not in the given files" in out
    assert main(["ingest", "--prune", str(subset)], pipeline_factory=factory) == EXIT_OK
    assert "pruned 0 papers" in capsys.readouterr().out


def test_ingest_prune_refuses_when_lines_were_skipped(factory, tmp_path, capsys):
    assert main(["ingest", str(SEED_CORPUS)], pipeline_factory=factory) == EXIT_OK
    broken = tmp_path / "broken.jsonl"
    broken.write_text(SEED_CORPUS.read_text().splitlines()[0] + "\n{broken\n")
    capsys.readouterr()
    assert main(["ingest", "--prune", str(broken)], pipeline_factory=factory) == EXIT_SKIPPED
    captured = capsys.readouterr()
    assert "not pruned: 1 lines were skipped" in captured.err and "pruned" not in captured.out
    with factory(Settings()) as pipeline:
        assert len(pipeline.index.paper_ids()) == 19


def test_eval_prints_json_figures(factory, tmp_path, capsys):
    questions = tmp_path / "q.jsonl"
    questions.write_text(json.dumps({"qid": "L1", "kind": "lookup", "lang": "en", "gold": ["RlPVSeKjoc"],
                                     "question": "Dropping positional embedding extends context of pretrained LLMs?"}) + "\n")
    assert main(["eval", str(questions), "--corpus", str(SEED_CORPUS), "--retrieval-only", "--json"],
                pipeline_factory=factory) == EXIT_OK
    report = json.loads(capsys.readouterr().out)
    assert set(report) >= {"lookup", "compare", "followup", "filtered", "unanswerable"}
    assert report["lookup"]["recall@1"] == 1.0 and report["lookup"]["by_lang"]["en"]["n"] == 1


def test_eval_can_run_one_kind_or_language(factory, tmp_path, capsys):
    questions = tmp_path / "q.jsonl"
    lines = [{"qid": "L1", "kind": "lookup", "lang": "en", "gold": ["RlPVSeKjoc"],
              "question": "Dropping positional embedding extends context of pretrained LLMs?"},
             {"qid": "L2", "kind": "lookup", "lang": "zh", "gold": ["RlPVSeKjoc"], "question": "去掉位置编码能扩展上下文吗？"},
             {"qid": "U1", "kind": "unanswerable", "lang": "en", "gold": [], "question": "Beekeeping with audio?"}]
    questions.write_text("".join(json.dumps(q) + "\n" for q in lines))
    for flags, lookups, unanswerable in ((["--lang", "en"], 1, 1), (["--kind", "unanswerable"], 0, 1)):
        assert main(["eval", str(questions), "--corpus", str(SEED_CORPUS), "--retrieval-only", "--json", *flags],
                    pipeline_factory=factory) == EXIT_OK
        report = json.loads(capsys.readouterr().out)
        assert report["lookup"].get("n", 0) == lookups and report["unanswerable"].get("n", 0) == unanswerable


def test_eval_with_answers_writes_each_answer_row(factory, tmp_path, capsys):
    questions = tmp_path / "q.jsonl"
    questions.write_text(json.dumps({"qid": "L1", "kind": "lookup", "lang": "en", "gold": ["RlPVSeKjoc"],
                                     "question": "Dropping positional embedding extends context of pretrained LLMs?"}) + "\n")
    rows = tmp_path / "rows.jsonl"
    assert main(["eval", str(questions), "--corpus", str(SEED_CORPUS), "--json", "--rows", str(rows)],
                pipeline_factory=factory) == EXIT_OK
    report = json.loads(capsys.readouterr().out)
    assert report["lookup"]["answer_cites_gold"] == 1.0 and report["lookup"]["answer_cited_not_retrieved"] == 0
    assert report["lookup"]["answer_supported_sentences"] == 1.0  # the fake's one cited sentence is in the abstract
    written = [json.loads(line) for line in rows.read_text().splitlines()]
    answered = [r for r in written if "answer" in r]
    assert len(answered) == 1 and answered[0]["sentences"][0]["supported"] is True
    assert len(written) == 2  # and the retrieval row


def test_ask_lists_sentences_the_cited_abstract_does_not_support(factory, capsys):
    reply = "DroPE drops positional embeddings after pretraining [1]. It was trained on 4,096 TPUs for a year [1]."
    assert main(["ask", "Dropping positional embedding extends context of pretrained LLMs?"],
                pipeline_factory=lambda s: factory(s, reply)) == EXIT_OK
    out = capsys.readouterr().out
    flagged = out.split("Not supported by the abstract it cites")[1]
    assert "It was trained on 4,096 TPUs for a year [1]. (not in the abstract: 4096, TPUs)" in flagged
    assert "DroPE drops" not in flagged


def test_a_name_no_paper_mentions_is_declined_without_calling_the_model(factory, capsys):
    from langchain_core.language_models.fake_chat_models import GenericFakeChatModel

    class Exploding(GenericFakeChatModel):
        def _stream(self, *a, **k):
            raise AssertionError("the model must not be called")

    def make(settings):
        return build_pipeline(settings, embeddings=WordHashEmbeddings(), llm=Exploding(messages=iter([])))

    assert main(["ask", "--json", "What pruning criterion does TetraPrune use for vision transformers?"],
                pipeline_factory=make) == EXIT_OK
    out = json.loads(capsys.readouterr().out)
    assert out["refused"] is True and out["citations"] == []
    assert out["answer"].startswith("The retrieved papers do not cover this question (no indexed paper mentions TetraPrune).")
    assert "The closest papers found:" in out["answer"] and len(out["retrieved"]) == 4
