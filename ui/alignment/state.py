"""The alignment browser's session state: the only module of the page and its package that touches
``st.session_state``. Every key starts with :data:`PREFIX`; :data:`KEYS` lists them all (widget keys, which are
the URL's query parameters, included; a family built at run time ends in ``*``).
"""

from __future__ import annotations

from collections.abc import Sequence

import streamlit as st

from ui.figures.alignment import selected_row

PREFIX = "al_"
KEYS: frozenset[str] = frozenset({
    # widgets bound to the URL (their keys are the query parameters)
    "al_model", "al_app_rules", "al_from", "al_split", "al_upload", "al_len", "al_q", "al_n", "al_pick", "al_gold",
    "al_argmax", "al_reverse",
    # widgets not in the URL
    "al_paste", "al_file_tsv", "al_file_src", "al_file_ref", "al_go", "al_aer", "al_table", "al_chart_own",
    "al_chart_forced", "al_dl_*",
    # the page's own values
    "al_table_ids",  # corpus line of each row of the table, in its order (a clicked row -> its pair)
    "al_pick_for",  # the pairs (their name) the picked pair number belongs to
})


def on_table_select() -> None:
    """A row clicked in the table becomes the chosen pair (the table's ``on_select``)."""
    ss = st.session_state
    row = selected_row(ss.get("al_table"))
    ids = ss.get("al_table_ids") or []
    if row is not None and 0 <= row < len(ids):
        ss["al_pick"] = int(ids[row])


def set_table_ids(ids: Sequence[int]) -> None:
    """Remember the corpus line of each row of the table as drawn (for :func:`on_table_select`)."""
    st.session_state["al_table_ids"] = [int(k) for k in ids]


def keep_pick_in(name: str, idx: Sequence[int]) -> None:
    """Before the pair picker: another set of pairs (``name``), or a pick the filters left out, starts at the
    first pair ``idx`` shows (a pair number of the old set means nothing here)."""
    ss = st.session_state
    if ss.get("al_pick_for", name) != name or ("al_pick" in ss and ss["al_pick"] not in idx):
        ss["al_pick"] = idx[0]
    ss["al_pick_for"] = name
