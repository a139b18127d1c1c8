"""Readable from the back row (issue 21): every visible text on every page at least 14 px and 4.5:1.

In Debian's Chromium at 1280×720 (a projector) against ``streamlit run app.py`` with the shipped
checkpoints, each page of ``app.PAGES`` (the stepper also stepped, and in presentation mode)
is read by :mod:`tests.readability`: the rendered font size and the contrast against the colour
actually behind every text node, HTML and SVG (chart axes, legends, labels) alike; the page's
JavaScript errors are collected too (none allowed: the fresh clone's browser check; its other checks
are AppTest's, tests/test_app_links.py), and in the views a class sees presenting, every control's label.
The first test checks the measurement itself on a page of
hand-made cases whose ratios were worked out by hand from the WCAG formula, so a broken measurement
cannot pass the page test.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from app import PAGES
from tests import readability as R
from tests.chromium import ARTIFACTS, new_page
from tests.controls import unlabelled

ROOT = Path(__file__).resolve().parent.parent
VIEWPORT = {"width": 1280, "height": 720}
VIEWS = [(p.address, "", p.title) for p in PAGES if p.menu] + [
    ("/", "?sp_step=4", "stepper, 4 words written"),
    ("/", "?sp_step=6&sp_present=true", "stepper, presentation mode"),
    ("/watch_it_learn", "?wl_present=true", "Watch it learn, presentation mode")]
# the views a class sees from its seats, where every control must also show its label (tests/controls.py; the
# 150 % zoom views: tests/test_browser_back_row.py)
LABELLED = ("stepper, presentation mode", "Watch it learn, presentation mode")

pytestmark = [pytest.mark.browser, pytest.mark.slow]

# Hand-made cases: (id, html). Expected (px, contrast) from the WCAG 2.x formula, worked by hand:
# #777777 on white: L = ((0.4667 + 0.055) / 1.055) ** 2.4 = 0.1845, (1.05) / (0.2345) = 4.48;
# white on #206fb2: L(#206fb2) = 0.1489, 1.05 / 0.1989 = 5.28; black on rgba(0,0,0,.5) over white =
# grey 127.5 (L = ((0.5 + 0.055) / 1.055) ** 2.4 = 0.2140): 0.2640 / 0.05 = 5.28; #31333f at opacity .6 over white =
# rgb(131.4, 132.6, 139.8), L = 0.2126 * 0.2285 + 0.7152 * 0.2330 + 0.0722 * 0.2614 = 0.2341: 1.05 / 0.2841 = 3.70.
CASES = """
<body style="margin:0;background:#fff;font-family:sans-serif">
<p id="grey" style="color:#777777;font-size:16px">grey</p>
<p id="small" style="color:#000;font-size:13px">small</p>
<div style="background:rgba(0,0,0,.5)"><span id="half" style="color:#000;font-size:20px">half</span></div>
<p id="faded" style="color:#31333f;opacity:.6;font-size:14px">faded</p>
<div style="position:relative;background:#000;height:10px;width:10px">
  <span id="outside" style="position:absolute;top:30px;left:0;color:#000;font-size:14px;white-space:nowrap">
  outside</span></div>
<svg width="400" height="100" viewBox="0 0 200 50"><rect x="0" y="0" width="200" height="50" fill="#206fb2"/>
  <text id="cell" x="10" y="30" fill="#ffffff" font-size="10">cell</text></svg>
