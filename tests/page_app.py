"""A page of the app opened in AppTest as a shared link opens it (tests of pages/*.py)."""

from __future__ import annotations

from typing import Any

from streamlit.testing.v1 import AppTest

from tests.conftest import ROOT

TIMEOUT = 300  # seconds: a first run loads the shipped models


def open_page(page: str, **params: Any) -> AppTest:
    """A fresh session of ``pages/<page>`` opened with the URL's query parameters ``params``, run once:
    no exception and no error box (the page's boundary message)."""
    at = AppTest.from_file(str(ROOT / "pages" / page), default_timeout=TIMEOUT)
    at.query_params.update(params)
    at.run()
    assert not at.exception and not at.error, [e.value for e in [*at.exception, *at.error]]
    return at
