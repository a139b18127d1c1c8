"""α heatmaps shared by the analysis pages, with gold links, and the honest picture of a fixed context.

A trace decoded with a fixed context (RNNencdec, or the RNNsearch weights with c_i frozen) has no α;
it is drawn by :func:`fixed_context_chart`, one band over the whole source and every target word that
says once "every word reads the same summary c", never as a heatmap of invented weights. The drawing branches on
``trace.context``.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import altair as alt
import numpy as np
import pandas as pd

from nmt.decoding.trace import DecodeTrace
from nmt.explanation.align import Links, argmax_links
from ui.figures.common import EOS, FONT, label_expr, source_labels, target_labels


def _cell_steps(n_src: int, n_tgt: int, max_width: int = 860) -> tuple[int, int]:
    """Heatmap cell width and height in pixels, so ``n_src`` columns fit in about ``max_width``."""
    return int(max(8, min(34, max_width // max(n_src, 1)))), (20 if n_tgt <= 40 else 14)


def alpha_frame(src: Sequence[str], tgt: Sequence[str], alpha: Sequence[Sequence[float] | None]) -> pd.DataFrame:
    """Long-format α cells (target row i × source column j) with both words."""
    rows = []
    for i, row in enumerate(alpha):
        if row is None:
            continue
        for j, a in enumerate(row[: len(src)]):
            rows.append({"i": i, "j": j, "target": tgt[i], "source": src[j], "alpha": float(a)})
    return pd.DataFrame(rows, columns=["i", "j", "target", "source", "alpha"])


def links_frame(
    src: Sequence[str], tgt: Sequence[str], sure: Links | None = None, possible: Links | None = None,
    predicted: Links | None = None,
) -> pd.DataFrame:
    """Link markers (source j, target i) of the gold Sure / Possible sets and of argmax α.

    Possible-only links are those in P but not in S; links outside the sentence are dropped.
    """
    rows = []
    sure, possible, predicted = sure or set(), possible or set(), predicted or set()
    for kind, links in (("sure", sure), ("possible", possible - sure), ("argmax α", predicted)):
        for j, i in sorted(links):
            if 0 <= j < len(src) and 0 <= i < len(tgt):
                rows.append({"i": i, "j": j, "target": tgt[i], "source": src[j], "link": kind})
    return pd.DataFrame(rows, columns=["i", "j", "target", "source", "link"])


LINK_SHAPES = {"sure": "square", "possible": "circle", "argmax α": "cross"}
LINK_COLOURS = {"sure": "#111111", "possible": "#6c6c6c", "argmax α": "#e4572e"}


def _legend(title: str, where: str, **kw: Any) -> alt.Legend:
    """A legend at the right, or below the chart in a row (for charts in a narrow column)."""
    if where == "bottom":
        return alt.Legend(title=title, orient="bottom", direction="horizontal", **kw)
    return alt.Legend(title=title, **kw)


def alpha_chart(
    src: Sequence[str], tgt: Sequence[str], alpha: Sequence[Sequence[float] | None], *,
    links: pd.DataFrame | None = None, title: str | None = None, max_width: int = 860, legend: str = "right",
) -> alt.Chart | alt.LayerChart | None:
    """The α heatmap (rows: target words, columns: source words), optionally with link markers.

    Cells shrink so the heatmap is about ``max_width`` pixels wide (but no narrower than 8 px);
    ``legend="bottom"`` puts the legends under it, where a narrow column has room for them.
    Returns ``None`` when no row has α (a fixed context: there is no alignment to draw).
    """
    cells = alpha_frame(src, tgt, alpha)
    if cells.empty:
        return None
    x_step, y_step = _cell_steps(len(src), len(tgt), max_width)
    x = alt.X("j:O", title="source word j", scale=alt.Scale(domain=list(range(len(src)))),
              axis=alt.Axis(orient="top", labelAngle=-50 if x_step >= 20 else -90,  # narrow cells: upright words
                            labelExpr=label_expr(src), labelOverlap=False, labelLimit=140))
    y = alt.Y("i:O", title="target word i", scale=alt.Scale(domain=list(range(len(tgt)))),
              axis=alt.Axis(labelExpr=label_expr(tgt), labelOverlap=False, labelLimit=140))
    heat = alt.Chart(cells).mark_rect().encode(
        x=x, y=y,
        color=alt.Color("alpha:Q", scale=alt.Scale(scheme="blues", domain=[0, 1]),
                        legend=_legend("α_ij", legend, gradientLength=110)),
        tooltip=[alt.Tooltip("i:O", title="i (target)"), alt.Tooltip("target:N", title="target word"),
                 alt.Tooltip("j:O", title="j (source)"), alt.Tooltip("source:N", title="source word"),
                 alt.Tooltip("alpha:Q", title="α_ij", format=".3f")],
    )
    chart: alt.Chart | alt.LayerChart = heat
    if links is not None and not links.empty:
        kinds = [k for k in LINK_SHAPES if k in set(links["link"])]
        size = (min(x_step, y_step) * 0.85) ** 2
        marks = alt.Chart(links).mark_point(filled=False, strokeWidth=2, size=size).encode(
            x=x, y=y,
            shape=alt.Shape("link:N", scale=alt.Scale(domain=kinds, range=[LINK_SHAPES[k] for k in kinds]),
                            legend=_legend("links", legend)),
            color=alt.Color("link:N", scale=alt.Scale(domain=kinds, range=[LINK_COLOURS[k] for k in kinds]),
                            legend=_legend("links", legend)),
            tooltip=[alt.Tooltip("link:N"), alt.Tooltip("target:N", title="target word"),
                     alt.Tooltip("source:N", title="source word"), alt.Tooltip("i:O"), alt.Tooltip("j:O")],
        )
        chart = alt.layer(heat, marks).resolve_scale(color="independent", shape="independent")
    props: dict[str, Any] = {"width": alt.Step(x_step), "height": alt.Step(y_step)}
    if title:
        props["title"] = title
    return chart.properties(**props)


def trace_alpha_chart(
    trace: DecodeTrace, *, sure: Links | None = None, possible: Links | None = None, show_argmax: bool = False,
    title: str | None = None, max_width: int = 860, legend: str = "right",
) -> alt.Chart | alt.LayerChart | None:
    """The α heatmap of a trace, with gold Sure/Possible links and argmax-α links if asked.

    ``None`` for a fixed-context trace (use :func:`fixed_context_chart`)."""
    if not trace.has_alignment:
        return None
    tgt = [f"{s.token}*" if s.forced else s.token for s in trace.steps]
    links = None
    if sure is not None or possible is not None or show_argmax:
        links = links_frame(trace.src_tokens, tgt, sure, possible, argmax_links(trace) if show_argmax else None)
    return alpha_chart(source_labels(trace), tgt, [s.alpha for s in trace.steps], links=links, title=title,
                       max_width=max_width, legend=legend)


SAME_C = "every word reads the same summary c"
SAME_C_LINES = ("every word reads", "the same summary c")  # SAME_C on two lines, for a narrow band


def fixed_context_chart(trace: DecodeTrace, title: str | None = None, max_width: int = 860) -> alt.LayerChart | None:
    """What a fixed-context decoder reads: every target word the same summary c of the whole source.

    One band spans the whole source and every target row, and says so once (there are no per-word
    weights to colour); hovering shows ‖c‖, the same at every step. ``None`` without steps.
    """
    if not trace.steps:
        return None
    tgt, n = target_labels(trace), len(trace.src_tokens) - 1
    rows, norm = len(tgt), trace.steps[0].context_norm
    note = f"{SAME_C} (‖c‖ = {norm:.2f})"
    band = pd.DataFrame({"x0": [0.0], "x1": [1.0], "xm": [0.5], "y0": [-0.45], "y1": [rows - 0.55],
                         "ym": [(rows - 1) / 2], "note": [note], "words": [rows]})
    x_axis = alt.Axis(orient="top", ticks=False, labels=False, grid=False, domain=False,
                      title=f"all {n} source words → one vector c")
    y_scale = alt.Scale(domain=[-0.5, rows - 0.5], reverse=True, nice=False, zero=False)
    y_axis = alt.Axis(values=list(range(rows)), labelExpr=label_expr(tgt), labelOverlap=False, labelLimit=140,
                      grid=False, title="target word i")
    x_scale = alt.Scale(domain=[0, 1])
    tip = [alt.Tooltip("note:N", title="context"), alt.Tooltip("words:Q", title="target words")]
    rect = alt.Chart(band).mark_rect(color="#d9d9d9", cornerRadius=4).encode(
        x=alt.X("x0:Q", scale=x_scale, axis=x_axis), x2="x1:Q", y=alt.Y("y0:Q", scale=y_scale, axis=y_axis),
        y2="y1:Q", tooltip=tip)
    # three short lines where the band is tall enough: a narrow band (a column of the Lesson) clipped one long line
    lines = ([*SAME_C_LINES, f"(‖c‖ = {norm:.2f})"] if rows >= 4 else
             [SAME_C, f"(‖c‖ = {norm:.2f})"] if rows >= 3 else [note])
    text = alt.Chart(band).mark_text(fontSize=FONT, color="#31333F", lineBreak="\n").encode(
        x=alt.X("xm:Q", scale=x_scale, axis=x_axis), y=alt.Y("ym:Q", scale=y_scale, axis=y_axis),
        text=alt.value("\n".join(lines)), tooltip=tip)
    return alt.layer(rect, text).properties(width=max(240, min(max_width, 420)),
                                            height=_cell_steps(n + 1, rows, max_width)[1] * rows,
                                            title=title or "Fixed context: no α exists")


def trace_chart(
    trace: DecodeTrace, title: str | None = None, max_width: int = 860, legend: str = "right", **gold: Any
) -> alt.TopLevelMixin | None:
    """The α heatmap of a trace, or the fixed-summary drawing when it has no alignment."""
    if trace.has_alignment:
        return trace_alpha_chart(trace, title=title, max_width=max_width, legend=legend, **gold)
    return fixed_context_chart(trace, title=title, max_width=max_width)


def alpha_stats(trace: DecodeTrace) -> dict[str, float | None]:
    """Mean entropy of α_i (nats) and mean of max_j α_ij over the target words (``</s>`` left out).

    ``None`` for both when the trace has no alignment."""
    steps = [s for s in trace.steps if s.alpha is not None and s.token != EOS] or \
            [s for s in trace.steps if s.alpha is not None]
    if not steps:
        return {"entropy": None, "max_alpha": None}
    ent = [s.entropy() or 0.0 for s in steps]
    peak = [float(max(s.alpha or [0.0])) for s in steps]
    return {"entropy": float(np.mean(ent)), "max_alpha": float(np.mean(peak))}
