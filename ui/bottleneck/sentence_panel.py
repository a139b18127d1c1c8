"""The bottleneck page's sentence: one typed (the pair's long example by default, followed while untouched) with an
optional reference, or a corpus sentence picked by its length; and the corpus for the length sweep.
"""

from __future__ import annotations

import streamlit as st

from ui.bottleneck import jobs, state
from ui.common import models, user_models
from ui.common import typed as T
from ui.common import widgets as W
from ui.common.presets import long_sentence
from ui.figures.bottleneck import lengths_of, pick_by_length
from ui.figures.common import MAX_REFERENCE_CHARS, MAX_SOURCE_CHARS, md

FROM = ("typed", "corpus by length")
MAX_LEN = 80
MAX_VARIANTS = 200  # sentences of one length offered by the variant picker
PREFERRED = ("multi30k/test_2016_flickr", "europarl-v7-fr-en/test2000q4", "multi30k/val")


def sentence(group: models.ModelGroup, src: str, tgt: str) -> tuple[str, str, list[str], list[str]] | None:
    """The source and (optional) reference to compare on, and the corpus for the length sweep."""
    how = st.radio("Sentence", FROM, key="bn_from", bind=W.BIND, horizontal=True,
                   help="typed: your own sentence · corpus by length: a corpus sentence picked by its length")
    splits = W.corpus_splits(src, tgt)
    corpus: tuple[list[str], list[str]] = ([], [])
    if splits:
        split = W.split_picker(splits, "bn_split", label="Corpus (length slider and sweep)", prefer=PREFERRED,
                               container=st.sidebar)
        try:
            corpus = jobs.corpus(split, src, tgt)
        except (OSError, ValueError) as err:
            st.sidebar.error(f"Cannot read {md(split.label)}: {md(str(err))}")
    if how == "typed":
        default = long_sentence(group.name)
        follow = state.follow_default_text(default)  # an untouched example follows the pair (Multi30k or Europarl)
        examples = [long_sentence(g.name) for g in user_models.all_groups()]
        text = st.text_area(models.source_label(group.search or group.encdec), None if follow else default,
                            key="bn_text", bind=W.BIND,
                            max_chars=MAX_SOURCE_CHARS, height=90,
                            on_change=T.on_typed("bn_model", "bn_text", examples, T.pair_name))
        T.typed_note("bn_model")
        ref = st.text_input("Reference translation (optional: enables log p(reference) and BLEU)", key="bn_ref",
                            bind=W.BIND, max_chars=MAX_REFERENCE_CHARS)
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
    length = c1.slider("Source length (words)", 1, MAX_LEN, 20, key="bn_len", bind=W.BIND,
                       help="Picks a corpus sentence of this many words (or the nearest length the corpus has): "
                            "slide right and watch RNNencdec drift.")
    found = pick_by_length(sources, int(length))
    variant = c2.selectbox("Variant", range(min(len(found), MAX_VARIANTS)), key="bn_var", bind=W.BIND,
                           format_func=lambda v: f"{v + 1} of {len(found)}",
                           help="Which of the sentences with this length.")
    k = found[int(variant or 0) % len(found)]
    if lengths[k] != length:
        st.caption(f"No sentence has {length} words; showing one with {lengths[k]}.")
    st.caption(f"Sentence #{k} of the corpus ({lengths[k]} words, {len(found)} with this length).")
    st.markdown(f"**Source:** {md(sources[k])}  \n**Reference:** {md(refs[k])}")
    return sources[k], refs[k], sources, refs
