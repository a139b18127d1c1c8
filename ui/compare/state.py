"""The compare-attention page's session state (issue 49): its key prefix and every key the page and
``ui/compare/`` write or read.

The page keeps nothing of its own between reruns beyond its widgets, so no module of it touches
``st.session_state``; this module names the keys (a family built at run time as a pattern ending in ``*``).
The widgets bound to the URL use the same names as its query parameters (``cmp_models``, ``cmp_text``,
``cmp_ref``, ``cmp_app_rules``), so these names are part of every shared link. Keys that ui/common's helpers
derive from these (``_cmp_models_by_hand`` …) are ui/common's.
"""

from __future__ import annotations

PREFIX = "cmp_"
KEYS: frozenset[str] = frozenset({
    # controls bound to the URL
    "cmp_models", "cmp_app_rules", "cmp_text", "cmp_ref",
    # one heatmap per model (by its file name)
    "cmp_chart_*",
    # download buttons (ui.common.widgets.downloads numbers them): one set per model, and the summary's
    "cmp_dl_*",
})
