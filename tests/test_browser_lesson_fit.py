"""Every stop of the Lesson on a 1280×720 projector, in Debian's Chromium on the shipped checkpoints:
its key content (the heading and clicker buttons, the guess pills, every chart, the numbers' table, the
verdict and the question for the class) lies inside the first 1280×720 screen, without scrolling, with
the row revealed where a stop has one to predict. The clicker's keys: "." reveals as B does, and after
the level switch is clicked → and PageDown still move between stops. Screenshots:
test-artifacts/lesson-fit-*.png."""

from __future__ import annotations

import re
from collections.abc import Iterator

import pytest

from tests import readability as R
from tests.chromium import (
    ARTIFACTS,
    browser,  # noqa: F401 (a fixture)
    shipped_app_url,  # noqa: F401 (a fixture)
)
from ui.lesson_content import STOPS

WAIT = 180_000  # ms: a shared, loaded machine; the first decode of a stop loads its model
PROJECTOR = {"viewport": {"width": 1280, "height": 720}}
KEY = ('[data-testid="stHeading"], .st-key-ls_top button, [data-testid="stButtonGroup"], '
       '[data-testid="stVegaLiteChart"], [data-testid="stDataFrame"], [data-testid="stAlert"]')
# every box of key content that shows (a zero-size box is not drawn), with what it is, the question for the
# class's text included; measured with the page scrolled to its top
BOXES_JS = """(sel) => {
  for (const e of [document.scrollingElement, document.querySelector('[data-testid="stMain"]')]) e && e.scrollTo(0, 0);
  const question = [...document.querySelectorAll('[data-testid="stMarkdownContainer"]')]
    .filter(e => e.innerText.startsWith('Question for the class.'));
  const main = document.querySelector('[data-testid="stMain"]');  // not the collapsed sidebar's
  return [...main.querySelectorAll(sel), ...question].map(e => {
    const r = e.getBoundingClientRect();
    return {what: (e.getAttribute('data-testid') || e.tagName) + ': ' + e.innerText.slice(0, 40).replace(/\\n/g, ' '),
            top: r.top, left: r.left, bottom: r.bottom, right: r.right, w: r.width, h: r.height};
  }).filter(b => b.w > 0 && b.h > 0);
}"""

pytestmark = [pytest.mark.browser, pytest.mark.slow]


@pytest.fixture(scope="module")
def page(browser: object) -> Iterator[object]:
    p = browser.new_page(**PROJECTOR)
    yield p
    p.close()


def drawn(page: object, url: str) -> None:
    """Open ``url`` and wait until its script has finished and its charts are drawn."""
    R.rendered(page, url)
    page.get_by_text("Question for the class.").wait_for(timeout=WAIT)
    page.wait_for_function(R.IDLE, timeout=WAIT)
    page.wait_for_timeout(1500)


@pytest.mark.parametrize("n", range(1, len(STOPS) + 1), ids=[s.key for s in STOPS])
def test_each_stop_fits_one_projector_screen(shipped_app_url: str, page: object, n: int) -> None:
    stop = STOPS[n - 1]
    drawn(page, f"{shipped_app_url}/lesson?ls_stop={n}")
    if stop.predict is not None:
        page.keyboard.press("b")
        page.get_by_text(re.compile("looks most at|highest energy is")).wait_for(timeout=WAIT)
        page.wait_for_function(R.IDLE, timeout=WAIT)
        page.wait_for_timeout(1500)
    boxes = page.evaluate(BOXES_JS, KEY)
    page.wait_for_timeout(300)
    page.screenshot(path=str(ARTIFACTS / f"lesson-fit-{n}-{stop.key}.png"))
    charts = [b for b in boxes if b["what"].startswith("stVegaLiteChart")]
    assert any(b["what"].startswith("stMarkdownContainer: Question") for b in boxes), boxes
    assert charts or (stop.sentence is None and stop.key != "length"), boxes  # the wrap-up alone is words
    if stop.key in ("softmax", "context"):  # the numbers' table is the point of these two
        assert any(b["what"].startswith("stDataFrame") for b in boxes), boxes
    outside = [b for b in boxes if b["bottom"] > 720 or b["right"] > 1280 or b["top"] < 0 or b["left"] < 0]
    assert not outside, outside


