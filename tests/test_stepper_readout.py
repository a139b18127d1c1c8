"""The stepper's readout line, the first-word note and the frozen picture (ui/stepper/views_readout.py),
on hand-made traces with hand-computed numbers."""

from __future__ import annotations

import math

from tests.traces import make_trace
from ui.stepper.views_readout import (
    FIRST_WORD_NOTE,
    SUMMARY_TITLE,
    first_word_note,
    readout,
    readout_html,
    rows_chart,
    summary_band,
)


def test_readout_line_by_hand() -> None:
    """α = (0.31, 0.5, 0.19): sum 1.00, largest on s1 (50 %), entropy −Σ α ln α = 1.0252 nats, by hand:
    0.31·1.1712 + 0.5·0.6931 + 0.19·1.6607 = 0.3631 + 0.3466 + 0.3155."""
    t = make_trace([[0.31, 0.5, 0.19]], tokens=["Elle"])
    r = readout(t, t.steps[0])
    assert r.text() == "writing « Elle » · weights sum 1.00 · reads 's1' 50 % · spread 1.03 nats"
    assert math.isclose(r.spread, 1.0252, abs_tol=1e-3)
    assert readout(t, t.steps[0], copied="gondola").word == "gondola"


def test_readout_of_a_frozen_step_names_the_summary() -> None:
    t = make_trace([None, None], context="fixed")
    assert readout(t, t.steps[1]).text() == "writing « w1 » · reads the same summary c as every word · no weights α"


def test_readout_html_escapes_and_is_large() -> None:
    t = make_trace([[0.6, 0.4]], tokens=["<b>x</b>"])
    out = readout_html(t, t.steps[0], big=True)
    assert "<b>x" not in out and "&lt;b&gt;x" in out and "font-size:1.55rem" in out
    assert "Press Step" in readout_html(t, None)


def test_first_word_note_only_off_the_diagonal_and_only_for_the_first_word() -> None:
    off = make_trace([[0.2, 0.7, 0.1], [0.1, 0.1, 0.8]], tokens=["Elle", "lit"])
    assert first_word_note(off, off.steps[0]) == FIRST_WORD_NOTE.format(word="Elle")
    assert "backward encoder" in FIRST_WORD_NOTE and "before" in FIRST_WORD_NOTE
    assert first_word_note(off, off.steps[1]) is None  # later words: no note
    on = make_trace([[0.7, 0.2, 0.1]])
    assert first_word_note(on, on.steps[0]) is None  # on the diagonal
    fixed = make_trace([None], context="fixed")
    assert first_word_note(fixed, fixed.steps[0]) is None


def test_the_frozen_picture_is_one_identical_band_per_row() -> None:
    """Every (row, source word) cell of the band, the same for every row: one mark colour, no colour
    scale (no α), every source word covered, labelled as the summary."""
    t = make_trace([None, None, None], context="fixed")
    assert t.picture == "summary"
    spec = summary_band(t, latest=2)
    cells = spec["data"]["values"]
    assert len(cells) == 3 * len(t.src_tokens)
    by_row = {i: [(c["j"], c["reads"]) for c in cells if c["i"] == i] for i in range(3)}
    assert by_row[0] == by_row[1] == by_row[2] == [(j, "the summary c") for j in range(len(t.src_tokens))]
    assert "color" not in spec["encoding"] and spec["mark"]["color"] == "#e6550d"
    assert spec["title"]["text"] == SUMMARY_TITLE
    assert summary_band(make_trace([], context="fixed")) is None


def test_rows_chart_follows_the_traces_one_decision() -> None:
    """The α heatmap where the trace recorded α, the band where it read the summary, nothing before a step."""
    alpha = make_trace([[0.6, 0.4]])
    fixed = make_trace([None], context="fixed")
    assert alpha.picture == "alpha" and rows_chart(alpha)["encoding"]["color"]["field"] == "alpha"
    assert rows_chart(fixed)["title"]["text"] == SUMMARY_TITLE
    assert make_trace([]).picture == "empty" and rows_chart(make_trace([])) is None
