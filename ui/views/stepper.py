"""Plain builders of the stepper page's charts, tables, HTML snippets and exports.

Every function reads a :class:`nmt.trace.DecodeTrace` (or one of its steps) and returns a figure,
a data frame, a string or bytes, so all of them are unit-tested without a browser. None computes
anything about the model: they only rearrange what the trace recorded.

Truthfulness: a step decoded with a fixed context (RNNencdec, or the frozen ablation) has no
α and no energies, and the builders return ``None`` for them rather than drawing a fake alignment.

User text (source words) and model output reach the page through :func:`html.escape` here, or
through data frames and charts, which show text as text; nothing is ever rendered as raw HTML.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from typing import Any

import altair as alt
import numpy as np
import pandas as pd

from nmt.trace import DecodeTrace, StepRecord
from ui.views.common import esc, label_expr, source_labels, target_labels

SELECT_PARAM = "cell"


def alignment_frame(trace: DecodeTrace) -> pd.DataFrame:
    """Long-format cells (target step × source word) with α, e and word labels."""
    cols = ["i", "j", "target", "source", "alpha", "energy", "forced", "unk"]
    rows = trace.cells()
    if not rows:
        return pd.DataFrame(columns=cols)
    df = pd.DataFrame(rows)
    unk = list(trace.src_unk) + [False] * (len(trace.src_tokens) - len(trace.src_unk))
    df["unk"] = [bool(unk[j]) for j in df["j"]]
    return df[cols]


# ----------------------------------------------------------------------------------------------
# Charts
# ----------------------------------------------------------------------------------------------


def heatmap(
    trace: DecodeTrace, value: str = "alpha", *, latest: int | None = None, param: str = SELECT_PARAM
) -> alt.Chart | None:
    """The α_ij (or e_ij) heatmap, target steps as rows and source words as columns.

    Hovering a cell shows (i, j, the two words, α, e); clicking a cell selects its step through the
    point-selection parameter ``param`` (read back with :func:`selected_step`). ``latest`` outlines
    that row. Returns ``None`` when the trace has no such values (fixed context: no alignment, or
    no energies in the uniform "mean" mode) or no steps yet.
    """
    if value not in ("alpha", "energy"):
        raise ValueError("value must be 'alpha' or 'energy'")
    attr = "alpha" if value == "alpha" else "energies"
    if not trace.steps or all(getattr(s, attr) is None for s in trace.steps):
        return None
    df = alignment_frame(trace).dropna(subset=[value])
    n_src, n_tgt = len(trace.src_tokens), len(trace.steps)
    x_step = int(max(9, min(44, 720 // max(n_src, 1))))
    y_step = 26 if n_tgt <= 30 else 18
    x_font = 12 if x_step >= 16 else 9
    y_font = 12 if y_step >= 20 else 10
    if value == "alpha":
        scale = alt.Scale(scheme="blues", domain=[0, 1])
        legend = alt.Legend(title="α_ij", gradientLength=120)
    else:
        bound = float(np.nanmax(np.abs(trace.energy_matrix()))) if n_tgt else 1.0
        bound = bound if math.isfinite(bound) and bound > 0 else 1.0
        scale = alt.Scale(scheme="redblue", domain=[-bound, bound], reverse=True)
        legend = alt.Legend(title="e_ij", gradientLength=120)
    sel = alt.selection_point(name=param, fields=["i"], on="click", clear="dblclick")
    stroke = alt.when(sel, empty=False).then(alt.value("#e4572e"))
    if latest is not None:
        stroke = stroke.when(f"datum.i == {int(latest)}").then(alt.value("#555555"))
    chart = (
        alt.Chart(df)
        .mark_rect()
        .encode(
            x=alt.X("j:O", title="source word j", sort="ascending",
                    axis=alt.Axis(orient="top", labelAngle=-55, labelExpr=label_expr(source_labels(trace)),
                                  labelOverlap=False, labelLimit=140, labelFontSize=x_font, titleFontSize=12)),
            y=alt.Y("i:O", title="target word i", sort="ascending",
                    axis=alt.Axis(labelExpr=label_expr(target_labels(trace)), labelOverlap=False, labelLimit=140,
                                  labelFontSize=y_font, titleFontSize=12)),
            color=alt.Color(f"{value}:Q", scale=scale, legend=legend),
            stroke=stroke.otherwise(alt.value(None)),
            strokeWidth=alt.value(2),
            tooltip=[
                alt.Tooltip("i:O", title="i (target)"),
                alt.Tooltip("target:N", title="target word"),
                alt.Tooltip("j:O", title="j (source)"),
                alt.Tooltip("source:N", title="source word"),
                alt.Tooltip("alpha:Q", title="α_ij", format=".3f"),
                alt.Tooltip("energy:Q", title="e_ij", format=".3f"),
            ],
        )
        .add_params(sel)
        .properties(width=alt.Step(x_step), height=alt.Step(y_step))
    )
    return chart


def context_norm_chart(trace: DecodeTrace) -> alt.Chart | None:
    """‖c_i‖ and ‖s_{i-1}‖ per target step: constant ‖c_i‖ is the fixed summary's signature."""
    if not trace.steps:
        return None
    rows = []
    for s in trace.steps:
        rows.append({"i": s.i, "word": s.token, "quantity": "‖c_i‖ (context)", "norm": s.context_norm})
        rows.append({"i": s.i, "word": s.token, "quantity": "‖s_(i-1)‖ (decoder state)", "norm": s.state_norm})
    df = pd.DataFrame(rows)
    return (
        alt.Chart(df)
        .mark_line(point=True)
        .encode(
            x=alt.X("i:Q", title="target word i", axis=alt.Axis(tickMinStep=1, format="d")),
            y=alt.Y("norm:Q", title="norm", scale=alt.Scale(zero=True)),
            color=alt.Color("quantity:N", title=None, legend=alt.Legend(orient="bottom")),
            tooltip=[alt.Tooltip("i:Q"), alt.Tooltip("word:N"), alt.Tooltip("quantity:N"),
                     alt.Tooltip("norm:Q", format=".3f")],
        )
        .properties(height=220)
    )


