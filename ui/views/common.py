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
import vl_convert as vlc

from nmt.trace import DecodeTrace

EOS = "</s>"


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
