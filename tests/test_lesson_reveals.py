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
from ui.lesson import views as L
from ui.lesson import views_similarity as S
from ui.lesson.content import STOPS

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


def test_the_energies_argmax_is_a_patch_under_its_number_not_a_cross_over_it() -> None:
    t = make_trace(ROWS, tokens=["a", "b", "c", "d"])
    for k, step in enumerate(t.steps):
        step.energies = [10 * a for a in ROWS[k]]
    alpha = L.lesson_alpha_chart(t, 1, revealed=True).to_dict()
    energy = L.lesson_alpha_chart(t, 1, revealed=True, quantity="energy").to_dict()
    cross, patch = alpha["layer"][1]["mark"], energy["layer"][1]["mark"]
    assert (cross["type"], cross["shape"], cross["color"]) == ("point", "cross", L.ARGMAX)
    assert (patch["type"], patch["color"], patch["height"]) == ("rect", L.ARGMAX, 22) and "shape" not in patch
    assert energy["layer"][-1]["mark"]["type"] == "text"  # the numbers drawn over it, the argmax's (8.0) too


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

    from ui.figures.common import chart_svg, readable

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

    from ui.figures.common import chart_svg, readable

    h = np.array([[1.0, 0.0], [0.6, 0.8], [0.0, 1.0]])  # cos(h0, h1) = 0.6, cos(h0, h2) = 0, cos(h1, h2) = 0.8
    labels = re.findall(r'aria-label="([^"]*)"', chart_svg(readable(S.similarity_chart(["Two", "dogs", "run"], h))))
    assert "“Two” and “dogs”: cosine 0.60" in labels and "“dogs” and “run”: cosine 0.80" in labels
    assert not [x for x in labels if re.search(r"\b[jk]: \d|cos: |axis for a discrete scale", x)], labels


# Stop 3: which word's annotation is most like that of "dogs"? On a hand-made 3 × 4 matrix of annotations:
# cos(a, b) = 1/√2 = 0.7071, cos(a, c) = 0, cos(b, c) = 1/√6 = 0.4082; and d = (0, 0, 0, 1) added, 3 words from a:
# cos(a, d) = cos(b, d) = 0, cos(c, d) = 1/√3.
H = [[1.0, 0.0, 0.0, 0.0], [1.0, 1.0, 0.0, 0.0], [0.0, 1.0, 1.0, 1.0]]
H4 = [*H, [0.0, 0.0, 0.0, 1.0]]


def test_the_word_most_like_an_asked_word_on_a_hand_made_matrix() -> None:
    v = S.likeness(["a", "b", "c"], H, 0, 2)
    assert v.cosines == pytest.approx((1.0, 0.7071068, 0.0)) and v.argmax == 1 and v.guess == 2 and not v.matched
    assert S.likeness(["a", "b", "c"], H, 2, 1).matched  # c: b (0.41) beats a (0)
    assert S.likeness(["a", "b", "c"], H, 1, 7).guess is None  # out of range: no guess
    with pytest.raises(ValueError):
        S.likeness(["a"], [[1.0]], 0, None)  # no other word to compare with


def test_the_annotations_verdict_at_each_level() -> None:
    wrong, right = S.likeness(["a", "b", "c"], H, 0, 2), S.likeness(["a", "b", "c"], H, 2, 1)
    assert S.likeness_text(wrong, "undergrad") == (
        "The annotation most like that of “a” is the annotation of “b”: cosine 0.71, right next to it. "
        "Your guess “c” has cosine 0.00, 2 words away.")
    assert S.likeness_text(right, "undergrad") == (
        "The annotation most like that of “c” is the annotation of “b”: cosine 0.41, right next to it. "
        "Your guess “b” is right.")
    assert S.likeness_text(wrong, "school") == (
        "The note most like the note of “a” is the note of “b”, right next to it: similarity 0.71 (1 would be "
        "the same). Your guess “c” has similarity 0.00, 2 words away.")
    assert S.likeness_text(S.likeness(list("abcd"), H4, 0, 3), "phd") == (
        "The h_k most like h_j for x_j = “a”: “b”, cos = 0.71 at |j − k| = 1; mean cos 0.71 at |j − k| = 1, "
        "0.00 at |j − k| ≥ 3. Your guess “d” has cos 0.00, 3 words away.")
    # c's neighbours b (0.41) and d (0.58): their mean 0.49; nothing 3 away; no guess
    assert S.likeness_text(S.likeness(list("abcd"), H4, 2, None), "phd") == (
        "The h_k most like h_j for x_j = “c”: “d”, cos = 0.58 at |j − k| = 1; mean cos 0.49 at |j − k| = 1. "
        "No guess was made.")


