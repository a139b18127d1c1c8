"""The stepper's ensemble: its sidebar switch, the choice and loading of its members, and its panel.

With the switch on (URL ``ens=true``), the stepper decodes with the ensemble (:mod:`nmt.decoding.ensemble`)
of every attending checkpoint in the folder that shares the chosen group's languages, truecasers and
vocabularies, the group's own first and the others by file name (for Multi30k: RNNsearch, Luong
general, Luong local-p, and any model trained since on the same vocabularies). Which files those
are is decided here once and carried in :attr:`ui.common.models.Choice.members`. The panel under the α
heatmap shows each member's α row and its p of the written word beside the ensemble's
(:mod:`ui.stepper.views_ensemble`).
"""

from __future__ import annotations

from pathlib import Path

import streamlit as st

from nmt.decoding.ensemble import ensemble_of
from nmt.decoding.trace import DecodeTrace, StepRecord
from nmt.models.checkpoint import CheckpointError, LoadedModel
from nmt.models.registry import describe_ensemble, short_name
from ui.common import meta_cache, models, user_models
from ui.common import widgets as W
from ui.figures.common import md
from ui.figures.stepper_charts import Look
from ui.stepper import controller as ctl
from ui.stepper import state
from ui.stepper import views_ensemble as ev

MAX_MEMBERS = 6  # RNNsearch and Luong's five variants on Multi30k (docs/ENSEMBLES.md: six beat four)


def vocabulary_digest(path: str, mtime: float) -> str | None:
    """One digest of what members must share (languages, truecasers, vocabularies); None if unreadable. Read
    once per version of the file (:mod:`ui.common.meta_cache`), however many files the folders hold."""
    return meta_cache.vocabulary_digest(path)


def members(group: models.ModelGroup) -> list[models.CheckpointInfo]:
    """The group's attending checkpoint and every other attending one sharing its vocabularies."""
    if group.search is None:
        return []
    want = vocabulary_digest(str(group.search.path), group.search.mtime)
    others = [c for g in user_models.all_groups() if g.search is not None and g.search != group.search
              for c in [g.search] if vocabulary_digest(str(c.path), c.mtime) == want]
    return [group.search, *sorted(others, key=lambda c: c.name)][:MAX_MEMBERS] if want else []


def toggle(group: models.ModelGroup) -> None:
    """The sidebar switch (kept in the URL); only offered where two checkpoints can ensemble."""
    found = members(group)
    if len(found) < 2:
        state.put("ens", False)
        return
    names = " + ".join(models.description(c).name.removeprefix("Luong 2015, ") for c in found)
    st.toggle(f"Ensemble of {len(found)} models", **ctl.bound("ens"),
              help=f"Decode with {names} together: at every step their log p are averaged and renormalised, "
                   "so the ensemble's p are the normalised geometric mean of theirs (Luong et al. 2015, "
                   "Jean et al. 2015). They share this group's vocabularies.")


def resolve(group: models.ModelGroup, choice: models.Choice) -> models.Choice:
    """The ensemble's choice when the switch is on (and c_i is not frozen), else ``choice``."""
    found = members(group)
    if not state.get("ens") or len(found) < 2:
        return choice
    if state.get("freeze"):
        return models.Choice(choice.ckpt, choice.context, choice.description,
                             "The ensemble decodes with attention: turn “Freeze c_i” off to see it.")
    configs = [models.read_meta(str(c.path), c.mtime).get("config", {}) for c in found]
    return models.Choice(found[0], "attention", describe_ensemble(configs), None, tuple(found))


@st.cache_resource(show_spinner="Joining the ensemble…", max_entries=4)
def _joined(key: tuple[tuple[str, float], ...]) -> LoadedModel:
    lms = [models.load_model(path, mtime) for path, mtime in key]
    return ensemble_of(lms, [Path(path).name for path, _ in key])


def load_lm(choice: models.Choice) -> LoadedModel | None:
    """The choice's model: one checkpoint (:func:`ui.common.widgets.load_lm`) or the ensemble of its members,
    or ``None`` after a one-line error."""
    if not choice.members:
        return W.load_lm(choice.ckpt)
    if any(W.load_lm(c) is None for c in choice.members):
        return None
    try:
        return _joined(tuple((str(c.path), c.mtime) for c in choice.members))
    except CheckpointError as err:  # EnsembleError: members that do not share vocabularies
        st.error(md(str(err)), icon=":material/error:")
        return None


def panel(lm: LoadedModel, trace: DecodeTrace, step: StepRecord | None, look: Look, nonce: str) -> None:
    """Each member's α row and its p of the written word beside the ensemble's, at the shown step."""
    if step is None or step.members is None:
        return
    names = [short_name(c) for c in lm.config.members]
    st.markdown(f"**The ensemble and its members at i = {step.i}** (writing “{md(step.token)}”)")
    spec = ev.members_chart(trace, step, names, look)
    wide = ev.chart_width(len(trace.src_tokens), look) > ev.FITS  # then a fixed height makes it scroll sideways
    with st.container(height=(len(names) + 1) * (look.font + 10) + 150 if wide else "content", border=False):
        st.vega_lite_chart(spec=spec, key=state.key(f"ens_{nonce}_{step.i}"), width="content")
    st.caption(md(ev.members_caption(step, names)) + " The ensemble's α row is the mean of the members' rows.")
