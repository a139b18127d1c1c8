"""Every reveal of the Lesson shows the whole story: stop 7's revealed figure marks both « voiture » (the jump
ahead to “car”) and « rouge » (the return to “red”); on hand-made traces (values by hand) and on the page
(AppTest, the shipped Multi30k pair)."""

from __future__ import annotations

from pathlib import Path

import pandas as pd
import pytest
from streamlit.testing.v1 import AppTest

from tests.conftest import plain
from tests.traces import make_trace
from ui.lesson_content import STOPS
from ui.views import lesson as L

ROOT = Path(__file__).resolve().parent.parent
shipped = pytest.mark.skipif(not (ROOT / "checkpoints" / "m30k-en-fr-rnnsearch.pt").exists(),
                             reason="no shipped Multi30k pair")
ROWS = [[0.7, 0.2, 0.1], [0.1, 0.1, 0.8], [0.1, 0.85, 0.05], [0.6, 0.2, 0.2]]  # a b c d over s0 s1 </s>


def _frames(chart: object) -> list[pd.DataFrame]:
    return [layer.data for layer in chart.layer]  # type: ignore[attr-defined]


def test_a_revealed_row_and_the_row_it_returns_on_both_marked() -> None:
    t = make_trace(ROWS, tokens=["a", "b", "c", "d"])
    frames = _frames(L.lesson_alpha_chart(t, 1, revealed=True, guess=0, through=2))
    assert sorted(frames[0]["i"].unique()) == [0, 1, 2]  # row 3 (the future) is not drawn
    assert list(frames[0][frames[0]["i"] == 2]["alpha"]) == [0.1, 0.85, 0.05]
    crosses = frames[1]
    assert set(crosses["what"]) == {"model's argmax"}
    assert list(zip(crosses["i"], crosses["j"], strict=True)) == [(1, 2), (2, 1)]  # b → </s>, then c → s1
    assert list(zip(frames[2]["i"], frames[2]["j"], strict=True)) == [(1, 0)]  # the guess, framed
    hidden = _frames(L.lesson_alpha_chart(t, 1, revealed=False, through=2))
    assert sorted(hidden[0]["i"].unique()) == [0]  # before the reveal nothing after the "?" row
    assert L.then_text(t, 2) == "Then, for “c”, it looks at “s1” (α = 0.85)."
    description = L.lesson_alpha_chart(t, 1, revealed=True, through=2).to_dict()["description"]
    assert "« c » reads “s1” (α = 0.85)" in description


def test_stop_7_draws_the_return_to_rouge() -> None:
    reorder = next(s for s in STOPS if s.key == "reorder")
    assert reorder.then == 2 and (2, "rouge", "red") in reorder.expect and reorder.predict == 1


def chart_marks(at: AppTest) -> list[tuple[int, int]]:
    """(row, column) of every "model's argmax" cross in the page's charts."""
    from tests.stepper_app import chart_rows

    rows = [r for k in range(len(at.get("vega_lite_chart"))) for r in chart_rows(at, k)]
    return [(r["i"], r["j"]) for r in rows if r.get("what") == "model's argmax"]


@shipped
def test_stop_7_revealed_marks_voiture_and_rouge() -> None:
    at = AppTest.from_file(str(ROOT / "pages" / "lesson.py"), default_timeout=120)
    at.query_params["ls_stop"] = "7"
    at.run()
    assert chart_marks(at) == []
    at.button(key="ls_reveal").click().run()
    assert sorted(chart_marks(at)) == [(1, 2), (2, 1)]  # « voiture » → “car” (j = 2), « rouge » → “red” (j = 1)
    text = " ".join(plain(m.value) for m in at.markdown)
    assert "Then, for “rouge”, it looks at “red” (α = " in text


def test_a_screen_reader_hears_words_not_internal_fields() -> None:
    """Each cell's label in the SVG names its row's and column's words and its weight; the axes, which would
    read their positions 0, 1, 2, stay silent; no label reads "j: 0; i: 0; alpha: …"."""
    import re

    from ui.views.common import chart_svg, readable

    t = make_trace(ROWS[:3], tokens=["a", "b", "c"])
    labels = re.findall(r'aria-label="([^"]*)"', chart_svg(readable(L.lesson_alpha_chart(t, 1, True, 0, through=2))))
    assert "« a » and “s0”: α = 0.70" in labels and "« c » and “s1”: α = 0.85" in labels
    assert "« c » reads “s1” most (the model's choice)" in labels and "your guess for « b »: “s0”" in labels
    assert not [x for x in labels if re.search(r"\b[ij]: \d|alpha: |axis for a discrete scale", x)], labels
    hidden = re.findall(r'aria-label="([^"]*)"', chart_svg(readable(L.lesson_alpha_chart(t, 1, False))))
    assert "« b » and “s1”: hidden, to predict" in hidden and "?" not in hidden


def test_the_mix_in_school_words() -> None:
    assert L.mix_text("chiens", ["Two", "dogs", "are", "</s>"], [0.02, 0.95, 0.01, 0.02]) == (
        "The mix for « chiens »: 95 % of the note of “dogs”, 2 % of the note of “Two”, 2 % of the note of “</s>”, "
        "and the rest from the other words.")


@shipped
@pytest.mark.parametrize(("level", "table", "norm"), [("school", False, False), ("undergrad", True, False),
                                                      ("phd", True, True)])
def test_stop_6_speaks_at_its_level(level: str, table: bool, norm: bool) -> None:
    """At the school level the revealed mix is shares of “dogs”, no vectors and no ‖c_i‖; the norms only for a PhD."""
    at = AppTest.from_file(str(ROOT / "pages" / "lesson.py"), default_timeout=120)
    at.query_params.update({"ls_stop": "6", "ls_level": level})
    at.run()
    at.button(key="ls_reveal").click().run()
    text = " ".join(plain(m.value) for m in [*at.markdown, *at.caption])
    assert ("‖c_i‖" in text) == norm and (len(at.dataframe) > 0) == table
    assert ("of the note of “dogs”" in text) == (level == "school")


def test_the_annotations_grid_reads_as_words() -> None:
    import re

    import numpy as np

    from ui.views.common import chart_svg, readable

    h = np.array([[1.0, 0.0], [0.6, 0.8], [0.0, 1.0]])  # cos(h0, h1) = 0.6, cos(h0, h2) = 0, cos(h1, h2) = 0.8
    labels = re.findall(r'aria-label="([^"]*)"', chart_svg(readable(L.similarity_chart(["Two", "dogs", "run"], h))))
    assert "“Two” and “dogs”: cosine 0.60" in labels and "“dogs” and “run”: cosine 0.80" in labels
    assert not [x for x in labels if re.search(r"\b[jk]: \d|cos: |axis for a discrete scale", x)], labels
