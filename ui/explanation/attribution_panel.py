"""The "Is attention an explanation?" page's first and third tabs (Streamlit layout only): α beside the five
attributions of the chosen word (:func:`explain_tab`), and one matrix per method over the whole translation on
a button (:func:`sentence_tab`).

The attributions are :func:`ui.explanation.jobs.attributions` (kept per step for every visitor), the tables,
charts and readings :mod:`ui.explanation.views`. The method radio is bound to the URL (``ex_method``).
"""

from __future__ import annotations

import json

import streamlit as st

from nmt.decoding.trace import DecodeTrace
from nmt.explanation.attribution import METHODS
from ui.common import models
from ui.common import widgets as W
from ui.explanation import jobs
from ui.explanation import views as V
from ui.explanation.jobs import attributions
from ui.figures.common import csv_text, source_labels

BIND = W.BIND


def explain_tab(ckpt: models.CheckpointInfo, text: str, trace: DecodeTrace, step: int, stem: str) -> None:
    """α and every attribution at the chosen word: bars, the agreement table, downloads."""
    word = trace.steps[step].token
    big = jobs.needs_button(trace, [step]) and not jobs.known(ckpt, text, trace, [step])
    if big and not W.run_button(f"Explain “{word}”", "ex_one", f"{ckpt.path}|{ckpt.mtime}|{text}|{step}",
                                help="A long sentence: this word's five attributions take several seconds, so they "
                                     "run on a button, under a progress bar. Results are kept for every visitor."):
        return
    att = attributions(ckpt, text, trace, [step], f"Explaining “{word}”", heavy_job=big)
    agree = V.agreement_frame(att, 0)
    st.markdown(V.agreement_reading(agree, word, agree.iloc[0]["top word"], forced=trace.method == "forced"))
    left, right = st.columns([1, 1])
    with left:
        chart = V.bars_chart(V.bars_frame(att, 0), source_labels(trace))
        if chart is not None:
            W.show_chart(chart, key="ex_bars")
        st.caption(V.SCALE_NOTE)
    with right:
        st.markdown(f"**Agreement with α** at step {step} (log p = {att.logprob[0]:.3f})")
        st.dataframe(agree, hide_index=True, key="ex_agree", column_config={
            "method": st.column_config.TextColumn(width=170),
            "top word": st.column_config.TextColumn(width=80, help="the source word the method ranks first"),
            "τ": st.column_config.NumberColumn(format="%.2f", width=52,
                                               help="Kendall τ-b of α and the signed scores (−1 … 1)"),
            "top-1": st.column_config.NumberColumn(format="%d", width=52, help="1 when the method's top word is α's"),
            "JSD": st.column_config.NumberColumn(width=52,
                format="%.2f", help="Jensen–Shannon divergence of α and |scores| normalised, in nats (0 … ln 2 ≈ "
                                    "0.69)")})
        with st.expander("What the methods compute"):
            st.markdown("\n".join(f"- **{V.METHOD_LABELS[m]}**: {V.METHOD_HELP[m]}" for m in V.METHOD_LABELS))
        st.caption(V.ig_gap_note(att))
    table = V.attribution_frame(att, 0)
    W.downloads([*W.chart_downloads(chart, f"explain-{stem}-step{step}"),
                 W.Download("Attributions CSV", csv_text(table), f"explain-{stem}-step{step}.csv",
                            "text/csv"),
                 W.Download("Agreement CSV", csv_text(agree), f"agreement-{stem}-step{step}.csv",
                            "text/csv"),
                 W.Download("JSON", lambda: json.dumps(att.to_dict(), ensure_ascii=False, indent=1),
                            f"explain-{stem}-step{step}.json", "application/json")], key="ex_dl_step")


def sentence_tab(ckpt: models.CheckpointInfo, text: str, trace: DecodeTrace, step: int, stem: str) -> None:
    """One target × source matrix per method over the whole translation, and the mean agreement."""
    n = len(trace.steps)
    # Every word of a 600-character sentence cost 108 s of CPU (issue 24): a button, never a URL or a keystroke
    token = f"{ckpt.path}|{ckpt.mtime}|{text}|{[s.token_id for s in trace.steps]}"
    if not W.run_button(f"Explain all {n} target words", "ex_all", token,
                        help=f"Five attributions of each of the {n} words (integrated gradients with "
                             "as many points as each word needs to add up): a few seconds for a short sentence, "
                             "minutes for a long one, under a "
                             "progress bar. Results are kept for every visitor."):
        return
    att = attributions(ckpt, text, trace, list(range(n)), f"Explaining all {n} target words", heavy_job=True)
    st.caption("Rows are target words (▶ the chosen one), columns source words. α is drawn as everywhere in the "
               "app; every attribution row is divided by its largest absolute value (blue: supports the word, "
               "red: speaks against it). Hover a cell for the raw score.")
    method = st.radio("Beside α", METHODS, key="ex_method", bind=BIND, horizontal=True,
                      format_func=V.METHOD_LABELS.__getitem__, help="The attribution drawn next to α.")
    method = method if method in METHODS else METHODS[0]
    charts = [V.matrix_chart(att, m, mark=step, max_width=320) for m in (V.ALPHA, method)]
    for col, chart, m in zip(st.columns(2), charts, (V.ALPHA, method)):
        with col:
            if chart is not None:
                W.show_chart(chart, key=f"ex_matrix_{m}", fit=True)  # side by side: never wider than the column
    st.markdown("**Mean agreement with α over the sentence**")
    st.caption(V.ig_gap_note(att))
    means = V.sentence_agreement_frame(att)
    st.dataframe(means, hide_index=True, key="ex_agree_all",
                 column_config={c: st.column_config.NumberColumn(format="%.3f") for c in means.columns[1:]})
    W.downloads([*W.chart_downloads(charts[1], f"explain-{stem}-{method}"),
                 W.Download("Cells CSV", lambda: csv_text(V.matrix_cells_frame(att)),
                            f"explain-{stem}-all.csv", "text/csv"),
                 W.Download("Agreement CSV", csv_text(means), f"agreement-{stem}-all.csv", "text/csv"),
                 W.Download("JSON", lambda: json.dumps(att.to_dict(), ensure_ascii=False, indent=1),
                            f"explain-{stem}-all.json", "application/json")], key="ex_dl_all")
