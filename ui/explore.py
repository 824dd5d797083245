"""The explore parts of the app: topic map, scope to a cluster or region, similar papers, pinned papers.

Pure helpers (tested without a browser) and `build_explore`, which `ui.app.build_app` calls to lay out
and wire these parts. Per-user state (scope, pins, the paper open in the side panel) is `gr.State`.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import NamedTuple

import gradio as gr

from rag.pipeline import Filters, SimilarResult, TopicMap
from ui.render import Turn, esc, safe_url

MAX_BACKGROUND = 3_000  # background points drawn; the highlighted papers are always drawn on top
CITED = "★ cited in the latest answer"
SCOPED = "in the current scope"
PALETTE = ["#a6cee3", "#b2df8a", "#fdbf6f", "#cab2d6", "#ffff99", "#8dd3c7", "#bebada", "#fccde5",
           "#d9d9d9", "#ccebc5"]


@dataclass(frozen=True)
class Scope:
    """Papers the next questions are restricted to (a map cluster or region); empty: no scope."""

    label: str = ""
    paper_ids: tuple[str, ...] = ()


def cited_ids(turns: Sequence[Turn]) -> list[str]:
    """The papers the latest answer cites."""
    if not turns:
        return []
    return list(dict.fromkeys(c.id for c in turns[-1].answer.citations))


class MapRow(NamedTuple):
    x: float
    y: float
    topic: str  # the cluster's label, or CITED / SCOPED for highlighted papers
    title: str
    paper: str


def map_frame(topic_map: TopicMap, highlight: Sequence[str] = (), scoped: Sequence[str] = (),
              max_background: int = MAX_BACKGROUND) -> list[MapRow]:
    """Rows to plot: an even sample of the background (colored by cluster label), then every scoped and
    every highlighted paper, so the highlighted ones are always drawn (and last, on top)."""
    lit, scope = set(highlight), set(scoped) - set(highlight)
    step = max(1, -(-len(topic_map.ids) // max_background))
    rows = []
    for i, pid in enumerate(topic_map.ids):
        group = CITED if pid in lit else SCOPED if pid in scope else None
        if group is None and i % step:
            continue
        rows.append((group is not None, topic_map.x[i], topic_map.y[i], group or topic_map.labels[topic_map.cluster[i]],
                     topic_map.titles[i], pid))
    rows.sort(key=lambda r: r[0])
    return [MapRow(*r[1:]) for r in rows]


MAP_W, MAP_H, MAP_PAD = 560, 400, 14


def _bounds(topic_map: TopicMap) -> tuple[float, float, float, float]:
    return min(topic_map.x), max(topic_map.x), min(topic_map.y), max(topic_map.y)


def to_px(topic_map: TopicMap, x: float, y: float) -> tuple[float, float]:
    """Map coordinates -> the SVG's viewBox pixels (y grows downwards there)."""
    x0, x1, y0, y1 = _bounds(topic_map)
    px = MAP_PAD + (x - x0) / ((x1 - x0) or 1) * (MAP_W - 2 * MAP_PAD)
    py = MAP_H - MAP_PAD - (y - y0) / ((y1 - y0) or 1) * (MAP_H - 2 * MAP_PAD)
    return round(px, 1), round(py, 1)


def from_px(topic_map: TopicMap, px: float, py: float) -> tuple[float, float]:
    """The SVG's viewBox pixels -> map coordinates (the inverse of `to_px`)."""
    x0, x1, y0, y1 = _bounds(topic_map)
    x = x0 + (px - MAP_PAD) / (MAP_W - 2 * MAP_PAD) * ((x1 - x0) or 1)
    y = y0 + (MAP_H - MAP_PAD - py) / (MAP_H - 2 * MAP_PAD) * ((y1 - y0) or 1)
    return x, y


