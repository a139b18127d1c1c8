"""The stepper's "Why this word?" tab: why the shown step wrote its word and not an alternative.

The alternatives are the step's own top-k (or a word typed in); the explanation is
:func:`nmt.explanation.contrastive.contrast` on the session's model, computed when asked (a button) and kept in
the shared store, so a class asking the same question computes it once. :mod:`ui.figures.contrastive`
builds the tables; this module lays them out. Offered where the model's α can be edited (its
capabilities: an RNNsearch decoding with attention); any other model gets one line saying why not.
"""

from __future__ import annotations

from collections.abc import Callable

import streamlit as st

from nmt.decoding.trace import DecodeTrace, StepRecord
from nmt.explanation.contrastive import Contrast, contrast, plain_verdict, verdict
from nmt.models.checkpoint import LoadedModel
from nmt.text.vocab import SPECIALS
from ui.common import heavy
from ui.common import widgets as W
from ui.figures import contrastive as cv
from ui.figures.common import md
from ui.figures.stepper_charts import BLUES

BLUE = BLUES[-3]  # α in the heatmaps' blue


@heavy.cached("stepper")
def explained(_lm: LoadedModel, _say: Callable[[str], None], path: str, fusion: str, src_tokens: tuple[str, ...],
              prefix: tuple[int, ...], alternative: int) -> Contrast:
    """The contrast of the last word of ``prefix`` against ``alternative`` (``_lm``: the model at ``path``,
    fused as ``fusion`` says; left out of the key), computed in one of the server's heavy-job slots like
    every long job (``_say`` shows the queue while all are taken)."""
    src_ids = _lm.src_vocab.encode(list(src_tokens[:-1]))
    return W.in_slot(_say, lambda: contrast(_lm, src_ids, list(prefix), alternative, src_tokens=list(src_tokens)))


def _word_id(lm: LoadedModel, word: str) -> int | None:
    """The target vocabulary's id of a typed word (as typed, else lowercased), or None (also for the special
    tokens <pad>, <unk>, <s> and </s>, which are no word to contrast with)."""
    for w in (word, word.lower()):
        if w in lm.tgt_vocab and w not in SPECIALS:
            return lm.tgt_vocab.stoi[w]
    return None


def panel(lm: LoadedModel, trace: DecodeTrace, step: StepRecord | None, context: str, key_prefix: str) -> None:
    """The tab's content at the shown step; its widgets' keys begin with the page's ``key_prefix``."""
    if step is None:
        st.caption("Nothing decoded yet: press Step.")
        return
    if not lm.model.capabilities.editable(context):
        st.info(f"“Why this word?” explains an RNNsearch decoding with attention, through its α and gradients; "
                f"{md(lm.description.name)} here {'reads one fixed c' if context == 'fixed' else 'is not one'}. "
                "Pick an RNNsearch model (and turn the ensemble, fusion or freeze off) to ask it.")
        return
    alternatives = cv.alternatives(step.topk, step.token)
    left, right = st.columns([1, 1])
    pick = left.selectbox(f"Why « {step.token} » at i = {step.i} and not…", alternatives, key=f"{key_prefix}why_alt")
    typed = right.text_input("…or another French word", key=f"{key_prefix}why_word", max_chars=40,
                             placeholder="e.g. " + (alternatives[-1] if alternatives else "le"))
    word = typed.strip() or pick
    alt = _word_id(lm, word) if word else None
    if alt is None or alt == step.token_id:
        st.caption(f"« {md(word or '')} » is not another word of this model's vocabulary." if word else
                   "No alternative to compare with.")
        return
    prefix = tuple(s.token_id for s in trace.steps[: step.i + 1])
    token = f"{lm.path}|{trace.source}|{prefix}|{alt}"
    if not W.run_button(f"Explain « {step.token} » over « {lm.tgt_vocab.itos[alt]} »", f"{key_prefix}why_run", token,
                        help="Integrated gradients of log p(written) − log p(alternative) over the source words"):
        return
    note = st.empty()
    with st.spinner("Integrated gradients…"):
        c = explained(lm, note.info, str(lm.path), str(lm.meta.get("fusion")), tuple(trace.src_tokens), prefix, alt)
    note.empty()
    show(c, key_prefix)


def show(c: Contrast, key_prefix: str) -> None:
    """The verdict in plain words, and one click away its numbers: the source words' scores beside α, the
    part no source word carries, the readout's shares; the downloads."""
    if not cv.converged(c):  # scores that do not add up to the difference: no verdict drawn from them
        st.warning(md(cv.not_converged_note(c)))
    else:
        st.markdown(f"**{md(plain_verdict(c))}**")
    with st.expander("The numbers", expanded=False):
        numbers(c)
    stem = W.safe_stem(f"why-{c.chosen}-not-{c.alternative}")
    W.downloads([W.Download("CSV", cv.csv_of(c), f"{stem}.csv", "text/csv"),
                 W.Download("JSON", cv.json_of(c), f"{stem}.json", "application/json")],
                key=f"{key_prefix}why_dl_{c.step}")


def numbers(c: Contrast) -> None:
    """The verdict with its numbers, the summary line, the source words' table and the readout's shares."""
    if cv.converged(c):
        st.markdown(md(verdict(c)))
    st.caption(md(cv.summary_line(c)) + ". Positive scores push toward « " + md(c.chosen) + " », negative toward « "
               + md(c.alternative) + " »; α is where the step looked, which need not be what decided.")
    st.dataframe(cv.source_frame(c), hide_index=True, width="stretch", column_config={
        "j": st.column_config.NumberColumn(width="small"),
        "α_ij": st.column_config.ProgressColumn(format="%.3f", min_value=0.0, max_value=1.0, color=BLUE),
        "integrated gradients": st.column_config.NumberColumn(format="%+.3f"),
        "gradient × input": st.column_config.NumberColumn(format="%+.3f")})
    st.markdown("**Where the difference came from inside the step** (the deep output's three inputs)")
    st.dataframe(cv.shares_frame(c), hide_index=True, width="stretch", column_config={
        "logit difference": st.column_config.NumberColumn(format="%+.3f"),
        "share %": st.column_config.ProgressColumn(format="%.0f%%", min_value=0.0, max_value=100.0)})
