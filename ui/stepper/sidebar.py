"""The stepper's sidebar: the model picker, the decoding mode and its settings, the display switches."""

from __future__ import annotations

import streamlit as st

from nmt.text.corpora import shown
from ui.common import checkpoint_files, models, search_rules, twins, user_models
from ui.figures import stepper_state as vs
from ui.figures.common import NORM_LABELS, md
from ui.stepper import controller as ctl
from ui.stepper import decoding as dec
from ui.stepper import ensemble_panel as ens
from ui.stepper import sampling, state
from ui.stepper.panels import candidate_controls

NORMS = ("length", *(n for n in NORM_LABELS if n != "length"))  # the default first, as for the model
MODE_LABELS = {"greedy": "step it, force words", "beam": "beam search: its best hypothesis",
               "sample": "draw each word: temperature, top-k, top-p"}


def chosen_name(groups: list[models.ModelGroup]) -> list[str]:
    """The pickers' names, the default first (a bound control leaves its first option out of the URL); a
    session's pair that is not in the folder falls back to the default, with a warning."""
    default = models.default_group(groups)
    names = [g.name for g in sorted(groups, key=lambda g: g is not default)]
    if state.get("model") not in names:
        if state.get("model"):
            st.sidebar.warning(f"Model “{md(state.get('model'))}” is not in the checkpoint folder; "
                               "showing the default.")
        state.put("model", names[0])
    return names


def model_section(groups: list[models.ModelGroup], names: list[str]) -> models.ModelGroup:
    """The model picker, its labels, origin, search rules and credit, the ensemble switch and the folder."""
    labels, rows = dec.catalogue(groups)
    st.header("Model")
    st.selectbox("Checkpoint pair", names, **ctl.bound("model"), format_func=user_models.labeller(groups),
                 help="RNNsearch and RNNencdec checkpoints paired by name in the checkpoint folder, then "
                      f"“{user_models.LABEL}”, the folder of your own models.")
    group = {g.name: g for g in groups}[state.get("model")]
    st.caption(md(labels[state.get("model")]))
    st.caption(md(models.origin(group.members[0])), help=user_models.ORIGIN_HELP)
    note = models.search_note(group.members[0])
    if note:  # an imported model steps by its toolkit's rules (nmt.decoding.toolkit), or by this app's
        st.caption(md(note) if not state.get("app_rules") else "Decodes by this app's search rules.")
        st.toggle("This app's search rules", **ctl.bound("app_rules"),
                  help="Decode this imported model by this app's length limit and beam "
                  "instead of its toolkit's (python -m nmt translate --app-rules does the same).")
    credit = twins.credit(group)  # Tatoeba's CC-BY asks for it
    if credit:
        st.caption(md(credit))
    ens.toggle(group)
    with st.expander("Checkpoints in the folder"):
        st.dataframe(rows, hide_index=True)
        st.caption(f"Folder: {md(shown(models.checkpoint_dir()))}")
        for line in checkpoint_files.notes(models.checkpoint_dir()):  # each file left out, once
            st.caption(md(line))
    user_models.folder_expander()
    return group


def sidebar(groups: list[models.ModelGroup]) -> models.ModelGroup:
    """Model picker, decoding mode and display settings; returns the chosen model group."""
    names = chosen_name(groups)
    with st.sidebar:
        group = model_section(groups, names)
        st.header("Decoding")
        st.radio("Mode", list(MODE_LABELS), **ctl.bound("mode"), captions=list(MODE_LABELS.values()),
                 help="Greedy decoding can be stepped and forced; beam search runs once and the step "
                      "controls walk through its best hypothesis; sampling draws each word from the model's "
                      "distribution after temperature, top-k and top-p, reproducibly from its seed.")
        if state.mode() == "beam":
            st.slider("Beam size k", *vs.BEAM_RANGE, **ctl.bound("beam"))
            # an imported model: its toolkit's beam
            toolkit = None if state.get("app_rules") else search_rules.rules(group.members[0])
            st.selectbox("Length normalisation", NORMS, **ctl.bound("norm"), disabled=toolkit is not None)
            st.caption(NORM_LABELS[state.get("norm")] if toolkit is None else search_rules.ranked_as(toolkit))
        if state.mode() == "sample":
            sampling.controls()
        candidate_controls()
        st.header("Display")
        st.toggle("Paper-style heatmap", **ctl.bound("paper"),
                  help="Greyscale as in Fig. 3 of the paper: α = 0 black, α = 1 white.")
        st.toggle("Replace unknown words", **ctl.bound("unk"),
                  help="When the model writes <unk>, look at the source word it attends to most (largest α_ij, "
                       "never </s>): show the model's dictionary translation of it, marked “dictionary”, or, "
                       "where the dictionary lacks it (names, numbers) or the model has none, the word itself, "
                       "marked “copied” (Jean et al., 2015).")
    return group
