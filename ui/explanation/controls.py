"""The "Is attention an explanation?" page's controls above the tabs: which checkpoint it can explain, the
sentence (a preset surgery or one's own), the optional translation to explain instead of the model's own, the
decoding, the notices about it, and the target-word slider.

Controls are bound to URL query parameters (``ex_*``); what they remember lives in :mod:`ui.explanation.state`.
"""

from __future__ import annotations

import streamlit as st

from nmt.decoding.search import InputError
from nmt.decoding.surgery import PRESETS, SurgeryPreset
from nmt.decoding.trace import DecodeTrace
from nmt.models.checkpoint import LoadedModel
from ui.common import models
from ui.common import typed as T
from ui.common import widgets as W
from ui.explanation import state
from ui.explanation import views as V
from ui.explanation import views_surgery as S
from ui.figures.common import MAX_REFERENCE_CHARS, md
from ui.figures.unknown import NOTE, replacements

BIND = W.BIND
CUSTOM = "Your own sentence"
BY_NAME: dict[str, SurgeryPreset] = {p.name: p for p in PRESETS}
TOPK = 5  # alternatives each step offers to "Why this word?"
LANGUAGES = {"en": "English", "fr": "French", "de": "German"}


def unusable(ckpt: models.CheckpointInfo) -> str | None:
    """Why a checkpoint cannot be explained here (plain words), or None where its model's α can be edited
    (its capabilities: an RNNsearch with attention), as the attribution and surgery library requires."""
    if models.capabilities(ckpt).editable():
        return None
    described = models.description(ckpt)
    others = [c.name for c in W.all_checkpoints() if models.description(c).kind == "rnnsearch"]
    hint = (f" Pick an RNNsearch checkpoint in the sidebar ({', '.join(others)})." if others else
            " There is no RNNsearch checkpoint in the checkpoint folder.")
    if described.kind == "rnnencdec":
        return ("RNNencdec has no α: it reads one fixed summary vector c of the whole sentence for every target "
                "word, so there is no attention to compare attributions with or to edit." + hint)
    return (f"This page explains RNNsearch (Bahdanau et al. 2015) only; {ckpt.name} is a {described.name} model, "
            "which the attribution and surgery library does not support." + hint)


own_sentence = T.on_typed("ex_model", "ex_text", [p.text for p in PRESETS], T.search_file)


def on_text() -> None:
    """A new source sentence: the translation typed for the old one goes, and a sentence of one's own goes to
    the pair trained for everyday sentences (:func:`ui.common.typed.on_typed`)."""
    state.clear_reference()
    own_sentence()


def on_preset() -> None:
    """A preset loads its step and its edit (the URL follows); a translation typed for the old sentence goes."""
    state.clear_reference()
    p = BY_NAME.get(state.preset_name() or "")
    if p is None:
        own_sentence()  # back to a sentence of one's own typed before: it goes where a typed one goes
        return
    T.undo_typed("ex_model")  # the presets were written for the model a typed sentence may have moved from
    edit, j = S.preset_edit(p)
    state.load_preset(p.step, edit, j)


def sentence(label: str) -> tuple[str, SurgeryPreset | None]:
    """The preset (or own sentence) picker and the text (its box labelled ``label``)."""
    c1, c2 = st.columns([1, 2])
    name = c1.selectbox("Sentence", [*BY_NAME, CUSTOM], key="ex_preset", bind=BIND, on_change=on_preset,
                        help="Ready-made surgeries (nmt.decoding.surgery.PRESETS), each with a point to make, "
                             "or your own "
                             "English sentence.")
    preset = BY_NAME.get(name or "")
    with c2:
        if preset is None:
            text = st.text_area(label, BY_NAME[PRESETS[0].name].text, key="ex_text", bind=BIND,
                                max_chars=600, height=68, on_change=on_text)
            T.typed_note("ex_model", "model in the sidebar")
            return (text or "").strip(), None
        st.markdown(f"**Source:** {md(preset.text)}")
        st.caption(f"**Watch:** {md(preset.watch)}")
    return preset.text, preset


def reference(lm: LoadedModel) -> str:
    """The optional translation to explain instead of the model's own (forced decoding)."""
    lang = LANGUAGES.get(lm.tgt_tok.lang, lm.tgt_tok.lang)
    shown = state.reference_box_open(bool(st.query_params.get("ex_ref")))  # a shared link may hold one
    with st.expander("Explain a translation of your own (e.g. a reference)", expanded=shown):
        text = st.text_input(f"Translation to explain ({lang})", key="ex_ref", bind=BIND, max_chars=MAX_REFERENCE_CHARS,
                             placeholder="Empty: the model's own greedy translation",
                             help="Up to 600 characters. The model is force-decoded on your translation, so α, the "
                                  "attributions, the surgery (from your words up to the chosen one) and the tests "
                                  "explain p(your word | your previous words). A new source sentence clears it.")
    return (text or "").strip()


def decoded(ckpt: models.CheckpointInfo, lm: LoadedModel, text: str, ref: str) -> DecodeTrace | None:
    """The translation to explain (greedy, or ``ref`` force-decoded), with the top-k "Why this word?" offers, and
    the notices about it (words out of the vocabularies, a cut sentence); None, with the reason shown, where
    there is no word to explain."""
    try:
        trace = (W.decode(W.job_for(ckpt, "forced", topk=TOPK), [text], [ref]) if ref else
                 W.decode(W.job_for(ckpt, "greedy", topk=TOPK), [text]))[0]
    except InputError as err:
        W.input_error(err)
        return None
    unknown_ref = list(dict.fromkeys(w for w in lm.tgt_tok.tokenize(ref) if w not in lm.tgt_vocab)) if ref else []
    if unknown_ref:
        lang = LANGUAGES.get(lm.tgt_tok.lang, lm.tgt_tok.lang)
        st.info(f"Not in the model's {lang} vocabulary: {md(', '.join(unknown_ref))}. The model is forced to "
                f"write {md('<unk>')} there.")
    if not trace.steps:
        st.info("The model wrote nothing for this sentence: there is no word to explain.")
        return None
    unknown = [w for w, u in zip(trace.src_tokens, trace.src_unk) if u]
    if unknown:
        st.info(f"Not in the model's vocabulary: {md(', '.join(unknown))}. The model reads each as {md('<unk>')}, so "
                f"every method sees the same {md('<unk>')} embedding there (marked “(unk)” on the charts).")
    if trace.truncated:
        st.info("The sentence was longer than the model reads; it was cut.")
    return trace


def step_picker(trace: DecodeTrace, preset: SurgeryPreset | None) -> int:
    """The target-word slider over the translation (greedy, or the forced one), the chosen word highlighted."""
    n = len(trace.steps)
    default = min(preset.step if preset is not None else 0, n - 1)
    kw = {} if state.step_set(n - 1) else {"value": default}
    c1, c2 = st.columns([1, 2], vertical_alignment="center")
    if n > 1:
        step = c1.slider("Target word i (the word being explained)", 0, n - 1, key="ex_step", bind=BIND,
                         help="Position in the translation (0-based; </s> is the last).", **kw)
    else:
        step = 0
    step = min(max(int(step), 0), n - 1)
    with c2, st.container(border=True):
        how = "yours, forced" if trace.method == "forced" else "greedy"
        swaps = replacements(trace)  # none for your own (forced) translation
        st.markdown(f"**Translation** ({how}): {V.target_strip(trace.target_tokens, step, swaps)}")
        if swaps:
            st.caption(md(NOTE + " The attributions explain the <unk> the model wrote."))
    return step
