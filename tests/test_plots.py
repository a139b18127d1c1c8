"""Plot, table, HTML and export builders of ``ui.views.stepper``, on hand-made traces (no model, no browser)."""

from __future__ import annotations

import dataclasses
import json
import math

import numpy as np
import pytest

from nmt.trace import DecodeTrace, StepRecord
from ui.views.common import md, source_labels, target_labels
from ui.views.stepper import (
    context_note,
    no_checkpoints_markdown,
    no_energies_note,
    output_words,
    source_table,
    status_markdown,
    step_stats,
    topk_rows,
    trace_csv,
    trace_json,
    word_marks,
)
from ui.views.stepper_charts import (
    BLUES,
    FIT_MAX_SOURCE,
    SELECT_PARAM,
    Look,
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
from ui.views.stepper_html import (
    compare_html,
    now_writing_html,
    page_css,
    prob_bar_html,
    source_html,
    translation_html,
    written_candidate_html,
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
    assert "unk" in src
    fixed = source_html(make_trace("fixed"), make_trace("fixed").steps[0])
    # one summary c: every chip has the summary band's one flat colour, none a shade of the α ramp
    assert fixed.count("background:") == fixed.count("background:rgba(230,85,13,.3)") == len(make_trace().src_tokens)
    assert "press" in translation_html(make_trace(n_steps=0), None)
    assert "&lt;b&gt;" in written_candidate_html("<b>") and "<b>" not in written_candidate_html("<b>")


def test_source_words_are_shaded_from_the_heatmap_ramp() -> None:
    t = make_trace()
    step = t.steps[2]
    src = source_html(t, step)
    chips = src.split("<span")[1:]
    for j, chip in enumerate(chips):
        assert f"background:{ramp_colour(step.alpha[j])};" in chip
        assert f"{step.alpha[j]:.2f}" in chip  # α under the word
    assert f"background:{ramp_colour(step.alpha[2], paper=True)};" in source_html(t, step, paper=True)
    assert "α_ij at i = 2" in src
    assert "font-size:1.6rem" in source_html(t, step, big=True) and "font-size:1.6rem" not in src


def test_now_writing_says_which_word_was_written() -> None:
    t = make_trace()
    step = dataclasses.replace(t.steps[2], i=10)
    now = now_writing_html(step, 11)  # 11 words written: the latest is i = 10, the 11th word
    assert "Written at i = 10 (word 11)" in now and "Next: Step writes word 12 (i = 11)." in now
    assert "Now writing" not in now and "&lt;script&gt;" in now
    back = now_writing_html(t.steps[1], 3)
    assert "Looking back at i = 1 (word 2 of 3)" in back and "Next" not in back and "forced by you" in back
    end = now_writing_html(t.steps[2], 3, ended="Finished: the model wrote </s>.")
    assert "Finished: the model wrote &lt;/s&gt;." in end and "Next" not in end
    assert "copied" in now_writing_html(t.steps[2], 3, copied="gondola") and "gondola" in now_writing_html(
        t.steps[2], 3, copied="gondola")
    assert "first word (i = 0)" in now_writing_html(None, 0)


def _unk_trace() -> DecodeTrace:
    """"un <unk> </s>" over "a gondola </s>": the <unk> step weighs </s> most, then 'gondola'."""
    rec = make_trace().steps[0]
    steps = [dataclasses.replace(rec, i=0, token="un", alpha=[0.8, 0.1, 0.1]),
             dataclasses.replace(rec, i=1, token="<unk>", alpha=[0.1, 0.35, 0.55]),
             dataclasses.replace(rec, i=2, token="</s>", alpha=[0.1, 0.2, 0.7])]
    return DecodeTrace("a gondola", ["a", "gondola", "</s>"], [False, True, False], "step", "attention", steps)


def test_unknown_words_are_copied_from_the_largest_alpha_never_eos() -> None:
    t = _unk_trace()
    copies = t.unk_copies()
    assert copies == {1: (1, "gondola")}  # </s> has the largest α (0.55) but is never copied
    assert output_words(t) == ["un", "<unk>"] and output_words(t, copies) == ["un", "gondola"]
    html = translation_html(t, 2, copies)
    shown_text = html.split("<span")[2].split('">', 1)[1]  # the chip's text, after its title attribute
    assert shown_text.startswith("gondola") and "copied" in shown_text and "&lt;unk&gt;" not in shown_text
    assert "copied" not in translation_html(t, 2)
    fixed = dataclasses.replace(t, steps=[dataclasses.replace(s, alpha=None) for s in t.steps])
    assert fixed.unk_copies() == {}  # no α, nothing to copy from
    assert dataclasses.replace(fixed, context="fixed").unk_copies() == {}
    mean = dataclasses.replace(t, context="mean", steps=[dataclasses.replace(s, alpha=[0.5, 0.5, 0.0], energies=None)
                                                         for s in t.steps])
    assert mean.unk_copies() == {}  # uniform α points at no word (it would pick the first)


def test_topk_rows_mark_the_written_word() -> None:
    rows = topk_rows(make_trace().steps[1])
    assert [(r["rank"], r["word"], r["written"]) for r in rows] == [(0, "voiture", True), (1, "rouge", False),
                                                                    (2, "<b>", False)]
    assert rows[0]["p"] == pytest.approx(0.6)
    forced = topk_rows(dataclasses.replace(make_trace().steps[1], token="rouge"))  # a forced second choice
    assert [r["written"] for r in forced] == [False, True, False]
    assert "width:60.0%" in prob_bar_html(0.6) and "60.0%" in prob_bar_html(0.6)
    assert "width:100.0%" in prob_bar_html(1.7)


def test_word_marks_and_compare_html() -> None:
    assert word_marks(["une", "robe", "noire"], ["une", "veste", "noire"]) == ([False, True, False],
                                                                              [False, True, False])
    assert word_marks([], ["x"]) == ([], [True])
    out = compare_html("RNNsearch", ["un", "chat", "<b>"], "RNNencdec", ["un", "chien", "<b>"])
    assert "<b>" not in out and out.count("&lt;b&gt;") == 2 and "only in this translation" in out
    chips = out.split("<span")[1:]
    assert ["border:2px" in c for c in chips] == [False, True, False, False, True, False]


def test_status_line_counts_words_and_lists_unknown_source_words() -> None:
    t = make_trace()  # 3 steps; SRC[3] is outside the vocabulary
    line = status_markdown(t, done=False, limit=16, model="RNNsearch: fresh c_i", checkpoint="m-rnnsearch.pt")
    assert line.startswith("**3** target words written, at most 16 \\(the length limit\\: 2 × source tokens "
                           "\\+ 10\\) · RNNsearch\\: fresh c\\_i · ")
    assert line.endswith('1 source word outside the model\'s vocabulary, read as \\<unk\\>: \\"\\<b\\>x\\<\\/b\\>\\"]')
    one = dataclasses.replace(t, steps=t.steps[:1], src_unk=[False] * 5, finished=True)
    assert status_markdown(one, True, 16, "m", "c").startswith("**1** target word written, finished \\(\\<\\/s\\>\\)")
    assert ":red[" not in status_markdown(one, True, 16, "m", "c")
    beam = dataclasses.replace(t, method="beam")
    assert "of the beam\\'s best hypothesis \\(12 words\\)\\; forcing works in greedy mode" in status_markdown(
        beam, False, 12, "m", "c")


def test_notes_without_alignment() -> None:
    fixed = make_trace("fixed").steps[0]
    assert "‖c_i‖ = 4.000 at every step" in context_note("fixed", fixed, ablation=False)
    assert context_note("fixed", fixed, ablation=True).startswith("**Untrained ablation.**")
    assert context_note("mean", make_trace("mean").steps[0], False).startswith("**Mean context:**")
    assert context_note("attention", make_trace().steps[0], False) is None
    assert no_energies_note(make_trace(n_steps=0)).endswith("nothing decoded yet.")
    assert "fixed summary" in no_energies_note(make_trace("fixed"))
    assert "uniform weights" in no_energies_note(make_trace("mean"))
    assert "`RNNSEARCH_CHECKPOINTS`" in no_checkpoints_markdown("RNNSEARCH_CHECKPOINTS")


def test_page_css() -> None:
    assert page_css(False).startswith("<style>") and "stMainBlockContainer" in page_css(False)
    assert "font-size:1.2rem" in page_css(True) and "font-size:1.2rem" not in page_css(False)


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


def test_chip_lines_wrap_like_the_page() -> None:
    """Fig. 3(a)'s 14 tokens fit one line of chips at 1280×720 in both sizes; the 38 of the paper's long
    sentence take three (seen in Chromium); hand-counted: 910 px hold 10 chips of 5 characters
    (5 × 8.6 + 14 = 57 px each: 15 of them make 855 px, 16 make 912 px)."""
    from ui.presets import BY_NAME
    from ui.views.stepper_html import chip_lines

    fig3 = [*BY_NAME["Reordered phrase"].text.replace(".", " .").split(), "</s>"]
    long = [*BY_NAME["Fixed-vector bottleneck"].text.replace(".", " .").replace(",", " ,").split(), "</s>"]
    assert (chip_lines(fig3), chip_lines(fig3, True)) == (1, 1)
    assert (chip_lines(long), chip_lines(long, True)) == (3, 3)
    assert chip_lines(["abcde"] * 15) == 1 and chip_lines(["abcde"] * 16) == 2
