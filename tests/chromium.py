"""Debian's Chromium through Playwright for the browser tests: where it is, how it starts, where shots go.

Registered as a plugin in tests/conftest.py, so its session fixtures exist once per pytest-xdist worker:
``browser`` (one headless Chromium, its tabs in shared contexts: :class:`Tabs`) and ``shipped_app_url`` (one
``streamlit run app.py`` on the shipped checkpoints); a test opens its own page (or context) and goes to a
URL. A browser test skips when Playwright or Chromium is missing (never ``playwright install``: Debian's
``chromium`` package is the browser).
"""

from __future__ import annotations

import contextlib
import json
import os
import shutil
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

ROOT = Path(__file__).resolve().parent.parent
ARTIFACTS = ROOT / "test-artifacts"  # screenshots and server logs, git-ignored
CHROMIUM = os.environ.get("CHROMIUM_PATH") or shutil.which("chromium") or "/usr/bin/chromium"
CHROMIUM_ARGS = ["--no-sandbox", "--disable-gpu", "--disable-background-networking",
                 "--disable-component-update", "--disable-sync"]

try:
    from playwright import sync_api
except ImportError:  # the browser fixture skips
    sync_api = None  # type: ignore[assignment]


def require() -> None:
    """Skip the calling test when Playwright or Debian's Chromium is missing."""
    if sync_api is None:
        pytest.skip("playwright is not installed")
    if not Path(CHROMIUM).exists():
        pytest.skip(f"Chromium not found at {CHROMIUM}")


@pytest.fixture(scope="session")
def playwright() -> Iterator[Any]:
    """Playwright's sync API, started once per worker: it can run only once at a time in a process, so a
    test that needs a Chromium of its own (other command-line switches) launches it from this one."""
    require()
    with sync_api.sync_playwright() as p:
        yield p


def launch(playwright: Any, *extra_args: str) -> Any:
    """A headless Debian Chromium with the tier's switches and ``extra_args`` (the caller closes it)."""
    return playwright.chromium.launch(executable_path=CHROMIUM, args=[*CHROMIUM_ARGS, *extra_args], headless=True)


# Run before a page's own scripts at each load: on a tab's first load of the site (its session storage, the
# tab's own, still unmarked) the local storage other tabs of the shared context left is emptied.
FRESH_STORAGE = """if (!sessionStorage.getItem('__tab_fresh')) {
  localStorage.clear(); sessionStorage.setItem('__tab_fresh', '1');
}"""


class Tabs:
    """A Chromium whose ``new_page(**options)`` opens a tab in a context shared by every tab with the same
    ``options``, made at the first: a context of its own per tab would fetch and compile the app's 23 MB of
    scripts again at each page load (1.9 s a load in a new context, 1.3 s in a shared one, measured on the
    readable views). Tabs of one context share its cookies and cache; Streamlit's session is the tab's own
    connection, and only the vote page sets a cookie, whose phones each take a ``new_context``, which (with
    everything else) is the browser's own. What a tab of its own context would not see is cleared when a
    tab first loads the app: the site's local storage, where Streamlit keeps a sidebar opened or closed by
    hand (``stSidebarCollapsed-…``), which then wins over a page's own choice (presentation collapses it)."""

    def __init__(self, chromium: Any) -> None:
        self._chromium = chromium
        self._contexts: dict[str, Any] = {}

    def new_page(self, **options: Any) -> Any:
        """A new tab in the shared context of ``options`` (as for ``Browser.new_context``)."""
        key = json.dumps(options, sort_keys=True)
        if key not in self._contexts:
            self._contexts[key] = self._chromium.new_context(**options)
            self._contexts[key].add_init_script(FRESH_STORAGE)
        return self._contexts[key].new_page()

    def __getattr__(self, name: str) -> Any:
        return getattr(self._chromium, name)


@pytest.fixture(scope="session")
def browser(playwright: Any) -> Iterator[Any]:
    """Headless Debian Chromium, one per worker, shared by every browser test (each opens its own pages)."""
    b = launch(playwright)
    try:
        yield Tabs(b)
    finally:
        b.close()


@pytest.fixture(scope="session")
def shipped_app_url() -> Iterator[str]:
    """The app on the shipped checkpoints (the models a class sees), one server per worker, killed at the
    end of the session (a Streamlit server takes 5-10 s to stop on SIGTERM, and holds nothing to save);
    tests open its pages by URL."""
    require()
    from scripts import app_server

    ARTIFACTS.mkdir(exist_ok=True)
    env = {"RNNSEARCH_CHECKPOINTS": str(ROOT / "checkpoints"), "OMP_NUM_THREADS": "1"}
    with app_server.running_app(env=env, log_dir=ARTIFACTS, timeout=120) as app:
        yield app.url
        app.proc.kill()


@contextlib.contextmanager
def new_page(browser: Any, **options: Any) -> Iterator[Any]:
    """A new tab (``options`` as for ``browser.new_page``), closed afterwards even when the test fails."""
    page = browser.new_page(**options)
    try:
        yield page
    finally:
        page.close()
