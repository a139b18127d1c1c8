"""The stepper's Sample mode: its controls (kept in the URL), the shown step's distributions, and the
translation table of greedy, beam and several samples of the sentence.

The step itself is the model's (:class:`nmt.decoding.stepper.Stepper` with a
:class:`nmt.decoding.sampling.SamplingRule`); this module only draws the controls and reads the record.
"""

from __future__ import annotations

import dataclasses

import streamlit as st

from nmt.decoding.sampling import SamplingRule
from nmt.decoding.stepper import Stepper
from nmt.decoding.trace import StepRecord
from nmt.models.candidates import CandidateSpec
from nmt.models.checkpoint import LoadedModel
from ui.common import heavy, models
from ui.figures import stepper_state as vs
from ui.figures.common import md
from ui.stepper import controller as ctl
from ui.stepper import decoding as dec
from ui.stepper import state
from ui.stepper import views_sampling as vsm

SAMPLES = 3  # samples of the whole sentence in the translation table (seeds seed, seed + 1, …)


def controls() -> None:
    """Temperature, top-k, top-p and the seed, bound to the URL (``temp``, ``topk``, ``topp``, ``seed``)."""
    st.slider("Temperature T", *vs.TEMP_RANGE, step=0.1, **ctl.bound("temp"),
              help="p_T(w) ∝ p(w)^(1/T): below 1 sharper, above 1 flatter.")
    st.number_input("Top-k (0: off)", *vs.TOPK_RANGE, step=1, **ctl.bound("topk"),
                    help="Only the k most probable words keep their mass.")
    st.slider("Top-p (1: off)", *vs.TOPP_RANGE, step=0.05, **ctl.bound("topp"),
              help="Only the fewest most probable words whose mass reaches p (nucleus sampling).")
    st.number_input("Seed", *vs.SEED_RANGE, step=1, **ctl.bound("seed"),
                    help="Each step draws from a generator seeded by (seed, step): Back and Step replay the same word.")


def panel(step: StepRecord) -> None:
    """The shown step's distribution before and after each transform, the drawn word marked."""
    rec = step.sample
    if rec is None:
        if step.forced:
            st.caption("This word was forced, not drawn.")
        return
    st.markdown(f"**How i = {step.i} was drawn**")
    st.caption(md(vsm.drawn_line(rec, step.token)))
    num = st.column_config.NumberColumn
    st.dataframe(vsm.stage_frame(rec, step.token), hide_index=True, key=state.key(f"sample_stages_{step.i}"),
                 column_config={name: num(format="%.3f") for name in rec.stages})


@heavy.cached("stepper")
def sentence_translations(_lm: LoadedModel, path: str, mtime: float, text: str, context: str, rule: SamplingRule,
                          fusion: str, candidates: CandidateSpec | None) -> list[tuple[str, str]]:
    """Greedy's translation of the sentence and SAMPLES sampled ones, seeds seed … seed + SAMPLES − 1 (cached
    for every session); ``_lm`` is the model at ``path`` fused as ``fusion`` names, left out of the key."""
    def run(r: SamplingRule | None) -> str:
        return Stepper(_lm, text, context=context, topk=1, max_src_tokens=dec.MAX_SRC_TOKENS, candidates=candidates,
                       sampling=r).run().translation

    seeds = [dataclasses.replace(rule, seed=rule.seed + k) for k in range(SAMPLES)]
    return [("greedy", run(None)), *((f"sample, seed {r.seed}", run(r)) for r in seeds)]


def translation_table(lm: LoadedModel, choice: models.Choice, text: str) -> None:
    """Greedy, beam search (k = 5) and several samples of the whole sentence, one row each."""
    rule = dec.sampling_rule()
    if rule is None:
        return
    fusion, spec = str(lm.meta.get("fusion")), dec.candidate_spec()
    greedy, *samples = sentence_translations(lm, str(lm.path), choice.ckpt.mtime, text, choice.context, rule,
                                             fusion, spec)
    beam = dec.beam_trace(lm, lm.path, choice.ckpt.mtime, text, choice.context, 5, "length", fusion, spec)
    rows = [greedy, ("beam search, k = 5", beam.translation), *samples]
    with st.expander(f"Greedy, beam and {SAMPLES} samples of the whole sentence", expanded=True):
        st.dataframe(vsm.translations_frame(rows), hide_index=True, key=state.key("sample_translations"))
