"""The "Is attention an explanation?" page's Surgery and Debate tests tabs (Streamlit layout only).

Surgery edits α at the chosen step and decodes on (:func:`ui.explanation.jobs.surgery`, the model's
own step under :mod:`nmt.decoding.surgery`); the debate tab runs the permutation and adversarial-α tests
(:func:`ui.explanation.jobs.debate`, :mod:`nmt.explanation.debate`) on a button. The model work is in
:mod:`ui.explanation.jobs`, the tables, charts and readings in :mod:`ui.explanation.views_surgery`; this
module only lays them out. Controls are bound to URL query parameters (``ex_*``).
"""

from __future__ import annotations

import json
from dataclasses import dataclass

import streamlit as st

from nmt.decoding.search import InputError
from nmt.decoding.surgery import SurgeryPreset, SurgeryResult
from nmt.decoding.trace import DecodeTrace
from ui.common import models
from ui.common import widgets as W
from ui.explanation import state
from ui.explanation import views_surgery as S
from ui.explanation.jobs import EPS, N_PERM, debate, surgery, unedited
from ui.figures.common import csv_text, md, source_labels
from ui.figures.unknown import Detokenize, replacements, shown

BIND = W.BIND
EDITS = list(S.EDIT_LABELS)
SEEDS = tuple(range(10))  # shuffle orders offered


@dataclass
class EditChoice:
    """The α edit the Surgery tab's controls describe (as the widgets returned them, defaults filled in)."""

    label: str  # the radio's label (S.EDIT_LABELS key)
    kind: str  # the edit (S.EDIT_LABELS value)
    every: bool  # also at every later step
    j: int  # the source word of a zero / one-hot edit
    from_step: int  # whose α a copy edit takes
    seed: int  # the shuffle's order
    ref: tuple[int, ...]  # the user's forced translation (ids), () for the greedy one


def surgery_tab(ckpt: models.CheckpointInfo, text: str, trace: DecodeTrace, step: int, stem: str,
                preset: SurgeryPreset | None) -> None:
    """Edit α at the chosen step and decode on: the two translations word by word and both α heatmaps."""
    choice = edit_controls(ckpt, text, trace, step, preset)
    first = "first word" if step == 1 else f"first {step} words"
    after = f", after your translation's {first} (forced)" if choice.ref and step else ""
    again = ", here and at every later step" if choice.every else ""
    st.caption(f"{choice.label}: {S.EDIT_HELP[choice.label]}{again}. Then the model decodes on greedily from its "
               f"new state{after}.")
    try:
        with st.spinner("Decoding with the edited α…"):
            outcome = surgery(str(ckpt.path), ckpt.mtime, text, step, choice.kind, choice.j, choice.seed, choice.ref,
                              choice.from_step, choice.every)
    except InputError as err:
        W.input_error(err)
        return
    surgery_result(trace, step, stem, choice.ref, outcome, models.load(ckpt).tgt_tok.detokenize)


