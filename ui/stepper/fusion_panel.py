"""The stepper's language-model fusion: its sidebar controls, the fused model, and its panel.

Offered only when ``<checkpoint folder>/fusion/`` holds a language model over the chosen model's
target vocabulary (:func:`nmt.decoding.fusion.find_fusion_files`); deep fusion also needs a controller trained
for that model. The choice (``fusion``: none / shallow / deep, and ``beta``) is bound to the URL like
every stepper control. The fused model wraps the shared, cached translation model (no copy), and
every decoder runs it unchanged; the panel shows :mod:`ui.stepper.views_fusion` over
:func:`nmt.decoding.fusion.explain`, read off the fused model's own steps.
"""

from __future__ import annotations

from pathlib import Path

import streamlit as st

from nmt.decoding.fusion import FusionFiles, explain, find_fusion_files, fuse, load_controller, load_lm
from nmt.decoding.trace import DecodeTrace
from nmt.models.checkpoint import CheckpointError, LoadedModel
from ui.common import models
from ui.figures.common import md
from ui.stepper import controller as ctl
from ui.stepper import state
from ui.stepper import views_fusion as fv

SUBFOLDER = "fusion"
BETA_RANGE = (0.0, 1.0, 0.05)
DEFAULT_BETA = 0.2



def fusion_dir() -> Path:
    return models.checkpoint_dir() / SUBFOLDER


def _folder_sig(folder: Path) -> tuple:
    try:
        return tuple((p.name, p.stat().st_mtime) for p in sorted(folder.glob("*.pt")))
    except OSError:
        return ()


@st.cache_data(show_spinner=False, max_entries=16)
def _files(folder: str, sig: tuple, tm_path: str, tm_mtime: float) -> FusionFiles:
    return find_fusion_files(Path(folder), models.load_model(tm_path, tm_mtime))


@st.cache_resource(show_spinner="Loading the language model…", max_entries=8)
def fused_model(tm_path: str, tm_mtime: float, lm_path: str, ctl_path: str | None, mode: str,
                beta: float) -> LoadedModel:
    """The fused model of a translation model and an LM (shared by every session, like the model)."""
    controller = load_controller(ctl_path)[0] if mode == "deep" and ctl_path else None
    return fuse(models.load_model(tm_path, tm_mtime), load_lm(lm_path), mode, beta, controller)


def sidebar(tm: LoadedModel, ckpt: models.CheckpointInfo) -> LoadedModel:
    """The fusion controls (when an LM fits this model) and the model to decode: ``tm`` or fused."""
    folder = fusion_dir()
    files = _files(str(folder), _folder_sig(folder), str(ckpt.path), ckpt.mtime)
    if files.lm is None:
        return tm
    modes = ["none", "shallow"] + (["deep"] if files.controller else [])
    if state.has("fusion") and state.get("fusion") not in modes:  # e.g. "deep" kept from a model with a controller
        state.put("fusion", "none")
    with st.sidebar:
        st.header("Language-model fusion")
        st.radio("Fusion", modes, **ctl.bound("fusion"), captions=[fv.MODE_LABELS[m] for m in modes],
                 help="Gülçehre et al. (2015): a French language model joins the translation model. Shallow: "
                      "each word's score adds β × the LM's log-probability. Deep: a learned gate g_i mixes the "
                      "LM's hidden state into the translation model's deep output.")
        if state.get("fusion") == "shallow":
            st.slider("β (weight of the language model)", *BETA_RANGE[:2], step=BETA_RANGE[2],
                      value=None if state.has("beta") else DEFAULT_BETA, **ctl.bound("beta"))
    if state.get("fusion") == "none":
        return tm
    try:
        return fused_model(str(ckpt.path), ckpt.mtime, str(files.lm), str(files.controller or ""),
                           state.get("fusion"), float(state.get("beta", DEFAULT_BETA)))
    except (CheckpointError, ValueError) as err:
        st.sidebar.error(md(f"Fusion is unavailable: {err}"))
        return tm


def panel(lm: LoadedModel, trace: DecodeTrace, shown: int | None) -> None:
    """The LM's top-k beside the TM's at the shown step, and g_i per step (deep fusion)."""
    if lm.model.capabilities.arch != "fused" or shown is None or not trace.steps:
        return
    key = (str(lm.meta.get("fusion")), trace.source, tuple(s.token_id for s in trace.steps))
    cached = state.get("_fusion_steps")
    if cached is None or cached[0] != key:
        cached = (key, explain(lm, trace))
        state.put("_fusion_steps", cached)
    steps = cached[1]
    mode, beta = lm.model.mode, lm.model.beta
    st.html(fv.topk_html(steps[shown], mode, beta))
    chart = fv.gate_chart(steps, shown)
    if chart is not None:
        st.altair_chart(chart, width="stretch", key=state.key("fusion_gate"))
        st.caption("g_i = σ(v_gᵀ s_i^LM + b_g): how much of the language model's state enters each word's "
                   "deep output (0 = the translation model alone).")
    if mode == "shallow":
        st.caption(fv.SHALLOW_NOTE)
    st.caption(md(fv.lm_caption(lm_meta(lm.meta["fusion"].get("lm") or ""))))


def lm_meta(name: str) -> dict:
    """The meta of the fusion folder's LM file ``name`` (for the caption; cached, weights not read)."""
    path = fusion_dir() / Path(name).name
    try:
        return models.read_meta(str(path), path.stat().st_mtime) if name else {}
    except OSError:
        return {}
