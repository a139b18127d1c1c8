"""Waiting on the running app in a browser page: Streamlit's reruns, the translation's words, the URL's query.

Shared by the browser tests; ``page`` is a Playwright page. No fixed sleeps: each wait is for something the
page shows (Streamlit's script state, a count of words, the URL's query).
"""

from __future__ import annotations

from urllib.parse import parse_qs, urlparse

from tests.chromium import sync_api

# Streamlit marks its root element with the script's state ("running" while the page's script runs) and
# shows its status widget while it runs or reconnects: idle is neither.
IDLE = ("() => document.querySelector('[data-testid=\"stApp\"]')?.getAttribute('data-test-script-state') "
        "=== 'notRunning' && !document.querySelector('[data-testid=\"stStatusWidget\"]')")


# True once the page has been idle for ``ms`` milliseconds in a row (a bound control's first view runs the
# script once more to write the URL; charts draw after the run): polled, so it waits no longer than that.
QUIET = """(ms) => {
  const idle = (IDLE)();
  const now = performance.now();
  if (!idle) { window.__quietSince = null; return false; }
  if (window.__quietSince == null) window.__quietSince = now;
  return now - window.__quietSince >= ms;
}""".replace("IDLE", IDLE)


def quiet(page: object, ms: int = 1000, timeout: float = 300_000) -> None:
    """Wait until the app has stayed idle for ``ms`` milliseconds (see :data:`QUIET`)."""
    page.evaluate("() => { window.__quietSince = null; }")
    page.wait_for_function(QUIET, arg=ms, timeout=timeout, polling=100)


# Every chart on the page has drawn: Vega-Lite's SVG (or canvas) and Plotly's SVG are in place.
CHARTS_DRAWN = """() => [...document.querySelectorAll('[data-testid="stVegaLiteChart"]')].every(
    c => c.querySelector('svg, canvas'))
  && [...document.querySelectorAll('[data-testid="stPlotlyChart"]')].every(c => c.querySelector('.main-svg'))"""


def drawn(page: object, ms: int = 600, timeout: float = 300_000) -> None:
    """Wait until every chart of the page has drawn, then until the app has stayed idle for ``ms``
    milliseconds (a rerun that writes the URL starts within that): what a measurement of the page waits for."""
    page.wait_for_function(CHARTS_DRAWN, timeout=timeout, polling=100)
    quiet(page, ms, timeout=timeout)


def still_drawn(page: object, timeout: float = 300_000) -> None:
    """Wait until the script has finished and every chart of the page has drawn, with no idle window: once
    :func:`drawn` has waited out a view's reruns, what a later look (a scroll, a text found) needs."""
    page.wait_for_function(f"() => ({IDLE})() && ({CHARTS_DRAWN})()", timeout=timeout, polling=100)


def settle(page: object, timeout: float = 60_000) -> None:
    """Wait until Streamlit has finished running the page's script (its state idle, its status widget gone)."""
    page.wait_for_function(IDLE, timeout=timeout)


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
    """The URL's query once ``ok(query)`` holds (the app writes the URL after it renders); as it is after
    ``timeout`` seconds otherwise (the caller's assertion says what is missing)."""
    try:
        page.wait_for_url(lambda url: ok(parse_qs(urlparse(url).query)), timeout=timeout * 1000,
                          wait_until="commit")
    except sync_api.TimeoutError:
        pass
    return url_query(page)


def stable(page: object, js: str, window_ms: int = 250, timeout: float = 60.0) -> object:
    """``js``'s answer (a page function) once two answers ``window_ms`` apart agree: a chart scrolled into view
    or redrawn has settled. Polled, so it waits no longer than the page takes to stop changing."""
    wait = f"() => new Promise(r => setTimeout(r, {window_ms}))"
    prev = page.evaluate(js)
    for _ in range(max(1, int(timeout * 1000 / window_ms))):
        page.evaluate(wait)
        now = page.evaluate(js)
        if now == prev:
            return now
        prev = now
    raise AssertionError(f"the page kept changing for {timeout} s: {str(prev)[:300]}")
