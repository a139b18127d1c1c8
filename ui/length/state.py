"""Length vs quality's session state: the only module of the page and its package that touches
``st.session_state``. Every key starts with :data:`PREFIX`; :data:`KEYS` lists them all (widget keys, which are
the URL's query parameters, included).
"""

from __future__ import annotations

from typing import Any

import streamlit as st

PREFIX = "lq_"
KEYS: frozenset[str] = frozenset({
    # widgets bound to the URL (their keys are the query parameters)
    "lq_results", "lq_test", "lq_dec", "lq_ckpt", "lq_app_rules", "lq_rtest", "lq_limit", "lq_beam",
    # widgets not in the URL
    "lq_go", "lq_length_fig", "lq_curve_fig", "lq_dl_csv", "lq_dl_html",
    # the page's own values
    "lq_recomputed",  # this session's recomputed scores: "checkpoint|test set|limit|beam|rules" -> rows, Table 1
})


def recomputed() -> dict[str, Any]:
    """This session's recomputed scores (filled by Recompute, read by the top chart and Table 1)."""
    return st.session_state.setdefault("lq_recomputed", {})


def show_at_top(test: str, decoding: str | None) -> None:
    """The top chart's test set and decoding become those just recomputed (before their pickers are drawn)."""
    st.session_state["lq_test"], st.session_state["lq_dec"] = test, decoding