def test_the_question_over_the_grid_at_each_level() -> None:
    assert S.ask_text(["a", "b", "</s>"], 4, 1, "school") == (
        "Each of the 2 English words (and the end, </s>) has a note of 4 numbers; the grid shows how alike two "
        "notes are (1: the same). Which note is most like the note of “b”?")
    assert S.ask_text(["a", "b", "</s>"], 4, 0, "phd") == S.ask_text(["a", "b", "</s>"], 4, 0, "undergrad") == (
        "Each of the 3 source positions has an annotation h_j of 4 numbers; the grid compares every pair "
        "(cosine). Which word's annotation is most like that of “a”?")


def test_the_frames_explained_under_the_grid() -> None:
    assert S.marks_note("dogs", True) == ("Orange dashes: the word whose annotation is most like that of “dogs”. "
                                          "Red: your guess.")
    assert S.marks_note("dogs", False) == "Orange dashes: the word whose annotation is most like that of “dogs”."


def test_the_asked_row_and_column_stay_hidden_until_the_reveal() -> None:
    hidden = S.similarity_chart(["a", "b", "c"], H, probe=1, revealed=False)
    frames = _frames(hidden)
    assert sorted(zip(frames[0]["j"], frames[0]["k"], strict=True)) == [(0, 0), (0, 2), (2, 0), (2, 2)]
    assert sorted(zip(frames[1]["j"], frames[1]["k"], strict=True)) == [(0, 1), (1, 0), (1, 1), (1, 2), (2, 1)]
    assert set(frames[2]["q"]) == {"?"}
    assert frames[-1] is frames[0]  # the cosines written last, over the grey cells' and the marks' layers
    assert hidden.to_dict()["height"] == {"step": 32} and S.similarity_chart(
        ["a", "b"], H[:2], row=24).to_dict()["height"] == {"step": 24}  # rows of cell − 8 px, or as asked
    said = hidden.to_dict()["description"]
    assert said.endswith("“a” is most like “c” (0.0); “c” is most like “a” (0.0). "
                         "The row and column of “b”: hidden, to predict.")
    shown = S.similarity_chart(["a", "b", "c"], H, probe=0, revealed=True, guess=2)
    frames = _frames(shown)
    assert len(frames[0]) == 9
    marks = {d["what"][0]: (int(d["j"][0]), int(d["k"][0])) for d in frames if "what" in d.columns}
    assert marks == {"most alike": (0, 1), "your guess": (0, 2)}
    assert shown.to_dict()["description"].endswith(
        "“a” is most like “b” (0.71, the model's answer); your guess: “c” (0.00).")


@shipped
@pytest.mark.parametrize("level", ["school", "undergrad"])
def test_stop_3_asks_for_the_word_most_like_dogs_and_reveals_it(level: str) -> None:
    """The grid opens with the row and column of “dogs” hidden and “dogs” not among the guesses; the class
    guesses “Two”; B reveals the row with “are” crossed and “Two” framed, and the verdict at the level."""
    from tests.stepper_app import chart_rows

    at = AppTest.from_file(str(ROOT / "pages" / "lesson.py"), default_timeout=120)
    at.query_params.update({"ls_stop": "3", "ls_level": level})
    at.run()
    assert not at.exception and not at.button(key="ls_reveal").disabled
    pills = at.pills(key="ls_guess_annotations")
    assert pills.options == ["Two", "are", "running", "in", "the", "snow", ".", "</s>"]  # “dogs” is asked about
    rows = chart_rows(at, 0)
    assert not [r for r in rows if "cos" in r and 1 in (r["j"], r["k"])]  # nothing of “dogs” before the reveal
    pills.set_value(0).run()  # "Two"
    at.button(key="ls_reveal").click().run()
    rows = chart_rows(at, 0)
    assert [(r["j"], r["k"]) for r in rows if r.get("what") == "most alike"] == [(1, 2)]  # “dogs” → “are”
    assert [(r["j"], r["k"]) for r in rows if r.get("what") == "your guess"] == [(1, 0)]
    assert "Orange dashes: the word whose annotation is most like that of “dogs”. Red: your guess." in [
        plain(m.value) for m in at.markdown]
    (said,) = [plain(m.value) for m in at.info]
    head = ("The note most like the note of “dogs” is the note of “are”, right next to it: similarity 0."
            if level == "school" else "The annotation most like that of “dogs” is the annotation of “are”: cosine 0.")
    assert said.startswith(head) and ("Your guess “Two” has " + ("similarity" if level == "school" else "cosine")
                                      + " 0.") in said and said.endswith(", right next to it.")


@shipped
def test_the_answer_key_gives_stop_3_the_models_own_answer() -> None:
    """The presenter view's and the answer key's line for stop 3: the model's most alike word, no guess."""
    from ui.lesson import page as P

    line = P.model_line(next(s for s in STOPS if s.key == "annotations"))
    assert line is not None and line.startswith(
        "The annotation most like that of “dogs” is the annotation of “are”: cosine 0.")
    assert line.endswith(", right next to it.")
