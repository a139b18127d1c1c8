"""Plot, table, HTML and export builders of ``ui.views.stepper``, on hand-made traces (no model, no browser)."""

from __future__ import annotations

import json
import math

import numpy as np
import pytest

from nmt.trace import DecodeTrace, StepRecord
from ui.views.common import chart_png, chart_svg, md, source_labels, target_labels
from ui.views.stepper import (
    SELECT_PARAM,
    context_norm_chart,
    heatmap,
    now_writing_html,
    selected_step,
    source_html,
    source_table,
    step_stats,
    trace_csv,
    trace_json,
    translation_html,
)

SRC = ["a", "red", "car", '"<b>x</b>"', "</s>"]


def _softmax(e: list[float]) -> list[float]:
    x = np.exp(np.asarray(e) - max(e))
    return list(x / x.sum())


def make_trace(context: str = "attention", n_steps: int = 3) -> DecodeTrace:
    """A small trace: attention (α and e), fixed (neither) or mean (uniform α, no e)."""
    steps = []
    tokens = ["une", "voiture", "<script>", "</s>"]
    for i in range(n_steps):
        energies = [float(i == j) * 3.0 - j * 0.1 for j in range(len(SRC))]
        if context == "attention":
            alpha, e = _softmax(energies), energies
        elif context == "mean":
            alpha, e = [1 / len(SRC)] * len(SRC), None
        else:
            alpha, e = None, None
        steps.append(StepRecord(
            i=i, token=tokens[i], token_id=10 + i, logprob=math.log(0.5 + 0.1 * i), forced=(i == 1),
            energies=e, alpha=alpha, topk=[(tokens[i], 0.5 + 0.1 * i), ("rouge", 0.2), ("<b>", 0.1)],
            state_norm=1.0 + i, context_norm=4.0 if context != "attention" else 4.0 + i,
        ))
    return DecodeTrace(source="a red car", src_tokens=SRC, src_unk=[False, False, False, True, False],
                       method="step", context=context, steps=steps)


def test_heatmap_spec_has_cells_tooltip_and_click_selection() -> None:
    t = make_trace()
    chart = heatmap(t, latest=2)
    assert chart is not None
    spec = chart.to_dict()
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
    rows = next(iter(spec["datasets"].values()))
    assert len(rows) == 3 * len(SRC)


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


def test_energy_heatmap_is_symmetric_around_zero() -> None:
    spec = heatmap(make_trace(), "energy").to_dict()
    lo, hi = spec["encoding"]["color"]["scale"]["domain"]
    assert lo == -hi and hi == pytest.approx(3.0)


def test_heatmap_renders_to_svg_and_png_with_odd_words() -> None:
    chart = heatmap(make_trace())
    svg = chart_svg(chart)
    assert svg.startswith("<svg") and "voiture" in svg
    assert "&lt;b&gt;x&lt;/b&gt;" in svg  # the label expression survived quotes and tags, as text
    png = chart_png(chart, scale=1)
    assert png[:8] == b"\x89PNG\r\n\x1a\n"


def test_context_norm_chart() -> None:
    chart = context_norm_chart(make_trace("fixed"))
    rows = next(iter(chart.to_dict()["datasets"].values()))
    norms = {r["norm"] for r in rows if r["quantity"].startswith("‖c_i‖")}
    assert len(rows) == 6 and norms == {4.0}  # a fixed c has the same norm at every step
    assert context_norm_chart(make_trace(n_steps=0)) is None


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


def test_source_table_and_stats() -> None:
    t = make_trace()
    step = t.steps[2]
    table = source_table(t, step)
    assert list(table.columns) == ["j", "source word", "read as", "e_ij", "α_ij", "most"]
    assert table["α_ij"].sum() == pytest.approx(1.0)
    assert table.loc[table["most"] == "★", "j"].tolist() == [2]
    assert table["read as"].tolist()[3] == "<unk>"
    stats = step_stats(t, step)
    assert stats["sum"] == pytest.approx(1.0)
    assert stats["entropy"] == pytest.approx(step.entropy())
    assert stats["word"] == "car" and stats["max_entropy"] == pytest.approx(math.log(len(SRC)))
    fixed = make_trace("fixed")
    assert source_table(fixed, fixed.steps[0]) is None
    assert step_stats(fixed, fixed.steps[0])["sum"] is None
    mean = make_trace("mean")
    mt = source_table(mean, mean.steps[0])
    assert mt["e_ij"].isna().all() and mt["α_ij"].sum() == pytest.approx(1.0)


def test_html_snippets_escape_everything() -> None:
    t = make_trace()
    out = translation_html(t, shown=1)
    assert "<script>" not in out and "&lt;script&gt;" in out
    assert out.count("<span") == 3 and "forced" in out
    assert "rgba(255,189,69" in out.split("<span")[2]  # the shown step is highlighted
    src = source_html(t, t.steps[0])
    assert "<b>" not in src and "&lt;b&gt;" in src and "&quot;" in src
    assert "unk" in src and "rgba(31,119,180" in src
    assert "background" not in source_html(make_trace("fixed"), make_trace("fixed").steps[0])
    now = now_writing_html(t.steps[2], shown_latest=True)
    assert "Now writing" in now and "&lt;script&gt;" in now
    assert "Step 1 wrote" in now_writing_html(t.steps[1], shown_latest=False)
    assert "press" in translation_html(make_trace(n_steps=0), None)


def test_markdown_escape() -> None:
    raw = "**b** <i>x</i> $y$ :red[z] [l](u) `c` _e_ # h"
    escaped = md(raw)
    assert all(f"\\{c}" in escaped for c in "*<>$:[]()`_#")
    assert md("é 日本 ok") == "é 日本 ok"


def test_exports_csv_and_json() -> None:
    t = make_trace()
    csv = trace_csv(t).splitlines()
    assert csv[0].split(",")[:4] == ["context_mode", "i", "j", "target"]
    assert len(csv) == 1 + 3 * len(SRC)
    back = DecodeTrace.from_dict(json.loads(trace_json(t)))
    assert back.steps[1].forced and back.steps[2].alpha == t.steps[2].alpha
    fixed_csv = trace_csv(make_trace("fixed"))
    assert "fixed" in fixed_csv
    assert trace_csv(make_trace(n_steps=0)).splitlines()[0].startswith("context_mode")
