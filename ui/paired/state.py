"""The paired page's session state ("Is A really better than B?"): the only module of the page and its package
that touches ``st.session_state``. Every key starts with :data:`PREFIX`; :data:`KEYS` lists them all (widget
keys, which are the URL's query parameters, included; a family built at run time ends in ``*``).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import streamlit as st

from ui.paired.views import picked_line

PREFIX = "pr_"
KEYS: frozenset[str] = frozenset({
    # widgets bound to the URL (their keys are the query parameters)
    "pr_a", "pr_b", "pr_a_app_rules", "pr_b_app_rules", "pr_split", "pr_limit", "pr_dec", "pr_row",
    # widgets not in the URL
    "pr_go", "pr_stop", "pr_alpha_go", "pr_table", "pr_by_freq", "pr_by_third", "pr_ng_*", "pr_alpha_rows",
    "pr_alpha_words", "pr_alpha_diff", "pr_chart_*",
    "pr_dl*", "pr_words_dl*",  # download buttons: ui.common.widgets.downloads keys each <key>_<n>
    # the page's own values
    "pr_split_default",  # the test set the models' corpus chose last run (an untouched picker follows it)
    "pr_stopped",  # the settings (a run's token) whose run Stop ended
    "pr_table_lines",  # the test-set line of each row of the sentence table, in its order
})


def follow_default_split(default: str) -> None:
    """Before the test-set picker: an untouched test set (still the last default) follows a new default (the
    models' corpus, Europarl's or Multi30k's); one picked by hand stays."""
    ss = st.session_state
    if ss.get("pr_split") is not None and ss.get("pr_split") == ss.get("pr_split_default") != default:
        ss["pr_split"] = default
    ss["pr_split_default"] = default


def seed_limit(n: int) -> None:
    """On the session's first run only: the Sentences picker starts at ``n`` (a number written in the URL)."""
    st.session_state.setdefault("pr_limit", n)


def stop(token: str) -> None:
    """The Stop button: this run's settings are marked stopped (the rerun it causes ends the running script
    between two chunks, every finished chunk kept)."""
    st.session_state["pr_stopped"] = token


def stopped(token: str) -> bool:
    """Whether Stop ended the run of the settings ``token``."""
    return st.session_state.get("pr_stopped") == token


def clear_stop() -> None:
    """Run pressed: a run stopped before goes on."""
    st.session_state.pop("pr_stopped", None)


def set_table_lines(lines: Sequence[int]) -> None:
    """Remember the test-set line of each row of the sentence table as drawn (for :func:`on_pick`)."""
    st.session_state["pr_table_lines"] = [int(x) for x in lines]


def on_pick() -> None:
    """A row clicked in the sentence table becomes the sentence shown below (and in the URL)."""
    ss = st.session_state
    line = picked_line(ss.get("pr_table"), ss.get("pr_table_lines") or [])
    if line is not None:
        ss["pr_row"] = line


def keep_row_in(lines: Sequence[int]) -> None:
    """Before the line picker: a line of another comparison's table means nothing here."""
    ss = st.session_state
    if ss.get("pr_row") is not None and ss["pr_row"] not in lines:
        ss["pr_row"] = None


def ngram_selection(side: str) -> Any:
    """The selection of the n-gram table of ``side`` ("b_not_a" or "a_not_b"), as Streamlit keeps it."""
    return st.session_state.get(f"pr_ng_{side}")
