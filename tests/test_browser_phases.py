"""The stepper's "Look · Generate · Update" tab in headless Chromium at 1280×720, on the shipped checkpoints.

For each model in turn, on the worker's server: opens a shared link at step 4, opens the tab and checks
that the three phase cards appear in each model's order with their equations typeset, that their text
is at least 14 px, and that each card's content fits the 1280 px width (no sideways scrolling); one
screenshot per card goes to ``test-artifacts/``.
"""

from __future__ import annotations

from urllib.parse import urlencode

import pytest

from tests.browser_waits import quiet, settle, stable
from tests.chromium import ARTIFACTS, new_page
from ui.common import models

pytestmark = [pytest.mark.browser, pytest.mark.slow]
SENTENCE = "A little girl is climbing into a wooden playhouse."
FONT_PX = """() => [...document.querySelectorAll('[class*="st-key-phase_"] *')]
    .filter(el => !el.closest('.katex') && [...el.childNodes].some(n => n.nodeType === 3 && n.textContent.trim()))
    .map(el => parseFloat(getComputedStyle(el).fontSize))"""


MODELS = [("m30k-en-fr", "m30k-en-fr-rnnsearch.pt", ["Look", "Generate", "Update"]),
          ("m30k-en-fr-luong-local-p", "m30k-en-fr-luong-local-p.pt", ["Update", "Look", "Generate"])]


def test_phase_cards_at_1280x720(shipped_app_url: str, browser: object) -> None:
    ckpts = models.ROOT / "checkpoints"
    if not all((ckpts / file).exists() for _, file, _ in MODELS):
        pytest.skip("the shipped Multi30k checkpoints are not in checkpoints/")
    for model, _, order in MODELS:
        with new_page(browser, viewport={"width": 1280, "height": 720}) as page:
            phase_cards(page, shipped_app_url, model, order)


def phase_cards(page: object, url: str, model: str, order: list[str]) -> None:
    """The three cards in ``model``'s ``order``, typeset, ≥ 14 px, each within 1280 px."""
    page.goto(f"{url}/?{urlencode({'sp_text': SENTENCE, 'sp_model': model, 'sp_step': 4})}")
    page.wait_for_selector('[data-testid="translation-so-far"]', timeout=240_000)
    quiet(page)  # the first view's second run (it writes the URL) over: a tab clicked during it is lost
    page.get_by_role("tab", name="Look · Generate · Update").click()
    page.wait_for_selector('[class*="st-key-phase_generate"] .katex', timeout=120_000)
    settle(page)
    titles = page.locator('[class*="st-key-phase_"] h4').all_inner_texts()
    assert [t.split("·")[1].strip() for t in titles] == order, (model, titles)
    assert page.locator('[class*="st-key-phase_"] .katex').count() == 3
    sizes = page.evaluate(FONT_PX)
    assert sizes and min(sizes) >= 14, (model, sorted(set(sizes)))
    for key in ("look", "generate", "update"):
        card = page.locator(f'[class*="st-key-phase_{key}"]')
        card.evaluate("el => el.scrollIntoView({block: 'start'})")
        box = stable(page, f"() => JSON.stringify(document.querySelector('[class*=\"st-key-phase_{key}\"]')"
                           ".getBoundingClientRect())") and card.bounding_box()
        assert box is not None and box["x"] >= 0 and box["x"] + box["width"] <= 1280, (model, key, box)
        page.screenshot(path=str(ARTIFACTS / f"phases-{model}-{key}-1280x720.png"))
