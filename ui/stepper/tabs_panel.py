"""The tabs under the stepper: this step's numbers, Look · Generate · Update, Why this word?, the energies,
the bottleneck, the event log and the exports; only the open one is built.

The tab bar is drawn by the page's full run (:func:`tab_bar`), outside the decoding fragment, and the fragment
fills the open tab (:func:`secondary`): a Step redraws the tab's contents, not the bar's eight blocks (issue 52).
Picking another tab reruns the whole page, which builds that tab's contents.
"""

from __future__ import annotations

from collections.abc import Sequence

import streamlit as st
from streamlit.delta_generator import DeltaGenerator

from nmt.decoding.trace import DecodeTrace, StepRecord
from nmt.models.checkpoint import LoadedModel
from ui.common import models
from ui.figures import stepper_charts as sc
from ui.stepper import state
from ui.stepper.heatmap_panel import bottleneck_panel
from ui.stepper.panels import context_panel, energies_panel, export_section, log_panel
from ui.stepper.phases_panel import phases_panel

TABS = ("This step's numbers", "Look · Generate · Update", "Why this word?", "Energies e_ij", "Bottleneck",
        "Event log", "Share and export")


def tab_bar() -> Sequence[DeltaGenerator]:
    """The tabs' bar, drawn once per full run below the decoding fragment's slot; its tabs (each with
    ``open``) are filled by the fragment's :func:`secondary`."""
    return st.tabs(list(TABS), key=state.key("w_tab"), on_change="rerun")


def secondary(tabs: Sequence[DeltaGenerator], lm: LoadedModel, trace: DecodeTrace, step: StepRecord | None,
              choice: models.Choice, group: models.ModelGroup, text: str, look: sc.Look, nonce: str) -> None:
    """The open tab of ``tabs`` (from :func:`tab_bar`); only it is built. ``lm`` is the session's model (one
    checkpoint, an ensemble or a fusion): every tab asks it, none loads another."""
    if tabs[0].open:
        with tabs[0]:
            if step is not None:
                context_panel(trace, step, choice, lm.model.capabilities.gaussian_half_width())
            else:
                st.caption("Nothing decoded yet.")
    if tabs[1].open:
        with tabs[1]:
            phases_panel(lm, trace, None if step is None else step.i)
    if tabs[2].open:
        with tabs[2]:
            # here: it needs scipy (attribution), the rest of the stepper does not
            from ui.common import contrast_panel

            contrast_panel.panel(lm, trace, step, trace.context, state.PREFIX)
    if tabs[3].open:
        with tabs[3]:
            energies_panel(trace, choice, look, nonce)
    if tabs[4].open:
        with tabs[4]:
            if trace.picture != "summary":
                bottleneck_panel(group, text, len(trace.steps) - 1 if trace.steps else None, look, "tab" + nonce)
            else:
                st.caption("Shown above, under the summary band.")
    if tabs[5].open:
        with tabs[5]:
            log_panel()
    if tabs[6].open:
        with tabs[6]:
            export_section(trace, look, group)
