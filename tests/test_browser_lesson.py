"""The Lesson page in Chromium against a real server, driven as a presenter's clicker would:
→ / PageDown move to the next stop and the URL follows, ← / PageUp go back, and B after a click on
a source word reveals the hidden α row with the guess marked. Screenshots go to test-artifacts/."""

from __future__ import annotations

import re
from collections.abc import Iterator
from pathlib import Path

import pytest

from scripts import app_server
from tests.chromium import ARTIFACTS, launched

ROOT = Path(__file__).resolve().parent.parent
CHECKPOINTS = ROOT / "checkpoints"
WAIT = 60_000  # ms: the first decode of a stop loads the model

pytestmark = [pytest.mark.browser, pytest.mark.slow]
if not (CHECKPOINTS / "m30k-en-fr-rnnsearch.pt").exists():
    pytest.skip("the lesson needs the shipped Multi30k pair", allow_module_level=True)


@pytest.fixture(scope="module")
def app_url() -> Iterator[str]:
    ARTIFACTS.mkdir(exist_ok=True)
    with app_server.running_app(env={"RNNSEARCH_CHECKPOINTS": str(CHECKPOINTS)}, log_dir=ARTIFACTS) as app:
        yield app.url


@pytest.fixture(scope="module")
def page(app_url: str) -> Iterator[object]:
    with launched() as b:
        yield b.new_page(viewport={"width": 1280, "height": 720})


def at_stop(page: object, n: int, title: str) -> None:
    """Wait until stop ``n`` is drawn to its end (the clicker's buttons too) and the URL names it."""
    page.get_by_role("heading", name=re.compile(rf"^{n}\. {title}")).wait_for(timeout=WAIT)
    page.get_by_text("Question for the class.").wait_for(timeout=WAIT)
    page.get_by_role("button", name=re.compile("^Next")).wait_for(timeout=WAIT)
    page.wait_for_url(re.compile(rf"[?&]ls_stop={n}(&|$)"), timeout=WAIT)
    page.wait_for_timeout(500)


def test_clicker_keys_move_between_stops(app_url: str, page: object) -> None:
    page.goto(f"{app_url}/lesson?ls_stop=4")
    at_stop(page, 4, "Softmax")
    page.keyboard.press("ArrowRight")
    at_stop(page, 5, "The context")
    page.keyboard.press("PageDown")
    at_stop(page, 6, "Reordering")
    page.keyboard.press("PageUp")
    at_stop(page, 5, "The context")
    page.keyboard.press("ArrowLeft")
    at_stop(page, 4, "Softmax")


def test_reveal_key_after_a_click_shows_the_row(app_url: str, page: object) -> None:
    page.goto(f"{app_url}/lesson?ls_stop=6")
    at_stop(page, 6, "Reordering")
    verdict = page.get_by_text(re.compile("looks most at"))
    page.get_by_test_id("stButtonGroup").get_by_role("radio", name="red", exact=True).click()
    page.wait_for_timeout(1500)
    assert not verdict.count()  # the guess alone reveals nothing
    page.keyboard.press("b")
    verdict.wait_for(timeout=WAIT)
    text = verdict.inner_text()
    assert "“car”" in text and "Your guess “red” got α = 0.00" in text, text
    page.wait_for_timeout(1000)  # let the heatmap redraw with the row
    page.screenshot(path=str(ARTIFACTS / "lesson-reveal.png"))


def test_arrow_keys_still_move_after_a_guess_is_clicked(app_url: str, page: object) -> None:
    """A guess clicked with the mouse leaves the keyboard focus in the pills, whose group would take
    → and ← for itself: the presenter's arrows must still move between stops, and the guess stays."""
    page.goto(f"{app_url}/lesson?ls_stop=6")
    at_stop(page, 6, "Reordering")
    pills = page.get_by_test_id("stButtonGroup")
    pills.get_by_role("radio", name="car", exact=True).click()
    page.wait_for_timeout(1500)
    assert pills.locator('[aria-checked="true"]').all_inner_texts() == ["car"]
    page.keyboard.press("ArrowRight")
    at_stop(page, 7, "Long sentences")
    page.keyboard.press("ArrowLeft")
    at_stop(page, 6, "Reordering")


def test_handout_downloads_with_every_stop_and_figure(app_url: str, page: object) -> None:
    page.goto(f"{app_url}/lesson?ls_stop=2&ls_level=school")
    at_stop(page, 2, "Annotations")
    expand = page.get_by_test_id("stExpandSidebarButton")
    if expand.count():  # the lesson starts with the sidebar collapsed
        expand.click()
    with page.expect_download(timeout=WAIT * 2) as download:
        page.get_by_role("button", name=re.compile("Handout")).click()
    path = ARTIFACTS / "lesson-handout.html"
    download.value.save_as(str(path))
    text = path.read_text(encoding="utf-8")
    assert text.count('<section class="stop">') == 8
    assert text.count('src="data:image/svg+xml;base64,') == 8  # every stop has its figure
    assert "for a high schooler" in text and "Fourteen words are already too many" in text
