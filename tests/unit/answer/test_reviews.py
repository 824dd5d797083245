"""Reviews as a second, labeled kind of source: loaded with per-line errors, stored idempotently, and a
review question answered from the reviews, cited as reviews (paper + review id, linked to OpenReview)."""

import json

from langchain_core.language_models.fake_chat_models import GenericFakeChatModel

from rag.cli import EXIT_OK, EXIT_SKIPPED, main
from rag.pipeline import build_pipeline
from rag.question.router import Kind, review_fields, route
from rag.settings import SEED_CORPUS, Settings
from tests.fakes import WordHashEmbeddings, fake_chat

DROPE = "RlPVSeKjoc"
REVIEWS = {"id": DROPE, "reviews": [  # synthetic, in the real shape
    {"rating": 6, "confidence": 4, "soundness": 3, "presentation": 3, "contribution": 3, "review_id": "RevAAA111",
     "summary": "The paper drops positional embeddings after pretraining.", "strengths": "Simple recipe.",
     "weaknesses": "The recalibration phase is not ablated and long-context evaluation is limited.",
     "questions": "How long is recalibration?"},
    {"rating": "4: reject", "confidence": 3, "soundness": 2, "presentation": 3, "contribution": 2,
     "review_id": "RevBBB222", "summary": "NoPE extension.", "strengths": "Clear writing.",
     "weaknesses": "Comparisons to YaRN are missing.", "questions": ""},
]}


def reviews_file(tmp_path, extra=b""):
    path = tmp_path / "reviews.jsonl"
    path.write_bytes(json.dumps(REVIEWS).encode() + b"\n" + extra)
    return path


def factory_with(reply):
    def make(settings):
        return build_pipeline(settings, embeddings=WordHashEmbeddings(), llm=fake_chat(reply))
    return make


def test_ingest_reviews_reports_bad_lines_and_is_idempotent(tmp_path, capsys):
    make = factory_with("x")
    assert main(["ingest", str(SEED_CORPUS)], pipeline_factory=make) == EXIT_OK
    path = reviews_file(tmp_path, b'{"id": "X", "reviews": [{"rating": 5}]}\n{oops\n'
                                  b'{"id": "Orphan0001", "reviews": [{"review_id": "R9", "rating": 3}]}\n')
    assert main(["ingest", "--reviews", str(path)], pipeline_factory=make) == EXIT_SKIPPED
    out, err = capsys.readouterr()
    assert f"{path}:2: skipped: review 1 has no 'review_id'" in err and f"{path}:3: skipped: malformed JSON" in err
    assert "3 reviews of 2 papers loaded (3 new), 2 lines skipped; 1 reviews are of papers not in the index" in out
    assert main(["ingest", "--reviews", str(path)], pipeline_factory=make) == EXIT_SKIPPED
    assert "(0 new)" in capsys.readouterr().out


def test_a_review_question_is_answered_from_the_reviews_and_cited_as_reviews(tmp_path):
    prompts = []

    class Recording(GenericFakeChatModel):
        def _stream(self, messages, *a, **k):
            prompts.append("\n".join(str(m.content) for m in messages))
            yield from super()._stream(messages, *a, **k)

    from langchain_core.messages import AIMessage
    llm = Recording(messages=iter([AIMessage(
        "A reviewer notes the recalibration phase is not ablated [1]. Another says comparisons to YaRN are missing [2].")]))
    settings = Settings(retrieval={"rewrite": "off"})
    pipeline = build_pipeline(settings, embeddings=WordHashEmbeddings(), llm=llm)
    pipeline.ensure_ingested()
    from rag.corpus.reviews import load_reviews
    pipeline.ingest_reviews(load_reviews([reviews_file(tmp_path)])[0])
    answer = pipeline.ask("What weaknesses did reviewers raise about dropping positional embeddings (DroPE)?")
    assert [s.review_id for s in answer.sources] == ["RevAAA111", "RevBBB222"]
    assert "Official review RevAAA111 of the paper" in prompts[0] and "not the papers' own claims" in prompts[0]
    assert "Weaknesses: The recalibration phase is not ablated" in prompts[0] and "Simple recipe" not in prompts[0]
    cites = answer.to_json()["citations"]
    assert cites[0] == {"n": 1, "id": DROPE, "title": answer.sources[0].paper.title, "kind": "review",
                        "review_id": "RevAAA111", "url": f"https://openreview.net/forum?id={DROPE}&noteId=RevAAA111"}
    assert [s.supported for s in answer.sentences] == [True, True]  # checked against the review text
    from ui import render
    final = render.final_message(0, answer)
    assert "Review RevAAA111 (a reviewer's opinion) of" in final and "noteId=RevBBB222" in final and "rating 4" in final


