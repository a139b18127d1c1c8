"""The stepper's "Look · Generate · Update" tab: the shown step walked through its three phases.

The numbers come from :func:`nmt.decoding.phases.explain`, the model's own step re-run on the state the
session's :class:`~nmt.decoding.search.Stepper` recorded (beam mode: a stepper forced along the beam's best
hypothesis, :func:`nmt.decoding.phases.replay`, kept in the session and extended as the position moves);
:mod:`ui.stepper.views_phases` builds the cards, and this module only lays them out.
"""

from __future__ import annotations

import streamlit as st

from nmt.decoding.phases import explain, replay, supported
from nmt.decoding.search import Stepper
from nmt.decoding.trace import DecodeTrace
from nmt.models.checkpoint import LoadedModel
from ui.figures.common import md
from ui.stepper import decoding as dec
from ui.stepper import state
from ui.stepper import views_phases as pv

SEVERAL = {"ensemble": "averages several models' steps, so it has no single step to split",
           "fused": "is fused with a language model: each step is two models' steps"}


def _stepper(lm: LoadedModel, trace: DecodeTrace, i: int) -> Stepper | None:
    """A stepper that has taken step i of ``trace``: the session's own (read, never built here), or
    (beam) a forced replay of the beam's best hypothesis on the session's model ``lm``."""
    if trace.method != "beam":
        stepper = dec.current_stepper()
        return stepper if stepper is not None and stepper.lm is lm and stepper.position > i else None
    stepper = replay(lm, trace, i + 1, start=state.get("_phases_replay"), topk=dec.TOPK)
    state.put("_phases_replay", stepper)
    return stepper


def phases_panel(lm: LoadedModel, trace: DecodeTrace, i: int | None) -> None:
    """The tab's content for step i (the one shown above) of the session's model ``lm``, or a line
    saying there is none yet, or that this model's step has no such split (an ensemble, a fusion)."""
    if i is None or not 0 <= i < len(trace.steps):
        st.caption("Nothing decoded yet: press Step.")
        return
    if not supported(lm.model):
        st.info("The Look / Generate / Update view splits one model's step (RNNsearch, RNNencdec or Luong); "
                f"{md(lm.description.name)} {SEVERAL.get(lm.model.capabilities.arch, 'has no such single step')}. "
                "Turn the ensemble or the fusion off in the sidebar to see one model's phases.")
        return
    stepper = _stepper(lm, trace, i)
    if stepper is None:
        st.caption("This step is not decoded yet: press Step.")
        return
    ph = explain(stepper, i, record=trace.steps[i])
    st.markdown(pv.intro(ph, md(trace.steps[i].token)))
    if note := pv.gap_note(ph):
        st.warning(note)
    for card in pv.cards(ph, trace.src_tokens):
        with st.container(border=True, key=f"phase_{card.key}"):  # a CSS hook, not session state
            st.markdown(f"#### {card.title}")
            st.markdown(card.lead)
            left, right = st.columns([1, 1.15], gap="medium")
            left.latex(pv.latex_block(card.equations))
            left.caption(card.source)
            left.dataframe(card.shapes, hide_index=True, width="stretch")
            for caption, frame in card.tables:
                right.markdown(f"**{md(caption)}**")
                right.dataframe(frame, hide_index=True, width="stretch", column_config=_formats(frame))
            if card.note:
                st.caption(card.note)


def _formats(frame: object) -> dict[str, st.column_config.Column]:
    """Three decimals for every float column (p with four), whole numbers as they are."""
    cols = getattr(frame, "columns", [])
    out: dict[str, st.column_config.Column] = {}
    for c in cols:
        if c in ("j", "s", "k", "rank", "unit"):
            out[c] = st.column_config.NumberColumn(c, format="%d", width="small")
        elif c in ("p", "α_ij", "a_t(s)"):
            out[c] = st.column_config.NumberColumn(c, format="%.4f")
        elif c not in ("word", "source word", "written", "quantity", "meaning"):
            out[c] = st.column_config.NumberColumn(c, format="%.3f")
    return out
