"""Builders of the attention comparison page: one sentence under Bahdanau's and Luong's attention.

Every model is named by what it is, read from its checkpoint's config (:mod:`nmt.models.kinds`), and
every column shows the same things: the translation, its α heatmap (with the window of local
attention drawn on it), the log-probability of the reference and sentence BLEU. Nothing here runs a
model; the numbers are the ones the traces recorded.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import altair as alt
import pandas as pd

from nmt.decoding.trace import DecodeTrace
from ui.figures.heatmaps import trace_chart


def window_frame(trace: DecodeTrace) -> pd.DataFrame:
    """Cells inside each step's local-attention window, and the cell nearest p_t (empty for global attention).

    Columns: ``i`` (target step), ``j`` (source position), ``kind`` ("window" or "p_t") and ``p_t``.
    """
    rows = []
    n_src = len(trace.src_tokens)
    for s in trace.steps:
        if s.window is None or s.position is None:
            continue
        lo, hi = max(0, int(s.window[0])), min(n_src - 1, int(s.window[1]))
        rows += [{"i": s.i, "j": j, "kind": "window", "p_t": s.position} for j in range(lo, hi + 1)]
        rows.append({"i": s.i, "j": min(n_src - 1, max(0, round(s.position))), "kind": "p_t", "p_t": s.position})
    return pd.DataFrame(rows, columns=["i", "j", "kind", "p_t"])


def compare_chart(trace: DecodeTrace, title: str, max_width: int = 420) -> alt.TopLevelMixin | None:
    """The α heatmap of one model; for local attention, its window outlined and p_t marked."""
    base = trace_chart(trace, title=title, max_width=max_width)
    win = window_frame(trace)
    if base is None or win.empty:
        return base
    x = alt.X("j:O", scale=alt.Scale(domain=list(range(len(trace.src_tokens)))), title="source word j")
    y = alt.Y("i:O", scale=alt.Scale(domain=list(range(len(trace.steps)))), title="target word i")
    box = alt.Chart(win[win["kind"] == "window"]).mark_rect(filled=False, stroke="#6a3d9a", strokeWidth=1.5,
                                                            strokeOpacity=0.9).encode(x=x, y=y)
    centre = alt.Chart(win[win["kind"] == "p_t"]).mark_point(shape="diamond", filled=True, color="#6a3d9a",
                                                              size=60).encode(
        x=x, y=y, tooltip=[alt.Tooltip("i:O", title="step i"), alt.Tooltip("p_t:Q", title="p_t", format=".2f")])
    # The overlays share the heatmap's scales (independent ones gave the layer no width of its own: at
    # 1280×720 local-p's heatmap collapsed to a line) and draw no axes; the heatmap's word labels stay.
    return alt.layer(base, box, centre).resolve_scale(color="independent")


def summary_frame(rows: Sequence[Mapping[str, Any]]) -> pd.DataFrame:
    """One row per model: translation, log p of its own output and of the reference, sentence BLEU."""
    cols = ["model", "translation", "words", "log p (own)", "log p (reference)", "log p / word (reference)",
            "BLEU", "chrF"]
    return pd.DataFrame([{k: r.get(k) for k in cols} for r in rows], columns=cols)


def row_name(label: str, labels: list[str]) -> str:
    """A model's name in the summary: its description, with the checkpoint file when two share one
    (both RNNsearch checkpoints are "RNNsearch (Bahdanau 2015)")."""
    short = label.split(" · ")[0]
    return short if [x.split(" · ")[0] for x in labels].count(short) == 1 else label


def local_note(gaussian: Sequence[bool]) -> str:
    """The caption under the models when some attend locally, one entry per local model shown: whether
    it is local-p (a predicted p_t and a Gaussian, eqs. 9–10) or local-m (p_t = t, the window's α as is)."""
    if not gaussian:
        return ""
    head = ("Local attention reads only a window of 2D+1 source words (D, the half-width, is set in training) "
            "around a position p_t (window outlined in purple, p_t marked ◆)")
    parts = []
    if any(gaussian):
        parts.append("local-p predicts p_t for target word t and weights the window by a Gaussian centred on it")
    if not all(gaussian):
        parts.append("local-m takes p_t = t (monotonic) and keeps the window's α as the softmax gives it")
    return f"{head}: " + "; ".join(parts) + "."
