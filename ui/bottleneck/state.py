"""The bottleneck page's session state: the only module of the page and its package that touches
``st.session_state``. Every key starts with :data:`PREFIX`; :data:`KEYS` lists them all (widget keys, which are
the URL's query parameters, included; a family built at run time ends in ``*``).
"""

from __future__ import annotations

import streamlit as st

PREFIX = "bn_"
KEYS: frozenset[str] = frozenset({
    # widgets bound to the URL (their keys are the query parameters)
    "bn_model", "bn_app_rules", "bn_ablation", "bn_from", "bn_split", "bn_text", "bn_ref", "bn_len", "bn_var",
    "bn_per",
    # widgets not in the URL
    "bn_sweep", "bn_chart_*", "bn_dl_*", "bn_sweep_bleu", "bn_sweep_lp", "bn_sweep_table", "bn_summary", "bn_logp",
    # the page's own values
    "bn_default",  # the example sentence the model pair offered last run (an untouched text follows it)
})


def follow_default_text(default: str) -> bool:
    """Before the sentence box: whether an untouched example (still the last default) follows a new one (the
    pair's Multi30k or Europarl sentence); then the box is set to ``default`` here."""
    ss = st.session_state
    follow = ss.get("bn_text") == ss.get("bn_default", default) and default != ss.get("bn_default")
    if follow:
        ss["bn_text"] = default
    ss["bn_default"] = default
    return follow
