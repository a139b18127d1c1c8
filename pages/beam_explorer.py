"""Beam search explorer: watch k hypotheses compete, and see what length normalisation changes.

Per step the page lists every live hypothesis (its words, cumulative log-probability and normalised
score), the expansions that were pruned and the hypotheses that finished; it draws the whole search
as a tree with the n-best highlighted, shows each n-best hypothesis' α, marks where greedy decoding
and beam search part, and re-ranks the finished hypotheses under each length normalisation.

Every control is bound to a URL query parameter (``bx_*``), so a copied URL reopens the same view.
This file is the layout: the sidebar's settings and the search are :mod:`ui.beam.controls` (traces from
:mod:`nmt.decoding.search` through :mod:`ui.common.widgets`), the tabs :mod:`ui.beam.panels`, the session
state :mod:`ui.beam.state`.
"""

from __future__ import annotations

from ui.common import shell

shell.framed()  # a page Streamlit started on its own (a fresh server's first request) runs in the frame

import streamlit as st

from ui.beam import controls as C
from ui.beam import panels as P
from ui.beam.views import DEFAULT_SENTENCE, divergence
from ui.common import models, search_rules
from ui.common import typed as T
from ui.common import widgets as W
from ui.figures.common import MAX_SOURCE_CHARS

TABS = ["Search tree", "Beam per step", "N-best and α", "Length normalisation"]
BIND = W.BIND


def main() -> None:
    """Build the page."""
    st.title("Beam search explorer")
    st.caption("Beam search keeps the k most likely partial translations at every step instead of only "
               "the single best word (greedy). Change k and the length normalisation and watch the search.")
    with st.sidebar:
        st.header("Model")
    ckpt = W.checkpoint_picker("bx_model")
    lm = None if ckpt is None else W.load_lm(ckpt)
    if ckpt is None or lm is None:
        return
    rules = search_rules.rules(ckpt) if search_rules.toolkit_rules(ckpt) else None
    beam, norm, alpha, nbest = C.controls(rules)
    text = st.text_area(models.source_label(ckpt), DEFAULT_SENTENCE, key="bx_text", bind=BIND,
                        max_chars=MAX_SOURCE_CHARS, height=80,
                        on_change=T.on_typed("bx_model", "bx_text", [DEFAULT_SENTENCE], T.search_file))
    T.typed_note("bx_model", "model in the sidebar")
    if not (text or "").strip():
        st.info("Type a sentence to translate.")
        return
    found = C.searched(ckpt, text, beam, norm, alpha, nbest)
    if found is None:
        return
    trace, greedy = found
    div = divergence(greedy, trace)
    P.summary(trace, greedy, div, lm.tgt_tok.detokenize)
    stem = W.safe_stem(text)
    tabs = st.tabs(TABS, key="bx_tab", bind=BIND)
    with tabs[0]:
        if tabs[0].open is not False:
            P.tree_tab(trace, greedy, div, stem)
    with tabs[1]:
        if tabs[1].open is not False:
            P.step_tab(trace, stem, rules)
    with tabs[2]:
        if tabs[2].open is not False:
            P.nbest_tab(trace, stem, lm.tgt_tok.detokenize, lm.subword)
    with tabs[3]:
        if tabs[3].open is not False:
            P.norm_tab(trace, alpha if norm == "gnmt" else 0.6, stem, lm.tgt_tok.detokenize, rules)


main()
