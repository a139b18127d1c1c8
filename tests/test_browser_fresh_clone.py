"""Every page on a fresh clone: no corpus configured, only the shipped checkpoints and evalsets/.

Starts ``streamlit run app.py`` (Debian's Chromium through Playwright, as ``tests/test_browser.py``)
with ``RNNSEARCH_DATA`` at an empty temporary folder, the committed ``configs/data_roots.toml``
(which names no root) and the shipped ``checkpoints/``, opens every page of ``ui.shell.PAGES``, waits
until it has rendered, and fails on a "not found" message, an empty picker or an error box. The
corpus pickers must offer the built-in sets. About two minutes on two CPU cores (real models).
"""

from __future__ import annotations

import re
import tomllib
from collections.abc import Iterator
from pathlib import Path

import pytest

from scripts import app_server
from tests.chromium import (
    ARTIFACTS,
    browser,  # noqa: F401 (a fixture)
    )
from ui.shell import PAGES

ROOT = Path(__file__).resolve().parent.parent
NOT_FOUND = re.compile(r"\bnot found\b|\bno\b[^\n]{0,120}\bfound\b|\bno readable\b|\bcannot read\b", re.IGNORECASE)
BUILTIN_EN_FR = ["alignment/hansards-naacl2003-en-fr/test", "alignment/hansards-naacl2003-en-fr/trial",
                 "europarl-v7-fr-en/test2000q4", "multi30k/test_2016_flickr", "multi30k/test_2017_flickr",
                 "multi30k/test_2017_mscoco", "tatoeba-fr-en/test", "wmt/newstest2014-fren"]
CORPUS_PICKERS = {  # page file: (widget key, the value it starts on, its options when checked, else None)
    "pages/alignment_browser.py": ("al_split", "multi30k/test_2016_flickr", BUILTIN_EN_FR),
    "pages/bottleneck_compare.py": ("bn_split", "multi30k/test_2016_flickr", BUILTIN_EN_FR),
    "pages/length_quality.py": ("lq_rtest", "multi30k/test_2016_flickr", None),
}
EXTRA = [("pages/bottleneck_compare.py", "?bn_from=corpus+by+length")]  # the length slider's corpus sentence

pytestmark = [pytest.mark.browser, pytest.mark.slow]



def url_path(file: str) -> str:
    """The URL path Streamlit serves a page file at: ``/`` for app.py, ``/<stem>`` for pages/<stem>.py."""
    return "/" if file == "app.py" else f"/{Path(file).stem}"


@pytest.fixture(scope="module")
def app_url(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    """The app with no corpus: RNNSEARCH_DATA empty, no allow-listed root, the shipped checkpoints."""
    with open(ROOT / "configs" / "data_roots.toml", "rb") as f:
        assert tomllib.load(f).get("root", []) == [], "configs/data_roots.toml must name no root for this test"
    empty = tmp_path_factory.mktemp("no-corpus")
    env = {"RNNSEARCH_DATA": str(empty), "RNNSEARCH_CHECKPOINTS": str(ROOT / "checkpoints"), "OMP_NUM_THREADS": "1"}
    ARTIFACTS.mkdir(exist_ok=True)
    with app_server.running_app(env=env, log_dir=ARTIFACTS, timeout=120) as app:
        yield app.url


def rendered(page: object, url: str) -> None:
    """Open ``url`` and wait until the page's title is drawn and Streamlit has stopped running."""
    page.goto(url)
    page.locator("h1").first.wait_for(timeout=120_000)
    page.wait_for_timeout(300)
    page.wait_for_function("() => !document.querySelector('[data-testid=\"stStatusWidget\"]')", timeout=240_000)
    page.wait_for_timeout(500)


def problems(page: object) -> list[str]:
    """What a visitor should never see here: error boxes, tracebacks, "not found" messages, pickers
    with nothing chosen or nothing to choose."""
    out = [f"error: {t}" for t in page.locator('[data-testid="stAlertContentError"]').all_inner_texts()]
    out += [f"exception: {t[:200]}" for t in page.get_by_test_id("stException").all_inner_texts()]
    out += [f"not found: {t}" for t in page.get_by_test_id("stAlert").all_inner_texts() if NOT_FOUND.search(t)]
    for box in page.locator('[data-testid="stSelectbox"] input[role="combobox"]').all():
        if not box.input_value().strip():
            out.append(f"empty picker: {box.get_attribute('aria-label')}")
    for box in page.get_by_test_id("stMultiSelect").all():
        if not box.locator('[aria-label="Selected values"] [data-tag]').count():
            out.append(f"empty multiselect: {box.inner_text()[:80]}")
    return out


def options_of(page: object, key: str) -> list[str]:
    """The options of the select box with widget key ``key`` (opened, read, closed)."""
    page.locator(f'.st-key-{key} input[role="combobox"]').click()
    listbox = page.get_by_role("listbox").first
    listbox.wait_for(timeout=10_000)
    texts = listbox.get_by_role("option").all_inner_texts()
    page.keyboard.press("Escape")
    return texts


CASES = [(file, "") for file, _, _ in PAGES] + EXTRA


@pytest.mark.parametrize(("file", "query"), CASES, ids=[url_path(f).strip("/") + q for f, q in CASES])
def test_every_page_works_with_no_corpus_configured(app_url: str, browser: object, file: str, query: str) -> None:
    """The page renders with no error and no "not found", every picker has a value, and the corpus
    pickers start on a built-in set (the alignment and bottleneck ones offering all eight)."""
    page = browser.new_page(viewport={"width": 1280, "height": 900})
    errors: list[str] = []
    page.on("pageerror", lambda e: errors.append(str(e)))
    rendered(page, app_url + url_path(file) + query)
    name = url_path(file).strip("/") or "stepper"
    page.screenshot(path=str(ARTIFACTS / f"fresh-clone-{name}{'-extra' if query else ''}.png"), full_page=True)
    assert problems(page) == [], file
    assert not errors, errors
    if file in CORPUS_PICKERS:
        key, value, options = CORPUS_PICKERS[file]
        assert page.locator(f'.st-key-{key} input[role="combobox"]').input_value() == value
        if options is not None:
            assert options_of(page, key) == options
    if query:
        page.get_by_text("Sentence #").first.wait_for(timeout=10_000)  # a corpus sentence picked by its length
    page.close()
