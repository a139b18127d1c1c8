"""The stepper's picture of the decoding: the α heatmap (or the frozen summary band), which step a click on
it picks, and the bottleneck comparison (both sides of the toggle on the sentence) under it or in its tab."""

from __future__ import annotations

import contextlib

import streamlit as st

from nmt.decoding.trace import DecodeTrace
from ui.common import models
from ui.figures import stepper_charts as sc
from ui.figures import stepper_html as sh
from ui.figures import subword_view
from ui.stepper import decoding as dec
from ui.stepper import state
from ui.stepper import views_readout as sr
from ui.stepper.panels import words_chosen, words_view

HEATMAP_BOX = {False: 340, True: 400}  # px (normal, presentation): a taller heatmap scrolls inside its box
# (not in presentation mode: there every row stays in view of the page, issue 21)
WIDE_MARGIN = 90  # px below a wide, short heatmap's rows: its labels, legend and a horizontal scrollbar


def bottleneck_panel(group: models.ModelGroup, text: str, upto: int | None, look: sc.Look, key: str,
                     compact: bool = False) -> None:
    """Both sides of the toggle on this sentence (and a twinless pair's stand-in): their translations and,
    unless ``compact`` (a projector), how far c_i moves."""
    pair = dec.bottleneck_pair(group, text)
    if pair is None:
        st.caption("This model group has no twin on the other side of the toggle to compare with.")
        return
    series, colours, fixed = pair
    (la, wa, _), (lb, wb, _), *more = series
    st.html(sh.compare_html(la, wa, lb, wb, big=look.present, colours=colours, more=[(m[0], m[1]) for m in more]))
    if any("<unk>" in words for (_, words, _), frozen in zip(series, fixed, strict=True) if frozen):
        st.caption("A model reading one fixed c attends to no source word, so its <unk> cannot be replaced "
                   "from the dictionary: it stays as written.")
    if compact:
        return
    st.altair_chart(sc.drift_chart(series, look, upto, colours), width="stretch", height=210,
                    key=state.key(f"drift_{key}"))
    st.caption(("Boxed words appear in one of the first two translations only, or, in the third, are missing "
                "from the first. " if more else "Boxed words appear in one translation only. ")
               + "The chart, in the same colours: how far each word's context c_i is from the first word's c_0. "
               "RNNsearch reads a new mix of the source for every word; the fixed summary c is one vector, so "
               "its line stays at 0 by construction.")


def shown_rows(trace: DecodeTrace, pieces: str | None = None) -> tuple[DecodeTrace, list[tuple[int, int]] | None]:
    """The rows the heatmap shows, decided once a Step for :func:`shown_step` and :func:`alignment`: a subword
    model's (``pieces``: its kind) grouped into words when the session shows words, with each word's span of
    pieces (:mod:`ui.figures.subword_view`); else the trace itself and None."""
    if pieces and trace.picture == "alpha" and words_chosen():
        return subword_view.words_trace(trace, pieces)
    return trace, None


def alignment(shown: tuple[DecodeTrace, list[tuple[int, int]] | None], latest: int | None, nonce: str,
              look: sc.Look, group: models.ModelGroup, text: str, pieces: str | None = None,
              notes: tuple[str, ...] = ()) -> None:
    """The rows as the trace decided (the α heatmap, or the frozen summary band); the step a click on it picks
    is :func:`shown_step`'s.
    ``shown``: :func:`shown_rows`' (a subword model's heatmap in words, or the trace); ``pieces``: a subword
    model's kind, whose heatmap has the pieces / words switch; ``notes``: Markdown paragraphs for the chart's
    caption after its own (not in presentation mode): one caption element a Step, not one each."""
    more = "".join(f"\n\n{n}" for n in notes)
    trace, spans = shown
    if pieces and trace.picture == "alpha":
        words_view(look)  # the switch (its choice, read by shown_rows, is the session's before this run)
    words = spans is not None
    if words:
        latest = len(trace.steps) - 1 if trace.steps else None
    # the room left under the source words: less for each extra line of them
    box = max(200, HEATMAP_BOX[look.present] - (sh.chip_lines(trace.src_tokens, look.present) - 1)
              * sh.CHIP_ROW[look.present][3])
    height = sc.heatmap_height(trace, look)
    tall = height > box and not look.present  # on a projector no row hides in a scrolling box: the page scrolls
    wide = len(trace.src_tokens) > sc.FIT_MAX_SOURCE  # its columns keep their width: it scrolls sideways
    chart = sr.rows_chart(trace, latest=latest, look=look, labels_below=tall)
    if chart is None:
        st.caption("The α heatmap grows one row per step: press Step." + ("" if look.present else more))
        return
    # A fixed height makes a scrolling box: needed when the chart is taller than the box, and also
    # when it is wider than the column (else its last source words are cut off, unreachable).
    # (no box when the chart fits: one element fewer to draw each Step)
    with st.container(height=box if tall else height + WIDE_MARGIN, border=False, autoscroll=True) \
            if tall or wide else contextlib.nullcontext():
        st.vega_lite_chart(*sc.arrow_rows(chart), key=state.key(f"alpha_{nonce}"), on_select="rerun",  # Arrow
                           width="content" if wide else "stretch")
    if not look.present:
        unit = "pieces" if pieces and not words else "words"  # a subword model's heatmap of pieces
        st.caption(f"Rows: target {unit} (* = forced); columns: source {unit}; " + (
            "darker = more attention." if trace.picture == "alpha" else
            "every row is the same band: each word reads the one summary c, so there is no α to draw.")
            + " Click a row to look at that step, double-click to clear." + more)
        if trace.picture == "summary":
            st.markdown("**What the one summary costs on this sentence:**")
            bottleneck_panel(group, text, latest, look, nonce)
    elif trace.picture == "summary" and dec.stand_in_note(group, dec.frozen_choice(group)):
        bottleneck_panel(group, text, latest, look, nonce, compact=True)  # what the warning and Watch line promise


def shown_step(spans: list[tuple[int, int]] | None, nonce: str, latest: int | None) -> int | None:
    """The step the page shows: the one a click on the heatmap picked (a row; a subword model's word row,
    ``spans`` from :func:`shown_rows`, stands for its last piece), else ``latest`` (None before the first Step).
    The click is read from the chart's selection as kept under its key (``nonce``: :func:`alignment`'s) before
    the chart is drawn again, so the page writes that step's readout above the chart at once."""
    row = sc.selected_step(state.get(f"alpha_{nonce}"))
    step = row if spans is None else subword_view.step_of_row(row, spans)
    return step if step is not None and latest is not None and 0 <= step <= latest else latest