def selected_step(event: Any, param: str = SELECT_PARAM) -> int | None:
    """The target step picked by clicking the heatmap, from ``st.altair_chart``'s return value.

    Accepts the event object or its ``selection`` mapping; a point selection arrives as
    ``[{"i": 3}]`` (one dict per selected point) and an empty one as ``[]`` or ``{}``.
    """
    if event is None:
        return None
    sel = event.get("selection", event) if isinstance(event, Mapping) else getattr(event, "selection", None)
    if not isinstance(sel, Mapping):
        return None
    val = sel.get(param)
    if isinstance(val, Mapping):
        val = val.get("i", val.get("vlPoint"))
        if isinstance(val, Mapping):
            return None
        val = [{"i": v} for v in (val if isinstance(val, list) else [val])]
    if not isinstance(val, list) or not val:
        return None
    last = val[-1]
    i = last.get("i") if isinstance(last, Mapping) else None
    try:
        return int(i) if i is not None else None
    except (TypeError, ValueError):
        return None


# ----------------------------------------------------------------------------------------------
# Tables and numbers of one step
# ----------------------------------------------------------------------------------------------


def source_table(trace: DecodeTrace, step: StepRecord) -> pd.DataFrame | None:
    """Per source word: e_ij, α_ij and a ★ on the word with the most weight; None without α."""
    if step.alpha is None:
        return None
    unk = list(trace.src_unk) + [False] * (len(trace.src_tokens) - len(trace.src_unk))
    best = int(np.argmax(step.alpha))
    return pd.DataFrame({
        "j": list(range(len(step.alpha))),
        "source word": list(trace.src_tokens[: len(step.alpha)]),
        "read as": ["<unk>" if unk[j] else "" for j in range(len(step.alpha))],
        "e_ij": [None if step.energies is None else float(e) for e in (step.energies or [None] * len(step.alpha))],
        "α_ij": [float(a) for a in step.alpha],
        "most": ["★" if j == best else "" for j in range(len(step.alpha))],
    })