def test_without_reviews_it_says_how_to_load_them_and_never_calls_the_model():
    class Never(GenericFakeChatModel):
        def _stream(self, *a, **k):
            raise AssertionError("the model was called")

    pipeline = build_pipeline(Settings(retrieval={"rewrite": "off"}), embeddings=WordHashEmbeddings(),
                              llm=Never(messages=iter([])))
    pipeline.ensure_ingested()
    answer = pipeline.ask("What did reviewers say about DroPE?")
    assert "are not loaded" in answer.text and "paperchat ingest --reviews" in answer.text and answer.refused


def test_what_counts_as_a_review_question_and_which_part_is_read():
    def is_review_question(q):
        return route(q).kind is Kind.REVIEW

    assert is_review_question("What weaknesses did reviewers raise about DroPE?")
    assert is_review_question("审稿人对DroPE提出了哪些缺点？") and is_review_question("Which KV-cache papers were rated well?")
    assert route("Which KV-cache papers were rated highest?").kind is Kind.AGGREGATE  # a ranking, computed in code
    assert not is_review_question("What are the weaknesses of DroPE?")  # the paper's own limitations
    assert not is_review_question("Is there a review of KV cache methods?")  # a survey
    assert review_fields("what weaknesses did reviewers raise") == ("weaknesses",)
    assert review_fields("审稿人提出了哪些缺点") == ("weaknesses",)
    assert route("what did reviewers think of DroPE").review_fields == ("summary", "strengths", "weaknesses")


def test_the_paper_is_searched_without_the_review_words():
    from rag.answer.reviews import review_topic

    assert review_topic("What weaknesses did reviewers raise about DroPE?") == "DroPE"
    assert review_topic("Which KV-cache eviction papers had the highest ratings?") == "KV-cache eviction"
    assert review_topic("What did the reviewers say?") == "What did the reviewers say?"  # nothing left: as asked
    assert review_topic("What strengths did reviewers see in MMSI-Bench?") == "MMSI-Bench"


def test_names_are_found_next_to_chinese_letters_and_from_a_titles_colon():
    from rag.text import coined_names, names_paper, title_name

    assert coined_names("审稿人对FastEdit提出了哪些缺点？") == ["FastEdit"]
    assert title_name("DRL-STAF: A Deep Reinforcement Learning Framework") == "DRL-STAF"
    assert title_name("Decomposing Extrapolative Problem Solving: Spatial Transfer") == ""  # a sentence, not a name
    assert title_name("Visual Spatial Tuning") == ""
    assert names_paper("审稿人对CSAPR提出了哪些缺点？", "CSAPR: Complex-Scenario-Aware Prompt Refinement")
    assert names_paper("what did reviewers say about mmsi-bench", "MMSI-Bench: A Benchmark for Multi-Image")
    assert not names_paper("What did reviewers say about MMSI-Bench-2?", "MMSI-Bench: A Benchmark")  # another name
    question = "审稿人对REALIGN提出了哪些缺点？"  # two papers: "REALIGN: ..." and "ReAlign: ..."
    assert names_paper(question, "REALIGN: Regularized Procedure Alignment") > names_paper(question, "ReAlign: Safety")


def test_the_paper_a_title_names_comes_before_papers_that_mention_it_more(tmp_path):
    """A paper that evaluates on "ZQ-Bench" many times outranks the benchmark's own paper in search; the review
    question is about the paper whose title gives the name."""
    own, user = "ZqOwnPaper", "ZqUserPapr"
    corpus = tmp_path / "corpus.jsonl"
    corpus.write_text("\n".join(json.dumps(r) for r in [
        {"id": own, "title": "ZQ-Bench: A Benchmark for Spatial Questions",
         "abstract": "We build a benchmark of spatial questions over many images and evaluate models on it."},
        {"id": "ZqOtherCase", "title": "Zq-Bench: Zero-Shot Queries for Spatial Benchmarks",
         "abstract": "Zero-shot spatial questions, a benchmark of queries on ZQ-Bench style images."},
        {"id": user, "title": "Spatial Tuning of Vision Models",
         "abstract": "On ZQ-Bench our tuned model gains 9 points; ZQ-Bench results, ZQ-Bench ablations and ZQ-Bench "
                     "error analysis show spatial tuning helps."},
    ]) + "\n")
    reviews = tmp_path / "reviews.jsonl"
    reviews.write_text("\n".join(json.dumps({"id": pid, "reviews": [{"review_id": f"Rev{pid[:4]}{i}", "rating": 5,
                                                                    "weaknesses": f"Weakness {i} of {pid}."}]})
                                 for i, pid in enumerate([own, user, "ZqOtherCase"])) + "\n")
    pipeline = build_pipeline(Settings(data_dir=tmp_path / "data", retrieval={"rewrite": "off"}),
                              embeddings=WordHashEmbeddings(), llm=fake_chat("Weakness [1].", "Weakness [1]."))
    pipeline.ingest_files([corpus])
    from rag.corpus.reviews import load_reviews
    pipeline.ingest_reviews(load_reviews([reviews])[0])
    assert pipeline.retrieve(["ZQ-Bench"], None, 10)[0].paper.id == user  # what search alone puts first
    for question in ["What weaknesses did reviewers raise about ZQ-Bench?", "审稿人对ZQ-Bench提出了哪些缺点？"]:
        answer = pipeline.ask(question)
        assert {s.paper.id for s in answer.sources} == {own} and answer.sources[0].review_id, question



