"""A click on the sentence table of "Is A really better than B?" opens both models' α, in Debian's Chromium.

AppTest cannot click an ``st.dataframe`` row (it sets the URL-bound line picker instead,
tests/test_paired_page.py); here a real click on the first row of the table, after Run on 40 sentences of
the default pair at 1280×720, writes that row's line to the URL (``pr_row``) and draws two charts, with
every text readable (:mod:`tests.readability`) and no error box. Screenshot: test-artifacts/paired-click.png.
"""

from __future__ import annotations

import pytest

from tests import readability as R
from tests.browser_waits import settle, wait_query
from tests.chromium import ARTIFACTS
from tests.conftest import ROOT

pytestmark = [pytest.mark.browser, pytest.mark.slow]
PAIR = ("europarl-en-fr-rnnencdec-50.pt", "europarl-en-fr-rnnsearch-50.pt")
ROW_MARKERS_PX = 14  # x of the row-selection column inside the grid
HEADER_PX = 35  # the grid's header row height; rows are as tall
WAIT = 300_000  # ms: a shared, loaded machine


def test_a_clicked_row_opens_both_alphas(shipped_app_url: str, browser: object) -> None:
    if not all((ROOT / "checkpoints" / n).is_file() for n in PAIR):
        pytest.skip("the shipped Europarl pair is not in checkpoints/")
    page = browser.new_page(viewport={"width": 1280, "height": 720})
    try:
        R.rendered(page, shipped_app_url + "/paired_compare?pr_limit=first+40")
        page.get_by_role("button", name="Run the comparison").click()
        page.get_by_text("paired resamples").first.wait_for(timeout=WAIT)
        grids = page.get_by_test_id("stDataFrame")
        grids.nth(2).wait_for(timeout=WAIT)
        settle(page)
        # overall, by length, the sentences, then the word tables: by frequency, by third, two of n-grams
        assert grids.count() == 7 and page.get_by_test_id("stVegaLiteChart").count() == 0
        grid = grids.nth(2)
        grid.scroll_into_view_if_needed()
        box = grid.bounding_box()
        page.mouse.click(box["x"] + ROW_MARKERS_PX, box["y"] + HEADER_PX * 1.5)  # the first row
        page.get_by_test_id("stVegaLiteChart").nth(1).wait_for(timeout=WAIT)
        query = wait_query(page, lambda q: "pr_row" in q)
        settle(page)
        rows = R.readings(page)
        errors = page.get_by_test_id("stAlertContentError").all_inner_texts() + page.get_by_test_id(
            "stException").all_inner_texts()
        charts = page.get_by_test_id("stVegaLiteChart").count()
        page.get_by_test_id("stVegaLiteChart").last.scroll_into_view_if_needed()
        page.screenshot(path=str(ARTIFACTS / "paired-click.png"))
    finally:
        page.close()
    assert not errors, errors
    assert charts == 2 and query.get("pr_row") and query["pr_row"][0].isdigit(), (charts, query)
    bad = R.offenders(rows)
    assert not bad, "\n".join(map(str, bad))
