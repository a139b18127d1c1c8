"""What every page shares around its content: the page setup, the navigation and one error boundary.

``app.py`` is the frame: it lists every page once (:class:`Page`: its file, title, icon, address and sidebar)
and hands the list to :func:`frame`, which calls ``st.navigation`` (its own menu hidden), draws
:func:`menu` (the pages in words, at the top of the sidebar), configures the page once (:func:`configure`)
and runs it inside :func:`error_boundary`. A page file is then only its layout::

    import streamlit as st
    from ui.common import widgets as W

    def main() -> None:
        ...  # the page's layout

    main()

A failure anywhere in a page, an import included (a package missing on a new machine), shows the
boundary's short message below the navigation instead of Streamlit's own error box. Each page keeps its
address: the stepper at ``/``, every other page at ``/<file name>``, so a deep link such as
``/alignment_browser?al_pick=5`` opens that page on a freshly started server with its URL intact.
"""

from __future__ import annotations

import functools
import logging
import runpy
import secrets
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import ParamSpec

import streamlit as st

LOG = logging.getLogger("rnnsearch_explorer")
P = ParamSpec("P")
# The tab icon is a file the server sends itself: a ``:material/…:`` icon would be fetched from a
# font CDN, which an offline classroom cannot reach.
ICON = Path(__file__).resolve().parent / "icon.png"

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


@dataclass(frozen=True)
class Page:
    """One page of the app, as the frame lists it.

    ``source`` is the page's file (relative to ``app.py``) or a function; ``url`` its address (``None``: the
    file's name; the default page answers at ``/``); ``menu`` whether :func:`menu` links it (a phone's page
    is opened from a code, not from the menu); ``sidebar`` the sidebar's state when the page opens, or a
    function saying it (presentation modes collapse it).
    """

    source: str | Callable[[], None]
    title: str
    icon: str
    url: str | None = None
    default: bool = False
    menu: bool = True
    sidebar: str | Callable[[], str] = "auto"

    @property
    def address(self) -> str:
        """The page's path in the browser: ``/`` for the default page, else ``/<url>`` (its file's name)."""
        if self.default:
            return "/"
        return "/" + (self.url if self.url is not None else Path(str(self.source)).stem)

    def st_page(self) -> st.Page:
        """Streamlit's page object for ``st.navigation``."""
        return st.Page(self.source, title=self.title, icon=self.icon, url_path=self.url, default=self.default)


def menu(pages: Sequence[Page], links: Sequence[st.Page]) -> None:
    """Links to every page of the menu, in words, at the top of the sidebar."""
    with st.sidebar:
        st.markdown("**RNNsearch Explorer**")
        for entry, link in zip(pages, links, strict=True):
            if entry.menu:
                st.page_link(link, label=entry.title, icon=entry.icon)
        st.divider()


def framed() -> None:
    """Run this page inside the frame when Streamlit started it on its own; the first call of every page file.

    With a ``pages/`` folder beside ``app.py``, Streamlit runs the file a request names straight away, as its
    first multipage apps did, until some run has called ``st.navigation``: a fresh server's first request
    for ``/lesson`` (and, in AppTest, every run) would draw the page without the menu, its configuration or
    the error boundary. Then this runs the app's script (``app.py``, the frame), which runs the page again
    inside it, and stops the bare run; inside the frame it does nothing.
    """
    from streamlit.runtime.pages_manager import PagesManager
    from streamlit.runtime.scriptrunner import get_script_run_ctx

    ctx = get_script_run_ctx()
    if ctx is None or not PagesManager.uses_pages_directory:
        return
    # the app's own script (app.py) run as Streamlit runs it: its st.navigation ends the folder's mode for
    # every later run too, and runs this page inside the frame
    runpy.run_path(str(ctx.pages_manager.main_script_path), run_name="__main__")
    st.stop()


def frame(pages: Sequence[Page]) -> None:
    """Run the page the address names, inside the app's frame: navigation, configuration, error boundary.

    The menu is drawn first, so that it shows whatever happens next; the sidebar's state is decided
    before the page runs, because a second ``st.set_page_config`` does not collapse a sidebar already shown.
    """
    links = [p.st_page() for p in pages]
    current = st.navigation(links, position="hidden")
    entry = next(p for p, link in zip(pages, links, strict=True) if link is current)
    menu(pages, links)
    try:
        state = entry.sidebar() if callable(entry.sidebar) else entry.sidebar
    except Exception as err:
        configure(entry.title)
        report(entry.title, err)
        return
    configure(entry.title, state)
    with error_boundary(entry.title):
        current.run()
