"""Chart builders of the stepper (``ui.figures.stepper_charts``) on hand-made traces (no model, no browser).

Its tables, HTML snippets and exports are tested in tests/test_stepper_views.py.
"""

from __future__ import annotations

import dataclasses
import json
import math

import numpy as np
import pytest

from nmt.decoding.trace import DecodeTrace
from tests.step_traces import SRC, make_trace
from ui.figures.common import source_labels, target_labels
from ui.figures.stepper_charts import (
    BLUES,
    FIT_MAX_SOURCE,
    SELECT_PARAM,
    Look,
    arrow_rows,
    column_font,
    context_drift,
    drift_chart,
    heatmap,
    heatmap_height,
    ramp_colour,
    row_font,
    row_height,
    selected_step,
    spec_png,
    spec_svg,
    text_colour,
)


def test_heatmap_spec_has_cells_tooltip_and_click_selection() -> None:
    t = make_trace()
    spec = heatmap(t, latest=2)
    assert spec is not None
    assert spec["mark"]["type"] == "rect"
    assert spec["encoding"]["x"]["field"] == "j" and spec["encoding"]["y"]["field"] == "i"
    assert spec["encoding"]["color"]["field"] == "alpha"
    assert spec["encoding"]["color"]["scale"]["domain"] == [0, 1]
    tips = {tt["field"] for tt in spec["encoding"]["tooltip"]}
    assert tips == {"i", "j", "target", "source", "alpha", "energy"}
    param = spec["params"][0]
    assert param["name"] == SELECT_PARAM and param["select"]["type"] == "point"
    assert param["select"]["fields"] == ["i"]
    labels = spec["encoding"]["x"]["axis"]["labelExpr"]
    assert json.loads(labels.removesuffix("[datum.value]")) == source_labels(t)
    assert source_labels(t)[3].endswith("(unk)")
    assert target_labels(t)[1] == "voiture*"  # forced
    rows = spec["data"]["values"]
    assert len(rows) == 3 * len(SRC)
    assert {r["i"] for r in rows} == {0, 1, 2} and rows[7] == {  # i = 1, j = 2: "voiture" over "car"
        "i": 1, "j": 2, "target": "voiture", "source": "car", "alpha": t.steps[1].alpha[2],
        "energy": t.steps[1].energies[2]}
    stroke = spec["encoding"]["stroke"]["condition"]
    assert stroke[0]["param"] == SELECT_PARAM and stroke[1]["test"] == "datum.i == 2"  # the latest row outlined


def test_heatmap_is_none_without_alignment() -> None:
    fixed = make_trace("fixed")
    assert heatmap(fixed) is None
    assert heatmap(fixed, "energy") is None
    assert heatmap(make_trace(n_steps=0)) is None
    mean = make_trace("mean")
    assert heatmap(mean) is not None  # uniform α is real: c_i is the mean of h_j
    assert heatmap(mean, "energy") is None
    with pytest.raises(ValueError):
        heatmap(make_trace(), "beta")


def test_alpha_and_energy_share_one_colour_meaning() -> None:
    """Darker blue = more attention for α (0…1) and for e (its smallest…largest value)."""
    t = make_trace()
    alpha = heatmap(t)["encoding"]["color"]["scale"]
    energy = heatmap(t, "energy")["encoding"]["color"]["scale"]
    assert alpha == {"scheme": "blues", "domain": [0.0, 1.0]}
    # energies of make_trace: row i is 3·[i == j] − 0.1·j, so the smallest is −0.4 (j = 4), the largest 3.0 (0, 0)
    assert energy["scheme"] == "blues" and energy["domain"] == pytest.approx([-0.4, 3.0])
    assert "reverse" not in energy


def test_paper_style_is_greyscale_zero_black_one_white() -> None:
    t = make_trace()
    for value in ("alpha", "energy"):
        scale = heatmap(t, value, look=Look(paper=True))["encoding"]["color"]["scale"]
        assert scale["range"] == ["#000000", "#ffffff"] and "scheme" not in scale
    assert ramp_colour(0.0, paper=True) == "#000000" and ramp_colour(1.0, paper=True) == "#ffffff"
    assert ramp_colour(0.5, paper=True) == "#808080"  # 127.5 rounds to 128


def _font_sizes(node: object) -> list[float]:
    """Every font size set anywhere in a Vega-Lite spec."""
    if isinstance(node, dict):
        own = [v for k, v in node.items() if k.endswith("FontSize")]
        return own + [x for v in node.values() for x in _font_sizes(v)]
    if isinstance(node, list):
        return [x for v in node for x in _font_sizes(v)]
    return []


