"""The bottleneck, side by side: RNNsearch against RNNencdec on the same sentence.

RNNencdec squeezes the whole source into one fixed vector c that every target word reads; RNNsearch
computes a fresh context c_i for every word. For one sentence the page shows, per model (and for
the RNNsearch weights decoded with c_i frozen, an untrained ablation), the translation, its α
heatmap (or, for a fixed context, the honest picture: every word reads the same c), the
log-probability of the reference under the model (forced decoding) and sentence BLEU. A length
slider walks through corpus sentences of growing length, and a length sweep charts BLEU against
source length for each model, showing where RNNencdec starts to drift.

Controls are bound to URL query parameters (``bn_*``). The page only reads traces from
:mod:`nmt.decoding.search` (through :mod:`ui.common.widgets`).
"""

from __future__ import annotations

from ui.common import shell

shell.framed()  # a page Streamlit started on its own (a fresh server's first request) runs in the frame

import json
from dataclasses import dataclass

import pandas as pd
import streamlit as st

from nmt.decoding.search import InputError
from nmt.decoding.trace import DecodeTrace
from ui.common import models, twins, user_models
from ui.common import typed as T
from ui.common import widgets as W
from ui.common.presets import long_sentence
from ui.figures.bottleneck import (
    comparison_row,
    lengths_of,
    logp_chart,
    pick_by_length,
    sweep_chart,
    sweep_frame,
    sweep_sample,
)
from ui.figures.common import FONT_MAIN, MAX_REFERENCE_CHARS, MAX_SOURCE_CHARS, csv_text, finite, md
from ui.figures.heatmaps import trace_chart
from ui.figures.unknown import Shown, shown

BIND = W.BIND
FROM = ("typed", "corpus by length")
MAX_LEN = 80
MAX_VARIANTS = 200  # sentences of one length offered by the variant picker
HEATMAP_WIDTH = 660  # α heatmap cells at the page's width (pixels; labels take the rest of it)
FIXED_WIDTH = 400  # a fixed-context picture, half the page
PREFERRED = ("multi30k/test_2016_flickr", "europarl-v7-fr-en/test2000q4", "multi30k/val")
ss = st.session_state


@dataclass(frozen=True)
class Column:
    """One model column: a display name, its checkpoint and the context mode to decode it in."""

    name: str
    ckpt: models.CheckpointInfo
    context: str  # the effective mode, as ui.common.models.resolve decided it
    note: str
    colour: str  # the model's colour on every page (nmt.models.kinds.model_colour)


def columns_for(group: models.ModelGroup, ablation: bool, groups: list[models.ModelGroup]) -> list[Column]:
    """RNNsearch, RNNencdec and (optionally) the frozen-context ablation, as far as the group has them,
    each resolved once by :func:`ui.common.twins.columns` (the stepper's toggle uses the same resolver). A pair
    without an RNNencdec of its own shows its frozen ablation and another pair's RNNencdec, headed with that
    pair's name, each described by its label (what it is, its data and vocabulary)."""
    chosen = twins.columns(group, ablation, groups)
    labelled = any(c.ckpt.group != group.name for c in chosen)  # a stand-in twin: say where each comes from
    return [Column(c.description.name + ("" if c.ckpt.group == group.name else f" ({c.ckpt.group})"), c.ckpt,
                   c.context, c.description.label if labelled else c.description.note, c.description.colour)
            for c in chosen]


