"""One rule for a sentence the visitor types, on every page: it goes to the pair trained for everyday sentences.

Issue 34 item 4 (the stepper's own rule is :func:`ui.stepper.controller.on_text`): a page's source box calls
:func:`on_typed` on change, its model picker :func:`hand_picked`; a model chosen by hand, or named in the URL
when the page opened, stays. Per picker ``key`` the session keeps ``{key}_by_hand`` (the visitor or the URL
chose the model) and, while the switch holds, ``{key}_typed`` (the value it replaced).
"""

from __future__ import annotations

from collections.abc import Callable, Collection
from typing import Any

import streamlit as st

from ui.common import models, user_models
from ui.figures.common import md

TYPED_NOTE = ("Your own sentence: translated by the pair trained for everyday sentences ({pair}); "
              "pick another {what}.")


def pair_name(pair: models.ModelGroup, current: Any) -> str:
    """A pair picker's value (:func:`group_picker`) for a sentence of one's own."""
    return pair.name


def search_file(pair: models.ModelGroup, current: Any) -> str | None:
    """A checkpoint picker's value (:func:`checkpoint_picker`) for a sentence of one's own: the RNNsearch."""
    return pair.search.name if pair.search is not None else None


def hand_picked(key: str) -> Callable[[], None]:
    """A model picker's ``on_change`` (its key ``key``): a choice by hand, which typed sentences keep
    (:func:`on_typed`); a model named by the URL when the session began counts as one."""
    ss = st.session_state
    if key not in ss:  # the picker's first run on this visit of the page (Streamlit drops a page's widgets on leaving)
        ss[f"{key}_by_hand"] = key in st.query_params
        ss.pop(f"{key}_typed", None)

    def chosen() -> None:
        ss[f"{key}_by_hand"] = True
        ss.pop(f"{key}_typed", None)  # the switch is over; the caption goes
    return chosen


def undo_typed(picker: str) -> None:
    """The picker back where a sentence of one's own found it (the page's example or a preset again)."""
    if f"{picker}_typed" in st.session_state:
        st.session_state[picker] = st.session_state.pop(f"{picker}_typed")


def on_typed(picker: str, text: str, examples: Collection[str], value: Callable[[models.ModelGroup, Any], Any]
             ) -> Callable[[], None]:
    """The ``on_change`` of a page's source box ``text``, every page's one rule: a sentence of one's own (not
    one of ``examples``) sets the picker ``picker`` to ``value(pair, its value)``, ``pair`` being the one of
    :func:`ui.common.models.typed_group`, unless the model was chosen by hand or the folder lacks the pair; an example
    typed back undoes it."""
    def changed() -> None:
        ss, groups = st.session_state, user_models.all_groups()
        typed = (ss.get(text) or "").strip()
        name = models.typed_group(groups, typed)
        if ss.get(f"{picker}_by_hand") or not typed or name is None:
            return
        if typed in {e.strip() for e in examples}:
            undo_typed(picker)
            return
        new = value(next(g for g in groups if g.name == name), ss.get(picker))
        if new is not None and new != ss.get(picker):
            ss.setdefault(f"{picker}_typed", ss.get(picker))
            ss[picker], ss[f"{picker}_typed_to"] = new, name
    return changed


def typed_note(picker: str, what: str = "pair in the sidebar", more: str = "") -> None:
    """The caption saying that a sentence of one's own moved the picker (:func:`on_typed`), while it holds."""
    if f"{picker}_typed" in st.session_state:
        pair = st.session_state.get(f"{picker}_typed_to", models.TYPED_GROUP)
        st.caption(md(TYPED_NOTE.format(pair=pair, what=what) + (f" {more}" if more else "")))