@pytest.mark.parametrize(("look", "least"), [(Look(), 14), (Look(present=True), 18)])
def test_every_text_on_the_heatmap_is_large_and_dark(look: Look, least: int) -> None:
    for value in ("alpha", "energy"):
        spec = heatmap(make_trace(), value, look=look)
        sizes = _font_sizes(spec)
        assert len(sizes) >= 6 and min(sizes) >= least  # axis labels and titles, legend title and labels
        enc = spec["encoding"]
        for part in (enc["x"]["axis"], enc["y"]["axis"], enc["color"]["legend"]):
            assert part["labelColor"] == "#111111"
    dark = heatmap(make_trace(), look=Look(dark=True))["encoding"]["x"]["axis"]
    assert dark["labelColor"] == "#fafafa"


def test_heatmap_fits_its_container_up_to_a_limit() -> None:
    t = make_trace()
    spec = heatmap(t)
    assert spec["width"] == "container" and spec["height"] == {"step": 26}
    assert spec["encoding"]["x"]["axis"]["orient"] == "top" and spec["encoding"]["x"]["axis"]["labelAngle"] == -40
    assert heatmap(t, fit=False)["width"] == {"step": 48}  # exports: 720 // 5 words, at most 48
    assert heatmap(t, labels_below=True)["encoding"]["x"]["axis"]["orient"] == "bottom"
    many = DecodeTrace("x", [f"w{j}" for j in range(FIT_MAX_SOURCE)] + ["</s>"], [False] * (FIT_MAX_SOURCE + 1),
                       "step", "attention", [dataclasses.replace(t.steps[0], alpha=[1 / (FIT_MAX_SOURCE + 1)] * (
                           FIT_MAX_SOURCE + 1), energies=[0.0] * (FIT_MAX_SOURCE + 1))])
    wide = heatmap(many)
    assert wide["width"] == {"step": 16}  # past the limit: font 14 + 2 px per column (upright labels), scrolling
    assert wide["encoding"]["x"]["axis"]["labelAngle"] == -90


@pytest.mark.parametrize(("n", "look", "px"), [
    (3, Look(), 26), (8, Look(), 26), (9, Look(), 24), (12, Look(), 18), (13, Look(), 16), (40, Look(), 15),
    (3, Look(present=True), 32), (12, Look(present=True), 21), (15, Look(present=True), 19),
    (30, Look(present=True), 19), (31, Look(present=True), 19), (32, Look(present=True), 18),
    (40, Look(present=True), 15), (50, Look(present=True), 15),
])
def test_row_height(n: int, look: Look, px: int) -> None:
    """216 px of rows (252 presenting) on a 720-pixel screen, never below the font size + 3 up to 12 rows
    and the font size + 1 beyond."""
    assert row_height(n, look) == px


@pytest.mark.parametrize(("n", "look", "px"), [
    (3, Look(), 14), (40, Look(), 14), (12, Look(present=True), 18), (31, Look(present=True), 18),
    (32, Look(present=True), 17), (35, Look(present=True), 16), (40, Look(present=True), 14),
    (60, Look(present=True), 14),
])
def test_row_labels_shrink_with_their_rows_but_never_under_14_px(n: int, look: Look, px: int) -> None:
    """Presenting, up to 40 rows share 600 px (31 rows of 19 px fit; 32 get 600 // 32 = 18 px, 35 get
    17, 40 get 15) and their labels are 1 px lower than a row, at most the 18 px font, at least 14 px."""
    assert row_font(n, look) == px
    t = make_trace(n_steps=1)
    spec = heatmap(dataclasses.replace(t, steps=[dataclasses.replace(t.steps[0], i=k) for k in range(n)]), look=look)
    assert spec["encoding"]["y"]["axis"]["labelFontSize"] == px
    assert n * row_height(n, look) <= 600 or row_height(n, look) == 15


@pytest.mark.parametrize(("n", "look", "px"), [(5, Look(), 14), (41, Look(), 14), (10, Look(present=True), 18),
                                               (34, Look(present=True), 17), (41, Look(present=True), 14)])
def test_column_labels_shrink_to_a_column_but_never_under_14_px(n: int, look: Look, px: int) -> None:
    """About 600 px of columns: 34 source words get 600 // 34 = 17 px labels, 41 get 14."""
    assert column_font(n, look) == px


def test_heatmap_height_counts_rows_and_labels() -> None:
    t = make_trace()  # 3 rows of 26 px; the longest label '"<b>x</b>" (unk)' has 16 characters
    assert heatmap_height(t) == 3 * 26 + int(min(120, 16 * 14 * 0.55) * 0.65) + 14 + 22


def test_ramp_colour_matches_the_heatmap_scheme() -> None:
    assert ramp_colour(0.0) == BLUES[0] == "#cfe1f2" and ramp_colour(1.0) == BLUES[-1] == "#0a4a90"
    assert ramp_colour(0.3) == BLUES[3]
    assert ramp_colour(0.05) == "#c6dcef"  # half way from #cfe1f2 to #bed8ec (.5 rounds to even)
    assert ramp_colour(7.0) == BLUES[-1] and ramp_colour(float("nan")) == BLUES[0]
    assert text_colour("#0a4a90") == "#ffffff" and text_colour("#cfe1f2") == "#000000"


