"""The stepper's "Look · Generate · Update" tab in headless Chromium at 1280×720, on the shipped checkpoints.

Opens a shared link at step 4, opens the tab and checks that the three phase cards appear in each
model's order with their equations typeset, that their text is at least 14 px, and that each card's
content fits the 1280 px width (no sideways scrolling); one screenshot per card goes to
``test-artifacts/``.
"""

from __future__ import annotations

from urllib.parse import urlencode

import pytest

from scripts import app_server
from tests.chromium import ARTIFACTS, launched
from ui import models

pytestmark = [pytest.mark.browser, pytest.mark.slow]
SENTENCE = "A little girl is climbing into a wooden playhouse."
FONT_PX = """() => [...document.querySelectorAll('[class*="st-key-phase_"] *')]
    .filter(el => !el.closest('.katex') && [...el.childNodes].some(n => n.nodeType === 3 && n.textContent.trim()))
    .map(el => parseFloat(getComputedStyle(el).fontSize))"""


@pytest.mark.parametrize(("model", "file", "order"), [
    ("m30k-en-fr", "m30k-en-fr-rnnsearch.pt", ["Look", "Generate", "Update"]),
    ("m30k-en-fr-luong-local-p", "m30k-en-fr-luong-local-p.pt", ["Update", "Look", "Generate"])])
def test_phase_cards_at_1280x720(model: str, file: str, order: list[str]) -> None:
    ckpts = models.ROOT / "checkpoints"
    if not (ckpts / file).exists():
        pytest.skip("the shipped Multi30k checkpoints are not in checkpoints/")
    ARTIFACTS.mkdir(exist_ok=True)
    with app_server.running_app(env={models.ENV_VAR: str(ckpts)}, log_dir=ARTIFACTS) as app, launched() as b:
        page = b.new_page(viewport={"width": 1280, "height": 720})
        page.goto(f"{app.url}/?{urlencode({'text': SENTENCE, 'model': model, 'step': 4})}")
        page.wait_for_selector('[data-testid="translation-so-far"]', timeout=240_000)
        page.get_by_role("tab", name="Look · Generate · Update").click()
        page.wait_for_selector('[class*="st-key-phase_generate"] .katex', timeout=120_000)
        page.wait_for_function("() => !document.querySelector('[data-testid=\"stStatusWidget\"]')", timeout=60_000)
        titles = page.locator('[class*="st-key-phase_"] h4').all_inner_texts()
        assert [t.split("·")[1].strip() for t in titles] == order
        assert page.locator('[class*="st-key-phase_"] .katex').count() == 3
        sizes = page.evaluate(FONT_PX)
        assert sizes and min(sizes) >= 14, sorted(set(sizes))
        for key in ("look", "generate", "update"):
            card = page.locator(f'[class*="st-key-phase_{key}"]')
            card.evaluate("el => el.scrollIntoView({block: 'start'})")
            page.wait_for_timeout(400)
            box = card.bounding_box()
            assert box is not None and box["x"] >= 0 and box["x"] + box["width"] <= 1280
            page.screenshot(path=str(ARTIFACTS / f"phases-{model}-{key}-1280x720.png"))