def edit_controls(ckpt: models.CheckpointInfo, text: str, trace: DecodeTrace, step: int,
                  preset: SurgeryPreset | None) -> EditChoice:
    """The Surgery tab's widgets: the edit, every later step, the source word, the copy's step, the seed."""
    src = source_labels(trace)
    alpha = trace.steps[step].alpha or []
    top = max(range(len(alpha)), key=alpha.__getitem__) if alpha else 0
    p_label, p_j = S.preset_edit(preset)
    c1 = st.container()
    c2, c3, c4 = st.columns([3, 2, 1], vertical_alignment="bottom")
    # Defaults (the preset's edit, else the most attended word) only where no value is set yet: a value set by
    # a preset's callback and a default together would draw Streamlit's "set twice" warning.
    kw = {} if state.edit_set() else {"index": EDITS.index(p_label)}
    label = c1.radio("Edit α at this step", EDITS, key="ex_edit", bind=BIND, horizontal=True,
                     help=" · ".join(f"{k}: {v}" for k, v in S.EDIT_HELP.items()), **kw)
    label = label if label in S.EDIT_LABELS else EDITS[0]
    kind = S.EDIT_LABELS[label]
    every = c2.toggle("…and the same edit at every later step", key="ex_every", bind=BIND,
                      disabled=kind in S.ONCE_ONLY,
                      help="Apply the edit at this step and at every step after it, e.g. zero a word for the rest "
                           "of the sentence: the model can never look at it again.") and kind not in S.ONCE_ONLY
    j_opts = list(range(len(src)))
    j_default = p_j if p_j is not None and p_j < len(j_opts) else min(top, len(j_opts) - 1)
    kw = {} if state.source_word_set() else {"default": j_default}
    # Pills, so that a source word is clicked (the "click a source word"); "k: word" keeps a repeated
    # word apart and is what the URL holds. required: clicking the chosen word again keeps it.
    j = c1.pills("Source word: click the one to zero or to put all of α on", j_opts, key="ex_j", bind=BIND,
                 format_func=lambda k: f"{k}: {src[k]}", required=True, disabled=kind not in ("zero", "onehot"),
                 help="Default: the word α looks at most at this step.", **kw)
    ref = tuple(s.token_id for s in trace.steps) if trace.method == "forced" else ()
    # copy takes α from the unedited decoding: the greedy translation, or your first words and the model's own after
    own = unedited(str(ckpt.path), ckpt.mtime, text, ref[:step]) if ref else trace.target_tokens
    n = len(own)
    # default: the previous word's α; a shorter decoding than the one the menu was set on brings it to its last step
    kw = {} if state.from_step_set(n - 1) else {"index": step - 1 if step > 0 else min(1, n - 1)}
    from_step = c3.selectbox("From step", list(range(n)), key="ex_from", bind=BIND, disabled=kind != "copy",
                             format_func=lambda k: f"{k}: {own[k]}",
                             help="Whose α the copy edit puts at this step (default: the previous word's), from "
                                  "the unedited decoding.", **kw)
    # A select box, not a number input: a URL may hold any number, and number inputs fail on some (1e309).
    seed = c4.selectbox("Seed", SEEDS, key="ex_seed", bind=BIND, disabled=kind != "shuffle",
                        help="Which random order the shuffle uses.")
    return EditChoice(label, kind, bool(every), int(j if j is not None else top), int(from_step or 0), int(seed or 0),
                      ref)


def surgery_result(trace: DecodeTrace, step: int, stem: str, ref: tuple[int, ...],
                   outcome: tuple[SurgeryResult, list[float], str, list[float] | None], detok: Detokenize) -> None:
    """What the edit did (:func:`ui.explanation.jobs.surgery`'s ``outcome``): the summary, both translations
    (each ``<unk>`` the model chose replaced and marked, :mod:`ui.figures.unknown`), the word-by-word table,
    both α heatmaps and the downloads."""
    res, forced_lp, what, ref_lp = outcome
    src = source_labels(trace)
    orig, edited = res.original.target_tokens, res.trace.target_tokens
    delta = forced_lp[step] - res.original.steps[step].logprob if step < len(forced_lp) else None
    st.markdown(S.surgery_summary(orig, edited, step, what, delta))
    if ref_lp is not None and step < len(ref_lp) and res.original.steps[step].token_id != trace.steps[step].token_id:
        # the model's own word there differs from yours: say what the edit does to yours too
        st.markdown(S.reference_cost(trace.steps[step].token, step, trace.steps[step].logprob, ref_lp[step]))
    left, right = st.columns(2)
    original, edited_text = shown(res.original, detok), shown(res.trace, detok)
    with left, st.container(border=True):
        mine = " (your first words, then the model's own)" if ref and step else ""
        st.markdown(f"**Original{mine}:** {original.markdown or '(empty)'}")
    with right, st.container(border=True):
        st.markdown(f"**Edited:** {edited_text.markdown or '(empty)'}")
    if (original.note or edited_text.note) and not replacements(trace):  # else said under the translation above
        st.caption(original.note or edited_text.note)
    m1, m2, m3 = st.columns(3)
    m1.metric("Δ log p of the original word", f"{delta:+.3f}" if delta is not None else "—",
              help="log p of the word the model wrote at this step, with the edit minus without (nats)")
    m2.metric("log p, original translation", f"{res.original.logprob:.2f}")
    m3.metric("log p, edited translation", f"{res.trace.logprob:.2f}",
              delta=f"{res.trace.logprob - res.original.logprob:+.2f}")
    frame = S.surgery_frame(orig, edited, res.edited_steps, [s.logprob for s in res.original.steps],
                            [s.logprob for s in res.trace.steps], forced_lp)
    st.dataframe(S.surgery_style(frame), hide_index=True, key="ex_surgery_table",
                 column_config={"note": st.column_config.TextColumn(width="medium")})
    st.caption("Word by word: blue rows are the steps whose α was edited, orange ones words that changed (bold: "
               "the first; orange wins on a row that is both; the note column says which). Δ log p (original "
               "word) is what the edit costs the original translation's word at each position when that "
               "translation is forced.")
    h1, h2 = st.columns(2)
    charts = [S.surgery_alpha_chart(src, orig, [s.alpha for s in res.original.steps], [], "α, original"),
              S.surgery_alpha_chart(src, edited, [s.alpha for s in res.trace.steps], res.edited_steps,
                                    f"α, edited (✎ the edited step{'s' * (len(res.edited_steps) > 1)})")]
    for col, chart, name in zip((h1, h2), charts, ("original", "edited")):
        with col:
            if chart is not None:
                W.show_chart(chart, key=f"ex_surgery_{name}", fit=True)
    W.downloads([W.Download("Table CSV", csv_text(frame), f"surgery-{stem}-step{step}.csv", "text/csv"),
                 W.Download("JSON", lambda: json.dumps({**res.to_dict(), "forced_logprob": forced_lp,
                                                        "edit": what, "step": step}, ensure_ascii=False, indent=1),
                            f"surgery-{stem}-step{step}.json", "application/json"),
                 *W.chart_downloads(charts[1], f"surgery-alpha-{stem}-step{step}")], key="ex_dl_surgery")


