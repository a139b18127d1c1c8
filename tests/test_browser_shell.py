"""In Chromium against a real server: a page whose import fails keeps the navigation and shows the
boundary's message; visitors see no Deploy button or developer menu; the tab icon comes from the app;
the menu's About credits the data.

The failing import is real: the server starts with a ``scipy`` earlier on its path that refuses to
import, as on a machine where scipy is missing (it once was, and the explanation page broke whole). So this
module keeps its own server (the worker's shared one has scipy); the chrome's checks ride on the same server.
"""

from __future__ import annotations

import os
import re
from collections.abc import Iterator
from pathlib import Path

import pytest

from scripts import app_server
from tests.chromium import ARTIFACTS, new_page

# the stepper's buttons are named with their clicker key after the word ("Step →", "Play P")
STEP, PLAY = re.compile(r"^Step( |$)"), re.compile(r"^Play( |$)")

ROOT = Path(__file__).resolve().parent.parent

pytestmark = [pytest.mark.browser, pytest.mark.slow]

NO_SCIPY = 'raise ModuleNotFoundError("No module named \'scipy\'", name="scipy")\n'


@pytest.fixture(scope="module")
def app_without_scipy(tiny_checkpoint_dir: Path, tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    """The app with the tiny checkpoints and a ``scipy`` that cannot be imported; yields its URL."""
    shadow = tmp_path_factory.mktemp("shadow")
    (shadow / "scipy").mkdir()
    (shadow / "scipy" / "__init__.py").write_text(NO_SCIPY)
    path = os.pathsep.join([str(shadow), os.environ.get("PYTHONPATH", "")]).rstrip(os.pathsep)
    ARTIFACTS.mkdir(exist_ok=True)
    env = {"RNNSEARCH_CHECKPOINTS": str(tiny_checkpoint_dir), "PYTHONPATH": path}
    with app_server.running_app(env=env, log_dir=ARTIFACTS) as app:
        yield app.url


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
    page.goto(app_without_scipy)
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
