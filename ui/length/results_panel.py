"""Length vs quality's results: BLEU by source length of the chosen results file (with this session's recomputed
curves), its bucket table and downloads, Table 1 beside the paper's numbers, and the training curves.
"""

from __future__ import annotations

from typing import Any

import pandas as pd
import streamlit as st

from ui.common import widgets as W
from ui.figures.common import csv_text, md
from ui.figures.length import (
    curve_figure,
    curve_rows,
    empty_bucket_note,
    length_figure,
    length_rows,
    opening_test,
    table1_frame,
    table1_note,
)


def results_section(name: str, results: dict[str, Any], recomputed: dict[str, Any]) -> None:
    """BLEU by length (with this session's recomputed curves), Table 1 and the training curves."""
    if "error" in results:
        st.error(f"Could not read {md(results['error'])}")
        return
    rows = pd.concat([length_rows(results), *(r["rows"] for r in recomputed.values())], ignore_index=True)
    if rows.empty:
        st.warning("This results file has no per-length scores.")
    else:
        tests = sorted(rows["test"].unique())
        test = st.selectbox("Test set", tests, index=opening_test(tests), key="lq_test", bind=W.BIND)
        test = test if test in tests else tests[0]
        decs = sorted(rows[rows["test"] == test]["decoding"].unique())
        dec = st.radio("Decoding", decs, index=len(decs) - 1, horizontal=True, key="lq_dec", bind=W.BIND)
        dec = dec if dec in decs else decs[-1]
        view = rows[(rows["test"] == test) & (rows["decoding"] == dec)]
        fig = length_figure(view, f"BLEU by source length · {test} · {dec}")
        st.plotly_chart(fig, width="stretch", key="lq_length_fig", theme=None)  # keep its 14-px text
        if note := empty_bucket_note(view):
            st.caption(md(note))
        if view["model"].str.endswith("(recomputed)").any():
            st.caption("Lines marked “recomputed” were scored on this server with Recompute below.")
        c1, c2 = st.columns(2)
        stem = f"length-{test.replace('/', '_')}"
        c1.download_button("Download data (CSV)", csv_text(view), f"{stem}.csv", "text/csv",
                           key="lq_dl_csv", on_click="ignore")
        c2.download_button("Download figure (HTML)", fig.to_html(include_plotlyjs="cdn"), f"{stem}.html",
                           "text/html", key="lq_dl_html", on_click="ignore")
        with st.expander("Bucket table"):
            st.dataframe(view, hide_index=True, width="stretch")
        table1(name, results, test, [r for r in recomputed.values() if r["test"] == test])
    curves = curve_rows(results)
    if not curves.empty:
        st.subheader("Training curves")
        st.plotly_chart(curve_figure(curves), width="stretch", key="lq_curve_fig", theme=None)


def table1(name: str, results: dict[str, Any], test: str, extra: list[dict[str, Any]]) -> None:
    """Table 1 on ``test`` from the results file and from this session's recomputed scores, with its source."""
    st.subheader("Table 1 reproduction")
    own = table1_frame(results, test, origin=name)
    if name:
        st.caption(md(table1_note(own, name)))
    table = pd.concat([own, *(r["table1"] for r in extra)], ignore_index=True) if extra else own
    if table.empty:
        return
    num = st.column_config.NumberColumn
    st.dataframe(table, hide_index=True, width="stretch", column_config={
        **{c: num(format="%.2f") for c in table.columns if "BLEU" in c or "CI" in c or "paper" in c},
        "BLEU (no UNK)": num(format="%.2f", help="empty: not in this results file, or no sentence without UNK")})
