"""Is attention an explanation? α beside attributions, attention surgery and the debate's two tests.

For one sentence and one target word of the greedy translation (or of a translation the user types,
force-decoded, so that a reference can be explained) the page puts the model's α next to
five attributions of that word's log p over the source words (:mod:`nmt.explanation.attribution`: saliency,
gradient × input, integrated gradients, leave-one-out of the embedding and of the annotation in α)
with their agreement (Kendall τ, top-1, JSD); the whole sentence as one matrix per method; an α edit
at that step and what the model writes instead (:mod:`nmt.decoding.surgery`); and, on a button, the
permutation and adversarial-α tests (:mod:`nmt.explanation.debate`). This file is the layout: the controls
are :mod:`ui.explanation.controls`, the tabs :mod:`ui.explanation.attribution_panel` and
:mod:`ui.explanation.surgery_panel`, the session state :mod:`ui.explanation.state`. Controls are bound to URL
query parameters (``ex_*``). Attributions are kept per step for every visitor (a shared store keyed by
checkpoint file, its mtime, the sentence and the step); surgeries and tests are cached.
"""

from __future__ import annotations

from ui.common import shell

shell.framed()  # a page Streamlit started on its own (a fresh server's first request) runs in the frame

import streamlit as st

from ui.common import contrast_panel, models
from ui.common import widgets as W
from ui.explanation import attribution_panel as AP
from ui.explanation import controls as C
from ui.explanation import surgery_panel as SP
from ui.figures.common import md

BIND = W.BIND
TABS = ["α versus attributions", "Why this word?", "Whole sentence", "Surgery", "Debate tests"]


def main() -> None:
    """Build the page."""
    st.title("Is attention an explanation?")
    st.caption("Does α point at the source words the model actually uses? Compare it with gradient and "
               "leave-one-out attributions of the written word, edit α and watch the translation, and run the "
               "two tests of the attention-as-explanation debate.")
    with st.sidebar:
        st.header("Model")
    ckpt = W.checkpoint_picker("ex_model")
    if ckpt is None:
        return
    why = C.unusable(ckpt)
    if why is not None:
        st.info(md(why), icon=":material/info:")
        return
    lm = W.load_lm(ckpt)
    if lm is None:
        return
    text, preset = C.sentence(models.source_label(ckpt))
    ref = C.reference(lm)
    if not text:
        st.info("Type an English sentence to explain.")
        return
    trace = C.decoded(ckpt, lm, text, ref)
    if trace is None:
        return
    step = C.step_picker(trace, preset)
    stem = W.safe_stem(text) + ("-yours" if ref else "")
    tabs = st.tabs(TABS, key="ex_tab", bind=BIND)
    with tabs[0]:
        if tabs[0].open is not False:
            AP.explain_tab(ckpt, text, trace, step, stem)
    with tabs[1]:
        if tabs[1].open is not False:
            contrast_panel.panel(lm, trace, trace.steps[step], trace.context, "ex_")  # the stepper's "why not"
    with tabs[2]:
        if tabs[2].open is not False:
            AP.sentence_tab(ckpt, text, trace, step, stem)
    with tabs[3]:
        if tabs[3].open is not False:
            SP.surgery_tab(ckpt, text, trace, step, stem, preset)
    with tabs[4]:
        if tabs[4].open is not False:
            SP.debate_tab(ckpt, trace, step, stem)


main()
