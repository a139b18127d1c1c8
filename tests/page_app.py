"""A page of the app opened in AppTest as a shared link opens it: through the frame, ``app.py``
(tests of pages/*.py)."""

from __future__ import annotations

import html
import re
from typing import Any

from streamlit.testing.v1 import AppTest

from tests.conftest import ROOT, plain

TIMEOUT = 300  # seconds: a first run loads the shipped models


def page_file(path: str) -> str:
    """The file that draws the page at the address's ``path`` ("/" or "/<page>")."""
    return "pages/stepper.py" if path == "/" else f"pages{path}.py"


def app_at(page: str, timeout: float = TIMEOUT) -> AppTest:
    """The app (``app.py``, the frame every page runs in) about to open ``page`` (a file under ``pages/``,
    or an address), not run yet: its first run opens that page, as a shared link's first request does."""
    at = AppTest.from_file(str(ROOT / "app.py"), default_timeout=timeout)
    file = page_file(page) if page.startswith("/") else page
    if file != page_file("/"):  # the stepper is the default page: it opens without switching
        at.switch_page(file)
    return at


def open_link(path: str, timeout: float = TIMEOUT, **params: Any) -> AppTest:
    """A fresh session opened at the address ``path`` (or on the page file ``path``) with the URL's query
    parameters ``params``, run once: no exception and no error box (the page's boundary message)."""
    at = app_at(path, timeout)
    at.query_params.update(params)
    at.run()
    assert not at.exception and not at.error, (path, [e.value for e in [*at.exception, *at.error]])
    return at


def open_page(page: str, **params: Any) -> AppTest:
    """``pages/<page>`` opened as :func:`open_link` opens its address."""
    return open_link("/" + page.removesuffix(".py"), **params)


def shown(at: AppTest) -> list[str]:
    """The texts a view shows: titles, headings, Markdown, captions, alerts, the labels of its controls and the
    text of its HTML snippets."""
    texts = [e.value for kind in ("title", "header", "subheader", "markdown", "caption", "info", "warning")
             for e in getattr(at, kind)]
    texts += [w.label for kind in ("button", "toggle", "slider", "select_slider", "selectbox", "radio", "text_area")
              for w in getattr(at, kind)]
    texts = [plain(str(t)) for t in texts]
    # and the text of its HTML snippets (the stepper's top-k heading is in its list's snippet, issue 52)
    return texts + [html.unescape(re.sub(r"<[^>]+>", "", h.proto.body)) for h in at.get("html")]
