"""RNNsearch Explorer: an interactive look at neural machine translation with attention.

Run with ``streamlit run app.py``. Pages are listed in :data:`PAGES`; add a page by adding its
file under ``pages/`` and an ``st.Page`` entry here. Checkpoints are read from ``checkpoints/``
or from the folder named by the environment variable ``RNNSEARCH_CHECKPOINTS``.
"""

from __future__ import annotations

import streamlit as st

PAGES: list[st.Page] = [
    st.Page("pages/stepper.py", title="Step through decoding", icon=":material/footprint:", default=True),
    st.Page("pages/beam_explorer.py", title="Beam search explorer", icon=":material/account_tree:"),
    st.Page("pages/alignment_browser.py", title="Alignment browser", icon=":material/grid_on:"),
    st.Page("pages/bottleneck_compare.py", title="Bottleneck side by side", icon=":material/compare_arrows:"),
    st.Page("pages/length_quality.py", title="Length vs quality", icon=":material/show_chart:"),
]


def main() -> None:
    """Configure the app and run the selected page."""
    st.set_page_config(page_title="RNNsearch Explorer", page_icon=":material/translate:", layout="wide")
    page = st.navigation(PAGES)
    page.run()


main()
