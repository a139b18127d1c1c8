"""Builders of the paired page's α difference: α_B − α_A as a diverging heatmap and the per-row table.

They read an :class:`nmt.explanation.alpha_diff.AlphaDiff` (both models forced along the same reference
over the same source tokens) and compute nothing themselves. The palette is Vega's ``blueorange``, a
diverging scheme that stays distinct under the common colour-vision deficiencies, centred on 0 (white):
blue where A attends more, orange where B does. No Streamlit here.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import altair as alt
import pandas as pd

from nmt.explanation.alpha_diff import AlphaDiff
from ui.figures.common import FONT, label_expr

SCHEME = "blueorange"  # diverging, colour-blind safe; blue: A attends more, orange: B attends more
CELL = 22  # px per cell, as the α heatmaps


def diff_chart(d: AlphaDiff, title: str, max_width: int = 560) -> alt.Chart:
    """α_B − α_A, one cell per (target word i, source word j), the colour scale symmetric around 0."""
    rows = [{"i": i, "j": j, "target": t, "source": s, "delta": float(d.diff[i, j])}
            for i, t in enumerate(d.tgt) for j, s in enumerate(d.src)]
    m = max(0.05, float(abs(d.diff).max())) if d.diff.size else 1.0
    width = min(max_width, CELL * max(1, len(d.src)))
    return alt.Chart(pd.DataFrame(rows), title=title).mark_rect().encode(
        x=alt.X("j:O", axis=alt.Axis(orient="top", labelExpr=label_expr(d.src), labelAngle=-45,
                                     title="source word j", labelFontSize=FONT)),
        y=alt.Y("i:O", axis=alt.Axis(labelExpr=label_expr(d.tgt), title="target word i (reference)",
                                     labelFontSize=FONT)),
        color=alt.Color("delta:Q", scale=alt.Scale(scheme=SCHEME, domain=[-m, m], domainMid=0),
                        legend=alt.Legend(title="α_B − α_A", orient="bottom")),
        tooltip=[alt.Tooltip("target:N"), alt.Tooltip("source:N"), alt.Tooltip("delta:Q", format="+.3f")],
    ).properties(width=width, height=CELL * max(1, len(d.tgt)))


def row_frame(d: AlphaDiff, top_a: Sequence[int], top_b: Sequence[int]) -> pd.DataFrame:
    """One row per target word: the source word each model attends to most, whether they agree, and the JSD."""
    return pd.DataFrame([{"target word": t, "A looks at": d.src[a], "B looks at": d.src[b], "same top-1": ok,
                          "JSD (nats)": round(js, 4)}
                         for t, a, b, ok, js in zip(d.tgt, top_a, top_b, d.agree, d.jsd, strict=True)])


def summary_line(d: AlphaDiff) -> str:
    """The sentence's agreement figures in one line."""
    return (f"Top-1 agreement {d.agreement:.0%} of {len(d.tgt)} target words; mean Jensen–Shannon divergence "
            f"{d.mean_jsd:.3f} nats (0: the same α, ln 2 ≈ 0.693: disjoint). Blue: A attends more; orange: B.")


def word_frame(rows: Sequence[dict[str, Any]]) -> pd.DataFrame:
    """:func:`nmt.explanation.alpha_diff.by_source_word`'s rows as a table."""
    return pd.DataFrame([{"source word": r["word"], "occurrences": r["occurrences"], "attention from A": r["a"],
                          "attention from B": r["b"], "B − A": r["delta"]} for r in rows],
                        columns=["source word", "occurrences", "attention from A", "attention from B", "B − A"])