def sentence(group: models.ModelGroup, src: str, tgt: str) -> tuple[str, str, list[str], list[str]] | None:
    """The source and (optional) reference to compare on, and the corpus for the length sweep."""
    how = st.radio("Sentence", FROM, key="bn_from", bind=BIND, horizontal=True,
                   help="typed: your own sentence · corpus by length: a corpus sentence picked by its length")
    splits = W.corpus_splits(src, tgt)
    corpus: tuple[list[str], list[str]] = ([], [])
    if splits:
        split = W.split_picker(splits, "bn_split", label="Corpus (length slider and sweep)", prefer=PREFERRED,
                               container=st.sidebar)
        try:
            s_lines, r_lines = W.read_split(split, src, tgt, limit=5000)
            keep = [(s, r) for s, r in zip(s_lines, r_lines) if s.strip() and r.strip()]
            corpus = ([s for s, _ in keep], [r for _, r in keep])
        except (OSError, ValueError) as err:
            st.sidebar.error(f"Cannot read {md(split.label)}: {md(str(err))}")
    if how == "typed":
        default = long_sentence(group.name)
        follow = ss.get("bn_text") == ss.get("_bn_default", default) and default != ss.get("_bn_default")
        if follow:
            ss["bn_text"] = default  # an untouched example follows the model pair (Multi30k or Europarl)
        ss["_bn_default"] = default
        examples = [long_sentence(g.name) for g in user_models.all_groups()]
        text = st.text_area(models.source_label(group.search or group.encdec), None if follow else default,
                            key="bn_text", bind=BIND,
                            max_chars=MAX_SOURCE_CHARS, height=90,
                            on_change=T.on_typed("bn_model", "bn_text", examples, T.pair_name))
        T.typed_note("bn_model")
        ref = st.text_input("Reference translation (optional: enables log p(reference) and BLEU)", key="bn_ref",
                            bind=BIND, max_chars=MAX_REFERENCE_CHARS)
        if not (text or "").strip():
            st.info("Type a sentence to compare the models on.")
            return None
        return text, (ref or "").strip(), corpus[0], corpus[1]
    sources, refs = corpus
    if not sources:
        st.warning(f"No readable {src}–{tgt} corpus was found; type a sentence instead. " + W.roots_note())
        return None
    lengths = lengths_of(sources)
    c1, c2 = st.columns([4, 1])
    length = c1.slider("Source length (words)", 1, MAX_LEN, 20, key="bn_len", bind=BIND,
                       help="Picks a corpus sentence of this many words (or the nearest length the corpus has): "
                            "slide right and watch RNNencdec drift.")
    found = pick_by_length(sources, int(length))
    variant = c2.selectbox("Variant", range(min(len(found), MAX_VARIANTS)), key="bn_var", bind=BIND,
                           format_func=lambda v: f"{v + 1} of {len(found)}",
                           help="Which of the sentences with this length.")
    k = found[int(variant or 0) % len(found)]
    if lengths[k] != length:
        st.caption(f"No sentence has {length} words; showing one with {lengths[k]}.")
    st.caption(f"Sentence #{k} of the corpus ({lengths[k]} words, {len(found)} with this length).")
    st.markdown(f"**Source:** {md(sources[k])}  \n**Reference:** {md(refs[k])}")
    return sources[k], refs[k], sources, refs


def model_column(col: Column, own: DecodeTrace, text: Shown, forced: DecodeTrace | None, row: dict) -> None:
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


def pictures(results: list[tuple[Column, DecodeTrace, DecodeTrace | None]]) -> None:
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


def _downloads(col: Column, own: DecodeTrace, forced: DecodeTrace | None, chart: object) -> None:
    """PNG and SVG of a model's picture, and its traces as JSON."""
    stem = W.safe_stem(col.name)

    def traces() -> str:  # made when clicked, not on every rerun
        return json.dumps({"translation": own.to_dict(), "reference": forced.to_dict() if forced is not None else None},
                          ensure_ascii=False, indent=1)

    W.downloads([*W.chart_downloads(chart, f"bottleneck-{stem}"),
                 W.Download("JSON", traces,
                            f"bottleneck-{stem}.json", "application/json")], key=f"bn_dl_{stem}")


def sweep(cols: list[Column], sources: list[str], refs: list[str]) -> None:
    """BLEU and reference log p per word against source length, per model, on a corpus sample."""
    st.subheader("Where does the fixed vector give out?")
    per = st.select_slider("Sentences per 5-word length bucket", [2, 4, 8, 16, 32], value=8, key="bn_per",
                           bind=BIND)
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
    hyps: dict[str, list[str]] = {}
    logp: dict[str, list[float | None]] = {}
    try:
        for c in cols:
            own = W.decode(W.job_for(c.ckpt, "greedy", context=c.context), src, label=f"{c.name}: translating",
                           heavy_job=True)
            forced = W.decode(W.job_for(c.ckpt, "forced", context=c.context), src, ref,
                              label=f"{c.name}: scoring the references", heavy_job=True)
            hyps[c.name] = [t.translation for t in own]
            logp[c.name] = [t.logprob / max(1, len(t.steps)) for t in forced]
    except InputError as err:
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


