"""Whose search rules decode an imported model on a page: its toolkit's (the default) or this app's.

A model imported from JoeyNMT or OpenNMT-py carries its toolkit's search rules (:mod:`nmt.decoding.toolkit`);
every page decodes it by them unless the reader switches to this app's rules. Under a model picker
:func:`toggle` shows the one-line note saying which rules decode it and the switch (bound to the URL, so a
shared link keeps it; :func:`toggle_each` the same for a picker of several models, one switch for all);
:func:`toolkit_rules` is what the page's decoding jobs then ask (:func:`ui.common.widgets.job_for`).
This app's own models show neither and have no toolkit rules to follow.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import streamlit as st

from nmt.decoding.toolkit import SearchRules
from ui.common import models, state
from ui.figures.common import md

SWITCH = "This app's search rules"
APP_NOTE = "Decodes by this app's search rules."
_CHOICES = state.RULES_OF  # session state: checkpoint path → True where the reader switched to this app's rules


def rules(ckpt: models.CheckpointInfo) -> SearchRules | None:
    """The toolkit rules ``ckpt`` records (read from its metadata only), None for this app's own models."""
    record = models.read_meta(str(ckpt.path), ckpt.mtime, ("search_rules",)).get("search_rules")
    try:
        return SearchRules.from_meta(record) if isinstance(record, dict) else None
    except (TypeError, ValueError):
        return None


def _switch(key: str, box: Any) -> bool:
    """The switch to this app's rules under a picker (``box``), bound to the URL as ``key``: True when on."""
    return bool(box.toggle(SWITCH, key=key, bind="query-params",
                           help="Decode this imported model by this app's length limit and beam instead of its "
                                "toolkit's (python -m nmt translate --app-rules does the same)."))


def _remember(ckpt: models.CheckpointInfo, app: bool) -> None:
    """Record for this session's decoding jobs whether ``ckpt`` decodes by this app's rules (``app``)."""
    st.session_state.setdefault(_CHOICES, {})[str(ckpt.path)] = app


def toggle(ckpt: models.CheckpointInfo, key: str, box: Any) -> SearchRules | None:
    """Under a picker (``box``): for an imported model, the note saying which rules decode it and the switch to
    this app's rules (widget ``key``, in the URL). The rules the page decodes ``ckpt`` by: its toolkit's, or None
    (this app's, for its own models or after the switch)."""
    found = rules(ckpt)
    if found is None:
        return None
    app = _switch(key, box)
    box.caption(APP_NOTE if app else md(models.search_note(ckpt)))
    _remember(ckpt, app)
    return None if app else found


def toggle_each(chosen: Mapping[str, models.CheckpointInfo], key: str, box: Any) -> None:
    """Under a picker of several models (``chosen``, by label): when any is imported, one switch to this app's
    rules for all of them (widget ``key``, in the URL) and a note per imported model saying which rules decode it."""
    imported = {label: c for label, c in chosen.items() if rules(c) is not None}
    if not imported:
        return
    app = _switch(key, box)
    for label, ckpt in imported.items():
        box.caption(md(f"{label}: ") + (APP_NOTE if app else md(models.search_note(ckpt))))
        _remember(ckpt, app)


def toolkit_rules(ckpt: models.CheckpointInfo) -> bool:
    """Whether this session decodes ``ckpt`` by its toolkit's rules (True unless a picker's switch said not)."""
    return not st.session_state.get(_CHOICES, {}).get(str(ckpt.path), False)


def note(ckpt: models.CheckpointInfo) -> str:
    """For a page with no switch of its own (the lesson): the line saying which rules this session decodes
    ``ckpt`` by (its toolkit's, or this app's after a switch on another page); "" for this app's own models."""
    if rules(ckpt) is None:
        return ""
    return APP_NOTE if not toolkit_rules(ckpt) else md(models.search_note(ckpt))


def ranked_as(rules: SearchRules) -> str:
    """How the toolkit's beam ends and ranks hypotheses, in one line (under a beam's disabled normalisation)."""
    penalty = {"none": "its raw log p", "gnmt": f"log p / ((5 + |Y|) / 6)^{rules.alpha:g} (GNMT)",
               "avg": f"log p / (|Y| + 1)^{rules.alpha:g} (its avg penalty, <s> counted)"}[rules.length_penalty]
    ends = ("when every slot has finished (finished rows stay in the beam)" if rules.beam == "joeynmt" else
            "when the best row writes </s> (a finished row leaves the beam)")
    return md(f"Searched as {rules.toolkit} searches: each hypothesis ranked by {penalty}; the search ends {ends}. "
              f"“{SWITCH}” under the model picker uses this app's beam and settings.")
