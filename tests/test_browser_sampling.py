"""The stepper opened from a Sample link, in Debian's Chromium at 1280×720: one Step draws a word, the table of
its p under each stage and the translation table appear, every text readable (:mod:`tests.readability`), no
error box. Screenshot: test-artifacts/stepper-sample.png.
"""

from __future__ import annotations

import pytest

from tests import readability as R
from tests.browser_waits import settle
from tests.chromium import ARTIFACTS, new_page

pytestmark = [pytest.mark.browser, pytest.mark.slow]
WAIT = 300_000  # ms: a shared, loaded machine


def test_a_sample_link_steps_and_reads(shipped_app_url: str, browser: object) -> None:
    with new_page(browser, viewport={"width": 1280, "height": 720}) as page:
        R.rendered(page, shipped_app_url + "/?mode=sample&temp=0.7&topk=5&seed=3")
        page.get_by_role("button", name="Step").first.click()
        page.get_by_text("under the model's distribution").first.wait_for(timeout=WAIT)
        settle(page)
        rows = R.readings(page)
        errors = page.get_by_test_id("stAlertContentError").all_inner_texts() + page.get_by_test_id(
            "stException").all_inner_texts()
        shown = [page.get_by_text(t).count() for t in ("How i = 0 was drawn", "Greedy, beam and 3 samples")]
        page.screenshot(path=str(ARTIFACTS / "stepper-sample.png"), full_page=True)
    assert not errors, errors
    assert all(shown), shown  # the drawn step's stages and the translation table
    bad = R.offenders(rows)
    assert not bad, "\n".join(map(str, bad))
