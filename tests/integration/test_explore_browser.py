"""The explore parts in a real browser against `paperchat serve` with the real embedded models: the cited
papers light up on the topic map, a cluster scopes the next answer, "Similar papers" from a cited paper,
and two pinned papers compared.

By default the app runs on the seed papers (conftest's app). EXPLORE_DATA_DIR=<a full-corpus data dir>
runs it on that index instead (the README's map screenshot: SCREENSHOT_DIR=docs/screenshots).
"""

from __future__ import annotations

import json
import os
import re
import time
from pathlib import Path

import pytest

from tests.integration.appserver import ask, assistant_text, bot_count, open_page, running_app, screenshot, \
    wait_for_answer
from ui.explore import CITED

pytestmark = pytest.mark.integration


@pytest.fixture(scope="module")
def explore_app(request, tmp_path_factory):
    """(url, data dir) of the app under test."""
    full = os.environ.get("EXPLORE_DATA_DIR")
    if not full:
        yield request.getfixturevalue("app_url"), request.getfixturevalue("app_root") / "data"
        return
    env = {k: v for k, v in os.environ.items() if k != "OPENAI_API_KEY"} | {"PAPERCHAT_DATA_DIR": full}
    with running_app(env, tmp_path_factory.mktemp("explore") / "app.log", timeout=600) as url:
        yield url, Path(full)


def stored_map(data_dir: Path) -> dict:
    files = sorted((data_dir / "topics").glob("*.json"), key=lambda p: p.stat().st_mtime)
    assert files, "the app stored no topic map"
    return json.loads(files[-1].read_text())


def reading_titles(text: str, titles: set[str]) -> set[str]:
    """The papers listed under "Reading N papers:" in an answer (as titles of the map)."""
    part = text.split("Reading ")[-1]
    return {t for t in titles if len(t) >= 8 and t in part}  # (the corpus has a paper titled "1")


def wait_for_bots(page, n: int, timeout_s: float = 300) -> str:
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        if bot_count(page) >= n:
            text = assistant_text(page)
            if "References" in text or "No paper was cited" in text or text.startswith("⚠️"):
                return text
        time.sleep(0.2)
    raise AssertionError(f"no answer {n} in {timeout_s} s: {assistant_text(page)[:300]!r}")


def test_map_highlight_cluster_scope_similar_and_pinned_compare(explore_app, browser):
    url, data_dir = explore_app
    page = open_page(browser, url)
    t0 = time.monotonic()
    page.locator("#topic-map svg").first.wait_for(timeout=30_000)
    map_render_s = time.monotonic() - t0
    print(f"topic map rendered {map_render_s:.2f} s after the page")

    question = "What is DroPE and why does it extend context?"
    ask(page, question)
    first = wait_for_answer(page, question)["final"]
    assert "Extending the Context of Pretrained LLMs" in first
    lit = page.locator("#topic-map circle.cited")  # the cited papers light up on the map
    lit.first.wait_for(timeout=20_000)
    cited_ids = set(re.findall(r"openreview\.net/forum\?id=([\w-]+)", page.locator("#chat").inner_html()))
    assert {lit.nth(i).get_attribute("data-paper") for i in range(lit.count())} <= cited_ids | {"Hostile001"}
    assert f"{CITED} ({lit.count()})" in page.locator("#topic-map").inner_text()
    screenshot(page, "topic-map.png")

    # scope to the cluster of the KV-cache paper, then the next answer reads only that cluster's papers
    topic = stored_map(data_dir)
    by_title = dict(zip(topic["titles"], topic["cluster"]))
    kv = next(t for t in topic["titles"] if "LookaheadKV" in t)
    cluster = by_title[kv]
    label = topic["labels"][cluster]
    page.locator("#cluster input").click()
    page.get_by_role("option", name=label, exact=False).first.click()
    page.locator("#scope-cluster").click()
    page.locator("#scope-chip").get_by_text("Scope: cluster").wait_for(timeout=10_000)
    inside = {t for t, c in by_title.items() if c == cluster}
    assert f"{sum(1 for c in topic['cluster'] if c == cluster)} papers" in page.locator("#scope-chip").inner_text()
    scoped_q = "Which papers evict entries from the KV cache?"
    ask(page, scoped_q)
    second = wait_for_answer(page, scoped_q)["final"]
    read = reading_titles(second, set(by_title))
    assert read and read <= inside, f"sources outside the scoped cluster: {read - inside}"
    page.locator("#clear-scope").click()
    page.locator("#scope-chip").get_by_text("Scope: all papers").wait_for(timeout=10_000)

    # "Similar papers" from the first cited paper of that answer
    page.locator("#chat .message-row.bot-row").nth(1).locator("a[href^='#cite-1-1']").first.click()
    page.locator("#paper-panel h3").get_by_text("[1]").wait_for(timeout=10_000)
    first_title = page.locator("#paper-panel h3").inner_text().split("] ", 1)[1]
    page.locator("#similar-btn").click()
    similar = page.locator("#similar-out")
    similar.get_by_text("Papers like").or_(similar.get_by_text("Nothing close")).first.wait_for(timeout=20_000)
    if "Papers like" in similar.inner_text():
        assert first_title in similar.inner_text() and similar.locator("li").count() >= 1
        assert first_title not in [li.split("\n")[0] for li in similar.locator("li a").all_inner_texts()]

    # pin the first and second papers read for that answer, then compare the pinned papers
    page.locator("#pin-btn").click()
    page.locator("#pinned-list").get_by_text(first_title).wait_for(timeout=10_000)
    page.locator("#chat .message-row.bot-row").nth(1).locator("a[href^='#cite-1-2']").first.click()
    page.locator("#paper-panel h3").get_by_text("[2]").wait_for(timeout=10_000)
    second_title = page.locator("#paper-panel h3").inner_text().split("] ", 1)[1]
    page.locator("#pin-btn").click()
    page.locator("#pinned-list").get_by_text(second_title).wait_for(timeout=10_000)
    ask(page, "compare the pinned papers")
    compared = wait_for_bots(page, 3)
    bubble = page.locator("#chat .message-row.bot-row").nth(2)
    assert bubble.locator("table").count() == 1, compared[:500]
    table = bubble.locator("table").inner_text()
    assert first_title.split(":")[0] in table and second_title.split(":")[0] in table
    page.close()


