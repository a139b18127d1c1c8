"""The beam search explorer's session state: the one module of ``pages/beam_explorer.py`` and ``ui/beam/`` that
touches ``st.session_state`` (issue 49).

Every key the page and its package write or read starts with :data:`PREFIX` and is listed in :data:`KEYS`
(a family built at run time as a pattern ending in ``*``). The widgets bound to the URL use the same names as
its query parameters (``bx_beam``, ``bx_text`` …), so these names are part of every shared link. Keys that
ui/common's helpers derive from these (``_bx_model_by_hand`` …) are ui/common's.
"""

from __future__ import annotations

import streamlit as st

PREFIX = "bx_"
KEYS: frozenset[str] = frozenset({
    # controls bound to the URL
    "bx_model", "bx_app_rules", "bx_beam", "bx_norm", "bx_alpha", "bx_nbest", "bx_text", "bx_tab",
    "bx_pruned", "bx_layout", "bx_step", "bx_hyp", "bx_pieces",
    # tables
    "bx_step_table", "bx_nbest_table", "bx_rerank_table",
    # download buttons (ui.common.widgets.downloads numbers them)
    "bx_dl_tree_*", "bx_dl_step_*", "bx_dl_nbest_*", "bx_dl_norm_*",
})


def step_set(last: int) -> None:
    """Bring the "Step i" slider within ``0 … last`` (a shorter search than the one it was set on)."""
    ss = st.session_state
    if isinstance(ss.get("bx_step"), int) and ss["bx_step"] > last:
        ss["bx_step"] = last