def map_svg(topic_map: TopicMap, highlight: Sequence[str] = (), scoped: Sequence[str] = (),
            max_background: int = MAX_BACKGROUND) -> str:
    """The topic map as inline SVG: a bounded background sample colored by cluster, cluster labels at
    their centres, scoped papers in blue and the latest answer's papers as large red dots on top (each
    dot's tooltip is its title). Drawn by the server on every update, so a highlight always shows."""
    if not topic_map.ids:
        return "<div class='topic-map empty'>No map yet: ingest papers first.</div>"
    colors = color_map(topic_map)
    frame = map_frame(topic_map, highlight, scoped, max_background)
    dots = []
    for x, y, topic, title, pid in frame:
        px, py = to_px(topic_map, x, y)
        kind = "cited" if topic == CITED else "scoped" if topic == SCOPED else "bg"
        radius = {"cited": 6, "scoped": 3.2, "bg": 2}[kind]
        stroke = ' stroke="#111" stroke-width="1.2"' if kind == "cited" else ""
        dots.append(f'<circle class="{kind}" data-paper="{esc(pid)}" cx="{px}" cy="{py}" r="{radius}" '
                    f'fill="{colors.get(topic, "#bbb")}"{stroke}><title>{esc(title)}</title></circle>')
    labels = [f'<text class="cluster-label" x="{px:.1f}" y="{py:.1f}" text-anchor="middle">{esc(text)}</text>'
              for text, px, py in place_labels(topic_map)]
    lit = sum(1 for row in frame if row.topic == CITED)
    legend = (f"<div class='map-legend'><span class='dot cited'></span> {esc(CITED)} ({lit})"
              f" · <span class='dot scoped'></span> {esc(SCOPED)} · {len(topic_map.ids):,} papers, "
              f"{len(topic_map.labels)} clusters</div>")
    return (f"<div class='topic-map'><svg viewBox='0 0 {MAP_W} {MAP_H}' width='100%' role='img' "
            f"aria-label='Topic map of the papers'>{''.join(dots)}{''.join(labels)}</svg>{legend}</div>")


LABEL_CHARS = 24  # a label on the map: its cluster's first terms up to this length (the full one is in "Cluster")
CHAR_W, LINE_H = 5.0, 11.0  # the 9px label font's average character width and line height, in viewBox pixels


def short_label(label: str) -> str:
    terms = label.split(" · ")
    shown = terms[:1]
    for term in terms[1:]:
        if len(" · ".join([*shown, term])) > LABEL_CHARS:
            break
        shown.append(term)
    return " · ".join(shown)


def place_labels(topic_map: TopicMap) -> list[tuple[str, float, float]]:
    """(text, x, y) of the cluster labels that fit: the biggest clusters first, each at its centre or a line
    above or below it, kept inside the map, and left out when every place overlaps a label already drawn
    (40 labels of three terms at their centres were an unreadable pile)."""
    members: dict[int, list[int]] = {}
    for i, c in enumerate(topic_map.cluster):
        members.setdefault(c, []).append(i)
    placed: list[tuple[float, float, float, float]] = []
    out = []
    for c in sorted(members, key=lambda c: (-len(members[c]), c)):
        if c >= len(topic_map.labels):
            continue
        rows = members[c]
        cx, cy = to_px(topic_map, sum(topic_map.x[i] for i in rows) / len(rows), sum(topic_map.y[i] for i in rows) / len(rows))
        text = short_label(topic_map.labels[c])
        half = len(text) * CHAR_W / 2 + 2
        cx = min(max(cx, half), MAP_W - half)
        for dy in (0.0, -LINE_H, LINE_H):
            y = min(max(cy + dy, LINE_H), MAP_H - 2)
            box = (cx - half, y - LINE_H + 2, cx + half, y + 2)
            if not any(box[0] < b[2] and b[0] < box[2] and box[1] < b[3] and b[1] < box[3] for b in placed):
                placed.append(box)
                out.append((text, cx, y))
                break
    return out


def color_map(topic_map: TopicMap) -> dict[str, str]:
    """Highlights first: the plot's legend shows only its first 30 entries."""
    colors = {label: PALETTE[i % len(PALETTE)] for i, label in enumerate(topic_map.labels)}
    return {CITED: "#e31a1c", SCOPED: "#1f78b4"} | colors


def cluster_choices(topic_map: TopicMap) -> list[tuple[str, int]]:
    sizes = [0] * len(topic_map.labels)
    for c in topic_map.cluster:
        sizes[c] += 1
    return [(f"{label} ({sizes[i]} papers)", i) for i, label in enumerate(topic_map.labels)]


def cluster_scope(topic_map: TopicMap, cluster: int | None) -> Scope:
    if cluster is None or not 0 <= int(cluster) < len(topic_map.labels):
        return Scope()
    return Scope(f"cluster “{topic_map.labels[int(cluster)]}”", tuple(topic_map.members(int(cluster))))