<button disabled style="color:#ccc;font-size:10px">off</button>
<span style="font-family:'Material Symbols Rounded';font-size:10px;color:#ccc">chevron_right</span>
</body>
"""
EXPECTED = {"grey": (16, 4.48), "small": (13, 21.0), "half": (20, 5.28), "faded": (14, 3.70),
            "outside": (14, 21.0), "cell": (20, 5.28)}


def test_the_measurement_itself(browser: object) -> None:
    """Sizes and ratios of the hand-made cases as worked out by hand; disabled controls and icon
    glyphs are left out; the grey, small and faded ones are the offenders."""
    with new_page(browser, viewport=VIEWPORT) as page:
        page.set_content(CASES)
        rows = {r.text: r for r in R.readings(page)}
    assert set(rows) == set(EXPECTED), rows  # "off" (disabled) and the icon glyph are not read
    for key, (px, contrast) in EXPECTED.items():
        assert rows[key].px == pytest.approx(px, abs=0.05), rows[key]
        assert rows[key].contrast == pytest.approx(contrast, abs=0.02), rows[key]
    assert sorted(r.text for r in R.offenders(list(rows.values()))) == ["faded", "grey", "small"]


def test_every_text_is_readable_at_1280x720(shipped_app_url: str, browser: object) -> None:
    """Each of :data:`VIEWS` in turn, each opened by its URL (a fresh session); two tabs take turns, so that
    while one view is read the next one loads in the other tab (a tab goes to its next view in place: a new
    tab would fetch and compile the app's scripts again, 1.3–1.9 s a view, against 0.2 s); every offender of
    every view is reported at once."""
    problems = {}
    with new_page(browser, viewport=VIEWPORT) as first, new_page(browser, viewport=VIEWPORT) as second:
        tabs = (first, second)
        errors: dict[int, list[str]] = {0: [], 1: []}  # each tab's JavaScript errors
        first.on("pageerror", lambda e: errors[0].append(f"javascript: {e}"))
        second.on("pageerror", lambda e: errors[1].append(f"javascript: {e}"))
        since: dict[int, int] = {}  # per view, how many errors its tab had raised before the view was opened

        def send(i: int) -> None:
            """Send view ``i``'s tab to its URL, without waiting for the page to load."""
            path, query, _ = VIEWS[i]
            since[i] = len(errors[i % 2])
            tabs[i % 2].goto(shipped_app_url + path + query, timeout=180_000, wait_until="commit")

        send(0)
        for i, (_, _, label) in enumerate(VIEWS):
            if i + 1 < len(VIEWS):
                send(i + 1)
            problems[label] = view_problems(tabs[i % 2], label, errors[i % 2], since[i])
    assert not any(problems.values()), "\n".join(f"{label}: {p}" for label, p in problems.items() if p)


def view_problems(page: object, label: str, js_errors: list[str], seen: int) -> list[str]:
    """What is wrong with one view sent to ``page``: errors (boxes, and JavaScript: those ``js_errors`` gained
    past its first ``seen``), too few texts read, a small title, texts under 14 px or 4.5:1, and in
    :data:`LABELLED` views a control without a readable label."""
    page.bring_to_front()  # a tab behind another loads, but neither draws nor runs its timers at full speed
    R.loaded(page)
    rows = R.readings(page)
    heading = page.locator("h1").first
    title = heading.inner_text().strip() if heading.is_visible() else None  # the stepper hides it on a projector
    errors = page.get_by_test_id("stAlertContentError").all_inner_texts() + page.get_by_test_id(
        "stException").all_inner_texts()
    page.screenshot(path=str(ARTIFACTS / f"readable-{label.replace(' ', '-').replace(',', '')}.png"))
    labels = unlabelled(page) if label in LABELLED else []
    errors = js_errors[seen:] + errors
    out = [f"error: {e}" for e in errors] + [f"control without a readable label: {c}" for c in labels]
    if len(rows) <= 20:  # the page was read
        out.append(f"only {len(rows)} texts read: {rows}")
    if title is not None and not any(r.text == title[:60] and r.px >= 28 for r in rows):
        out.append(f"title {title!r} not read at 28 px or more")
    bad = R.offenders(rows)
    if bad:
        out.append(f"{len(bad)} texts under {R.MIN_PX:g} px or {R.MIN_CONTRAST}:1\n" + "\n".join(map(str, bad)))
    return out
