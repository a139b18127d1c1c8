"""Is attention an explanation? α beside attributions, attention surgery and the debate's two tests.

For one sentence and one target word of the greedy translation (or of a translation the user types,
force-decoded, so that a reference can be explained) the page puts the model's α next to
five attributions of that word's log p over the source words (:mod:`nmt.explanation.attribution`: saliency,
gradient × input, integrated gradients, leave-one-out of the embedding and of the annotation in α)
with their agreement (Kendall τ, top-1, JSD); the whole sentence as one matrix per method; an α edit
at that step and what the model writes instead (:mod:`nmt.decoding.surgery`); and, on a button, the
permutation and adversarial-α tests (:mod:`nmt.explanation.debate`); those two tabs are laid out by
:mod:`ui.explanation.surgery_panel`. Controls are bound to URL query parameters (``ex_*``). Attributions are
kept per step for every visitor (a shared store keyed by checkpoint file, its mtime, the sentence and
the step); surgeries and tests are cached.
"""

from __future__ import annotations

from ui.common import shell

shell.framed()  # a page Streamlit started on its own (a fresh server's first request) runs in the frame

import json

import streamlit as st

from nmt.decoding.search import InputError
from nmt.decoding.surgery import (
    PRESETS,
    SurgeryPreset,
)
from nmt.decoding.trace import DecodeTrace
from nmt.explanation.attribution import METHODS
from nmt.models.checkpoint import LoadedModel
from ui.common import contrast_panel, models
from ui.common import typed as T
from ui.common import widgets as W
from ui.explanation import jobs
from ui.explanation import surgery_panel as SP
from ui.explanation import views as V
from ui.explanation import views_surgery as S
from ui.explanation.jobs import attributions
from ui.figures.common import MAX_REFERENCE_CHARS, csv_text, md, source_labels
from ui.figures.unknown import NOTE, replacements

BIND = W.BIND
ss = st.session_state
CUSTOM = "Your own sentence"
BY_NAME: dict[str, SurgeryPreset] = {p.name: p for p in PRESETS}
TOPK = 5  # alternatives each step offers to "Why this word?"
TABS = ["α versus attributions", "Why this word?", "Whole sentence", "Surgery", "Debate tests"]
LANGUAGES = {"en": "English", "fr": "French", "de": "German"}

# ----------------------------------------------------------------------------------------------
# Controls
# ----------------------------------------------------------------------------------------------


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


def clear_translation() -> None:
    """A new source sentence: the user's translation of the old one no longer applies."""
    ss["ex_ref"] = ""


own_sentence = T.on_typed("ex_model", "ex_text", [p.text for p in PRESETS], T.search_file)


def on_text() -> None:
    """A new source sentence: the translation typed for the old one goes, and a sentence of one's own goes to
    the pair trained for everyday sentences (:func:`ui.common.typed.on_typed`)."""
    clear_translation()
    own_sentence()


def on_preset() -> None:
    """A preset loads its step and its edit (the URL follows); a translation typed for the old sentence goes."""
    clear_translation()
    p = BY_NAME.get(ss.get("ex_preset"))
    if p is None:
        own_sentence()  # back to a sentence of one's own typed before: it goes where a typed one goes
        return
    T.undo_typed("ex_model")  # the presets were written for the model a typed sentence may have moved from
    ss["ex_step"] = p.step
    ss["ex_edit"], j = S.preset_edit(p)
    if j is not None:
        ss["ex_j"] = j


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
    if ss.get("ex_ref") or st.query_params.get("ex_ref"):  # typed here, or a shared link holds one
        ss["ex_ref_used"] = True  # and the box stays open once it has held a translation
    shown = bool(ss.get("ex_ref_used"))
    with st.expander("Explain a translation of your own (e.g. a reference)", expanded=shown):
        text = st.text_input(f"Translation to explain ({lang})", key="ex_ref", bind=BIND, max_chars=MAX_REFERENCE_CHARS,
                             placeholder="Empty: the model's own greedy translation",
                             help="Up to 600 characters. The model is force-decoded on your translation, so α, the "
                                  "attributions, the surgery (from your words up to the chosen one) and the tests "
                                  "explain p(your word | your previous words). A new source sentence clears it.")
    return (text or "").strip()


