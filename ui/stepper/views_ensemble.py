"""An ensemble beside its members at one step: each member's α row and its p of the written word.

Pure builders over one :class:`~nmt.decoding.trace.StepRecord` of an ensemble's trace (:mod:`nmt.decoding.ensemble`):
the ensemble's row first, then one row per member, in the members' order. The ensemble's α row is
the mean of the members' rows and its p the normalised geometric mean of their p (exp of the mean
log p, divided by Z_i, its sum over the vocabulary), as the trace records them; nothing here
recomputes either, the rows are read from the step.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Any

from nmt.decoding.trace import DecodeTrace, StepRecord
from nmt.models.kinds import ENSEMBLE_COLOUR
from ui.figures.common import label_expr, source_labels
from ui.figures.stepper_charts import PAPER, Look

ENSEMBLE_ROW = "ensemble"
P_WIDTH = 120  # px of the p bars beside the α rows
FITS = 560  # px the chart may take before it scrolls sideways (the stepper's left column at 1280 px)
FIXED = 270  # px of the chart that are not α columns: row names, the bars and their values, spacing
MEMBER_GREY = "#9a9a9a"  # the members' bars


def unique_names(names: Sequence[str]) -> list[str]:
    """``names`` with repeats numbered ("RNNsearch", "RNNsearch 2"), so each member has its own row."""
    seen: dict[str, int] = {}
    out = []
    for n in names:
        seen[n] = seen.get(n, 0) + 1
        out.append(n if seen[n] == 1 else f"{n} {seen[n]}")
    return out


def prob_text(p: float) -> str:
    """A probability for reading: two decimals, or two significant digits below 0.01 (0.0028, 1.2e-05)."""
    return f"{p:.2f}" if p >= 0.01 else f"{p:.2g}"


def column_step(n_src: int, look: Look) -> int:
    """Width of one α column: up to 40 px, narrower so the chart fits :data:`FITS`, never below the font + 4."""
    return max(look.font + 4, min(40, (FITS - FIXED) // max(n_src, 1)))


def chart_width(n_src: int, look: Look) -> int:
    """About how wide :func:`members_chart` is, in px."""
    return FIXED + n_src * column_step(n_src, look)


def member_rows(step: StepRecord, names: Sequence[str]) -> list[dict[str, Any]]:
    """One row for the ensemble, then one per member: name (repeats numbered), p and log p of the word
    written at this step, its α row (None without attention), the word it ranks first and that word's
    p, and whether that is the written word."""
    if step.members is None:
        raise ValueError("this step was not decoded by an ensemble")
    if len(step.members) != len(names):
        raise ValueError(f"{len(names)} names for {len(step.members)} members")
    top_word, top_p = step.topk[0] if step.topk else (step.token, step.prob)
    rows = [{"model": ENSEMBLE_ROW, "p": step.prob, "logprob": step.logprob, "alpha": step.alpha,
             "top": top_word, "top_p": top_p, "agrees": top_word == step.token}]
    for name, m in zip(unique_names(names), step.members, strict=True):
        rows.append({"model": name, "p": m.prob, "logprob": m.logprob, "alpha": m.alpha, "top": m.top[0],
                     "top_p": m.top[1], "agrees": m.top[0] == step.token})
    return rows


def members_chart(trace: DecodeTrace, step: StepRecord, names: Sequence[str],
                  look: Look | None = None) -> dict[str, Any]:
    """A Vega-Lite spec: for the ensemble, then each member, a bar of its p of the written word with
    its value and, beside it, its α row (source words as columns, the heatmap's colours). The bars
    come first, so a long sentence's α columns are what a narrow column scrolls to
    (:func:`chart_width` says how wide the chart is)."""
    look = look or Look()
    rows = member_rows(step, names)
    order = [r["model"] for r in rows]
    f, ink = look.font, look.ink
    cells = [{"model": r["model"], "j": j, "source": w, "alpha": a}
             for r in rows if r["alpha"] is not None for j, (w, a) in enumerate(zip(trace.src_tokens, r["alpha"]))]
    bars = [{"model": r["model"], "p": r["p"], "label": prob_text(r["p"])} for r in rows]
    axis = {"labelFontSize": f, "titleFontSize": f, "labelColor": ink, "titleColor": ink, "labelOverlap": False,
            "titleFontWeight": "normal", "labelLimit": 200}
    y = {"field": "model", "type": "nominal", "sort": order, "title": None}
    scale = {"domain": [0, 1], "range": list(PAPER)} if look.paper else {"scheme": "blues", "domain": [0, 1]}
    n_src = len(trace.src_tokens)
    heat = {
        "data": {"values": cells}, "mark": {"type": "rect"},
        "encoding": {
            "x": {"field": "j", "type": "ordinal", "title": None,
                  "axis": {"orient": "top", "labelAngle": -90 if column_step(n_src, look) < 30 else -40,
                           "labelExpr": label_expr(source_labels(trace)), **axis}},
            "y": {**y, "axis": None},
            "color": {"field": "alpha", "type": "quantitative", "scale": scale, "legend": None},
            "tooltip": [{"field": "model", "title": "model"}, {"field": "source", "title": "source word"},
                        {"field": "alpha", "type": "quantitative", "title": "α_ij", "format": ".3f"}],
        },
        "width": {"step": column_step(n_src, look)}, "height": {"step": f + 10},
    }
    title = f"p(“{step.token}”)"
    bar = {
        "data": {"values": bars},
        "encoding": {"y": {**y, "axis": axis},
                     "x": {"field": "p", "type": "quantitative", "scale": {"domain": [0, 1]},
                           "axis": {"title": title, "orient": "top", "tickCount": 2, **axis}}},
        "layer": [{"mark": {"type": "bar"},  # the ensemble in its colour, the members grey
                   "encoding": {"color": {"condition": {"test": f"datum.model == '{ENSEMBLE_ROW}'",
                                                        "value": ENSEMBLE_COLOUR}, "value": MEMBER_GREY}}},
                  {"mark": {"type": "text", "align": "left", "dx": 4, "fontSize": f, "color": ink},
                   "encoding": {"text": {"field": "label"}}}],  # the value just past the bar's end
        "width": P_WIDTH, "height": {"step": f + 10},
    }
    return {"$schema": "https://vega.github.io/schema/vega-lite/v6.json", "hconcat": [bar, heat],
            "spacing": 12, "resolve": {"scale": {"y": "shared"}},
            "config": {"view": {"stroke": None}, "background": None, "axis": {"domain": False, "ticks": False}}}


def members_caption(step: StepRecord, names: Sequence[str]) -> str:
    """One line: the ensemble's p of the written word as the geometric mean of the members' p over
    Z_i (read off the step: the geometric mean over p_ens), and which members on their own would have
    written another word (plain text; the page escapes it)."""
    rows = member_rows(step, names)
    ps = " · ".join(prob_text(r["p"]) for r in rows[1:])
    k = len(rows) - 1
    geo = math.exp(sum(r["logprob"] for r in rows[1:]) / k)
    line = (f"p_ens(“{step.token}”) = ({ps})^(1/{k}) / Z = {prob_text(geo)} / {geo / step.prob:.2f} = "
            f"{prob_text(step.prob)}: the members' log p averaged, then renormalised (Z sums the geometric "
            "means of every word, so the ensemble's p sum to 1).")
    others = [f"{r['model']} would write “{r['top']}” (p = {r['top_p']:.2f})" for r in rows[1:] if not r["agrees"]]
    return line + (" Alone, " + "; ".join(others) + "." if others else " Every member alone ranks it first too.")
