"""The bottleneck, side by side: RNNsearch against RNNencdec on the same sentence.

RNNencdec squeezes the whole source into one fixed vector c that every target word reads; RNNsearch
computes a fresh context c_i for every word. For one sentence the page shows, per model (and for
the RNNsearch weights decoded with c_i frozen, an untrained ablation), the translation, its α
heatmap (or, for a fixed context, the honest picture: every word reads the same c), the
log-probability of the reference under the model (forced decoding) and sentence BLEU. A length
slider walks through corpus sentences of growing length, and a length sweep charts BLEU against
source length for each model, showing where RNNencdec starts to drift.

Controls are bound to URL query parameters (``bn_*``). The page only reads traces from
:mod:`nmt.decoding.search` (through :mod:`ui.bottleneck.jobs`); its panels are in :mod:`ui.bottleneck`, its
session state in :mod:`ui.bottleneck.state`.
"""

from __future__ import annotations

from ui.common import shell

shell.framed()  # a page Streamlit started on its own (a fresh server's first request) runs in the frame

import pandas as pd
import streamlit as st

from ui.bottleneck import jobs
from ui.bottleneck.results_panel import model_column, pictures, sweep
from ui.bottleneck.sentence_panel import sentence
from ui.common import user_models
from ui.common import widgets as W
from ui.figures.bottleneck import comparison_row, logp_chart
from ui.figures.common import csv_text, md


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
    ablation = st.sidebar.toggle("Also show the frozen-context ablation", value=True, key="bn_ablation", bind=W.BIND,
                                 help="The RNNsearch weights decoded with c_i frozen to the fixed summary c: "
                                      "an untrained ablation, not a model trained that way.")
    cols = jobs.columns_for(group, ablation, user_models.all_groups())
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
    try:
        results = jobs.decode_all(cols, text, ref)
    except jobs.InputError as err:
        W.input_error(err)
        return
    rows = [comparison_row(c.name, own, forced, ref or None) for c, own, forced in results]
    texts = jobs.texts(results)  # as read, not scored
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
