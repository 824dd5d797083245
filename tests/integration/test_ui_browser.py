"""What a person sees, in Debian's Chromium driven by Playwright, against `paperchat serve` with the
real embedded models. The corpus is the shipped seed papers plus one hostile paper whose title and
abstract carry HTML/JS and a prompt injection.

Set SCREENSHOT_DIR to keep the screenshots (the README's come from `SCREENSHOT_DIR=docs/screenshots`).
"""

from __future__ import annotations

import re
import time
from pathlib import Path

import pytest

from tests.integration.appserver import (WRITING, ask, assistant_text, bot_count, open_page, screenshot,
                                        wait_for_answer)

pytestmark = pytest.mark.integration


def test_sources_first_streamed_answer_citation_panel_followup_and_isolated_tabs(app_url, browser):
    page = open_page(browser, app_url)
    t0 = ask(page, "What is DroPE and why does it extend context?")
    seen = wait_for_answer(page, "What is DroPE and why does it extend context?")
    assert seen["sources"] <= seen["quotes"] <= seen["writing"] < seen["first_token"] < seen["done"], seen
    assert seen["sources"] - t0 < 5.0 and seen["quotes"] - t0 < 5.0  # cited quotes without waiting for the model
    answers = [t.split("Reading ")[0] for t in seen["texts"] if "Writing a summary" not in t]
    assert len({a for a in answers if a.strip()}) >= 3, "the answer should arrive in several pieces"
    final = seen["final"]
    assert "References" in final and "Extending the Context of Pretrained LLMs" in final
    screenshot(page, "answer-en.png")

    page.locator("#chat .message-row.bot-row").nth(0).locator("a[href^='#cite-0-1']").first.click()
    panel = page.locator("#paper-panel")
    panel.get_by_text("Extending the Context of Pretrained LLMs").wait_for(timeout=10_000)
    assert "Status Poster" in panel.inner_text() and "Dropping" in panel.inner_text()
    assert panel.locator("mark").count() >= 1  # the passage given to the model is highlighted
    assert panel.locator("a[href='https://openreview.net/forum?id=RlPVSeKjoc']").count() == 1
    screenshot(page, "citation-panel.png")

    ask(page, "What are its main observations about positional embeddings?")
    box = page.locator("#question textarea")
    box.fill("a next question typed while the answer is written")
    followup = wait_for_answer(page, "What are its main observations about positional embeddings?")
    assert "Extending the Context of Pretrained LLMs" in followup["final"]  # "its" resolved to DroPE
    time.sleep(2)  # the end of the turn (map, exports) must not wipe what the user typed meanwhile
    assert box.input_value() == "a next question typed while the answer is written"
    box.fill("")
    assert bot_count(page, expected=2) == 2

    with page.expect_download() as download:
        page.locator("#export-md").click()
    exported = Path(download.value.path()).read_text()
    assert "**Q:** What is DroPE and why does it extend context?" in exported
    assert "[@RlPVSeKjoc]" in exported and "## References" in exported

    other = open_page(browser, app_url)  # a second tab is a second session
    time.sleep(1)
    assert bot_count(other, expected=0) == 0 and "DroPE" not in other.locator("#chat").inner_text()
    assert bot_count(page, expected=2) == 2
    other.close()
    page.close()


def test_stop_really_stops_and_the_next_question_works_in_chinese(app_url, browser, model_log):
    page = open_page(browser, app_url)
    ask(page, "How can KV cache eviction be made accurate without generating a draft response?")
    deadline = time.monotonic() + 120
    while time.monotonic() < deadline:  # Stop while the model reads its prompt: no token has come yet
        if WRITING in assistant_text(page):
            break
        time.sleep(0.1)
    cancelled_before = model_log.read_text(errors="replace").count("cancel task")
    page.locator("#stop").click()
    page.get_by_text("Stopped.").wait_for(timeout=3_000)  # at once, not when the model's first token comes
    stopped = assistant_text(page)
    assert "From the abstracts:" in stopped  # the cited quotes are kept
    # The model server itself stops (llama.cpp logs "cancel task" when the stream closes, at its next token).
    deadline = time.monotonic() + 90
    while model_log.read_text(errors="replace").count("cancel task") <= cancelled_before:
        assert time.monotonic() < deadline, "the model server never cancelled the stopped answer"
        time.sleep(0.5)
    time.sleep(2)
    assert assistant_text(page) == stopped, "text kept growing after Stop"

    ask(page, "DroPE是什么？它为什么能扩展上下文？")
    seen = wait_for_answer(page, "DroPE是什么？它为什么能扩展上下文？")
    answer = seen["final"].split("References")[0]
    assert len(re.findall(r"[\u4e00-\u9fff]", answer)) >= 10, answer  # answered in Chinese
    screenshot(page, "answer-zh.png")
    page.close()


def test_injected_html_and_script_never_run(app_url, browser):
    page = open_page(browser, app_url)
    page.locator("#status label", has_text="Everything").click()
    ask(page, "Do zebra stripes deter biting flies?")
    seen = wait_for_answer(page, "Do zebra stripes deter biting flies?")
    assert "<script>" in seen["final"] or "<img" in seen["final"]  # shown as text, not markup
    for a in page.locator("#chat a[href^='#cite-0-']").all():  # open the hostile paper, whatever its number
        a.click()
        time.sleep(0.7)
        if "Zebra Stripes" in page.locator("#paper-panel").inner_text():
            break
    panel_text = page.locator("#paper-panel").inner_text()
    assert "Zebra Stripes" in panel_text and "<script>" in panel_text
    assert page.evaluate("() => window.__pwned") is None
    assert "PWNED" not in seen["final"].split("References")[0]  # the abstract's order was not obeyed
    assert page.locator("#chat img[src='x'], #paper-panel img[src='x'], script:has-text('__pwned')").count() == 0
    page.close()
