"""Compare attention: one sentence under Bahdanau's RNNsearch and Luong's attention variants.

Bahdanau et al. (2015) score every source word from the previous decoder state with a small MLP;
Luong et al. (2015) attend after the recurrent step, with a dot / general / concat / location
score, over the whole sentence (global) or a window of 2D+1 words around a position p_t (local),
and may feed the attentional vector back in (input feeding). This page puts the models side by
side on one sentence: the translation, α (with the local window outlined), the log-probability of
a reference and sentence BLEU. Controls are bound to URL query parameters (``cmp_*``; with
``cmp_app_rules`` imported models decode by this app's search rules instead of their toolkit's).
This file is the layout: the pickers and one model's column are :mod:`ui.compare.panels`, the decoding
:mod:`ui.compare.jobs`, the keys :mod:`ui.compare.state`.
"""

from __future__ import annotations

from ui.common import shell

shell.framed()  # a page Streamlit started on its own (a fresh server's first request) runs in the frame

import json

import pandas as pd
import streamlit as st

from ui.common import models, search_rules
from ui.common import typed as T
from ui.common import widgets as W
from ui.compare import jobs
from ui.compare import panels as P
from ui.figures.bottleneck import comparison_row
from ui.figures.common import MAX_REFERENCE_CHARS, MAX_SOURCE_CHARS, csv_text
from ui.figures.compare import local_note, row_name, summary_frame
from ui.figures.unknown import shown

BIND = W.BIND


def main() -> None:
    """Build the page."""
    st.title("Compare attention")
    st.caption("Bahdanau's RNNsearch scores each source word before writing (from s_(i-1)); Luong's models "
               "attend after the recurrent step (from h_t), globally or in a window around p_t. Same "
               "sentence, side by side.")
    found = P.attention_models()
    if not found:
        W.no_checkpoints()
        return
    labels = list(found)
    chosen = st.multiselect("Models", labels, default=P.default_models(found), key="cmp_models", bind=BIND,
                            max_selections=P.MAX_COLUMNS, on_change=T.hand_picked("cmp_models"),
                            help="Attention models in the checkpoint folder, named by what they are "
                                 "(up to six side by side).")
    chosen = [c for c in chosen if c in found] or labels[:1]
    # an imported model decodes by its toolkit's search rules (nmt.decoding.toolkit) unless switched to this app's
    search_rules.toggle_each({label: found[label] for label in chosen}, "cmp_app_rules", st)
    text = st.text_area(models.source_label(found[chosen[0]]), P.DEFAULT_TEXT, key="cmp_text", bind=BIND,
                        max_chars=MAX_SOURCE_CHARS, height=80,
                        on_change=T.on_typed("cmp_models", "cmp_text", [P.DEFAULT_TEXT], P.with_typed_pair(found)))
    T.typed_note("cmp_models", P.TYPED_WHAT, P.TYPED_MORE)
    ref = (st.text_input("Reference translation (optional: log p(reference) and BLEU)", key="cmp_ref",
                         bind=BIND, max_chars=MAX_REFERENCE_CHARS) or "").strip()
    if not (text or "").strip():
        st.info("Type a sentence to compare the models on.")
        return
    results = jobs.decode_all(found, chosen, text, ref)
    if results is None:
        return
    if local := jobs.local_windows(results):
        st.caption(local_note(local))
    rows = []
    texts = [shown(own, models.load(ckpt).tgt_tok.detokenize) for _, ckpt, own, _ in results]  # as read, not scored
    if note := next((t.note for t in texts if t.note), ""):
        st.caption(note)
    # Two models a row: at 1280×720 four columns left each heatmap ~50 px wide, its words overprinted.
    grid = [c for k in range(0, len(results), P.PER_ROW) for c in st.columns(P.PER_ROW, gap="large")]
    for col, (label, ckpt, own, forced), text in zip(grid, results, texts):
        row = comparison_row(row_name(label, [r[0] for r in results]), own, forced, ref or None)
        rows.append(row)
        with col:
            P.model_column(row, ckpt, own, forced, text)
    st.subheader("Summary")
    df: pd.DataFrame = summary_frame(rows)
    if any(t.swaps for t in texts):  # beside the raw translation that BLEU scores
        df.insert(2, "translation, <unk> replaced", [t.text for t in texts])
    st.dataframe(df, hide_index=True, column_config={
        c: st.column_config.NumberColumn(format="%.2f") for c in df.columns if c.startswith("log p")
        or c in ("BLEU", "chrF")})
    W.downloads([W.Download("Summary CSV", csv_text(df), "compare-attention.csv", "text/csv"),
                 W.Download("Summary JSON", json.dumps(rows, ensure_ascii=False, indent=1, default=str),
                            "compare-attention.json", "application/json")], key="cmp_dl_summary")


main()
