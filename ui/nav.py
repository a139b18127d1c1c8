"""The app's pages and navigation, shared by ``app.py`` and every page.

Streamlit also knows the ``pages/`` folder on its own: on a freshly started server, a deep link
such as ``/beam_explorer?…`` runs that page file directly with Streamlit's automatic menu, and
AppTest runs page files directly too. Each page therefore starts with :func:`inside_app`, which
hands such a run over to the app's own navigation (with that page as the default), so a shared
URL always opens the same app.
"""

from __future__ import annotations

import logging
import secrets
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import streamlit as st

ROOT = Path(__file__).resolve().parent.parent
PAGE_SPECS: tuple[tuple[str, str, str], ...] = (
    ("pages/stepper.py", "Step through decoding", ":material/footprint:"),
    ("pages/beam_explorer.py", "Beam search explorer", ":material/account_tree:"),
    ("pages/alignment_browser.py", "Alignment browser", ":material/grid_on:"),
    ("pages/bottleneck_compare.py", "Bottleneck side by side", ":material/compare_arrows:"),
    ("pages/length_quality.py", "Length vs quality", ":material/show_chart:"),
)
LOG = logging.getLogger("rnnsearch_explorer")
_run = threading.local()  # set while the app's navigation runs a page (one script thread per run)


def pages(default: str = PAGE_SPECS[0][0]) -> list[st.Page]:
    """The app's pages; ``default`` (a path of PAGE_SPECS) opens when the URL names no page."""
    return [st.Page(ROOT / path, title=title, icon=icon, default=path == default)
            for path, title, icon in PAGE_SPECS]


def run_app(default: str = PAGE_SPECS[0][0]) -> None:
    """Configure the app and run the page the URL names."""
    st.set_page_config(page_title="RNNsearch Explorer", page_icon=":material/translate:", layout="wide")
    page = st.navigation(pages(default))
    _run.inside = True
    try:
        with error_boundary(page.title):
            page.run()
    finally:
        _run.inside = False


@contextmanager
def error_boundary(where: str) -> Iterator[None]:
    """Show any error of a page as a short message, and log its traceback on the server only.

    Streamlit's own rerun/stop signals are ``BaseException``s and pass through untouched.
    """
    try:
        yield
    except Exception as err:
        ref = secrets.token_hex(4)
        LOG.error("page %r failed (reference %s)", where, ref, exc_info=err)
        st.error(f"Something went wrong while drawing this page ({type(err).__name__}). The details were "
                 f"logged on the server under reference {ref}. Try other settings or another sentence, "
                 "or reload the page.", icon=":material/error:")


def inside_app(page_file: str) -> bool:
    """True when the app's navigation is running this page; otherwise run the app (with this page
    as the default) and return False, and the caller draws nothing itself."""
    if getattr(_run, "inside", False):
        return True
    run_app(Path(page_file).resolve().relative_to(ROOT).as_posix())
    return False