def debate_tab(ckpt: models.CheckpointInfo, trace: DecodeTrace, step: int, stem: str) -> None:
    """The permutation and adversarial-α tests, on a button; readings for the chosen step and the sentence."""
    st.markdown(f"Two tests from the debate (Jain & Wallace 2019; Wiegreffe & Pinter 2019), made for translation: "
                f"**shuffle** α at each step {N_PERM} times and see whether the written word changes, and search "
                f"for an **adversarial α**, as different from the model's as possible, that keeps the word and its "
                f"probability within ε = {EPS:g}.")
    ids = tuple(s.token_id for s in trace.steps)
    token = f"{ckpt.path}|{ckpt.mtime}|{trace.source}|{ids}"
    if not W.run_button("Run the two tests on this sentence", "ex_tests", token,
                        help=f"{N_PERM} shuffles and 30 projected-gradient steps per target word (about a second)."):
        return
    note = st.empty()
    with st.spinner("Shuffling α and searching for an adversarial α…"):
        res = debate(str(ckpt.path), ckpt.mtime, tuple(trace.src_tokens), ids, note)
    note.empty()
    rec = trace.steps[step]
    word, best = rec.token, rec.topk[0][0] if rec.topk else rec.token  # the same word unless forced
    src = source_labels(trace)
    left, right = st.columns(2)
    with left:
        st.markdown(f"**Permutation test at step {step}**")
        if best != word:
            st.caption(f"Here the model's most likely word is “{md(best)}”, not your “{md(word)}”: a shuffle "
                       "“changes the word” when that most likely word changes.")
        st.markdown(S.permutation_reading(res.flipped[step], res.tvd[step], best))
        chart = S.tvd_chart(S.tvd_frame(res.tvd[step], res.flipped[step]))
        if chart is not None:
            W.show_chart(chart, key="ex_tvd")
    with right:
        st.markdown(f"**Adversarial α at step {step}**")
        st.markdown(S.adversarial_reading(res.adv_jsd[step], res.prob[step], res.adv_prob[step], word, EPS, best))
        adv = S.adversarial_chart(S.adversarial_frame(src, res.alpha[step], res.adv_alpha[step]), src)
        if adv is not None:
            W.show_chart(adv, key="ex_adv")
    st.info(S.debate_summary(res))
    W.downloads([W.Download("JSON", lambda: json.dumps(res.to_dict(), ensure_ascii=False, indent=1),
                            f"debate-{stem}.json", "application/json"),
                 *W.chart_downloads(adv, f"adversarial-{stem}-step{step}")], key="ex_dl_debate")