def step_picker(trace: DecodeTrace, preset: SurgeryPreset | None) -> int:
    """The target-word slider over the translation (greedy, or the forced one), the chosen word highlighted."""
    n = len(trace.steps)
    default = min(preset.step if preset is not None else 0, n - 1)
    if isinstance(ss.get("ex_step"), int) and ss["ex_step"] > n - 1:
        ss["ex_step"] = n - 1  # a shorter translation than the one the slider was set on
    c1, c2 = st.columns([1, 2], vertical_alignment="center")
    if n > 1:
        kw = {} if "ex_step" in ss else {"value": default}
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


# ----------------------------------------------------------------------------------------------
# Tabs
# ----------------------------------------------------------------------------------------------


def explain_tab(ckpt: models.CheckpointInfo, text: str, trace: DecodeTrace, step: int, stem: str) -> None:
    """α and every attribution at the chosen word: bars, the agreement table, downloads."""
    word = trace.steps[step].token
    big = jobs.needs_button(trace, [step]) and not jobs.known(ckpt, text, trace, [step])
    if big and not W.run_button(f"Explain “{word}”", "ex_one", f"{ckpt.path}|{ckpt.mtime}|{text}|{step}",
                                help="A long sentence: this word's five attributions take several seconds, so they "
                                     "run on a button, under a progress bar. Results are kept for every visitor."):
        return
    att = attributions(ckpt, text, trace, [step], f"Explaining “{word}”", heavy_job=big)
    agree = V.agreement_frame(att, 0)
    st.markdown(V.agreement_reading(agree, word, agree.iloc[0]["top word"], forced=trace.method == "forced"))
    left, right = st.columns([1, 1])
    with left:
        chart = V.bars_chart(V.bars_frame(att, 0), source_labels(trace))
        if chart is not None:
            W.show_chart(chart, key="ex_bars")
        st.caption(V.SCALE_NOTE)
    with right:
        st.markdown(f"**Agreement with α** at step {step} (log p = {att.logprob[0]:.3f})")
        st.dataframe(agree, hide_index=True, key="ex_agree", column_config={
            "method": st.column_config.TextColumn(width=170),
            "top word": st.column_config.TextColumn(width=80, help="the source word the method ranks first"),
            "τ": st.column_config.NumberColumn(format="%.2f", width=52,
                                               help="Kendall τ-b of α and the signed scores (−1 … 1)"),
            "top-1": st.column_config.NumberColumn(format="%d", width=52, help="1 when the method's top word is α's"),
            "JSD": st.column_config.NumberColumn(width=52,
                format="%.2f", help="Jensen–Shannon divergence of α and |scores| normalised, in nats (0 … ln 2 ≈ "
                                    "0.69)")})
        with st.expander("What the methods compute"):
            st.markdown("\n".join(f"- **{V.METHOD_LABELS[m]}**: {V.METHOD_HELP[m]}" for m in V.METHOD_LABELS))
        st.caption(V.ig_gap_note(att))
    table = V.attribution_frame(att, 0)
    W.downloads([*W.chart_downloads(chart, f"explain-{stem}-step{step}"),
                 W.Download("Attributions CSV", csv_text(table), f"explain-{stem}-step{step}.csv",
                            "text/csv"),
                 W.Download("Agreement CSV", csv_text(agree), f"agreement-{stem}-step{step}.csv",
                            "text/csv"),
                 W.Download("JSON", lambda: json.dumps(att.to_dict(), ensure_ascii=False, indent=1),
                            f"explain-{stem}-step{step}.json", "application/json")], key="ex_dl_step")


