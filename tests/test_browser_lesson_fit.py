"""Every stop of the Lesson on a 1280×720 projector, in Debian's Chromium on the shipped checkpoints, walked through
once as a presenter does (stop 1 opened by its URL, each next stop reached with the clicker's →): its key content
(the heading and clicker buttons, the guess pills, every chart, the numbers' table, the verdict and the question
for the class) lies inside the first 1280×720 screen, without scrolling, with the row revealed where a stop has
one to predict (stop 3: the row of the word asked about); the selected guess and every text of a revealed stop
read from the back row (≥ 14 px at ≥ 4.5:1). (The clicker's "." key and the level switch:
tests/test_browser_lesson.py.) Screenshots: test-artifacts/lesson-fit-*.png."""

from __future__ import annotations

import re

import pytest

from tests import readability as R
from tests.browser_waits import drawn, quiet, stable, still_drawn
from tests.chromium import ARTIFACTS, new_page, sync_api
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


def moved_on(page: object, n: int) -> None:
    """Press the clicker's → and wait until stop ``n`` is the URL's and its heading's, its script has finished
    and its charts are drawn (:func:`R.settled`), the question for the class shown."""
    page.keyboard.press("ArrowRight")
    page.wait_for_url(re.compile(rf"[?&]ls_stop={n}(&|$)"), timeout=WAIT)
    page.get_by_role("heading", name=STOPS[n - 1].title).wait_for(timeout=WAIT)
    R.settled(page)
    page.get_by_text("Question for the class.").wait_for(timeout=WAIT)
    still_drawn(page, timeout=WAIT)


def revealed(page: object) -> None:
    """Press B, once this stop's Reveal button shows and takes it, and wait until the revealed row and its verdict
    are drawn."""
    sync_api.expect(page.locator(".st-key-ls_reveal button")).to_have_text(re.compile("Reveal"), timeout=WAIT)
    sync_api.expect(page.locator(".st-key-ls_reveal button")).to_be_enabled(timeout=WAIT)
    page.keyboard.press("b")
    page.get_by_text(re.compile("looks most at|highest energy is|is the annotation of")).wait_for(timeout=WAIT)
    drawn(page, timeout=WAIT)


@pytest.fixture(scope="module")
def walk(shipped_app_url: str, browser: object) -> dict[str, object]:
    """The lesson walked through once in one 1280×720 tab, as a presenter does: stop 1 opened by its URL, each
    next one reached with the clicker's →, each stop that asks revealed with B. Per stop, its key content's
    boxes (``fit``); at stop 7, before the reveal, the selected guess's colours (``pill``: "car" clicked, then
    clicked again to leave no guess, as a fresh stop 7 has); at stops 4 and 9, revealed, every text as rendered
    (``reads``). Reaching a stop with → costs a third of a page load (measured: 0.5 s of Chromium's time against
    1.5 s), and the back row's stops are read on the same walk instead of being opened again."""
    out: dict[str, dict[int, object]] = {"fit": {}, "reads": {}}
    with new_page(browser, **PROJECTOR) as page:
        opened(page, f"{shipped_app_url}/lesson?ls_stop=1")
        for n, stop in enumerate(STOPS, start=1):
            if n > 1:
                moved_on(page, n)
            if n == 7:
                out["pill"] = selected_guess_colours(page)
            if stop.asks:
                revealed(page)
            out["fit"][n] = stable(page, f"() => ({BOXES_JS})({KEY!r})")
            page.screenshot(path=str(ARTIFACTS / f"lesson-fit-{n}-{stop.key}.png"))
            if n in (4, 9):
                out["reads"][n] = R.readings(page)
    return out


def test_each_stop_fits_one_projector_screen(walk: dict[str, object]) -> None:
    """Stop by stop: the key content of each inside the first 1280×720 screen."""
    assert sorted(walk["fit"]) == list(range(1, len(STOPS) + 1))
    for n, boxes in walk["fit"].items():
        stop_fits_one_projector_screen(STOPS[n - 1], boxes)


def stop_fits_one_projector_screen(stop: object, boxes: list[dict[str, object]]) -> None:
    """The question, the charts (and the numbers' table where it is the point) shown, and no box off screen."""
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


def test_the_lesson_reads_from_the_back_row(walk: dict[str, object]) -> None:
    """The selected guess at 4.5:1 or more; every text of the revealed energies (stop 4) and unknown-word
    (stop 9) stops at 14 px and 4.5:1 or more."""
    fg, bg, word = walk["pill"]
    assert word == "car" and contrast(fg, bg) >= 4.5, (fg, bg, contrast(fg, bg))
    assert contrast("rgb(255, 255, 255)", "rgb(118, 118, 118)") == pytest.approx(4.54, abs=0.01)  # a known pair
    assert contrast("rgb(0, 0, 0)", "rgba(0, 0, 0, 0)") == pytest.approx(21.0)  # transparent: the white page
    assert sorted(walk["reads"]) == [4, 9]
    for n, rows in walk["reads"].items():
        revealed_stop_reads_from_the_back_row(n, rows)


def selected_guess_colours(page: object) -> list[str]:
    """Click the guess "car" and return the selected pill's text colour, background and words once the hover's
    transition is over; then click it again, and wait until no guess is selected."""
    pill = page.get_by_test_id("stButtonGroup").get_by_role("radio", name="car", exact=True)
    pill.click()
    page.wait_for_function(
        "() => document.querySelector('[data-testid=\"stButtonGroup\"] [aria-checked=\"true\"]')", timeout=WAIT)
    quiet(page, 800, timeout=WAIT)
    page.mouse.move(5, 700)  # no hover colour
    colours = stable(page, PILL_JS)  # its colours once the hover's transition is over
    page.screenshot(path=str(ARTIFACTS / "lesson-fit-selected-pill.png"))
    pill.click()
    page.wait_for_function(
        "() => !document.querySelector('[data-testid=\"stButtonGroup\"] [aria-checked=\"true\"]')", timeout=WAIT)
    quiet(page, 800, timeout=WAIT)
    page.mouse.move(5, 700)
    return colours


def revealed_stop_reads_from_the_back_row(n: int, rows: list[R.Reading]) -> None:
    """Every text of a revealed stop (the energies' numbers in their cells too) is ≥ 14 px at ≥ 4.5:1."""
    cells = [r for r in rows if re.fullmatch(r"-?\d+\.\d", r.text)]
    assert n != 4 or len(cells) >= 50, cells  # 6 rows × 9 energies, each written in its cell
    bad = R.offenders(rows)
    assert not bad, (n, [str(r) for r in bad])
