"""Every stop of the Lesson on a 1280×720 projector, in Debian's Chromium on the shipped checkpoints:
its key content (the heading and clicker buttons, the guess pills, every chart, the numbers' table, the
verdict and the question for the class) lies inside the first 1280×720 screen, without scrolling, with
the row revealed where a stop has one to predict (stop 3: the row of the word asked about); the selected
guess and every text of a revealed stop read from the back row (≥ 14 px at ≥ 4.5:1). (The clicker's "." key
and the level switch: tests/test_browser_lesson.py.) Screenshots: test-artifacts/lesson-fit-*.png."""

from __future__ import annotations

import re

import pytest

from tests import readability as R
from tests.browser_waits import drawn, quiet, stable, still_drawn
from tests.chromium import ARTIFACTS, new_page
from ui.lesson.content import STOPS

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


def opened(page: object, url: str) -> None:
    """Open ``url`` and wait until its script has finished and its charts are drawn (:func:`R.rendered` has
    waited out the first view's reruns), the question for the class shown."""
    R.rendered(page, url)
    page.get_by_text("Question for the class.").wait_for(timeout=WAIT)
    still_drawn(page, timeout=WAIT)


def revealed(page: object) -> None:
    """Press B and wait until the revealed row and its verdict are drawn."""
    page.keyboard.press("b")
    page.get_by_text(re.compile("looks most at|highest energy is|is the annotation of")).wait_for(timeout=WAIT)
    drawn(page, timeout=WAIT)


def test_each_stop_fits_one_projector_screen(shipped_app_url: str, browser: object) -> None:
    """Stop by stop, in one tab: the key content of each inside the first 1280×720 screen."""
    with new_page(browser, **PROJECTOR) as page:
        for n in range(1, len(STOPS) + 1):
            stop_fits_one_projector_screen(page, shipped_app_url, n)


def stop_fits_one_projector_screen(page: object, shipped_app_url: str, n: int) -> None:
    stop = STOPS[n - 1]
    opened(page, f"{shipped_app_url}/lesson?ls_stop={n}")
    if stop.asks:
        revealed(page)
    boxes = stable(page, f"() => ({BOXES_JS})({KEY!r})")
    page.screenshot(path=str(ARTIFACTS / f"lesson-fit-{n}-{stop.key}.png"))
    charts = [b for b in boxes if b["what"].startswith("stVegaLiteChart")]
    assert any(b["what"].startswith("stMarkdownContainer: Question") for b in boxes), (stop.key, boxes)
    assert charts or (stop.sentence is None and stop.key != "length"), boxes  # the wrap-up alone is words
    if stop.key in ("softmax", "context"):  # the numbers' table is the point of these two
        assert any(b["what"].startswith("stDataFrame") for b in boxes), boxes
    outside = [b for b in boxes if b["bottom"] > 720 or b["right"] > 1280 or b["top"] < 0 or b["left"] < 0]
    assert not outside, (stop.key, outside)


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


def test_the_lesson_reads_from_the_back_row(shipped_app_url: str, browser: object) -> None:
    """The selected guess at 4.5:1 or more; every text of the revealed energies (stop 4) and unknown-word
    (stop 9) stops at 14 px and 4.5:1 or more."""
    with new_page(browser, **PROJECTOR) as page:
        the_selected_guess_reads_at_4_5_to_1(page, shipped_app_url)
        for n in (4, 9):
            revealed_stop_reads_from_the_back_row(page, shipped_app_url, n)


def the_selected_guess_reads_at_4_5_to_1(page: object, shipped_app_url: str) -> None:
    opened(page, f"{shipped_app_url}/lesson?ls_stop=7")
    page.get_by_test_id("stButtonGroup").get_by_role("radio", name="car", exact=True).click()
    page.wait_for_function(
        "() => document.querySelector('[data-testid=\"stButtonGroup\"] [aria-checked=\"true\"]')", timeout=WAIT)
    quiet(page, 800, timeout=WAIT)
    page.mouse.move(5, 700)  # no hover colour
    fg, bg, word = stable(page, PILL_JS)  # its colours once the hover's transition is over
    page.screenshot(path=str(ARTIFACTS / "lesson-fit-selected-pill.png"))
    assert word == "car" and contrast(fg, bg) >= 4.5, (fg, bg, contrast(fg, bg))
    assert contrast("rgb(255, 255, 255)", "rgb(118, 118, 118)") == pytest.approx(4.54, abs=0.01)  # a known pair
    assert contrast("rgb(0, 0, 0)", "rgba(0, 0, 0, 0)") == pytest.approx(21.0)  # transparent: the white page


def revealed_stop_reads_from_the_back_row(page: object, shipped_app_url: str, n: int) -> None:
    """Every text of a revealed stop (the energies' numbers in their cells too) is ≥ 14 px at ≥ 4.5:1."""
    opened(page, f"{shipped_app_url}/lesson?ls_stop={n}")
    revealed(page)
    rows = R.readings(page)
    cells = [r for r in rows if re.fullmatch(r"-?\d+\.\d", r.text)]
    assert n != 4 or len(cells) >= 50, cells  # 6 rows × 9 energies, each written in its cell
    bad = R.offenders(rows)
    assert not bad, (n, [str(r) for r in bad])
