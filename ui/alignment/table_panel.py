"""The alignment browser's panels: the sortable sentence table (a clicked row picks the pair), one pair's two
heatmaps (its own translation, forced decoding of the reference with gold links), and the AER over a whole
gold set (then both ways, :mod:`ui.alignment.both_ways`).
"""

from __future__ import annotations

import json
from typing import Any

import pandas as pd
import streamlit as st

from nmt.decoding.trace import DecodeTrace
from ui.alignment import both_ways, state
from ui.alignment.jobs import InputError, forced_facts_of
from ui.alignment.pairs_panel import Pairs
from ui.common import models
from ui.common import widgets as W
from ui.figures.alignment import (
    browser_frame,
    coverage_line,
    domain_note,
    links_corpus_aer,
    links_table,
    recorded_aer_rows,
    table_row,
)
from ui.figures.common import FONT, FONT_MAIN, finite, md
from ui.figures.heatmaps import trace_chart
from ui.figures.length import load_results
from ui.figures.unknown import Shown

COLUMN_WIDTH = 300  # heatmap cells in a half-page column (pixels), for sources of up to SIDE_BY_SIDE words
FULL_WIDTH = 660  # heatmap cells at the page's width, for longer sources (one heatmap under the other)
SIDE_BY_SIDE = 12


def table(data: Pairs, idx: list[int], own: list[dict], forced: list[dict]) -> pd.DataFrame:
    """The sortable sentence table; a clicked row picks the pair shown below."""
    gold = data.gold and data.sure is not None and data.possible is not None
    df = browser_frame([table_row(k, *data.pairs[k], o, f, (data.sure[k], data.possible[k]) if gold else None)
                        for k, o, f in zip(idx, own, forced)])
    state.set_table_ids(df["#"])
    num = st.column_config.NumberColumn
    st.dataframe(df, hide_index=True, key="al_table", on_select=state.on_table_select, selection_mode="single-row",
                 column_config={
                     "#": num("#", help="line in the corpus (0-based)", width="small"),
                     "BLEU": num(format="%.1f", help="sentence BLEU (sacrebleu)", width="small"),
                     "chrF": num(format="%.1f", help="sentence chrF (sacrebleu)", width="small"),
                     "AER": num(format="%.2f", help="AER of argmax-α links vs gold", width="small"),
                     "α entropy": num(format="%.2f", help="mean entropy of α over the translation's words (nats)"),
                     "max α": num(format="%.2f", help="mean over the translation's words of the largest α_ij"),
                     "ref log p": num(format="%.2f", help="log-probability of the reference (forced decoding)"),
                     "flags": num(width="small", help="source words the translation read less than 0.2 in all "
                                  "(unread) or more than 3 times (re-read): Σ_i α_ij"),
                     **{c: st.column_config.TextColumn(width="medium") for c in ("source", "reference", "translation")},
                 })
    st.caption("Click a column header to sort, a row to show that pair below.")
    if line := coverage_line(df.to_dict("records")):
        st.caption(line)
    return df


