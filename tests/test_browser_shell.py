"""In Chromium against a real server on the tiny runs: a page whose import fails keeps the navigation and shows
the boundary's message; visitors see no Deploy button or developer menu; the tab icon comes from the app; the
menu's About credits the data; and "Watch it learn" at a projector's 1280×720: scrub by URL, play, present.

The failing import is real: the server starts with a ``scipy`` earlier on its path that refuses to
import, as on a machine where scipy is missing (it once was, and the explanation page broke whole). So this
module keeps its own server (the worker's shared one has scipy, and reads the shipped checkpoints, whose
timelines are not the tiny ones). One server serves both tests: its folder holds the two tiny runs recorded
with ``--timeline`` (tests/timeline_fixtures.py), their checkpoints for the stepper and their timelines for
"Watch it learn", which reads no model and imports no scipy (only the explanation page does).
"""

from __future__ import annotations

import os
import re
import shutil
from collections.abc import Iterator
from pathlib import Path
from urllib.parse import parse_qs, urlparse

import pytest

from nmt.training import timeline
from scripts import app_server
from tests import timeline_fixtures
from tests.browser_waits import settle
from tests.chromium import ARTIFACTS, new_page

# the stepper's buttons are named with their clicker key after the word ("Step →", "Play P")
STEP, PLAY = re.compile(r"^Step( |$)"), re.compile(r"^Play( |$)")

ROOT = Path(__file__).resolve().parent.parent

pytestmark = [pytest.mark.browser, pytest.mark.slow]
tl_runs = timeline_fixtures.tl_runs

NO_SCIPY = 'raise ModuleNotFoundError("No module named \'scipy\'", name="scipy")\n'
MODELS = {"attention": "tiny-en-fr-rnnsearch", "fixed": "tiny-en-fr-rnnencdec"}  # tl_runs' key: the file stem


@pytest.fixture(scope="module")
def tiny_folder(tl_runs: dict[str, Path], tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A checkpoint folder with the tiny RNNsearch and RNNencdec (a pair) and their timelines."""
    d = tmp_path_factory.mktemp("tiny_timeline_ckpts")
    for context, stem in MODELS.items():
        shutil.copy(tl_runs[context] / "best.pt", d / f"{stem}.pt")
        shutil.copy(tl_runs[context] / timeline.FILE_NAME, d / f"{stem}.timeline.npz")
    return d


@pytest.fixture(scope="module")
def app_without_scipy(tiny_folder: Path, tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    """The app on :func:`tiny_folder` with a ``scipy`` that cannot be imported; yields its URL. Killed at
    the end (a Streamlit server takes 5-10 s to stop on SIGTERM, and holds nothing to save)."""
    shadow = tmp_path_factory.mktemp("shadow")
    (shadow / "scipy").mkdir()
    (shadow / "scipy" / "__init__.py").write_text(NO_SCIPY)
    path = os.pathsep.join([str(shadow), os.environ.get("PYTHONPATH", "")]).rstrip(os.pathsep)
    ARTIFACTS.mkdir(exist_ok=True)
    env = {"RNNSEARCH_CHECKPOINTS": str(tiny_folder), "PYTHONPATH": path}
    with app_server.running_app(env=env, log_dir=ARTIFACTS) as app:
        yield app.url
        app.proc.kill()


def test_missing_package_and_classroom_chrome(app_without_scipy: str, browser: object) -> None:
    """On the server without scipy: the failing page keeps the navigation, then the classroom chrome."""
    with new_page(browser, viewport={"width": 1280, "height": 720}) as page:
        missing_package_keeps_the_navigation(app_without_scipy, page)
        classroom_chrome(app_without_scipy, page)


def missing_package_keeps_the_navigation(app_without_scipy: str, page: object) -> None:
    page.goto(f"{app_without_scipy}/explanation")
    alert = page.get_by_test_id("stAlertContentError")
    alert.wait_for(timeout=60_000)
    assert "“scipy”" in alert.inner_text() and "pip install -r requirements.txt" in alert.inner_text()
    assert not page.get_by_test_id("stException").count()  # Streamlit's own error box
    nav = page.get_by_test_id("stSidebar").get_by_role("link")
    labels = " | ".join(nav.all_inner_texts())
    assert "Step through decoding" in labels and "Length vs quality" in labels, labels
    page.screenshot(path=str(ARTIFACTS / "shell-missing-package.png"))
    # the other pages still work on that server: the navigation leads to the stepper
    page.get_by_test_id("stSidebar").get_by_role("link", name="Step through decoding").click()
    page.get_by_role("button", name=STEP).wait_for(timeout=60_000)
    assert not page.get_by_test_id("stAlertContentError").count()


def classroom_chrome(app_without_scipy: str, page: object) -> None:
    """On the stepper the navigation led to (the app's home page, as a visitor's first load shows it)."""
    page.get_by_role("button", name=STEP).wait_for(timeout=60_000)
    assert not page.get_by_test_id("stAppDeployButton").count()
    assert not page.get_by_role("button", name="Deploy").count()
    icon = page.locator("link[rel~='icon']").first.get_attribute("href") or ""
    assert icon.startswith(("/", app_without_scipy)) and "gstatic" not in icon and "googleapis" not in icon, icon
    response = page.request.get(icon if icon.startswith("http") else app_without_scipy + icon)
    assert response.ok and response.headers["content-type"].startswith("image/png")
    # the main menu's About credits the data (Tatoeba's CC-BY asks for it wherever a model trained on it ships)
    page.get_by_test_id("stMainMenu").click()
    page.get_by_text("About", exact=True).click()
    about = page.get_by_role("dialog").inner_text()
    assert "www.manythings.org/anki and tatoeba.org" in about and "CC-BY 2.0 FR" in about, about
    page.keyboard.press("Escape")


def _update_in_url(page: object) -> int | None:
    got = parse_qs(urlparse(page.url).query).get("wl_update")
    return int(got[0]) if got else None


def test_scrub_by_link_then_play_to_the_end(app_without_scipy: str, tiny_folder: Path, browser: object) -> None:
    """Watch it learn, presenting at 1280×720, opened at update 20 by its link: RNNencdec's note, RNNsearch's
    α heatmap, the update kept in the URL; Play then moves through the recorded updates up to the last."""
    updates = timeline.read(tiny_folder / "tiny-en-fr-rnnsearch.timeline.npz").updates
    with new_page(browser, viewport={"width": 1280, "height": 720}) as page:
        page.goto(f"{app_without_scipy}/watch_it_learn?wl_update=20&wl_present=true")
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
