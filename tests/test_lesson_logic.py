"""The lesson's logic by property (ui/lesson/views.py): a guess at every position, inside and outside
the sentence, against a hand-made α row; Fig. 2's buckets at exactly the minimum number of sentences;
the URL's stop number at both ends. Every expected value is written out here, never computed by the
code under test."""

from __future__ import annotations

import pytest

from tests.traces import make_trace
from ui.lesson import views as L

# three source tokens (s0, s1, </s>); the argmax is at the first word, the second, then </s>
ROWS = [[0.5, 0.3, 0.2], [0.1, 0.7, 0.2], [0.2, 0.1, 0.7]]
SRC = ["s0", "s1", "</s>"]
ARGMAX = [0, 1, 2]


@pytest.mark.parametrize("step", range(3))
@pytest.mark.parametrize("guess", [None, -4, -3, -2, -1, 0, 1, 2, 3, 4, 7])
def test_a_guess_at_every_position_inside_or_outside_the_sentence(step: int, guess: int | None) -> None:
    """A position 0…2 is a guess (its word and α read from the row); any other (negative ones too,
    which Python would index from the end) is no guess: not matched, no frame drawn."""
    t = make_trace(ROWS, tokens=["x", "y", "z"])
    v = L.verdict(t, step, guess)
    assert (v.argmax, v.argmax_word, v.argmax_alpha) == (ARGMAX[step], SRC[ARGMAX[step]], ROWS[step][ARGMAX[step]])
    inside = guess is not None and guess in (0, 1, 2)
    if inside:
        assert (v.guess, v.guess_word, v.guess_alpha) == (guess, SRC[guess], ROWS[step][guess])
        assert v.matched == (guess == ARGMAX[step])
    else:
        assert (v.guess, v.guess_word, v.guess_alpha, v.matched) == (None, None, None, False)
        assert L.verdict_text(v).endswith("No guess was made.")
    layers = L.lesson_alpha_chart(t, step, revealed=True, guess=guess).layer  # type: ignore[union-attr]
    frames = [layer.data for layer in layers[1:]]
    marks = {str(d["what"][0]): int(d["j"][0]) for d in frames}
    assert marks == ({"model's argmax": ARGMAX[step], "your guess": guess} if inside
                     else {"model's argmax": ARGMAX[step]})


def _bucket(lo: int, n: int, score: float) -> dict[str, float]:
    return {"lo": lo, "hi": lo + 10, "n": n, "score": score}


# buckets of 9, 10 and 11 sentences around the lesson's minimum of 10
EDGE = {"models": {"m": {"scores": {"t": {"greedy": {"by_length": [
    _bucket(0, 9, 30.0), _bucket(10, 10, 40.0), _bucket(20, 11, 50.0)]}}}}}}


def test_fig2_keeps_a_bucket_of_exactly_the_minimum_size() -> None:
    assert L.MIN_BUCKET == 10
    f = L.fig2_frame(EDGE, "t")
    assert f[["bucket", "n", "bleu"]].values.tolist() == [["10–19", 10, 40.0], ["20–29", 11, 50.0]]
    assert L.fig2_frame(EDGE, "t", min_n=11)["bucket"].tolist() == ["20–29"]
    assert L.fig2_frame(EDGE, "t", min_n=9)["bucket"].tolist() == ["0–9", "10–19", "20–29"]


@pytest.mark.parametrize(("value", "index"), [("1", 0), ("2", 1), ("7", 6), ("8", 7), ("9", 0), ("0", 0)])
def test_stop_numbers_at_both_ends(value: str, index: int) -> None:
    assert L.stop_index(value, 8) == index
