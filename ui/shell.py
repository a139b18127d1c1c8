"""What every page shares around its content: the page setup, the navigation and one error boundary.

The app is Streamlit's own multipage app: ``app.py`` is the first page (the stepper, at ``/``) and
each file in ``pages/`` is a page at ``/<file name>``, so a deep link such as
``/alignment_browser?al_pick=5`` opens that page on a freshly started server with its URL intact.
Streamlit's automatic menu is hidden (``client.showSidebarNavigation = false``) in favour of
:func:`navigation`, which names the pages in words. Every page file is::

    from ui import shell

    with shell.page("Alignment browser"):  # navigation first, then the page's imports, then the setup
        import streamlit as st
        from ui import widgets as W

    def main() -> None:
        ...  # the page's layout

    with shell.error_boundary("Alignment browser"):
        main()

so that a failure anywhere, an import included (a package missing on a new machine), shows the
boundary's short message below the navigation instead of Streamlit's own error box.
"""

from __future__ import annotations

import functools
import logging
import secrets
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import ParamSpec

import streamlit as st
from streamlit.errors import StreamlitPageNotFoundError

LOG = logging.getLogger("rnnsearch_explorer")
P = ParamSpec("P")
# The tab icon is a file the server sends itself: a ``:material/…:`` icon would be fetched from a
# font CDN, which an offline classroom cannot reach.
ICON = Path(__file__).resolve().parent / "icon.png"
PAGES: tuple[tuple[str, str, str], ...] = (  # (file, label, icon)
    ("app.py", "Step through decoding", ":material/footprint:"),
    ("pages/lesson.py", "Lesson", ":material/school:"),
    ("pages/beam_explorer.py", "Beam search explorer", ":material/account_tree:"),
    ("pages/alignment_browser.py", "Alignment browser", ":material/grid_on:"),
    ("pages/watch_it_learn.py", "Watch it learn", ":material/movie:"),
    ("pages/bottleneck_compare.py", "Bottleneck side by side", ":material/compare_arrows:"),
    ("pages/compare_attention.py", "Compare attention", ":material/join_inner:"),
    ("pages/length_quality.py", "Length vs quality", ":material/show_chart:"),
    ("pages/paired_compare.py", "Is A really better than B?", ":material/balance:"),
    ("pages/explanation.py", "Is attention an explanation?", ":material/psychology_alt:"),
)

# The main menu's "About": what the app is and whose data its models learned from. Tatoeba's licence
# (CC-BY 2.0 FR) asks for this credit wherever a model trained on it ships (the fusion LM, the
# large-vocabulary timelines).
ABOUT = (
    "**RNNsearch Explorer** shows how neural machine translation with attention works (Bahdanau, Cho & "
    "Bengio, ICLR 2015), on models trained for it.\n\n"
    "Data the shipped models and timelines were trained or scored on: Multi30k (Elliott et al., 2016); "
    "Europarl v7 (Koehn, 2005) and the WMT news test sets (statmt.org); the English–French Hansards "
    "gold alignments (Mihalcea & Pedersen, 2003); everyday sentences from www.manythings.org/anki and "
    "tatoeba.org (Tatoeba, CC-BY 2.0 FR).")

# Readable from the back row (issue 21): Streamlit draws captions, a slider's end values and widget
# help in a faded grey of about 3.9:1; these rules keep their colour but at 4.5:1 or more, in the
# light and the dark theme alike (an opacity over the text's own colour, not a fixed grey), and no
# text under 14 px. tests/test_browser_readable.py measures every page.
READABLE_CSS = (
    "<style>"
    '[data-testid="stCaptionContainer"],[data-testid="stWidgetLabel"] [data-testid="stCaptionContainer"]'
    "{color:inherit!important;opacity:.82}"
    '[data-testid="stSliderTickBarMin"],[data-testid="stSliderTickBarMax"]{font-size:.875rem;color:inherit;opacity:.82}'
    '[data-testid="stMetricLabel"] p,[data-testid="stMetricDelta"]{font-size:.875rem}'
    "kbd{color:inherit!important;background:transparent!important;border:1px solid currentColor!important;"
    "opacity:1!important;"
    "border-radius:4px;padding:0 .3em}"
    # the page's top bar only as high as its buttons (2.75rem, not 3.75rem): with the title hidden
    # (presentation modes) a taller bar hid the first row of widget labels
    '[data-testid="stHeader"]{height:2.75rem;min-height:2.75rem}'
    # a toggle's or a popover button's words wrap in a narrow column (150 % zoom), never "Freeze…"
    '[data-testid="stCheckbox"] [data-testid="stMarkdownContainer"],'
    '[data-testid="stPopover"] button [data-testid="stMarkdownContainer"],'
    '[data-testid="stCheckbox"] [data-testid="stMarkdownContainer"] p,'
    '[data-testid="stPopover"] button [data-testid="stMarkdownContainer"] p'
    "{white-space:normal!important;overflow:visible!important;text-overflow:clip!important}"
    # pills wrap onto a second line in a narrow column rather than scroll their last options out of view
    '[data-testid="stButtonGroup"] div:has(> button){flex-wrap:wrap}'
    "</style>"
)