def main() -> None:
    """Build the page."""
    st.title("The bottleneck, side by side")
    st.caption("RNNencdec must squeeze the whole sentence into one vector; RNNsearch looks back at every "
               "source word. Compare them on one sentence, then on longer and longer ones.")
    with st.sidebar:
        st.header("Models")
    group = W.group_picker("bn_model")
    if group is None:
        return
    ablation = st.sidebar.toggle("Also show the frozen-context ablation", value=True, key="bn_ablation", bind=BIND,
                                 help="The RNNsearch weights decoded with c_i frozen to the fixed summary c: "
                                      "an untrained ablation, not a model trained that way.")
    cols = columns_for(group, ablation, user_models.all_groups())
    stand_in = next((c.ckpt.group for c in cols if c.ckpt.group != group.name), None)
    if group.encdec is None and stand_in is not None:
        st.info(f"The pair “{md(group.name)}” has no RNNencdec of its own: beside its RNNsearch are the same "
                f"weights with c_i frozen (an untrained ablation) and the RNNencdec of the {md(stand_in)} pair, "
                "trained on other data with another vocabulary.")
    elif group.encdec is None:
        only = cols[0].name if cols else "RNNsearch"  # an imported model is named by its own kind (e.g. Luong)
        st.info(f"Group “{md(group.name)}” has no RNNencdec checkpoint ({md(group.name)}-rnnencdec.pt); "
                f"only its {md(only)} model can be shown.")
    if group.search is None:
        st.info(f"Group “{md(group.name)}” has no RNNsearch checkpoint ({md(group.name)}-rnnsearch.pt); "
                "only the RNNencdec side can be shown.")
    lm = W.load_lm(cols[0].ckpt)
    if lm is None:
        return
    got = sentence(group, lm.src_tok.lang, lm.tgt_tok.lang)
    if got is None:
        return
    text, ref, sources, refs = got
    results = []
    try:
        for c in cols:
            own = W.decode(W.job_for(c.ckpt, "greedy", context=c.context, topk=5), [text])[0]
            forced = W.decode(W.job_for(c.ckpt, "forced", context=c.context), [text], [ref])[0] if ref else None
            results.append((c, own, forced))
    except InputError as err:
        W.input_error(err)
        return
    rows = [comparison_row(c.name, own, forced, ref or None) for c, own, forced in results]
    texts = [shown(own, models.load(c.ckpt).tgt_tok.detokenize) for c, own, _ in results]  # as read, not scored
    if results and results[0][1].truncated:
        st.info("The sentence was longer than the models read; it was cut.")
    for col, (c, own, forced), text, row in zip(st.columns(len(results)), results, texts, rows):
        with col:
            model_column(c, own, text, forced, row)
    if note := next((t.note for t in texts if t.note), ""):
        st.caption(note)
    pictures(results)
    st.subheader("Summary")
    df = pd.DataFrame(rows)
    if any(t.swaps for t in texts):  # beside the raw translation that BLEU scores
        df.insert(3, "translation, <unk> replaced", [t.text for t in texts])
    st.dataframe(df, hide_index=True, key="bn_summary", column_config={
        c: st.column_config.NumberColumn(format="%.2f") for c in df.columns if c.startswith("log p") or c in
        ("BLEU", "chrF")})
    lp = logp_chart(rows, {c.name: c.colour for c, _, _ in results})
    if lp is not None:
        W.show_chart(lp.properties(width=520), key="bn_logp")
    elif not ref:
        st.caption("Give a reference translation to compare how likely each model finds it.")
    W.downloads([W.Download("Summary CSV", csv_text(df), "bottleneck-summary.csv", "text/csv"),
                 *W.chart_downloads(lp, "bottleneck-logp")], key="bn_dl_summary")
    sweep(cols, sources, refs)


main()