def test_dot_reveals_and_the_level_switch_gives_the_keys_back(shipped_app_url: str, page: object) -> None:
    drawn(page, f"{shipped_app_url}/lesson?ls_stop=7")
    page.keyboard.press(".")  # a clicker's other blank-screen key
    page.get_by_text(re.compile("looks most at")).wait_for(timeout=WAIT)
    page.keyboard.press(".")  # and back
    page.get_by_role("button", name=re.compile("^Reveal")).wait_for(timeout=WAIT)
    expand = page.get_by_test_id("stExpandSidebarButton")
    if expand.count():
        expand.click()
    page.get_by_test_id("stRadio").get_by_text("For a PhD candidate").click()
    page.wait_for_url(re.compile(r"ls_level=phd"), timeout=WAIT)
    page.wait_for_function(R.IDLE, timeout=WAIT)
    page.wait_for_timeout(800)
    page.keyboard.press("ArrowRight")  # the next stop, not the next level
    page.wait_for_url(re.compile(r"ls_stop=8(&|$)"), timeout=WAIT)
    page.wait_for_function(R.IDLE, timeout=WAIT)
    page.get_by_test_id("stCheckbox").get_by_text("α on a log scale").click()  # a toggle gives them back too
    page.wait_for_url(re.compile(r"ls_log=true"), timeout=WAIT)
    page.wait_for_function(R.IDLE, timeout=WAIT)
    page.wait_for_timeout(800)
    page.keyboard.press("PageDown")
    page.wait_for_url(re.compile(r"ls_stop=9(&|$)"), timeout=WAIT)
    assert "ls_level=phd" in page.url, page.url


PILL_JS = """() => {
  const b = document.querySelector('[data-testid="stButtonGroup"] [aria-checked="true"]');
  const t = [...b.querySelectorAll('*')].find(e => e.childNodes.length && [...e.childNodes].some(
    n => n.nodeType === 3 && n.textContent.trim())) || b;
  return [getComputedStyle(t).color, getComputedStyle(b).backgroundColor, b.innerText];
}"""


def contrast(fg: str, bg: str) -> float:
    """WCAG 2.x contrast ratio of two CSS ``rgb(…)`` / ``rgba(…)`` colours, each composited over white
    (the page's background)."""
    def lum(css: str) -> float:
        v = [float(x) for x in re.findall(r"[\d.]+", css)]
        a = v[3] if len(v) > 3 else 1.0
        rgb = [(c * a + 255 * (1 - a)) / 255 for c in v[:3]]
        f = [c / 12.92 if c <= 0.03928 else ((c + 0.055) / 1.055) ** 2.4 for c in rgb]
        return 0.2126 * f[0] + 0.7152 * f[1] + 0.0722 * f[2]
    hi, lo = sorted((lum(fg), lum(bg)), reverse=True)
    return (hi + 0.05) / (lo + 0.05)


def test_the_selected_guess_reads_at_4_5_to_1(shipped_app_url: str, page: object) -> None:
    drawn(page, f"{shipped_app_url}/lesson?ls_stop=7")
    page.get_by_test_id("stButtonGroup").get_by_role("radio", name="car", exact=True).click()
    page.wait_for_function(R.IDLE, timeout=WAIT)
    page.wait_for_timeout(800)
    page.mouse.move(5, 700)  # no hover colour
    page.wait_for_timeout(300)
    fg, bg, word = page.evaluate(PILL_JS)
    page.screenshot(path=str(ARTIFACTS / "lesson-fit-selected-pill.png"))
    assert word == "car" and contrast(fg, bg) >= 4.5, (fg, bg, contrast(fg, bg))
    assert contrast("rgb(255, 255, 255)", "rgb(118, 118, 118)") == pytest.approx(4.54, abs=0.01)  # a known pair
    assert contrast("rgb(0, 0, 0)", "rgba(0, 0, 0, 0)") == pytest.approx(21.0)  # transparent: the white page


@pytest.mark.parametrize("n", [4, 9], ids=["energies", "unknown"])
def test_revealed_stops_read_from_the_back_row(shipped_app_url: str, page: object, n: int) -> None:
    """Every text of a revealed stop (the energies' numbers in their cells too) is ≥ 14 px at ≥ 4.5:1."""
    drawn(page, f"{shipped_app_url}/lesson?ls_stop={n}")
    page.keyboard.press("b")
    page.get_by_text(re.compile("looks most at|highest energy is")).wait_for(timeout=WAIT)
    page.wait_for_function(R.IDLE, timeout=WAIT)
    page.wait_for_timeout(1500)
    rows = R.readings(page)
    cells = [r for r in rows if re.fullmatch(r"-?\d+\.\d", r.text)]
    assert n != 4 or len(cells) >= 50, cells  # 6 rows × 9 energies, each written in its cell
    bad = R.offenders(rows)
    assert not bad, [str(r) for r in bad]
