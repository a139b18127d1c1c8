"""Pieces every page's builders share: labels, escaping for HTML and Markdown, chart exports.

No Streamlit here: everything returns strings, lists or bytes and is unit-tested directly.
"""

from __future__ import annotations

import html
import json
import math
import re
from collections.abc import Sequence

import altair as alt
import pandas as pd
import vl_convert as vlc

from nmt.decoding.search import LENGTH_NORMS
from nmt.decoding.trace import DecodeTrace

EOS = "</s>"
# What one text box (or the URL parameter bound to it) can carry: the model reads at most 100 source
# tokens anyway, and a forced reference of 600 characters (~120 words) decodes in well under a second,
# where an uncapped 8,000-word reference in a URL cost 104 s of server CPU.
MAX_SOURCE_CHARS = 2000
MAX_REFERENCE_CHARS = 600
# A spreadsheet runs a cell that starts with one of these as a formula (=HYPERLINK(…), =cmd|…, @SUM(…)).
FORMULA_START = ("=", "+", "-", "@", "\t", "\r")


def csv_cell(value: object) -> object:
    """A text cell that a spreadsheet would run as a formula, prefixed with ' so it stays text; other values as is."""
    if isinstance(value, str) and value.startswith(FORMULA_START):
        return "'" + value
    return value


def csv_text(frame: pd.DataFrame) -> str:
    """``frame`` as CSV for a download, with user text (sentences, words, file names) defused:
    every CSV export of the app goes through here (OWASP's CSV-injection advice)."""
    return frame.map(csv_cell).to_csv(index=False)


def source_labels(trace: DecodeTrace) -> list[str]:
    """Axis labels of the source words; words outside the vocabulary are marked ``(unk)``."""
    unk = list(trace.src_unk) + [False] * (len(trace.src_tokens) - len(trace.src_unk))
    return [f"{w} (unk)" if u else w for w, u in zip(trace.src_tokens, unk)]


def target_labels(trace: DecodeTrace) -> list[str]:
    """Axis labels of the target words; forced words are marked with ``*``."""
    return [f"{s.token}*" if s.forced else s.token for s in trace.steps]


def label_expr(labels: Sequence[str]) -> str:
    """A Vega expression mapping an ordinal index (``datum.value``) to its label."""
    return json.dumps(list(labels), ensure_ascii=False) + "[datum.value]"


def esc(text: str) -> str:
    """HTML-escaped text (quotes too), for the HTML snippets of the page."""
    return html.escape(str(text), quote=True)


_MD_SPECIAL = re.compile(r"([!-/:-@\[-`{-~])")


def md(text: str) -> str:
    """Text made inert for Streamlit Markdown: every ASCII punctuation mark backslash-escaped.

    That disarms emphasis, links, code, ``$`` maths, ``:color[...]`` directives, emoji shortcodes
    and HTML tags (``<`` becomes a literal), so user words in labels and messages show as typed.
    """
    return _MD_SPECIAL.sub(r"\\\1", str(text)).replace("\n", " ")


def chart_png(chart: alt.TopLevelMixin, scale: float = 2.0) -> bytes:
    """The chart as PNG bytes, rendered by vl-convert (no browser)."""
    return vlc.vegalite_to_png(chart.to_dict(), scale=scale)


def chart_svg(chart: alt.TopLevelMixin) -> str:
    """The chart as an SVG document, rendered by vl-convert."""
    return vlc.vegalite_to_svg(chart.to_dict())


def finite(x: float | None) -> bool:
    """Whether ``x`` is a finite number (for formatting optional metrics)."""
    return x is not None and isinstance(x, (int, float)) and math.isfinite(x)


# ----------------------------------------------------------------------------------------------
# Length normalisation names, and chart text readable on a projector
# ----------------------------------------------------------------------------------------------

NORM_LABELS = {
    "none": "none (raw log-probability)",
    "length": "divide by length (Jean et al. 2015)",
    "gnmt": "GNMT length penalty (Wu et al. 2016)",
}
"""Every length normalisation of :data:`nmt.decoding.search.LENGTH_NORMS`, in its order, in words."""
NORM_SHORT = {"none": "none", "length": "÷ length", "gnmt": "GNMT"}
"""The same, short enough for a chart axis or a radio button."""
assert tuple(NORM_LABELS) == tuple(NORM_SHORT) == LENGTH_NORMS, "one label per nmt.decoding.search.LENGTH_NORMS"

FONT = 14  # px: the smallest chart text (issue 21: nothing under 14 px at 1280×720)
FONT_MAIN = 14  # px: chart text where the chart is the main content


def _config(size: int) -> alt.Config:
    dark = "#31333F"
    text = {"labelFontSize": size, "titleFontSize": size, "labelColor": dark, "titleColor": dark}
    return alt.Config(axis=alt.AxisConfig(**text), legend=alt.LegendConfig(**text), header=alt.HeaderConfig(**text),
                      title=alt.TitleConfig(fontSize=size + 2, color=dark), text=alt.MarkConfig(fontSize=size))


_CONFIGS = {n: _config(n) for n in (FONT, FONT_MAIN)}


def readable(chart: alt.TopLevelMixin, size: int = FONT) -> alt.TopLevelMixin:
    """A top-level chart with axis, legend and title text of at least ``size`` px, in dark grey.

    Applied where a chart is shown or exported (a configured chart cannot be layered again)."""
    if chart.config is not alt.Undefined:  # the builder configured it: add to its settings
        c = _CONFIGS.get(size) or _config(size)
        return chart.configure_axis(**c.axis.to_dict()).configure_legend(**c.legend.to_dict()).configure_header(
            **c.header.to_dict()).configure_title(**c.title.to_dict()).configure_text(**c.text.to_dict())
    out = chart.copy(deep=False)
    out.config = _CONFIGS.get(size) or _config(size)
    return out


def model_heading(name: str, colour: str) -> str:
    """A model's name as a column heading, marked with its colour (a bar: the name stays in the text
    colour, legible whatever the model's colour)."""
    return (f'<div data-testid="model-heading" style="font-size:1.25rem;font-weight:600;line-height:1.3;'
            f'border-left:8px solid {esc(colour)};padding-left:8px;margin:0 0 4px">{esc(name)}</div>')


def model_caption(rows: Sequence[dict]) -> str:
    """One short line about a model pair from :func:`ui.common.models.describe` rows: kind, file, corpus."""
    parts = [f"{r.get('model', '?')}: {r.get('file', '?')}" for r in rows]
    data = next((r["data"] for r in rows if r.get("data")), "")
    return " · ".join(parts) + (f" · trained on {data}" if data else "")