def test_context_drift_by_hand() -> None:
    alpha = [[1.0, 0.0], [0.0, 1.0], [0.5, 0.5]]
    h = [[2.0, 0.0], [0.0, 2.0], [9.0, 9.0]]  # a third annotation (padding) that α does not cover
    # c = (2,0), (0,2), (1,1): distances from c_0 are 0, 2√2 and √2, over ‖c_0‖ = 2
    assert context_drift(alpha, h) == pytest.approx([0.0, math.sqrt(2), math.sqrt(0.5)])
    assert context_drift([[0.2, 0.8]] * 3, h) == pytest.approx([0.0, 0.0, 0.0])  # one fixed mix: no drift
    assert context_drift(np.zeros((0, 2)), h) == []


def test_drift_chart() -> None:
    chart = drift_chart([("RNNsearch", ["une", "voiture"], [0.0, 1.5]), ("RNNencdec", ["un"], [0.0])], upto=1)
    spec = chart.to_dict()
    lines, rule = spec["layer"]
    assert lines["mark"]["type"] == "line" and rule["mark"]["type"] == "rule"
    rows = spec["datasets"][lines["data"]["name"]]
    assert [(r["model"], r["i"], r["drift"]) for r in rows] == [("RNNsearch", 0, 0.0), ("RNNsearch", 1, 1.5),
                                                                ("RNNencdec", 0, 0.0)]
    assert lines["encoding"]["color"]["scale"]["domain"] == ["RNNsearch", "RNNencdec"]
    assert min(_font_sizes(spec)) >= 14
    assert "layer" not in drift_chart([("a", ["x"], [0.0])]).to_dict()
    assert drift_chart([]) is None


def test_heatmap_renders_to_svg_and_png_with_odd_words() -> None:
    chart = heatmap(make_trace(), fit=False)
    svg = spec_svg(chart)
    assert svg.startswith("<svg") and "voiture" in svg
    assert "&lt;b&gt;x&lt;/b&gt;" in svg  # the label expression survived quotes and tags, as text
    png = spec_png(chart, scale=1)
    assert png[:8] == b"\x89PNG\r\n\x1a\n"


@pytest.mark.parametrize(("event", "expected"), [
    ({"selection": {"cell": [{"i": 2}]}}, 2),
    ({"selection": {"cell": [{"i": 0, "j": 3}]}}, 0),
    ({"selection": {"cell": [{"i": 1}, {"i": 2}]}}, 2),
    ({"selection": {"cell": {"i": [1]}}}, 1),
    ({"selection": {"cell": []}}, None),
    ({"selection": {"cell": {}}}, None),
    ({"selection": {}}, None),
    ({"selection": {"cell": [{"i": "x"}]}}, None),
    (None, None),
])
def test_selected_step(event: object, expected: int | None) -> None:
    assert selected_step(event) == expected


CELLS = [{"i": 0, "j": 0, "target": "une", "source": "a", "alpha": 0.75, "energy": None},
         {"i": 0, "j": 1, "target": "une", "source": "</s>", "alpha": 0.25, "energy": 1.5},
         {"i": 1, "j": 0, "target": "<b>", "source": "a", "alpha": 0.5, "energy": -2.0}]


def test_arrow_rows_carry_the_inline_cells_unchanged() -> None:
    """The page sends the heatmap's cells as Arrow (cheaper than Streamlit's pandas way): the same rows,
    in order, a missing energy a null in a float column (as pandas made it), and the spec without its data."""
    import pyarrow as pa

    spec = {"mark": {"type": "rect"}, "data": {"values": [dict(c) for c in CELLS]}}
    table, rest = arrow_rows(spec)
    assert table.to_pylist() == CELLS
    assert table.schema.field("energy").type == pa.float64() and table.schema.field("i").type == pa.int64()
    assert rest == {"mark": {"type": "rect"}} and spec["data"]["values"] == CELLS  # the caller's spec untouched


@pytest.mark.parametrize("spec", [
    {"mark": "rect"},  # no rows
    {"mark": "rect", "data": {"url": "cells.csv"}},  # rows named elsewhere
    {"mark": "rect", "data": {"values": []}},
    {"mark": "rect", "data": {"values": [{"i": 0}, {"i": 1, "j": 2}]}},  # Arrow would keep the first row's columns
    {"mark": "rect", "data": {"values": [{"w": "a"}, {"w": 2}]}},  # no one Arrow type for the column
])
def test_arrow_rows_leave_other_specs_to_streamlit(spec: dict) -> None:
    assert arrow_rows(spec) == (None, spec)
