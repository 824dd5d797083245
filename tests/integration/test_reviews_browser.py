"""Review-grounded answers and counting questions in a real browser, against `paperchat serve` with the real
embedded models (the shared app of conftest: seed papers plus the hostile one). Synthetic reviews of DroPE,
in the real shape, are written to the app's review store while it runs (the app opens it on first use).

SCREENSHOT_DIR=docs/screenshots with REVIEWS_DATA_DIR=<a full index on which
`paperchat ingest --reviews ../shared/data/reviews.jsonl.gz` was run> takes the README's screenshot on the
real reviews.
"""

from __future__ import annotations

import os

import pytest

from rag.corpus.reviews import ReviewStore, parse_line
from tests.integration.appserver import ask, open_page, running_app, screenshot, wait_for_answer

pytestmark = pytest.mark.integration
DROPE = "RlPVSeKjoc"
REVIEWS = {"id": DROPE, "reviews": [
    {"review_id": "RevAAA111", "rating": 6, "confidence": 4, "soundness": 3, "presentation": 3, "contribution": 3,
     "summary": "The paper drops positional embeddings after pretraining.", "strengths": "A simple recipe.",
     "weaknesses": "The experiments use only small models and a 2x context extension; the recalibration phase "
                   "is not ablated.", "questions": "How long is recalibration?"},
    {"review_id": "RevBBB222", "rating": 4, "confidence": 3, "soundness": 2, "presentation": 3, "contribution": 2,
     "summary": "NoPE extension.", "strengths": "Clear writing.",
     "weaknesses": "Comparisons to YaRN and other RoPE scaling methods are missing.", "questions": ""},
]}


@pytest.fixture(scope="module")
def reviews_app(request, tmp_path_factory):
    full = os.environ.get("REVIEWS_DATA_DIR")
    if full:
        env = {k: v for k, v in os.environ.items() if k != "OPENAI_API_KEY"} | {"PAPERCHAT_DATA_DIR": full}
        with running_app(env, tmp_path_factory.mktemp("reviews") / "app.log", timeout=600) as url:
            yield url, False
        return
    data = request.getfixturevalue("app_root") / "data"
    url = request.getfixturevalue("app_url")
    ReviewStore(data / "reviews" / "reviews.sqlite").add(parse_line(REVIEWS))
    yield url, True


def test_a_review_question_is_answered_from_reviews_cited_as_reviews(reviews_app, browser):
    url, synthetic = reviews_app
    page = open_page(browser, url)
    question = "What weaknesses did reviewers raise about DroPE?"
    ask(page, question)
    final = wait_for_answer(page, question)["final"]
    assert "References" in final and "(a reviewer's opinion) of" in final, final[:600]
    links = [a.get_attribute("href") for a in page.locator("#chat a", has_text="OpenReview").all()]
    assert any(f"forum?id={DROPE}&noteId=" in (h or "") for h in links), links
    if synthetic:
        assert any("noteId=RevAAA111" in h or "noteId=RevBBB222" in h for h in links if h)
    screenshot(page, "review-answer.png")

    count_q = "How many papers mention positional embeddings?"
    ask(page, count_q)  # a count has no References line: wait for its own wording
    page.locator("#chat").get_by_text("counted over the").first.wait_for(timeout=60_000)
    text = page.locator("#chat").inner_text()
    if synthetic:  # the seed papers: only DroPE says "positional embeddings"
        assert "1 paper matches" in text and DROPE in text
    else:
        assert "papers match" in text
    page.close()
