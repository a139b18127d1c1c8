"""The "Is attention an explanation?" page's session state: the one module of ``pages/explanation.py`` and
``ui/explanation/`` that touches ``st.session_state`` (issue 49).

Every key the page and its package write or read starts with :data:`PREFIX` and is listed in :data:`KEYS`
(a family built at run time as a pattern ending in ``*``). The widgets bound to the URL use the same names as
its query parameters (``ex_text``, ``ex_step`` …), so these names are part of every shared link. Keys that
ui/common's helpers derive from these (``_ex_model_by_hand``, ``_ex_one_done`` …) are ui/common's.
"""

from __future__ import annotations

import streamlit as st

PREFIX = "ex_"
KEYS: frozenset[str] = frozenset({
    # controls bound to the URL
    "ex_model", "ex_app_rules", "ex_preset", "ex_text", "ex_ref", "ex_step", "ex_tab", "ex_method",
    "ex_edit", "ex_every", "ex_j", "ex_from", "ex_seed",
    # the page's own memory: the translation box stays open once it has held a translation
    "ex_ref_used",
    # buttons (ui.common.widgets.run_button)
    "ex_one", "ex_all", "ex_tests",
    # charts and tables
    "ex_bars", "ex_agree", "ex_agree_all", "ex_matrix_*", "ex_surgery_table", "ex_surgery_original",
    "ex_surgery_edited", "ex_tvd", "ex_adv",
    # download buttons (ui.common.widgets.downloads numbers them)
    "ex_dl_step_*", "ex_dl_all_*", "ex_dl_surgery_*", "ex_dl_debate_*",
})


def preset_name() -> str | None:
    """The sentence picker's choice (a preset's name or "Your own sentence"), None before it is drawn."""
    return st.session_state.get("ex_preset")


def clear_reference() -> None:
    """Empty the translation box (a new source sentence: the translation typed for the old one goes)."""
    st.session_state["ex_ref"] = ""


def load_preset(step: int, edit: str, j: int | None) -> None:
    """Set the target word, the α edit and (where the edit names one) the source word a preset chose."""
    st.session_state["ex_step"] = step
    st.session_state["ex_edit"] = edit
    if j is not None:
        st.session_state["ex_j"] = j


def reference_box_open(typed_or_linked: bool) -> bool:
    """Whether the translation box is drawn open: once it has held a translation (typed here, or held by a shared
    link: ``typed_or_linked``) it stays open for this session."""
    if typed_or_linked or st.session_state.get("ex_ref"):
        st.session_state["ex_ref_used"] = True
    return bool(st.session_state.get("ex_ref_used"))


def _clamped(key: str, last: int) -> bool:
    """Whether ``key`` holds a value; an integer past ``last`` is brought back to ``last`` (a shorter decoding
    than the one the widget was set on)."""
    ss = st.session_state
    if isinstance(ss.get(key), int) and ss[key] > last:
        ss[key] = last
    return key in ss


def step_set(last: int) -> bool:
    """Whether the target-word slider holds a value (brought within ``0 … last``), so no default is given."""
    return _clamped("ex_step", last)


def from_step_set(last: int) -> bool:
    """Whether the copy edit's "From step" holds a value (brought within ``0 … last``)."""
    return _clamped("ex_from", last)


def edit_set() -> bool:
    """Whether the α edit radio holds a value (a preset's callback may have set it): then no default is given,
    else Streamlit warns that it was set twice."""
    return "ex_edit" in st.session_state


def source_word_set() -> bool:
    """Whether the source-word pills hold a value (a preset's callback may have set it)."""
    return "ex_j" in st.session_state
