"""The handout's print sizes, worked out by hand: the size an SVG's smallest label prints at in its box, which
figures need the page's width and how tall a box each gets so no label prints under 8.5 pt, and the rows laid
out so that no half row stays empty. (Chromium's own PDF is measured in tests/test_browser_lesson.py.)"""

from __future__ import annotations

import pytest

from ui.lesson import views_handout as H


def svg(width: int, height: int, *fonts: int) -> str:
    texts = "".join(f'<text font-size="{f}px">x</text>' for f in fonts)
    return f'<svg xmlns="http://www.w3.org/2000/svg" width="{width}" height="{height}">{texts}</svg>'


def test_the_printed_size_of_the_smallest_label() -> None:
    # half of A4 inside 12 mm margins and a 6 mm gap: (210 − 24 − 6) / 2 = 90 mm = 340.2 px; an 800 px
    # figure shrinks to 0.425, so its 14 px labels print at 14 × 0.425 × 0.75 = 4.47 pt (issue 51 saw 4–5 pt)
    assert H.HALF_MM == 90
    assert H.label_pt(svg(800, 100, 16, 14), (90, 52)) == pytest.approx(4.465, abs=1e-3)
    assert H.label_pt(svg(200, 100, 14), (90, 52)) == pytest.approx(10.5)  # never enlarged: 14 px is 10.5 pt
    # height-bound: 52 mm = 196.5 px for a 400 px tall figure, 0.491 of its size: 5.16 pt
    assert H.label_pt(svg(300, 400, 14), (90, 52)) == pytest.approx(5.159, abs=1e-3)
    assert H.label_pt('<svg width="10" height="10"></svg>', (90, 52)) is None


def test_a_figure_gets_the_width_and_height_its_labels_need() -> None:
    # 14 px labels are 10.5 pt at full size, so a figure may shrink to 8.5 / 10.5 = 0.8095 of it
    wide, height = H.figure_box(svg(800, 100, 14))
    assert wide and height == 52  # 800 × 0.8095 = 647.6 px = 171 mm > 90 mm; 21.4 mm tall fits 52 mm
    wide, height = H.figure_box(svg(300, 400, 14))
    assert not wide and height == pytest.approx(400 * 8.5 / 10.5 * 25.4 / 96 + 0.5)  # 85.7 + 0.5 mm
    assert H.figure_box(svg(300, 100, 10)) == (False, 52)  # 7.5 pt at full size: shrinking cannot help
    assert H.figure_box(None) == (False, 52)


def test_rows_never_leave_a_half_row_empty() -> None:
    half, wide = svg(200, 100, 14), svg(900, 100, 14)
    assert H.layout([half, wide, half, half, half, wide, half]) == [
        "solo", "wide", "half", "half", "solo", "wide", "solo"]
    assert H.layout([half, half, None, wide]) == ["half", "half", "solo", "wide"]
    assert H.layout([half, half]) == ["half", "half"]