def detail(data: Pairs, k: int, own: DecodeTrace, forced: DecodeTrace, row: dict[str, Any], text: Shown) -> None:
    """One pair: its translation (``text``: its ``<unk>`` replaced and marked; the table and BLEU keep the
    raw one) and α, and the α of forced decoding of the reference (with gold links)."""
    s, r = data.pairs[k]
    st.markdown(f"**Source** ({row['src words']} words): {md(s)}")
    st.markdown(f"**Reference:** {md(r)}")
    st.markdown(f"**Model:** {text.markdown or '(empty)'}")
    if text.note:
        st.caption(f"{text.note} {md('BLEU and chrF score the text with <unk>, as the table shows it.')}")
    m = st.columns(4)
    m[0].metric("sentence BLEU", f"{row['BLEU']:.1f}")
    m[1].metric("chrF", f"{row['chrF']:.1f}")
    m[2].metric("log p(reference)", f"{forced.logprob:.2f}")
    m[3].metric("AER (this pair)", f"{row['AER']:.2f}" if finite(row.get("AER")) else "—")
    stem = f"pair{k}"
    side = len(own.src_tokens) - 1 <= SIDE_BY_SIDE  # short: side by side; long: legible at full width
    left, right = st.columns(2, gap="large") if side else (st.container(), st.container())
    width = COLUMN_WIDTH if side else FULL_WIDTH
    with left:
        st.markdown("**The model's own translation**")
        chart = trace_chart(own, title="α while translating", max_width=width, legend="bottom")
        if not own.has_alignment:
            st.caption("A fixed-context model: every word reads the same summary c, so there is no α.")
        if chart is not None:
            W.show_chart(chart, key="al_chart_own", fit=side, size=FONT if side else FONT_MAIN)
        W.downloads([*W.chart_downloads(chart, f"alignment-own-{stem}"),
                     W.Download("JSON", own.to_json(indent=1), f"trace-own-{stem}.json", "application/json")],
                    key="al_dl_own")
    with right:
        st.markdown("**Forced decoding of the reference**")
        sure = possible = None
        show_argmax = False
        if data.gold and data.sure is not None and data.possible is not None:  # they change this chart only
            if st.toggle("Overlay gold Sure / Possible links", value=True, key="al_gold", bind=W.BIND):
                sure, possible = data.sure[k], data.possible[k]
            show_argmax = st.toggle("Mark the argmax-α link of each word", value=True, key="al_argmax", bind=W.BIND)
        chart = trace_chart(forced, title="α for the human translation", max_width=width, sure=sure,
                            possible=possible, show_argmax=show_argmax, legend="bottom")
        if chart is not None:
            W.show_chart(chart, key="al_chart_forced", fit=side, size=FONT if side else FONT_MAIN)
        if forced.has_alignment and (sure is not None or show_argmax):
            st.caption("Squares: gold Sure links; circles: Possible links; crosses: argmax α (the model's link).")
        W.downloads([*W.chart_downloads(chart, f"alignment-forced-{stem}"),
                     W.Download("JSON", forced.to_json(indent=1), f"trace-forced-{stem}.json", "application/json")],
                    key="al_dl_forced")


def aer_section(data: Pairs, job: W.Job, ckpt: models.CheckpointInfo, langs: tuple[str, str]) -> None:
    """AER, precision and recall of argmax-α links over the whole gold set, then both ways with a reverse
    model of the ``langs`` (source, target) pair turned round."""
    st.subheader("Alignment error rate over the whole set")
    n = len(data.pairs)
    if "hansard" in data.name.lower():
        rows = recorded_aer_rows(load_results(sorted(models.checkpoint_dir().glob("*.results.json"))))
        with st.expander("Reference points: recorded and published AERs on such gold sets"):
            st.dataframe(rows, hide_index=True)
            st.caption("Attention is trained to translate, not to align: its AER sits well above a statistical "
                       "aligner's. Thresholded α links a target word to every source word with α_ij ≥ τ.")
    if not W.run_button(f"Compute AER over all {n} sentences", "al_aer", f"{job.path}|{data.name}",
                        help="Force-decodes every reference on its given tokens and links each target word to its "
                             "most-attended source word (Luong et al. 2015); AER as in Och & Ney (2003). "
                             "Results are kept for every visitor."):
        return
    assert data.sure is not None and data.possible is not None
    try:
        facts = forced_facts_of(job, data.pairs, f"Force-decoding all {n} references", heavy_job=True)
    except InputError as err:
        W.input_error(err)
        return
    links = [f["links"] for f in facts]
    if any(a is None for a in links):
        st.info("This model reads a fixed summary c: it has no α, so there is no alignment to score.")
        return
    res = links_corpus_aer(links, data.sure, data.possible)
    note = domain_note(models.data_name(models.read_meta(str(ckpt.path), ckpt.mtime)), data.name)
    if note:
        st.warning(md(note), icon=":material/travel_explore:")
    c = st.columns(4)
    c[0].metric("AER", f"{res['aer']:.3f}", help="lower is better")
    c[1].metric("precision", f"{res['precision']:.3f}", help="|A ∩ P| / |A|")
    c[2].metric("recall", f"{res['recall']:.3f}", help="|A ∩ S| / |S|")
    c[3].metric("sentences", res["sentences"])
    W.downloads([W.Download("AER JSON", json.dumps({"set": data.name, **res}, indent=1), "aer.json",
                            "application/json"),
                 W.Download("Links CSV", links_table(links, list(range(n))), "argmax-links.csv", "text/csv")],
                key="al_dl_aer")
    both_ways.section(data.pairs, data.pretokenized, langs, links, (data.sure, data.possible), forced_facts_of)