def inside(point, polygon) -> bool:
    """Even-odd rule, written here apart from rag.explore.topics."""
    x, y = point
    hit = False
    for (ax, ay), (bx, by) in zip(polygon, polygon[1:] + polygon[:1]):
        if (ay > y) != (by > y) and x < ax + (y - ay) * (bx - ax) / (by - ay):
            hit = not hit
    return hit


def test_a_lasso_drawn_with_the_mouse_scopes_the_papers_inside_it(explore_app, browser):
    url, _ = explore_app
    page = open_page(browser, url)
    svg = page.locator("#topic-map svg").first
    svg.wait_for(timeout=30_000)
    dots = page.locator("#topic-map circle")
    centres = [(float(dots.nth(i).get_attribute("cx")), float(dots.nth(i).get_attribute("cy")))
               for i in range(dots.count())]
    assert centres, "the map drew no papers"
    # a triangle over the left part of the map, in viewBox pixels (560 x 400), drawn with many small moves
    outline = [(10, 10), (330, 10), (10, 390)]
    within = sum(inside(c, outline) for c in centres)
    assert 0 < within < len(centres), "the outline should hold some papers, not all"
    box = svg.bounding_box()
    scale = box["width"] / 560

    def screen(p):
        return box["x"] + p[0] * scale, box["y"] + p[1] * scale

    page.mouse.move(*screen(outline[0]))
    page.mouse.down()
    for a, b in zip(outline, outline[1:] + outline[:1]):
        for step in range(1, 21):
            t = step / 20
            page.mouse.move(*screen((a[0] + (b[0] - a[0]) * t, a[1] + (b[1] - a[1]) * t)))
    page.mouse.up()
    page.locator("#scope-chip").get_by_text("lasso region").wait_for(timeout=10_000)
    assert f"lasso region ({within} papers)" in page.locator("#scope-chip").inner_text()
    scoped = page.locator("#topic-map circle.scoped")
    expect_count = within
    deadline = time.monotonic() + 10
    while scoped.count() != expect_count and time.monotonic() < deadline:
        time.sleep(0.2)
    assert scoped.count() == expect_count
    assert all(inside((float(scoped.nth(i).get_attribute("cx")), float(scoped.nth(i).get_attribute("cy"))), outline)
               for i in range(scoped.count()))
    page.locator("#clear-scope").click()
    page.locator("#scope-chip").get_by_text("Scope: all papers").wait_for(timeout=10_000)
    page.close()
