"""RNNsearch Explorer: an interactive look at neural machine translation with attention.

Run with ``streamlit run app.py``. The pages are listed in :data:`ui.nav.PAGE_SPECS`; add a page
by adding its file under ``pages/`` (ending with ``if nav.inside_app(__file__): main()``) and an
entry there. Checkpoints are read from ``checkpoints/`` or from the folder named by the
environment variable ``RNNSEARCH_CHECKPOINTS``.
"""

from __future__ import annotations

from ui import nav

nav.run_app()
