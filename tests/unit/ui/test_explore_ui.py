"""The explore helpers of the app: map rows, scopes, pinned comparisons, similar-paper HTML."""

from rag.corpus.papers import Paper
from rag.retrieve.filters import Filters
from rag.explore.similar import SimilarPaper, SimilarResult
from rag.explore.topics import TopicMap
from ui.explore import (CITED, SCOPED, Scope, cluster_choices, cluster_scope, from_px, lasso_scope, map_frame, map_svg,
                        pin, region_scope, scoped, scope_chip, similar_html, to_px)

N = 10_000
MAP = TopicMap(key="k", ids=[f"P{i:05d}" for i in range(N)], titles=[f"T{i}" for i in range(N)],
               x=[float(i % 100) for i in range(N)], y=[float(i // 100) for i in range(N)],
               cluster=[0 if i % 100 < 50 else 1 for i in range(N)], labels=["graphs · gnn", "diffusion · images"])


def test_map_frame_is_bounded_but_always_draws_highlighted_papers_last():
    lit = ["P00007", "P09999", "P05001"]
    frame = map_frame(MAP, lit, scoped=["P00003"], max_background=500)
    assert len(frame) <= 500 + 4
    cited = [row.paper for row in frame if row.topic == CITED]
    assert sorted(cited) == sorted(lit)
    assert [row.paper for row in frame[-3:]] == cited  # drawn last, on top of the background
    assert [row.paper for row in frame if row.topic == SCOPED] == ["P00003"]
    assert {row.topic for row in frame} - {CITED, SCOPED} == {"graphs · gnn", "diffusion · images"}


def test_cluster_and_region_scopes():
    assert cluster_choices(MAP) == [("graphs · gnn (5000 papers)", 0), ("diffusion · images (5000 papers)", 1)]
    scope = cluster_scope(MAP, 1)
    assert len(scope.paper_ids) == 5000 and all(int(p[1:]) % 100 >= 50 for p in scope.paper_ids)
    assert cluster_scope(MAP, None) == Scope() and cluster_scope(MAP, 7) == Scope()
    xs, ys = MAP.x, MAP.y
    region = region_scope(MAP, [60, 10], [0, 100])  # a box, its sides in either order
    lo, hi = min(xs) + (max(xs) - min(xs)) * 0.1, min(xs) + (max(xs) - min(xs)) * 0.6
    expected = {pid for pid, x in zip(MAP.ids, xs) if lo <= x <= hi}
    assert set(region.paper_ids) == expected and 0 < len(expected) < len(MAP.ids) and "10–60% across" in region.label
    top = region_scope(MAP, [0, 100], [50, 100])
    assert set(top.paper_ids) == {pid for pid, y in zip(MAP.ids, ys) if y >= min(ys) + (max(ys) - min(ys)) / 2}
    assert region_scope(MAP, [40, 40], [200, 300]) == Scope()


def test_a_lasso_drawn_on_the_map_scopes_the_papers_inside_it():
    # An L-shaped (not convex) outline in the SVG's pixels, drawn around grid cells x 10..40, y 10..60 minus the
    # block x 25..40, y 35..60; the grid's points sit on integers, the outline on half-integers.
    corners = [(9.5, 9.5), (40.5, 9.5), (40.5, 34.5), (24.5, 34.5), (24.5, 60.5), (9.5, 60.5)]
    pixels = " ".join("%s,%s" % to_px(MAP, x, y) for x, y in corners)
    scope = lasso_scope(MAP, pixels)
    expected = {pid for pid, x, y in zip(MAP.ids, MAP.x, MAP.y)
                if 10 <= x <= 40 and 10 <= y <= 60 and not (x >= 25 and y >= 35)}
    assert set(scope.paper_ids) == expected and len(expected) == 31 * 25 + 15 * 26
    assert scope.label == f"lasso region ({len(expected)} papers)"
    x, y = from_px(MAP, *to_px(MAP, 12.25, 70.5))
    assert abs(x - 12.25) < 0.2 and abs(y - 70.5) < 0.3  # pixels are rounded to 0.1
    for bad in ["", "1,2 3,4", "a,b c,d e,f", "1,2,3 4,5,6 7,8,9", "900,900 901,900 901,901"]:
        assert lasso_scope(MAP, bad) == Scope(), bad
    svg = map_svg(MAP, scoped=scope.paper_ids)  # the scoped papers are all drawn, in the scoped color
    assert svg.count('class="scoped"') == len(expected)


def test_scoped_filters_and_k():
    base = Filters(statuses=("Oral",))
    pins = [("A1", "LookaheadKV: Fast eviction"), ("B2", "DroPE: dropping positions")]
    f, k = scoped(base, Scope("c", ("X",)), pins, True, 4)
    assert f.paper_ids == ("A1", "B2") and f.statuses == ("Oral",) and k == 2
    f, k = scoped(base, Scope("c", ("X", "Y")), pins, False, 4)
    assert f.paper_ids == ("X", "Y") and k == 4
    assert scoped(base, Scope(), [], True, 4) == (base, 4)
    assert scoped(base, Scope(), pins, False, 4) == (base, 4)  # pins alone do not scope; a pinned compare is routed


def test_pins_and_chip():
    pinned = pin(pin([], "A1", "One"), "A1", "One")
    assert pinned == [("A1", "One")] and pin(pinned, "", "") == pinned
    assert "1 pinned" in scope_chip(Scope(), True, pinned)
    assert "all papers" in scope_chip(Scope(), False, pinned)
    assert "3 papers" in scope_chip(Scope("cluster “x”", ("a", "b", "c")), False, pinned)


def test_similar_html_says_nothing_close_and_escapes():
    paper = Paper(id="A1", title="<script>alert(1)</script>", abstract="x")
    close = SimilarResult("Q", [SimilarPaper(paper, 0.8, "Differs: <b>x</b>")], 0.43)
    html = similar_html(close)
    assert "&lt;script&gt;" in html and "<script>" not in html and "&lt;b&gt;" in html
    far = similar_html(SimilarResult("", [SimilarPaper(paper, 0.2, "")], 0.43))
    assert "Nothing close" in far and "0.20" in far


def test_map_svg_draws_the_cited_papers_on_top_escaped_and_bounded():
    from ui.explore import map_svg

    lit = [MAP.ids[7], MAP.ids[9001]]
    svg = map_svg(MAP, lit, scoped=[MAP.ids[3]], max_background=500)
    cited = svg.count('class="cited"')
    assert cited == 2 and svg.count("<circle") <= 500 + 3 and "(2)" in svg
    assert svg.rindex('class="bg"') < svg.index('class="cited"')  # drawn last, so on top
    assert f'data-paper="{MAP.ids[9001]}"' in svg and "<script" not in svg
    plain = map_svg(MAP, [], max_background=500)
    assert 'class="cited"' not in plain and all(f">{label}</text>" in plain for label in MAP.labels)


def test_map_labels_never_overlap_and_the_biggest_clusters_are_labelled_first():
    import re

    from ui.explore import CHAR_W, LINE_H, short_label

    k = 40  # 40 clusters crowded into one corner: most labels cannot fit
    crowded = TopicMap(key="c", ids=[f"Q{i}" for i in range(4000)], titles=["t"] * 4000,
                       x=[float(i % 40) / 10 + (100 if i == 0 else 0) for i in range(4000)],
                       y=[float(i % 7) for i in range(4000)], cluster=[i % k for i in range(4000)],
                       labels=[f"topic number {c} · second term · third" for c in range(k)])
    crowded.cluster[1:400] = [0] * 399  # cluster 0 is the biggest
    svg = map_svg(crowded, [])
    drawn = re.findall(r'<text class="cluster-label" x="([\d.]+)" y="([\d.]+)"[^>]*>([^<]+)</text>', svg)
    assert 0 < len(drawn) < k and drawn[0][2] == short_label(crowded.labels[0]) == "topic number 0"
    boxes = [(float(x) - len(t) * CHAR_W / 2, float(y) - LINE_H, float(x) + len(t) * CHAR_W / 2, float(y))
             for x, y, t in drawn]
    for i, a in enumerate(boxes):
        for b in boxes[i + 1:]:
            assert not (a[0] < b[2] and b[0] < a[2] and a[1] < b[3] and b[1] < a[3]), (a, b)
        assert 0 <= a[0] and a[2] <= 560 and 0 <= a[1] and a[3] <= 400
    assert short_label("graph neural networks · graph representation learning · node") == "graph neural networks"
    assert short_label("neural · pde · physics-informed") == "neural · pde"
