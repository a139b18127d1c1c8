"""Waiting on the running app in a browser page: Streamlit's reruns, the translation's words, the URL's query.

Shared by the browser tests (tests/test_browser.py); ``page`` is a Playwright page.
"""

from __future__ import annotations

import time
from urllib.parse import parse_qs, urlparse

from tests.chromium import sync_api


def settle(page: object) -> None:
    """Wait until Streamlit has finished rerunning (its status widget gone)."""
    page.wait_for_timeout(300)
    page.wait_for_function(
        "() => !document.querySelector('[data-testid=\"stStatusWidget\"]')", timeout=30_000)
    page.wait_for_timeout(300)


def chip_texts(page: object) -> list[str]:
    """The words of the translation so far, as shown."""
    return page.locator('[data-testid="translation-so-far"] > span').all_inner_texts()


def wait_chips(page: object, n: int) -> list[str]:
    """Wait until the translation so far shows ``n`` words, and return them."""
    sync_api.expect(page.locator('[data-testid="translation-so-far"] > span')).to_have_count(n, timeout=30_000)
    settle(page)
    return chip_texts(page)


def url_query(page: object) -> dict[str, list[str]]:
    """The page URL's query parameters."""
    return parse_qs(urlparse(page.url).query)


def wait_query(page: object, ok: object, timeout: float = 30.0) -> dict[str, list[str]]:
    """The URL's query once ``ok(query)`` holds (the app writes the URL after it renders)."""
    deadline = time.time() + timeout
    while not ok(q := url_query(page)) and time.time() < deadline:
        page.wait_for_timeout(200)
    return q
