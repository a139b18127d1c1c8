"""A page of the app opened in AppTest as a shared link opens it (tests of pages/*.py)."""

from __future__ import annotations

from typing import Any

from streamlit.testing.v1 import AppTest

from tests.conftest import ROOT, plain

TIMEOUT = 300  # seconds: a first run loads the shipped models


def page_file(path: str) -> str:
    """The file that draws the page at the address's ``path`` ("/" or "/<page>")."""
    return "app.py" if path == "/" else f"pages{path}.py"


def open_link(path: str, timeout: float = TIMEOUT, **params: Any) -> AppTest:
    """A fresh session opened at the address ``path`` with the URL's query parameters ``params``, run once:
    no exception and no error box (the page's boundary message)."""
    at = AppTest.from_file(str(ROOT / page_file(path)), default_timeout=timeout)
    at.query_params.update(params)
    at.run()
    assert not at.exception and not at.error, (path, [e.value for e in [*at.exception, *at.error]])
    return at


def open_page(page: str, **params: Any) -> AppTest:
    """``pages/<page>`` opened as :func:`open_link` opens its address."""
    return open_link("/" + page.removesuffix(".py"), **params)


def shown(at: AppTest) -> list[str]:
    """The texts a view shows: titles, headings, Markdown, captions, alerts and the labels of its controls."""
    texts = [e.value for kind in ("title", "header", "subheader", "markdown", "caption", "info", "warning")
             for e in getattr(at, kind)]
    texts += [w.label for kind in ("button", "toggle", "slider", "select_slider", "selectbox", "radio", "text_area")
              for w in getattr(at, kind)]
    return [plain(str(t)) for t in texts]
