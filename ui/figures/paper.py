"""The paper's own α (Fig. 3(a)) beside a model's: two heatmaps on one scale, a per-row table, one line.

Pure: it takes the paper's matrix (:class:`nmt.explanation.paper_figures.PaperAlpha`) and a decode trace of the
same sentence, and returns Altair charts, a DataFrame and text. No Streamlit here.
"""

from __future__ import annotations

from collections.abc import Sequence

import altair as alt
import pandas as pd

from nmt.decoding.trace import DecodeTrace
from nmt.explanation.paper_figures import CREDIT, Comparison, PaperAlpha, compare
from ui.figures.common import label_expr, source_labels


def comparison_of(paper: PaperAlpha, trace: DecodeTrace) -> Comparison | None:
    """The paper's rows beside the trace's (None for a fixed context or another sentence)."""
    if not trace.has_alignment or any(s.alpha is None for s in trace.steps):
        return None
    try:
        return compare(paper, trace.src_tokens, [s.token for s in trace.steps], [s.alpha for s in trace.steps])
    except ValueError:
        return None


def _heatmap(src: Sequence[str], tgt: Sequence[str], rows: Sequence[Sequence[float]], title: str,
             cell: int) -> alt.Chart:
    """One α heatmap on the fixed 0–1 blue scale, target words down, source words across the top."""
    data = [{"i": i, "j": j, "target": tgt[i], "source": src[j], "alpha": round(float(a), 3)}
            for i, row in enumerate(rows) for j, a in enumerate(list(row)[: len(src)])]
    return alt.Chart(alt.Data(values=data), title=title).mark_rect().encode(
        x=alt.X("j:O", title=None, axis=alt.Axis(orient="top", labelAngle=-60, labelExpr=label_expr(src),
                                                   labelOverlap=False, labelFlush=False)),
        y=alt.Y("i:O", title=None, axis=alt.Axis(labelExpr=label_expr(tgt), labelOverlap=False, labelFlush=False)),
        color=alt.Color("alpha:Q", scale=alt.Scale(scheme="blues", domain=[0, 1]), legend=alt.Legend(title="α_ij")),
        tooltip=[alt.Tooltip("target:N", title="target word"), alt.Tooltip("source:N", title="source word"),
                 alt.Tooltip("alpha:Q", title="α_ij", format=".2f")],
    ).properties(width=alt.Step(cell), height=alt.Step(22))  # rows as tall as their 14-px labels need


def beside_chart(paper: PaperAlpha, trace: DecodeTrace, label: str = "ours", cell: int = 20) -> alt.HConcatChart:
    """The paper's α (left, credited) and the trace's (right), same colour scale."""
    ours = _heatmap(source_labels(trace), [s.token for s in trace.steps], [s.alpha or [] for s in trace.steps],
                    f"α, {label}", cell)
    theirs = _heatmap(paper.src, paper.tgt, paper.alpha.tolist(), "α of the paper (Fig. 3(a))", cell)
    return alt.hconcat(theirs, ours).resolve_scale(color="shared")


def rows_table(paper: PaperAlpha, cmp: Comparison) -> pd.DataFrame:
    """One row per paired target word: both words, each one's most-read source word, agreement, JSD."""
    return pd.DataFrame([{"paper": r.paper_word, "ours": r.model_word, "paper reads": paper.src[r.paper_top],
                          "ours reads": r.top_word, "same top-1": "yes" if r.agrees else "no",
                          "JSD (nats)": round(r.js, 3)} for r in cmp.rows])


def summary(cmp: Comparison) -> str:
    """One line: how many rows agree on their top source word, the mean JSD, and where they part."""
    n, agree = len(cmp.rows), sum(r.agrees for r in cmp.rows)
    differ = [f"« {r.model_word} »" for r in cmp.rows if not r.agrees]
    head = (f"The paper saw this too: {agree} of {n} rows ({100 * cmp.agreement:.0f} %) put their largest weight "
            f"on the same English word; mean Jensen–Shannon divergence {cmp.mean_js:.2f} nats "
            "(0 = the same row, 0.69 = no overlap).")
    tail = f" They part at {', '.join(differ)}." if differ else ""
    return head + tail + f" Paper's α: {CREDIT} (CC-BY 4.0), each cell ±0.02."
