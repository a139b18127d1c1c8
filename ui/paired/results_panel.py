"""The paired page's results: the verdicts with the overall and by-length tables, the sentences where the two
differ most (a clicked row picks the sentence), and both models' α for that sentence side by side.
"""

from __future__ import annotations

from typing import Any

import pandas as pd
import streamlit as st

from ui.common import models
from ui.common import widgets as W
from ui.figures.common import md, model_heading, readable
from ui.figures.compare import compare_chart
from ui.figures.heatmaps import trace_chart
from ui.figures.unknown import shown
from ui.paired import alpha, jobs, state
from ui.paired.views import length_frame, overall_frame, sentence_frame, verdict

HEATMAP_WIDTH = 260  # px of α cells in a half-width column at 1280×720
FIXED_EXTRA = 90  # px above and below a fixed context's band: its title and the source axis' title


def overall(res: dict[str, Any], labels: dict[str, str]) -> None:
    """The verdicts, the overall table and the table by source length."""
    a, b = labels[res["baseline"]], labels[res["systems"][0]]
    st.markdown(f"#### {md(verdict(res, a, b, 'BLEU'))}")
    st.markdown(md(verdict(res, a, b, "chrF")))
    num = st.column_config.NumberColumn
    df = overall_frame(res, labels)
    st.dataframe(df, hide_index=True, column_config={c: num(format="%.2f") for c in df.columns
                                                     if c != "model" and "p vs" not in c})
    st.caption(f"{res['sentences']:,} sentences of {md(res['test'])}, "
               f"{'greedy decoding' if res['beam'] == 1 else 'beam search, k = 5'}. Mean and 95% interval: "
               f"sacrebleu's bootstrap over {res['resamples']:,} resampled test sets; p: how often resampling "
               "gives a difference at least as large if the two were equally good (two-sided). "
               f"sacrebleu's smallest p is 1/(resamples + 1).")
    sigs = res["overall"].get("signatures", {})
    st.caption("sacrebleu signatures: " + " · ".join(f"{m} {md(s)}" for m, s in sigs.items()))
    st.subheader("By source length")
    lf = length_frame(res)
    st.dataframe(lf, hide_index=True, column_config={c: num(format="%.2f") for c in lf.columns
                                                     if c.startswith(("BLEU ", "chrF ", "Δ")) and not c.endswith(" p")})
    st.caption(f"Buckets of 10 source words; a bucket of fewer than {res['min_bucket']} sentences is listed "
               "but not tested. One test per bucket: with several buckets, one p under 0.05 can be luck.")


def sentences(res: dict[str, Any]) -> pd.DataFrame:
    """The table of the largest |ΔchrF| (a click picks a row) and the line picker bound to the URL."""
    st.subheader("Where they differ most")
    df = sentence_frame(res, res.get("lines"))
    state.set_table_lines(df["line"])
    num = st.column_config.NumberColumn
    st.dataframe(df, hide_index=True, key="pr_table", on_select=state.on_pick, selection_mode="single-row",
                 column_config={"line": num(help="line of the test set (1-based)", width="small"),
                                **{c: num(format="%.1f", width="small") for c in ("ΔchrF", "chrF A", "chrF B")},
                                **{c: st.column_config.TextColumn(width="medium")
                                   for c in ("source", "A wrote", "B wrote", "reference")}})
    st.caption("Sentence chrF (sacrebleu) of each translation against the reference, B − A; the "
               f"{len(df)} sentences with the largest difference either way. Click a row to see both models' α.")
    return df


def alphas(res: dict[str, Any], a: models.CheckpointInfo, b: models.CheckpointInfo, labels: dict[str, str],
           df: pd.DataFrame) -> None:
    """Both models' α for the picked sentence, side by side (each model's own greedy decoding of it)."""
    lines = [int(x) for x in df["line"]]
    state.keep_row_in(lines)  # another comparison: a line of the old table means nothing here
    line = st.selectbox("Line of the test set (or click a row above)", lines, index=None, key="pr_row", bind=W.BIND,
                        placeholder="Click a row of the table")
    if line is None:
        return
    row = df.iloc[lines.index(int(line))]
    try:
        traces = jobs.traces(a, b, row["source"])
    except jobs.InputError as err:
        W.input_error(err)
        return
    if res["beam"] != 1:
        st.caption("The heatmaps are each model's greedy decoding of the sentence; the table's translations "
                   "are beam search's, so they may differ.")
    for col, role, c, trace in zip(st.columns(2, gap="large"), "ab", (a, b), traces):
        with col:
            st.html(model_heading(labels[c.path.stem], models.description(c).colour))
            text = shown(trace, models.load(c).tgt_tok.detokenize)  # each <unk> as its source word, marked
            st.markdown(text.markdown or "(empty)")
            if text.note:
                st.caption(text.note)
            name = models.description(c).name
            title = f"{name}: α_ij" if trace.has_alignment else f"{name}: one fixed c, no α"
            chart = trace_chart(trace, title=title, max_width=HEATMAP_WIDTH, legend="bottom")
            if chart is not None and trace.has_alignment:  # a local window outlined, as on Compare attention
                W.show_chart(compare_chart(trace, title, max_width=HEATMAP_WIDTH), key=f"pr_chart_{role}")
            elif chart is not None:  # Streamlit's height="content" drew the band squeezed to ~60 % of its height
                st.altair_chart(readable(chart), width="stretch", height=int(chart.height) + FIXED_EXTRA,
                                key=f"pr_chart_{role}")
    alpha.sentence(a, b, row["source"], row["reference"])