def step_stats(trace: DecodeTrace, step: StepRecord) -> dict[str, Any]:
    """Σ_j α_ij, the entropy of α in nats (and its maximum ln T_x) and the most-weighted word."""
    if step.alpha is None:
        return {"sum": None, "entropy": None, "max_entropy": None, "argmax": None, "word": None, "weight": None}
    best = int(np.argmax(step.alpha))
    return {
        "sum": float(np.sum(step.alpha)),
        "entropy": step.entropy(),
        "max_entropy": math.log(len(step.alpha)) if step.alpha else 0.0,
        "argmax": best,
        "word": trace.src_tokens[best],
        "weight": float(step.alpha[best]),
    }


# ----------------------------------------------------------------------------------------------
# HTML snippets (every piece of text escaped)
# ----------------------------------------------------------------------------------------------


_CHIP = ("display:inline-block;margin:2px 3px;padding:2px 7px;border-radius:6px;"
         "border:1px solid rgba(128,128,128,.35);font-size:1.05rem;line-height:1.6;")


def translation_html(trace: DecodeTrace, shown: int | None) -> str:
    """The translation so far as word chips; the shown step is highlighted, forced words marked."""
    if not trace.steps:
        return '<div style="opacity:.6;font-style:italic">(nothing written yet: press Step)</div>'
    chips = []
    for s in trace.steps:
        style = _CHIP
        title = f"step {s.i}: p={s.prob:.3f}"
        if s.forced:
            style += "border:1px dashed #e4572e;"
            title += " (forced)"
        if s.i == shown:
            style += "background:rgba(255,189,69,.55);font-weight:600;"
        word = esc(s.token) + ("<sup>forced</sup>" if s.forced else "")
        chips.append(f'<span style="{style}" title="{esc(title)}">{word}</span>')
    return '<div data-testid="translation-so-far">' + "".join(chips) + "</div>"


def source_html(trace: DecodeTrace, step: StepRecord | None) -> str:
    """The source words as chips, shaded by α_ij of ``step`` (plain when there is no α)."""
    chips = []
    unk = list(trace.src_unk) + [False] * (len(trace.src_tokens) - len(trace.src_unk))
    alpha = step.alpha if step is not None else None
    for j, w in enumerate(trace.src_tokens):
        style = _CHIP
        title = f"j={j}"
        if alpha is not None and j < len(alpha):
            style += f"background:rgba(31,119,180,{min(1.0, max(0.0, alpha[j])):.3f});"
            title += f", α={alpha[j]:.3f}"
            if alpha[j] > 0.5:
                style += "color:white;"
        if unk[j]:
            style += "border:1px dashed #d62728;"
            title += ", outside the vocabulary: the model reads <unk>"
        label = esc(w) + ('<sup style="color:#d62728">unk</sup>' if unk[j] else "")
        chips.append(f'<span style="{style}" title="{esc(title)}">{label}</span>')
    return '<div data-testid="source-words">' + "".join(chips) + "</div>"


def now_writing_html(step: StepRecord | None, shown_latest: bool) -> str:
    """The big "now writing" line: the target word of the shown step and its probability."""
    if step is None:
        return '<div style="font-size:1.1rem;opacity:.7">Press <b>Step</b> to write the first word.</div>'
    head = "Now writing" if shown_latest else f"Step {step.i} wrote"
    forced = ' <span style="color:#e4572e;font-size:.9rem">(forced by you)</span>' if step.forced else ""
    return (f'<div style="font-size:1.05rem">{head} (i = {step.i}): '
            f'<span style="font-size:1.8rem;font-weight:700;padding:0 .3rem;'
            f'background:rgba(255,189,69,.45);border-radius:6px">{esc(step.token)}</span>'
            f' &nbsp;p = {step.prob:.3f}{forced}</div>')


# ----------------------------------------------------------------------------------------------
# Exports


def trace_csv(trace: DecodeTrace) -> str:
    """The trace's cells (one row per target step × source word) as CSV, with p and unk flags."""
    df = alignment_frame(trace)
    if len(df):
        probs = {s.i: s.prob for s in trace.steps}
        df.insert(3, "p_target", [probs[i] for i in df["i"]])
        ctx = {s.i: s.context_norm for s in trace.steps}
        df["context_norm"] = [ctx[i] for i in df["i"]]
    df.insert(0, "context_mode", trace.context)
    return df.to_csv(index=False)


def trace_json(trace: DecodeTrace) -> str:
    """The whole trace as JSON (reloadable with ``DecodeTrace.from_dict``)."""
    return trace.to_json(indent=1)
