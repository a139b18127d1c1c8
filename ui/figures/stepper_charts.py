"""The stepper's charts: its α / energy heatmap (a Vega-Lite spec), the context-drift chart, the
colour ramp they share and the cell-click reader.

One colour meaning everywhere: more attention is darker blue, in the α heatmap, the energy heatmap
(a higher energy e_ij gives a larger α_ij) and the shading of the source words. The paper style
(Fig. 3 of Bahdanau et al.) is greyscale instead, 0 black and 1 white, again for all three.
A step decoded with a fixed context has no α and no energies: the builders return ``None`` for
them rather than drawing a fake alignment.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import altair as alt
import numpy as np
import pandas as pd
import pyarrow as pa
import vl_convert as vlc

from nmt.decoding.trace import DecodeTrace
from nmt.models.kinds import ATTENTION_COLOUR, FIXED_COLOUR
from ui.figures.common import label_expr, source_labels, target_labels

SELECT_PARAM = "cell"

# Vega's "blues" scheme (the heatmaps' colours), sampled at 0, 0.1, …, 1: the source words are
# shaded from the same ramp, so a word's colour means the same α as a heatmap cell's.
BLUES = ("#cfe1f2", "#bed8ec", "#a8cee5", "#8fc1de", "#74b2d7", "#5ba3cf", "#4592c6", "#3181bd", "#206fb2",
         "#125ca4", "#0a4a90")
PAPER = ("#000000", "#ffffff")  # greyscale: 0 black, 1 white
LATEST, PICKED = "#f28e2b", "#d62728"  # outline of the latest row, and of the row clicked
MODEL_COLOURS = (ATTENTION_COLOUR, FIXED_COLOUR)  # default pair: attention (fresh c_i), fixed c (nmt.models.kinds)
WINDOW = "#6a3d9a"  # local attention's window and p_t (purple, apart from the blue ramp and the orange rows)
SLANT_MAX_SOURCE = 16  # up to this many source words their labels slant (-40°, shorter), then stand upright
FIT_MAX_SOURCE = 45  # up to this many source words (the paper's long sentences too) the heatmap fits its width
MIN_FONT = 14  # px: no chart text smaller, readable from the back row (issue 21)
PRESENT_ROWS_PX = 600  # presentation mode: the most px the rows take up to 40 rows (rows of 15 px, labels 14 px),
# so all of them and their source labels fit one 720-pixel screen (the page scrolls to them, never the chart)
COLUMNS_PX = 600  # about the heatmap's width in px on a 1280-pixel screen (its column of the stepper)


@dataclass(frozen=True)
class Look:
    """How the page is drawn: presentation size, paper-style greyscale, dark theme."""

    present: bool = False
    paper: bool = False
    dark: bool = False

    @property
    def font(self) -> int:
        """Pixel size of every text on the charts (axis labels and titles, legends)."""
        return 18 if self.present else 14

    @property
    def ink(self) -> str:
        """Text colour on the charts: full contrast, never light grey."""
        return "#fafafa" if self.dark else "#111111"


def _hex(rgb: Sequence[float]) -> str:
    return "#" + "".join(f"{round(min(255.0, max(0.0, c))):02x}" for c in rgb)


def _rgb(h: str) -> tuple[int, int, int]:
    return int(h[1:3], 16), int(h[3:5], 16), int(h[5:7], 16)


def ramp_colour(x: float, paper: bool = False) -> str:
    """The heatmap's colour of a value ``x`` in [0, 1] (blues, or paper greyscale), as ``#rrggbb``."""
    x = min(1.0, max(0.0, float(x))) if math.isfinite(x) else 0.0
    stops = PAPER if paper else BLUES
    pos = x * (len(stops) - 1)
    k = min(int(pos), len(stops) - 2)
    t = pos - k
    a, b = _rgb(stops[k]), _rgb(stops[k + 1])
    return _hex([a[c] + (b[c] - a[c]) * t for c in range(3)])


def text_colour(background: str) -> str:
    """Black or white, whichever reads better on ``background`` (relative luminance)."""
    r, g, b = _rgb(background)
    return "#000000" if 0.299 * r + 0.587 * g + 0.114 * b > 140 else "#ffffff"


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


