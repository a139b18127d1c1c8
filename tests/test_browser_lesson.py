"""The Lesson page in Chromium against a real server, driven as a presenter's clicker would:
→ / PageDown move to the next stop and the URL follows, ← / PageUp go back, and B after a click on
a source word reveals the hidden α row with the guess marked; the handout prints on at most three A4
pages. Screenshots go to test-artifacts/."""

from __future__ import annotations

import html
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
    page.goto(f"{app_url}/lesson?ls_stop=5")
    at_stop(page, 5, "Softmax")
    page.keyboard.press("ArrowRight")
    at_stop(page, 6, "The context")
    page.keyboard.press("PageDown")
    at_stop(page, 7, "Reordering")
    page.keyboard.press("PageUp")
    at_stop(page, 6, "The context")
    page.keyboard.press("ArrowLeft")
    at_stop(page, 5, "Softmax")


def test_reveal_key_after_a_click_shows_the_row(app_url: str, page: object) -> None:
    page.goto(f"{app_url}/lesson?ls_stop=7")
    at_stop(page, 7, "Reordering")
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
    page.goto(f"{app_url}/lesson?ls_stop=7")
    at_stop(page, 7, "Reordering")
    pills = page.get_by_test_id("stButtonGroup")
    pills.get_by_role("radio", name="car", exact=True).click()
    page.wait_for_timeout(1500)
    assert pills.locator('[aria-checked="true"]').all_inner_texts() == ["car"]
    page.keyboard.press("ArrowRight")
    at_stop(page, 8, "Long sentences")
    page.keyboard.press("ArrowLeft")
    at_stop(page, 7, "Reordering")


def test_handout_prints_on_three_a4_pages_without_answers_and_the_key_apart(app_url: str, page: object) -> None:
    """The handout: every stop, every figure but the wrap-up's, no narration and no answer, and printed
    to PDF by Chromium on at most 3 A4 pages; the answer key comes from the presenter view."""
    from ui.lesson_content import STOPS
    from ui.lesson_teacher import TEACHER

    page.goto(f"{app_url}/lesson?ls_stop=3&ls_level=school")
    at_stop(page, 3, "Annotations")
    expand = page.get_by_test_id("stExpandSidebarButton")
    if expand.count():  # the lesson starts with the sidebar collapsed
        expand.click()
    with page.expect_download(timeout=WAIT * 3) as download:
        page.get_by_role("button", name=re.compile("Handout")).click()
    path = ARTIFACTS / "lesson-handout.html"
    download.value.save_as(str(path))
    text = path.read_text(encoding="utf-8")
    assert text.count('<section class="stop">') == len(STOPS) == 10
    assert text.count('src="data:image/svg+xml;base64,') == len(STOPS) - 1  # the wrap-up has no figure
    assert not [s.key for s in STOPS for t in s.narration.values() if html.escape(t) in text]
    assert not [k for k, t in TEACHER.items() if html.escape(t.answer) in text]
    printed = page.context.browser.new_page()
    printed.goto(path.as_uri())
    pdf = printed.pdf(format="A4", print_background=True)
    (ARTIFACTS / "lesson-handout.pdf").write_bytes(pdf)
    printed.screenshot(path=str(ARTIFACTS / "lesson-handout.png"), full_page=True)
    printed.close()
    pages = len(re.findall(rb"/Type\s*/Page(?!s)", pdf))
    assert 1 <= pages <= 3, pages

    page.goto(f"{app_url}/lesson?ls_stop=7&ls_view=presenter")
    at_stop(page, 7, "Reordering")
    with page.expect_download(timeout=WAIT * 3) as download:
        page.get_by_role("button", name=re.compile("Answer key")).click()
    key = ARTIFACTS / "lesson-answer-key.html"
    download.value.save_as(str(key))
    answers = key.read_text(encoding="utf-8")
    assert all(html.escape(t.answer) in answers for t in TEACHER.values())