def region_scope(topic_map: TopicMap, x_pct: Sequence[float], y_pct: Sequence[float] = (0, 100)) -> Scope:
    """A box on the map, as percentages of its width (left to right) and height (bottom to top)."""
    if not topic_map.ids:
        return Scope()
    (a, b), (c, d) = sorted(float(v) for v in x_pct[:2]), sorted(float(v) for v in y_pct[:2])
    lo_x, hi_x, lo_y, hi_y = min(topic_map.x), max(topic_map.x), min(topic_map.y), max(topic_map.y)
    x = (lo_x + (hi_x - lo_x) * a / 100, lo_x + (hi_x - lo_x) * b / 100)
    y = (lo_y + (hi_y - lo_y) * c / 100, lo_y + (hi_y - lo_y) * d / 100)
    ids = topic_map.in_region(x, y)
    return Scope(f"map region {a:.0f}–{b:.0f}% across, {c:.0f}–{d:.0f}% up", tuple(ids)) if ids else Scope()


MAX_LASSO_POINTS = 2_000


def lasso_scope(topic_map: TopicMap, points: str) -> Scope:
    """A free-hand region drawn on the map: "x,y x,y ..." in the SVG's viewBox pixels (the page's lasso
    script sends them); the papers inside the closed outline. Unreadable or too short an outline: no scope."""
    try:
        pixels = [tuple(float(v) for v in pair.split(",")) for pair in (points or "").split()[:MAX_LASSO_POINTS]]
    except ValueError:
        return Scope()
    if not topic_map.ids or len(pixels) < 3 or any(len(p) != 2 for p in pixels):
        return Scope()
    ids = topic_map.in_polygon([from_px(topic_map, px, py) for px, py in pixels])
    return Scope(f"lasso region ({len(ids)} papers)", tuple(ids)) if ids else Scope()


def scope_chip(scope: Scope, only_pinned: bool, pinned: Sequence[tuple[str, str]]) -> str:
    if only_pinned and pinned:
        return f"<span class='scope-chip'>Scope: the {len(pinned)} pinned papers</span>"
    if scope.paper_ids:
        return f"<span class='scope-chip'>Scope: {esc(scope.label)} · {len(scope.paper_ids)} papers</span>"
    return "<span class='scope-chip empty'>Scope: all papers</span>"


def scoped(filters: Filters, scope: Scope, pinned: Sequence[tuple[str, str]], only_pinned: bool,
           k: int) -> tuple[Filters, int]:
    """The filters and k to ask with: "only pinned" restricts the search to the pinned papers, a map scope to
    the papers in it. ("Compare the pinned papers" is the pipeline's to route: it gets the pinned ids.)"""
    pins = tuple(pid for pid, _ in pinned)
    if only_pinned and pins:
        return filters.only(pins), min(k, len(pins))
    if scope.paper_ids:
        return filters.only(scope.paper_ids), k
    return filters, k


def pin(pinned: list[tuple[str, str]], paper_id: str, title: str) -> list[tuple[str, str]]:
    if not paper_id or any(pid == paper_id for pid, _ in pinned):
        return pinned
    return pinned + [(paper_id, title)]


def pinned_markdown(pinned: Sequence[tuple[str, str]]) -> str:
    if not pinned:
        return "_No pinned papers. Open a paper and press **Pin**._"
    return "\n".join(f"{i}. {esc(title)} (`{esc(pid)}`)" for i, (pid, title) in enumerate(pinned, 1))


def similar_html(result: SimilarResult) -> str:
    head = f"Papers like <b>{esc(result.query_title)}</b>" if result.query_title else "Papers closest to the pasted text"
    if result.nothing_close:
        best = (f" (best cosine {result.best:.2f}, below {result.threshold:.2f})"
                if result.papers and result.threshold is not None else "")
        return f"<div class='similar nothing-close'><b>Nothing close</b> in the indexed papers{best}.</div>"
    items = "".join(
        f"<li><a href='{esc(safe_url(p.paper))}' target='_blank' rel='noopener noreferrer'>{esc(p.paper.title)}</a> "
        f"<small>cosine {p.score:.2f} · {esc(p.paper.status or '')}</small><br><small>{esc(p.differs)}</small></li>"
        for p in result.close())
    return f"<div class='similar'><p>{head}:</p><ol>{items}</ol></div>"


@dataclass
class Explore:
    """The explore components and states that `ui.app` wires into the chat."""

    scope: gr.State
    pinned: gr.State
    only_pinned: gr.Checkbox
    current: gr.State  # (paper id, title) open in the side panel
    plot: gr.HTML
    chip: gr.HTML
    refresh_map: object  # (turns, scope) -> plot update


