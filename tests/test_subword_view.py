"""ui.figures.subword_view: a BPE trace grouped into words, against numbers worked out by hand."""

from __future__ import annotations

import math

import pytest

from nmt.decoding.trace import DecodeTrace, StepRecord
from ui.figures import stepper_charts as sc
from ui.figures.subword_view import step_of_row, words_trace


def _step(i: int, token: str, logprob: float, alpha: list[float], forced: bool = False) -> StepRecord:
    return StepRecord(i=i, token=token, token_id=10 + i, logprob=logprob, forced=forced, energies=[0.0] * len(alpha),
                      alpha=alpha, topk=[], state_norm=1.0, context_norm=1.0)


@pytest.fixture
def pieces() -> DecodeTrace:
    """Source "a vél@@ os </s>", target "des vél@@ os </s>" (α rows sum to 1)."""
    steps = [_step(0, "des", -0.5, [0.7, 0.1, 0.1, 0.1]),
             _step(1, "vél@@", -1.0, [0.0, 0.6, 0.2, 0.2], forced=True),
             _step(2, "os", -0.25, [0.0, 0.2, 0.6, 0.2]),
             _step(3, "</s>", -0.1, [0.0, 0.0, 0.1, 0.9])]
    return DecodeTrace(source="a vélos", src_tokens=["a", "vél@@", "os", "</s>"], src_unk=[False, True, False, False],
                       method="greedy", context="attention", steps=steps, translation="des vélos")


def test_words_sum_source_pieces_and_average_target_pieces(pieces: DecodeTrace) -> None:
    words, spans = words_trace(pieces, "bpe")
    assert words.src_tokens == ["a", "vélos", "</s>"] and words.src_unk == [False, True, False]
    assert [s.token for s in words.steps] == ["des", "vélos", "</s>"] and spans == [(0, 1), (1, 3), (3, 4)]
    # "vélos" row: pieces' rows summed over [a | vél@@ os | </s>] = [0, .8, .2] and [0, .8, .2]; their mean
    expected = [[0.7, 0.2, 0.1], [0.0, 0.8, 0.2], [0.0, 0.1, 0.9]]
    for s, want in zip(words.steps, expected, strict=True):
        assert s.alpha == pytest.approx(want)
        assert s.energies is None
    assert words.steps[1].logprob == pytest.approx(-1.25) and words.steps[1].forced
    assert [s.i for s in words.steps] == [0, 1, 2]
    assert math.isclose(sum(words.steps[1].alpha or []), 1.0)


def test_a_clicked_word_row_is_its_last_piece_step(pieces: DecodeTrace) -> None:
    _, spans = words_trace(pieces, "bpe")
    assert [step_of_row(r, spans) for r in (0, 1, 2, 3, None)] == [0, 2, 3, None, None]


def test_the_heatmap_draws_the_words(pieces: DecodeTrace) -> None:
    words, _ = words_trace(pieces, "bpe")
    spec = sc.heatmap(words, "alpha")
    assert spec is not None
    cells = {(v["i"], v["j"]): v["alpha"] for v in spec["data"]["values"]}
    assert len(cells) == 9 and cells[(1, 1)] == pytest.approx(0.8)


def test_one_hypothesis_matrix_as_words() -> None:
    from ui.figures.subword_view import words_matrix

    alpha = [[0.7, 0.1, 0.1, 0.1], [0.0, 0.6, 0.2, 0.2], [0.0, 0.2, 0.6, 0.2], [0.0, 0.0, 0.1, 0.9]]
    src, tgt, merged = words_matrix(["a", "vél@@", "os", "</s>"], ["des", "vél@@", "os", "</s>"], alpha, "bpe")
    assert src == ["a", "vélos", "</s>"] and tgt == ["des", "vélos", "</s>"]
    assert [row == pytest.approx(want) for row, want in zip(merged, [[0.7, 0.2, 0.1], [0.0, 0.8, 0.2], [0.0, 0.1, 0.9]],
                                                           strict=True)] == [True, True, True]
