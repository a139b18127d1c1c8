"""The "Watch it learn" page in headless Chromium at a projector's 1280×720: scrub by URL, play, present.

Starts its own app with ``RNNSEARCH_CHECKPOINTS`` pointing at a folder holding the tiny runs' timelines
(tests/timeline_fixtures.py): the worker's shared server reads the shipped checkpoints, whose timelines
are not these. Skipped when Playwright or Debian's Chromium is missing.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from urllib.parse import parse_qs, urlparse

import pytest

from nmt.training import timeline
from scripts import app_server
from tests import timeline_fixtures
from tests.browser_waits import settle
from tests.chromium import ARTIFACTS, new_page

pytestmark = [pytest.mark.browser, pytest.mark.slow]
tl_runs, tl_dir = timeline_fixtures.tl_runs, timeline_fixtures.tl_dir


@pytest.fixture(scope="module")
def app_url(tl_dir: Path) -> Iterator[str]:
    ARTIFACTS.mkdir(exist_ok=True)
    with app_server.running_app(env={"RNNSEARCH_CHECKPOINTS": str(tl_dir)}, log_dir=ARTIFACTS) as app:
        yield app.url


def _update_in_url(page: object) -> int | None:
    got = parse_qs(urlparse(page.url).query).get("wl_update")
    return int(got[0]) if got else None


def test_scrub_by_link_then_play_to_the_end(app_url: str, tl_dir: Path, browser: object) -> None:
    updates = timeline.read(tl_dir / "tiny-en-fr-rnnsearch.timeline.npz").updates
    with new_page(browser, viewport={"width": 1280, "height": 720}) as page:
        page.goto(f"{app_url}/watch_it_learn?wl_update=20&wl_present=true")
        # presentation mode hides the page's title, so wait for the scrubber, drawn in both modes
        page.get_by_text("Update (drag to scrub)").first.wait_for(timeout=120_000)
        settle(page)
        assert page.get_by_text("RNNencdec has no α").count() == 1
        heat = page.get_by_test_id("stVegaLiteChart").first
        heat.locator("g.mark-rect path").first.wait_for(timeout=90_000)  # the α heatmap's cells are drawn
        assert _update_in_url(page) == 20
        page.screenshot(path=str(ARTIFACTS / "watch-it-learn-1280x720.png"))
        play = page.get_by_test_id("stCheckbox").filter(has_text="Play")
        play.wait_for(timeout=60_000)
        play.get_by_text("Play", exact=True).click()
        deadline = 90_000
        page.wait_for_function(f"() => new URL(location.href).searchParams.get('wl_update') === '{updates[-1]}'",
                               timeout=deadline)  # one recorded update after another, up to the last
        settle(page)
        assert _update_in_url(page) == updates[-1]