def build_explore(pipeline, topic_map: TopicMap) -> Explore:
    """Lay out the side-panel buttons, the pinned list, the paste box and the map, and wire their events."""
    scope, pinned, current = gr.State(Scope()), gr.State([]), gr.State(("", ""))
    with gr.Row():
        similar_btn = gr.Button("Similar papers", size="sm", elem_id="similar-btn")
        pin_btn = gr.Button("Pin", size="sm", elem_id="pin-btn")
    similar_out = gr.HTML("", elem_id="similar-out")
    with gr.Accordion("Pinned papers", open=True):
        pinned_md = gr.Markdown(pinned_markdown([]), elem_id="pinned-list")
        with gr.Row():
            only_pinned = gr.Checkbox(False, label="Only pinned papers", elem_id="only-pinned")
            unpin = gr.Button("Clear pins", size="sm", elem_id="clear-pins")
    with gr.Accordion("Paste an abstract", open=False):
        pasted = gr.Textbox(lines=4, show_label=False, placeholder="Paste a title and/or abstract", elem_id="paste-box")
        paste_btn = gr.Button("Find the nearest papers", size="sm", elem_id="paste-btn")
        paste_out = gr.HTML("", elem_id="paste-out")
    with gr.Accordion("Topic map", open=True):
        plot = gr.HTML(map_svg(topic_map), elem_id="topic-map")
        with gr.Row():
            cluster = gr.Dropdown(cluster_choices(topic_map), value=None, label="Cluster", elem_id="cluster",
                                  scale=3)
            scope_btn = gr.Button("Scope next question to this cluster", size="sm", elem_id="scope-cluster", scale=1)
        with gr.Accordion("Region (a box on the map, in % of its width and height)", open=False):
            with gr.Row():
                left = gr.Slider(0, 100, value=0, step=1, label="from left", elem_id="region-left")
                right = gr.Slider(0, 100, value=100, step=1, label="to", elem_id="region-right")
                bottom = gr.Slider(0, 100, value=0, step=1, label="from bottom", elem_id="region-bottom")
                top = gr.Slider(0, 100, value=100, step=1, label="to", elem_id="region-top")
            region_btn = gr.Button("Scope next question to this region", size="sm", elem_id="scope-region")
        gr.Markdown("Or draw around papers on the map (press and drag) to scope the next question to them.",
                    elem_classes=["map-hint"])
        lasso_points = gr.Textbox(elem_id="lasso-points", show_label=False, container=False)
        lasso_apply = gr.Button("apply lasso", elem_id="lasso-apply")
        with gr.Row():
            chip = gr.HTML(scope_chip(Scope(), False, []), elem_id="scope-chip")
            clear_scope = gr.Button("Clear scope", size="sm", elem_id="clear-scope", scale=0)

    def refresh(turns, scope_value):
        return map_svg(topic_map, cited_ids(turns or []), (scope_value or Scope()).paper_ids)

    def like_this(cur):
        if not cur or not cur[0]:
            return "<div class='similar'>Open a paper first (click a citation).</div>"
        return similar_html(pipeline.similar(paper_id=cur[0]))

    def paste(text):
        try:
            return similar_html(pipeline.similar(text=text or ""))
        except ValueError as exc:
            return f"<div class='similar'>⚠️ {esc(str(exc))}</div>"

    def set_scope(new, pins, only):
        return new, scope_chip(new, only, pins), map_svg(topic_map, (), new.paper_ids)

    private = {"api_visibility": "private"}
    similar_btn.click(like_this, [current], [similar_out], **private)
    paste_btn.click(paste, [pasted], [paste_out], **private)
    pin_btn.click(lambda p, cur: (pin(p, *cur), pinned_markdown(pin(p, *cur))), [pinned, current],
                  [pinned, pinned_md], **private).then(
        lambda s, p, o: scope_chip(s, o, p), [scope, pinned, only_pinned], [chip], **private)
    unpin.click(lambda: ([], pinned_markdown([]), False), None, [pinned, pinned_md, only_pinned], **private)
    only_pinned.change(lambda s, p, o: scope_chip(s, o, p), [scope, pinned, only_pinned], [chip], **private)
    scope_btn.click(lambda c, p, o: set_scope(cluster_scope(topic_map, c), p, o), [cluster, pinned, only_pinned],
                    [scope, chip, plot], **private)
    clear_scope.click(lambda p, o: set_scope(Scope(), p, o), [pinned, only_pinned], [scope, chip, plot], **private)
    lasso_apply.click(lambda pts, p, o: set_scope(lasso_scope(topic_map, pts), p, o), [lasso_points, pinned, only_pinned],
                      [scope, chip, plot], show_progress="hidden", **private)
    region_btn.click(lambda a, b, c, d, p, o: set_scope(region_scope(topic_map, (a, b), (c, d)), p, o),
                     [left, right, bottom, top, pinned, only_pinned], [scope, chip, plot], **private)

    return Explore(scope, pinned, only_pinned, current, plot, chip, refresh)
