"""The bottleneck page's results: each model's column (translation, log p of the reference, BLEU), where each
target word looks (α heatmaps at full width, fixed-context pictures side by side) with downloads, and the length
sweep (BLEU and reference log p per word against source length, on a button).
"""

from __future__ import annotations

import json

import streamlit as st

from nmt.decoding.trace import DecodeTrace
from ui.bottleneck import jobs
from ui.common import widgets as W
from ui.figures.bottleneck import lengths_of, sweep_chart, sweep_frame, sweep_sample
from ui.figures.common import FONT_MAIN, csv_text, finite, md
from ui.figures.heatmaps import trace_chart
from ui.figures.unknown import Shown

HEATMAP_WIDTH = 660  # α heatmap cells at the page's width (pixels; labels take the rest of it)
FIXED_WIDTH = 400  # a fixed-context picture, half the page


def model_column(col: jobs.Column, own: DecodeTrace, text: Shown, forced: DecodeTrace | None, row: dict) -> None:
    """One model's translation (``text``: its ``<unk>`` replaced and marked; ``row``'s BLEU scores the raw
    one) and numbers (its picture is drawn below, in :func:`pictures`)."""
    st.markdown(f"#### {col.name}")
    st.caption(f"{md(col.ckpt.name)}: {md(col.note)}")
    with st.container(border=True):
        st.markdown(text.markdown or "(empty)")
    m1, m2 = st.columns(2)
    m1.metric("log p(reference)", f"{forced.logprob:.2f}" if forced is not None else "—",
              help="Forced decoding of the reference: how likely this model finds the human translation.")
    m2.metric("sentence BLEU", f"{row['BLEU']:.1f}" if finite(row.get("BLEU")) else "—")
    if not own.has_alignment and own.steps:
        st.caption(f"No α exists here: all {len(own.steps)} target words read the same summary c of the whole "
                   f"sentence (‖c‖ = {own.steps[0].context_norm:.2f}).")


def pictures(results: list[tuple[jobs.Column, DecodeTrace, DecodeTrace | None]]) -> None:
    """The α heatmap of each attention model at full width, then the fixed-context pictures side by side."""
    st.subheader("Where each target word looks")
    attn = [r for r in results if r[1].has_alignment]
    fixed = [r for r in results if not r[1].has_alignment]
    for c, own, forced in attn:
        chart = trace_chart(own, title=f"{c.name}: α_ij, a fresh context c_i for every target word",
                            max_width=HEATMAP_WIDTH)
        if chart is not None:
            W.show_chart(chart, key=f"bn_chart_{W.safe_stem(c.name)}", size=FONT_MAIN)
        _downloads(c, own, forced, chart)
    for box, (c, own, forced) in zip(st.columns(len(fixed)) if fixed else [], fixed):
        with box:
            chart = trace_chart(own, title=f"{c.name}: one fixed c", max_width=FIXED_WIDTH)
            if chart is not None:
                W.show_chart(chart, key=f"bn_chart_{W.safe_stem(c.name)}", fit=True, keep_height=True)
            _downloads(c, own, forced, chart)


def _downloads(col: jobs.Column, own: DecodeTrace, forced: DecodeTrace | None, chart: object) -> None:
    """PNG and SVG of a model's picture, and its traces as JSON."""
    stem = W.safe_stem(col.name)

    def traces() -> str:  # made when clicked, not on every rerun
        return json.dumps({"translation": own.to_dict(), "reference": forced.to_dict() if forced is not None else None},
                          ensure_ascii=False, indent=1)

    W.downloads([*W.chart_downloads(chart, f"bottleneck-{stem}"),
                 W.Download("JSON", traces,
                            f"bottleneck-{stem}.json", "application/json")], key=f"bn_dl_{stem}")


def sweep(cols: list[jobs.Column], sources: list[str], refs: list[str]) -> None:
    """BLEU and reference log p per word against source length, per model, on a corpus sample."""
    st.subheader("Where does the fixed vector give out?")
    per = st.select_slider("Sentences per 5-word length bucket", [2, 4, 8, 16, 32], value=8, key="bn_per",
                           bind=W.BIND)
    if not sources:
        st.info("The sweep needs a corpus. " + W.roots_note())
        return
    token = "|".join([str(per), *(f"{c.ckpt.path}:{c.context}" for c in cols), str(len(sources)), sources[0]])
    if not W.run_button("Run the length sweep", "bn_sweep", token,
                        help="Translates a sample of the corpus with every model (cached for every visitor)."):
        return
    pick = sweep_sample(sources, width=5, per_bucket=int(per or 8))
    src, ref = [sources[k] for k in pick], [refs[k] for k in pick]
    lengths = lengths_of(src)
    try:
        hyps, logp = jobs.sweep_scores(cols, src, ref)
    except jobs.InputError as err:
        W.input_error(err)
        return
    df = sweep_frame(lengths, hyps, ref, logp, width=5)
    c1, c2 = st.columns(2)
    colours = {c.name: c.colour for c in cols}
    bleu_chart, lp_chart = sweep_chart(df, "BLEU", colours), sweep_chart(df, "ref log p / word", colours)
    with c1:
        if bleu_chart is not None:
            W.show_chart(bleu_chart.properties(width=420), key="bn_sweep_bleu")
    with c2:
        if lp_chart is not None:
            W.show_chart(lp_chart.properties(width=420), key="bn_sweep_lp")
    st.caption(f"{len(pick)} sentences; corpus BLEU (sacrebleu) per bucket, and the mean per-word log-probability "
               "of the reference under each model. Buckets with few sentences are noisy.")
    st.dataframe(df, hide_index=True, key="bn_sweep_table")
    W.downloads([*W.chart_downloads(bleu_chart, "bottleneck-sweep-bleu"),
                 W.Download("Sweep CSV", csv_text(df), "bottleneck-sweep.csv", "text/csv")],
                key="bn_dl_sweep")