def row_height(n_tgt: int, look: Look = Look()) -> int:
    """Pixel height of a heatmap row: roomy for short translations; rows shrink so that up to about
    12 of them fit on a 720-pixel-high screen, never below the font size + 3, and past 12 rows down
    to the font size + 1 (the 15 rows of the paper's Fig. 3(a) sentence fit a projector). In
    presentation mode the rows of a long translation shrink further, to :data:`PRESENT_ROWS_PX` in
    all and never below :data:`MIN_FONT` + 1 (their labels then shrink with them, :func:`row_font`):
    40 rows and their source labels fit one 720-pixel screen, the page scrolled to them."""
    base, budget = (32, 252) if look.present else (26, 216)
    if n_tgt * base > budget:
        base = budget // n_tgt
    px = max(look.font + (3 if n_tgt <= 12 else 1), base)
    if look.present and n_tgt * px > PRESENT_ROWS_PX:
        px = max(MIN_FONT + 1, PRESENT_ROWS_PX // n_tgt)
    return px


def row_font(n_tgt: int, look: Look = Look()) -> int:
    """Pixel size of the row (target word) labels: the charts' font, or 1 px under a row too low
    for it, never below :data:`MIN_FONT` (readable from the back row)."""
    return max(MIN_FONT, min(look.font, row_height(n_tgt, look) - 1))


def column_font(n_src: int, look: Look = Look()) -> int:
    """Pixel size of the column (source word) labels: the charts' font, or about one column's width
    (:data:`COLUMNS_PX` shared by ``n_src`` words) when that is less, never below :data:`MIN_FONT`."""
    return max(MIN_FONT, min(look.font, COLUMNS_PX // max(n_src, 1)))


def _colour_and_legend(trace: DecodeTrace, value: str, look: Look, rows_px: int) -> tuple[dict, dict]:
    """The heatmap's colour scale (blues, or paper greyscale; α over 0…1, e over its own range) and legend."""
    f, ink = look.font, look.ink
    if value == "alpha":
        lo, hi = 0.0, 1.0
    else:
        e = trace.energy_matrix()
        lo, hi = float(np.nanmin(e)), float(np.nanmax(e))
        if not (math.isfinite(lo) and math.isfinite(hi)) or hi <= lo:
            lo, hi = (lo, lo + 1.0) if math.isfinite(lo) else (0.0, 1.0)
    scale = {"domain": [lo, hi], "range": list(PAPER)} if look.paper else {"scheme": "blues", "domain": [lo, hi]}
    legend = {"title": "α_ij" if value == "alpha" else "e_ij", "orient": "right", "direction": "vertical",
              "gradientLength": int(min(200, max(50, rows_px - f - 10))), "titleFontSize": f, "labelFontSize": f,
              "titleColor": ink, "labelColor": ink, "format": ".1f" if value == "alpha" else ".0f"}
    return scale, legend


def _cells_and_tips(trace: DecodeTrace, value: str) -> tuple[list[dict[str, Any]], list[dict[str, Any]]]:
    """The heatmap's cells (one dict per target step × source word; local attention adds whether the
    cell is in the step's window, and p_t) and its tooltip fields."""
    windows = local_windows(trace)
    tips = [("i", "O", "i (target)"), ("target", "N", "target word"), ("j", "O", "j (source)"),
            ("source", "N", "source word"), ("alpha", "Q", "α_ij"), ("energy", "Q", "e_ij")]
    values = [{k: c[k] for k in ("i", "j", "target", "source", "alpha", "energy")}
              for c in trace.cells() if c[value] is not None]
    if windows:
        tips.append(("p_t", "Q", "p_t (window centre)"))
        for v in values:
            lo, hi, p_t = windows.get(v["i"], (0, -1, None))
            v["in_window"], v["p_t"] = lo <= v["j"] <= hi, p_t
    return values, [{"field": k, "type": {"O": "ordinal", "N": "nominal", "Q": "quantitative"}[t], "title": title,
                     **({"format": ".3f"} if t == "Q" else {})} for k, t, title in tips]


def heatmap(
    trace: DecodeTrace, value: str = "alpha", *, latest: int | None = None, param: str = SELECT_PARAM,
    look: Look = Look(), fit: bool = True, labels_below: bool = False,
) -> dict[str, Any] | None:
    """The α_ij (or e_ij) heatmap as a Vega-Lite spec, target steps as rows and source words as columns.

    Colours: darker blue = more attention, for α (0…1) and for e (its smallest…largest value, since
    a larger e_ij gives a larger α_ij); ``look.paper`` draws greyscale, 0 (or the smallest e)
    black and 1 (the largest e) white, as Fig. 3 of the paper. Every text is ``look.font`` px in
    ``look.ink``. ``fit`` stretches the chart to its container's width (a phone's too) unless the
    sentence has more than :data:`FIT_MAX_SOURCE` words, whose columns keep the font's width and
    scroll sideways; without ``fit`` the columns have a fixed width (for exports). Source labels are
    slanted, or upright for more than :data:`SLANT_MAX_SOURCE` words; ``labels_below`` puts them under the rows (for a
    tall heatmap scrolled to its latest row). Hovering a cell shows (i, j, the two words, α, e);
    clicking a cell selects its step through the point-selection parameter ``param`` (read back
    with :func:`selected_step`). ``latest`` outlines that row. Returns ``None`` when the trace has
    no such values (fixed context: no alignment, or no energies in the uniform "mean" mode) or
    no steps yet.

    The spec is written out as a plain dict (no Altair objects): building and validating an
    Altair chart cost more than the rest of a Step click on the server.
    """
    if value not in ("alpha", "energy"):
        raise ValueError("value must be 'alpha' or 'energy'")
    attr = "alpha" if value == "alpha" else "energies"
    if not trace.steps or all(getattr(s, attr) is None for s in trace.steps):
        return None
    n_src, n_tgt = len(trace.src_tokens), len(trace.steps)
    f, ink = look.font, look.ink
    scale, legend = _colour_and_legend(trace, value, look, n_tgt * row_height(n_tgt, look))
    stroke: list[dict[str, Any]] = [{"param": param, "empty": False, "value": PICKED}]
    if latest is not None:
        stroke.append({"test": f"datum.i == {int(latest)}", "value": LATEST})
    values, tips = _cells_and_tips(trace, value)
    if values and "in_window" in values[0]:  # local attention (Luong et al. 2015): outline each row's window
        stroke.append({"test": "datum.in_window", "value": WINDOW})
    axis = {"labelFontSize": f, "titleFontSize": f, "labelColor": ink, "titleColor": ink, "labelOverlap": False,
            "labelLimit": 120, "titleFontWeight": "normal", "labelFlush": False}  # no label nudged off its row
    narrow = n_src > FIT_MAX_SOURCE  # too many columns to squeeze into a phone's or a column's width
    col = int(max(f + 10, min(48, 720 // max(n_src, 1)))) if not fit else f + 2
    return {
        "$schema": "https://vega.github.io/schema/vega-lite/v6.json",
        "data": {"values": values},
        "mark": {"type": "rect"},
        "params": [{"name": param, "select": {"type": "point", "fields": ["i"], "on": "click", "clear": "dblclick"}}],
        "encoding": {
            "x": {"field": "j", "type": "ordinal", "title": None, "sort": "ascending",
                  "axis": {**axis, "orient": "bottom" if labels_below else "top",
                           "labelAngle": -90 if n_src > SLANT_MAX_SOURCE else -40,
                           "labelExpr": label_expr(source_labels(trace)), "labelFontSize": column_font(n_src, look)}},
            "y": {"field": "i", "type": "ordinal", "title": None, "sort": "ascending",
                  "axis": {**axis, "labelExpr": label_expr(target_labels(trace)),
                           "labelFontSize": row_font(n_tgt, look)}},
            "color": {"field": value, "type": "quantitative", "scale": scale, "legend": legend},
            "stroke": {"condition": stroke, "value": None},
            "strokeWidth": {"value": 3 if look.present else 2},
            "tooltip": tips,
        },
        "width": "container" if fit and not narrow else {"step": col},
        "height": {"step": row_height(n_tgt, look)},
    }


def arrow_rows(spec: dict[str, Any]) -> tuple[pa.Table | None, dict[str, Any]]:
    """A spec's inline rows (``data.values``) as an Arrow table, and the spec without them, for
    ``st.vega_lite_chart(table, spec)``: Streamlit sends the same columns and values beside the
    spec either way, but reaches Arrow through a pandas frame when given the rows (about 2.5 ms of a
    Step's CPU for a 12 × 8 heatmap, against 0.25 ms). A spec without rows, or rows Arrow cannot
    type column by column, comes back as it was (with ``None``)."""
    data = spec.get("data")
    if not isinstance(data, Mapping) or set(data) != {"values"} or not data["values"]:
        return None, spec
    rows = list(data["values"])
    keys = rows[0].keys() if isinstance(rows[0], Mapping) else None
    if keys is None or any(not isinstance(r, Mapping) or r.keys() != keys for r in rows):
        return None, spec  # Arrow would take the first row's columns only
    try:
        table = pa.Table.from_pylist(rows)
    except (pa.ArrowException, TypeError, ValueError):
        return None, spec
    return table, {k: v for k, v in spec.items() if k != "data"}


def spec_png(spec: dict[str, Any], scale: float = 2.0) -> bytes:
    """A Vega-Lite spec as PNG bytes (vl-convert, no browser)."""
    return vlc.vegalite_to_png(spec, scale=scale)


def spec_svg(spec: dict[str, Any]) -> str:
    """A Vega-Lite spec as an SVG document (vl-convert)."""
    return vlc.vegalite_to_svg(spec)


def heatmap_height(trace: DecodeTrace, look: Look = Look()) -> int:
    """About how many pixels the heatmap takes: its rows and the source labels above (or below) them."""
    n_src = len(trace.src_tokens)
    chars = max((len(w) for w in source_labels(trace)), default=1)
    label = min(120, chars * look.font * 0.55) * (1.0 if n_src > SLANT_MAX_SOURCE else 0.65)
    return len(trace.steps) * row_height(len(trace.steps), look) + int(label) + look.font + 22


def context_drift(alpha: Any, annotations: Any) -> list[float]:
    """How far each context c_i = Σ_j α_ij h_j is from the first one: ‖c_i − c_0‖ / ‖c_0‖.

    ``alpha`` is (target steps × source words), ``annotations`` (source words × 2n). RNNsearch's
    c_i move from word to word; an RNNencdec's are one vector (0 at every step, by construction).
    """
    a = np.asarray(alpha, dtype=np.float64)
    if a.size == 0:
        return []
    h = np.asarray(annotations, dtype=np.float64)[: a.shape[1]]
    c = a @ h
    base = float(np.linalg.norm(c[0])) or 1.0
    return [float(x) for x in np.linalg.norm(c - c[0], axis=1) / base]


def drift_chart(series: Sequence[tuple[str, Sequence[str], Sequence[float]]], look: Look = Look(),
                upto: int | None = None, colours: Sequence[str] = MODEL_COLOURS) -> alt.Chart | None:
    """Lines of ‖c_i − c_0‖ / ‖c_0‖ per target word, one per model ``(label, words, drift)``, in the
    models' ``colours`` (their descriptions').

    A flat line at 0 is the fixed vector of the RNNencdec; the moving line is RNNsearch reading a
    new part of the sentence for each word. ``upto`` draws a rule at the step shown.
    """
    rows = [{"model": label, "i": i, "word": w, "drift": float(d)}
            for label, words, drift in series for i, (w, d) in enumerate(zip(words, drift))]
    if not rows:
        return None
    f, ink = look.font, look.ink
    axis = {"labelFontSize": f, "titleFontSize": f, "labelColor": ink, "titleColor": ink}
    labels = [s[0] for s in series]
    lines = (
        alt.Chart(pd.DataFrame(rows))
        .mark_line(point=True, strokeWidth=3)
        .encode(
            x=alt.X("i:Q", title="target word i", axis=alt.Axis(tickMinStep=1, format="d", **axis)),
            y=alt.Y("drift:Q", title="‖c_i − c_0‖ / ‖c_0‖", scale=alt.Scale(zero=True), axis=alt.Axis(**axis)),
            color=alt.Color("model:N", title=None, sort=labels,
                            scale=alt.Scale(domain=labels, range=list(colours[: len(labels)])),
                            legend=None),  # the model names above the chart are written in these colours
            tooltip=[alt.Tooltip("model:N"), alt.Tooltip("i:Q"), alt.Tooltip("word:N"),
                     alt.Tooltip("drift:Q", format=".2f", title="‖c_i − c_0‖ / ‖c_0‖")],
        )
    )
    if upto is not None:
        rule = alt.Chart(pd.DataFrame({"i": [upto]})).mark_rule(color=LATEST, strokeWidth=2).encode(x="i:Q")
        return (lines + rule).properties(height=200 if not look.present else 240)
    return lines.properties(height=200 if not look.present else 240)


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
# Tables and numbers of one step; unknown-word replacement


def local_windows(trace: DecodeTrace) -> dict[int, tuple[int, int, float]]:
    """Each step's local-attention window (first and last source position) and p_t; {} for global attention."""
    return {s.i: (int(s.window[0]), int(s.window[1]), float(s.position)) for s in trace.steps
            if s.window is not None and s.position is not None}