def sentence_tab(ckpt: models.CheckpointInfo, text: str, trace: DecodeTrace, step: int, stem: str) -> None:
    """One target × source matrix per method over the whole translation, and the mean agreement."""
    n = len(trace.steps)
    # Every word of a 600-character sentence cost 108 s of CPU (issue 24): a button, never a URL or a keystroke
    token = f"{ckpt.path}|{ckpt.mtime}|{text}|{[s.token_id for s in trace.steps]}"
    if not W.run_button(f"Explain all {n} target words", "ex_all", token,
                        help=f"Five attributions of each of the {n} words (integrated gradients with "
                             "as many points as each word needs to add up): a few seconds for a short sentence, "
                             "minutes for a long one, under a "
                             "progress bar. Results are kept for every visitor."):
        return
    att = attributions(ckpt, text, trace, list(range(n)), f"Explaining all {n} target words", heavy_job=True)
    st.caption("Rows are target words (▶ the chosen one), columns source words. α is drawn as everywhere in the "
               "app; every attribution row is divided by its largest absolute value (blue: supports the word, "
               "red: speaks against it). Hover a cell for the raw score.")
    method = st.radio("Beside α", METHODS, key="ex_method", bind=BIND, horizontal=True,
                      format_func=V.METHOD_LABELS.__getitem__, help="The attribution drawn next to α.")
    method = method if method in METHODS else METHODS[0]
    charts = [V.matrix_chart(att, m, mark=step, max_width=320) for m in (V.ALPHA, method)]
    for col, chart, m in zip(st.columns(2), charts, (V.ALPHA, method)):
        with col:
            if chart is not None:
                W.show_chart(chart, key=f"ex_matrix_{m}", fit=True)  # side by side: never wider than the column
    st.markdown("**Mean agreement with α over the sentence**")
    st.caption(V.ig_gap_note(att))
    means = V.sentence_agreement_frame(att)
    st.dataframe(means, hide_index=True, key="ex_agree_all",
                 column_config={c: st.column_config.NumberColumn(format="%.3f") for c in means.columns[1:]})
    W.downloads([*W.chart_downloads(charts[1], f"explain-{stem}-{method}"),
                 W.Download("Cells CSV", lambda: csv_text(V.matrix_cells_frame(att)),
                            f"explain-{stem}-all.csv", "text/csv"),
                 W.Download("Agreement CSV", csv_text(means), f"agreement-{stem}-all.csv", "text/csv"),
                 W.Download("JSON", lambda: json.dumps(att.to_dict(), ensure_ascii=False, indent=1),
                            f"explain-{stem}-all.json", "application/json")], key="ex_dl_all")


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
    why = unusable(ckpt)
    if why is not None:
        st.info(md(why), icon=":material/info:")
        return
    lm = W.load_lm(ckpt)
    if lm is None:
        return
    text, preset = sentence(models.source_label(ckpt))
    ref = reference(lm)
    if not text:
        st.info("Type an English sentence to explain.")
        return
    try:
        trace = (W.decode(W.job_for(ckpt, "forced", topk=TOPK), [text], [ref]) if ref else
                 W.decode(W.job_for(ckpt, "greedy", topk=TOPK), [text]))[0]  # the top-k: "why this word?"
    except InputError as err:
        W.input_error(err)
        return
    unknown_ref = list(dict.fromkeys(w for w in lm.tgt_tok.tokenize(ref) if w not in lm.tgt_vocab)) if ref else []
    if unknown_ref:
        lang = LANGUAGES.get(lm.tgt_tok.lang, lm.tgt_tok.lang)
        st.info(f"Not in the model's {lang} vocabulary: {md(', '.join(unknown_ref))}. The model is forced to "
                f"write {md('<unk>')} there.")
    if not trace.steps:
        st.info("The model wrote nothing for this sentence: there is no word to explain.")
        return
    unknown = [w for w, u in zip(trace.src_tokens, trace.src_unk) if u]
    if unknown:
        st.info(f"Not in the model's vocabulary: {md(', '.join(unknown))}. The model reads each as {md('<unk>')}, so "
                f"every method sees the same {md('<unk>')} embedding there (marked “(unk)” on the charts).")
    if trace.truncated:
        st.info("The sentence was longer than the model reads; it was cut.")
    step = step_picker(trace, preset)
    stem = W.safe_stem(text) + ("-yours" if ref else "")
    tabs = st.tabs(TABS, key="ex_tab", bind=BIND)
    with tabs[0]:
        if tabs[0].open is not False:
            explain_tab(ckpt, text, trace, step, stem)
    with tabs[1]:
        if tabs[1].open is not False:
            contrast_panel.panel(lm, trace, trace.steps[step], trace.context, "ex_")  # the stepper's "why not"
    with tabs[2]:
        if tabs[2].open is not False:
            sentence_tab(ckpt, text, trace, step, stem)
    with tabs[3]:
        if tabs[3].open is not False:
            SP.surgery_tab(ckpt, text, trace, step, stem, preset)
    with tabs[4]:
        if tabs[4].open is not False:
            SP.debate_tab(ckpt, trace, step, stem)


main()