def navigation() -> None:
    """Links to every page, at the top of the sidebar.

    A page run on its own (``streamlit run pages/x.py``, or a test) knows no other page, so it
    draws no links.
    """
    with st.sidebar:
        st.markdown("**RNNsearch Explorer**")
        try:
            for file, label, icon in PAGES:
                st.page_link(file, label=label, icon=icon)
        except StreamlitPageNotFoundError:
            pass
        st.divider()


def report(where: str, err: Exception) -> None:
    """Show ``err`` as the boundary's short message and log its traceback on the server only."""
    ref = secrets.token_hex(4)
    LOG.error("page %r failed (reference %s)", where, ref, exc_info=err)
    if isinstance(err, ImportError):  # a module name, never user text
        st.error(f"This page cannot start: the server lacks the Python module “{err.name or '?'}”. Install the "
                 f"project's requirements (pip install -r requirements.txt) and restart it. Reference {ref}.",
                 icon=":material/error:")
        return
    st.error(f"Something went wrong while drawing this page ({type(err).__name__}). The details were "
             f"logged on the server under reference {ref}. Try other settings or another sentence, "
             "or reload the page.", icon=":material/error:")


@contextmanager
def error_boundary(where: str) -> Iterator[None]:
    """Show any error of a page as a short message, and log its traceback on the server only.

    Streamlit's own rerun/stop signals are ``BaseException``s and pass through untouched.
    """
    try:
        yield
    except Exception as err:
        report(where, err)


def guarded(where: str, fn: Callable[P, None]) -> Callable[P, None]:
    """``fn`` run inside the error boundary.

    For a fragment (``st.fragment(guarded("…", view))``): a fragment's own reruns (a click inside it,
    a play timer) run the fragment alone, outside the page's ``with`` block and its boundary.
    """

    @functools.wraps(fn)
    def run(*args: P.args, **kwargs: P.kwargs) -> None:
        with error_boundary(where):
            fn(*args, **kwargs)

    return run


def configure(title: str, sidebar: str = "auto") -> None:
    """The page's one ``st.set_page_config`` (tab title, the app's own icon, wide layout, sidebar
    state, the menu's :data:`ABOUT`) and the style sheet that keeps every text readable on a projector
    (:data:`READABLE_CSS`)."""
    st.set_page_config(page_title=f"{title} · RNNsearch Explorer", page_icon=str(ICON), layout="wide",
                       initial_sidebar_state=sidebar, menu_items={"About": ABOUT})
    st.html(READABLE_CSS)


@contextmanager
def page(title: str, sidebar: str | Callable[[], str] = "auto") -> Iterator[None]:
    """Draw the navigation, run the block (the page's imports) inside the boundary, then set the page up.

    If an import fails, the message shows below the navigation and the run stops there, so nothing
    of the page runs half set up. ``sidebar`` may be a function, called after the imports (it may use
    them): the stepper collapses the sidebar in presentation mode. The page is configured once, after
    the block, because a second ``st.set_page_config`` does not collapse a sidebar already shown.
    """
    navigation()
    try:
        yield
        state = sidebar() if callable(sidebar) else sidebar
    except Exception as err:
        configure(title)
        report(title, err)
        st.stop()
    configure(title, state)