def test_a_fields_acronym_does_not_pick_the_paper_whose_reviews_are_read(tmp_path):
    """"LLMs" in a review question names a field, not a paper: a paper whose abstract says "large language models
    (LLMs)" is not the one the question is about, and the search's order stands."""
    spatial, prompting = "SpatialAAA", "PromptBBBB"
    corpus = tmp_path / "corpus.jsonl"
    corpus.write_text("\n".join(json.dumps(r) for r in [
        {"id": spatial, "title": "Spatial Questions over Image Collections",
         "abstract": "We answer spatial questions over image collections with a retrieval model of image regions."},
        {"id": prompting, "title": "Prompting Tricks for Chat Assistants",
         "abstract": "Large language models (LLMs) follow prompts. We study LLMs as chat assistants; LLMs improve."},
    ]) + "\n")
    reviews = tmp_path / "reviews.jsonl"
    reviews.write_text("\n".join(json.dumps({"id": pid, "reviews": [{"review_id": f"Rev{pid[:4]}", "rating": 5,
                                                                    "weaknesses": f"A weakness of {pid}."}]})
                                 for pid in [spatial, prompting]) + "\n")
    pipeline = build_pipeline(Settings(data_dir=tmp_path / "data", retrieval={"rewrite": "off"}),
                              embeddings=WordHashEmbeddings(), llm=fake_chat("A weakness [1]."))
    pipeline.ingest_files([corpus])
    from rag.corpus.reviews import load_reviews
    pipeline.ingest_reviews(load_reviews([reviews])[0])
    answer = pipeline.ask("What weaknesses did reviewers raise about spatial questions over image collections "
                          "answered by LLMs?")
    assert answer.sources[0].paper.id == spatial and spatial in {s.paper.id for s in answer.sources}


def test_a_named_papers_reviews_are_the_only_sources():
    """Other papers retrieved for "DroPE" have reviews too; a question naming DroPE (the paper introduces the
    name) reads only DroPE's reviews: another paper's would answer a question not asked."""
    pipeline = build_pipeline(Settings(retrieval={"rewrite": "off"}), embeddings=WordHashEmbeddings(),
                              llm=fake_chat("Weak [1]."))
    pipeline.ensure_ingested()
    from rag.corpus.reviews import parse_line
    others = [s.paper.id for s in pipeline.retrieve(["DroPE"], None, 10) if s.paper.id != DROPE][:3]
    assert others, "the search must find other papers for the test to mean anything"
    lines = [REVIEWS] + [{"id": pid, "reviews": [{"review_id": f"RevOther{i}", "rating": 5, "weaknesses": "Vague."}]}
                         for i, pid in enumerate(others)]
    pipeline.ingest_reviews([review for line in lines for review in parse_line(line)])
    answer = pipeline.ask("What weaknesses did reviewers raise about DroPE?")
    assert [(s.paper.id, s.review_id) for s in answer.sources] == [(DROPE, "RevAAA111"), (DROPE, "RevBBB222")]


def test_shipped_scores_rank_papers_but_do_not_answer_review_questions_and_keep_texts(tmp_path):
    from rag.corpus.reviews import load_scores, scores_path

    corpus = tmp_path / "conf.jsonl"
    corpus.write_text(SEED_CORPUS.read_text())
    import gzip

    scores_path(corpus).write_bytes(gzip.compress(
        ("paper_id,review_id,rating,confidence,soundness,presentation,contribution\n"
         f"{DROPE},RevAAA111,8,4,3,3,3\n{DROPE},RevBBB222,6,3,2,3,2\n").encode()))
    assert [r.rating for r in load_scores(scores_path(corpus))] == [8, 6]
    pipeline = build_pipeline(Settings(data_dir=tmp_path / "data", retrieval={"rewrite": "off"}),
                              embeddings=WordHashEmbeddings(), llm=fake_chat("Weakness [1]."))
    pipeline.ingest_files([corpus])  # the scores file next to the corpus is loaded with it
    ranked = pipeline.ask("Which papers had the highest ratings?")
    assert ranked.counted and "**7.00** (2 reviews: 8, 6)" in ranked.text
    answer = pipeline.ask("What weaknesses did reviewers raise about DroPE?")
    assert answer.refused and "scores only" in answer.text  # no text to read: the model is not asked
    pipeline.ingest_reviews(load_reviews_file(tmp_path))  # the texts, loaded later ...
    pipeline.ingest_files([corpus])  # ... survive the scores being loaded again
    answer = pipeline.ask("What weaknesses did reviewers raise about DroPE?")
    assert not answer.refused and answer.citations[0].review_id == "RevAAA111"


def load_reviews_file(tmp_path):
    from rag.corpus.reviews import load_reviews

    return load_reviews([reviews_file(tmp_path)])[0]
