"""Alignment browser: the model's α over a corpus, sentence by sentence, and against gold links.

Pick a split from the data directory (or paste / upload your own pairs): the page decodes the first
N sentences that pass the length and text filters and lists them in a sortable table with sentence
BLEU and chrF (sacrebleu), the mean entropy of α and the mean peak α. For a chosen pair it shows the
model's own translation with its α, and forced decoding of the reference: the model's α for the
human translation. Gold alignment sets (Sure/Possible links) are overlaid on the forced heatmap and
scored: the alignment error rate (AER) of the argmax-α links over the whole set, and, with a model of
the opposite direction picked, of both directions' links joined (intersection, union, grow-diag-final).

Controls are bound to URL query parameters (``al_*``); pasted or uploaded pairs are not (too big for
a URL). The page only reads traces from :mod:`nmt.decoding.search` (through :mod:`ui.alignment.jobs`); its panels
are in :mod:`ui.alignment`, its session state in :mod:`ui.alignment.state`.
"""

from __future__ import annotations

from ui.common import shell

shell.framed()  # a page Streamlit started on its own (a fresh server's first request) runs in the frame

import streamlit as st

from ui.alignment import jobs, state
from ui.alignment.pairs_panel import corpus_pairs, own_pairs
from ui.alignment.table_panel import aer_section, detail, table
from ui.common import heavy
from ui.common import widgets as W
from ui.figures.alignment import filter_pairs
from ui.figures.common import csv_text, md
from ui.figures.unknown import shown

BIND = W.BIND
SOURCES = ("corpus", "my own pairs")
LEN_MAX = 120
N_CHOICES = (10, 25, 50, 100, 200)  # pairs decoded for the table: the URL can ask for no more


def main() -> None:
    """Build the page."""
    st.title("Alignment browser")
    st.caption("How the model's attention lines up source and target words across a whole corpus: "
               "sort by sentence BLEU or attention entropy, open a pair, and compare with human alignments.")
    with st.sidebar:
        st.header("Model")
    ckpt = W.checkpoint_picker("al_model")
    lm = W.load_lm(ckpt) if ckpt is not None else None
    if ckpt is None or lm is None:
        return
    src, tgt = lm.src_tok.lang, lm.tgt_tok.lang
    how = st.radio("Browse", SOURCES, key="al_from", bind=BIND, horizontal=True)
    data = corpus_pairs(src, tgt) if how == "corpus" else own_pairs()
    st.sidebar.caption(W.roots_note())
    if data is None:
        return
    for note in data.notes:
        st.caption(note)

    f1, f2, f3 = st.columns([2, 2, 1])
    lo, hi = f1.slider("Source length (words)", 1, LEN_MAX, (1, LEN_MAX), key="al_len", bind=BIND)
    query = f2.text_input("Search (source or reference)", key="al_q", bind=BIND, max_chars=200)
    n_max = f3.select_slider("Decode the first N", N_CHOICES, value=50, key="al_n", bind=BIND,
                             help="Only the first N matching pairs are decoded (kept for every visitor).")
    matching = filter_pairs(data.pairs, (lo, hi if hi < LEN_MAX else 10**6), query or "")
    idx = matching[: int(n_max) if n_max in N_CHOICES else 50]
    st.caption(f"{len(matching)} of {len(data.pairs)} pairs in {md(data.name)} match; showing the first {len(idx)}.")
    if not idx:
        st.info("No pair matches the filters.")
        return
    words = jobs.words_to_translate(ckpt, data, idx)  # a URL or a slider starts at most heavy.AUTO_WORDS of work
    if words > heavy.AUTO_WORDS and not W.run_button(
            f"Translate these {len(idx)} pairs", "al_go", f"{ckpt.path}|{data.name}|{idx}",
            help=f"{words} source words to translate and force-decode: more than a click starts on its own. "
                 "Results are kept for every visitor."):
        return
    try:
        own, forced, own_job, forced_job = jobs.table_facts(ckpt, data, idx, tgt, heavy_job=words > heavy.AUTO_WORDS)
    except jobs.InputError as err:
        W.input_error(err)
        return
    if own[0]["α entropy"] is None:
        st.info("This model (RNNencdec) reads one fixed summary c for every word: it has no α, so its "
                "pictures show that summary instead of a heatmap, and its entropy and AER are empty.")
    df = table(data, idx, own, forced)
    W.downloads([W.Download("Table CSV", csv_text(df), "sentences.csv", "text/csv")], key="al_dl_table")

    st.subheader("One pair")
    state.keep_pick_in(data.name, idx)  # another split (or filter): the old pair number means nothing here
    k = st.selectbox("Pair # (or click a row of the table)", idx, key="al_pick", bind=BIND)
    k = int(k if k in idx else idx[0])
    try:
        own_t, forced_t = jobs.pair_traces(own_job, forced_job, data.pairs[k])
    except jobs.InputError as err:
        W.input_error(err)
        return
    detail(data, k, own_t, forced_t, df.iloc[idx.index(k)].to_dict(), shown(own_t, lm.tgt_tok.detokenize))

    if data.gold:
        aer_section(data, forced_job, ckpt, (src, tgt))


main()
