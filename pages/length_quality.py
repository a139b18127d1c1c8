"""Length vs quality: does BLEU collapse as sentences get longer? (Bahdanau et al. 2015, Fig. 2)

Reads the committed results files (``checkpoints/*.results.json``): BLEU per source-length bucket
of each model with bucket sizes and confidence intervals, the Table 1 reproduction beside the
paper's numbers where the results have it, and validation-BLEU training curves. "Recompute"
re-scores a chosen checkpoint on a held-out split of the configured data folders (a button press,
with a progress bar; results are shared by every session of the server) and adds its curve to the
top chart and its row to Table 1.

Every control is bound to a URL query parameter (``lq_*``; ``lq_app_rules``: an imported model is scored by this
app's search rules instead of its toolkit's); the button is not. The scoring is in :mod:`ui.length.jobs`, the
panels in :mod:`ui.length`, the session state in :mod:`ui.length.state`.
"""

from __future__ import annotations

from ui.common import shell

shell.framed()  # a page Streamlit started on its own (a fresh server's first request) runs in the frame

import streamlit as st

from ui.common import models
from ui.common import widgets as W
from ui.figures.length import load_results, opening_results
from ui.length import state
from ui.length.recompute_panel import recompute_section
from ui.length.results_panel import results_section

BIND = W.BIND


def main() -> None:
    """Build the page."""
    st.title("Length vs quality")
    st.caption("The paper's central claim: as source sentences get longer, the fixed-vector RNNencdec's "
               "BLEU collapses while RNNsearch, which reads a fresh context c_i for every word, holds up.")
    all_results = load_results(sorted(models.checkpoint_dir().glob("*.results.json")))
    names = list(all_results)
    recomputed = state.recomputed()
    top = st.container()  # drawn after Recompute, so a curve recomputed now shows at once
    recompute_section(names, all_results, recomputed)
    with top:
        if not names:
            st.info("No results files yet: ship a model with `python -m nmt export` or run `python -m nmt experiment` "
                    "(see README), then reload.")
        name = (st.selectbox("Results file", names, index=opening_results(all_results), key="lq_results", bind=BIND)
                if names else None)
        name = name if name in names else (names[0] if names else "")
        if names or recomputed:
            results_section(name, all_results.get(name, {}), recomputed)


main()
