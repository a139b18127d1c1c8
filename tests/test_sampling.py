"""Sampling the next word (nmt/decoding/sampling.py) against distributions worked out by hand.

p = (0.5, 0.2, 0.15, 0.1, 0.05). Temperature 0.5 squares and renormalises: (0.25, 0.04, 0.0225, 0.01,
0.0025) / 0.325. Top-k 3 keeps the first three: (0.25, 0.04, 0.0225) / 0.3125 = (0.8, 0.128, 0.072).
Top-p 0.85: 0.8 alone is short of 0.85, 0.8 + 0.128 reaches it, so two words: (0.8, 0.128) / 0.928 =
(0.862069, 0.137931). The draw is the inverse CDF of u: word 0 for u < 0.862069, word 1 above.
"""

from __future__ import annotations

import math

import pytest
import torch

from nmt.decoding import sampling
from nmt.decoding.sampling import SamplingRule
from nmt.decoding.stepper import Stepper

P = [0.5, 0.2, 0.15, 0.1, 0.05]
LOGP = torch.tensor(P, dtype=torch.float64).log()
RULE = SamplingRule(temperature=0.5, top_k=3, top_p=0.85, seed=3)
WORDS = ["le", "la", "un", "une", "des"]


def test_each_stage_by_hand() -> None:
    raw, scaled, topk, nucleus = (d.tolist() for d in sampling.stages(LOGP, RULE))
    assert raw == pytest.approx(P)
    assert scaled == pytest.approx([0.25 / 0.325, 0.04 / 0.325, 0.0225 / 0.325, 0.01 / 0.325, 0.0025 / 0.325])
    assert topk == pytest.approx([0.8, 0.128, 0.072, 0.0, 0.0])
    assert nucleus == pytest.approx([0.8 / 0.928, 0.128 / 0.928, 0.0, 0.0, 0.0])


def test_top_p_keeps_the_smallest_set_that_reaches_p() -> None:
    assert sampling.stages(LOGP, SamplingRule(top_p=0.45))[-1].tolist() == pytest.approx([1, 0, 0, 0, 0])
    assert sampling.stages(LOGP, SamplingRule(top_p=0.71))[-1].tolist() == pytest.approx([5 / 8.5, 2 / 8.5, 1.5 / 8.5,
                                                                                          0, 0])
    assert sampling.stages(LOGP, SamplingRule(top_k=2))[-1].tolist() == pytest.approx([5 / 7, 2 / 7, 0, 0, 0])


def test_a_fixed_seed_draws_by_the_inverse_cdf_of_the_truncated_distribution() -> None:
    drawn = {}
    for step in range(40):
        u = sampling.uniform(RULE, step)
        token, rec = sampling.draw(LOGP, RULE, step, WORDS)
        assert token == (0 if u < 0.8 / 0.928 else 1), (step, u)  # the threshold worked out above
        assert rec.u == u and rec.kept == 2
        drawn[step] = token
    assert set(drawn.values()) == {0, 1}  # both slices were hit in 40 steps
    assert [sampling.draw(LOGP, RULE, s, WORDS)[0] for s in range(40)] == list(drawn.values())  # replayed
    # u depends on (seed, step) only: another temperature reads the same u
    assert sampling.uniform(SamplingRule(temperature=2.0, seed=3), 7) == sampling.uniform(RULE, 7)
    assert sampling.uniform(SamplingRule(seed=4), 7) != sampling.uniform(RULE, 7)


def test_the_draws_follow_the_truncated_distribution() -> None:
    """2,000 steps of seed 3: word 1's share is 0.137931 within 4 standard errors (0.031)."""
    tokens = [sampling.draw(LOGP, RULE, s, WORDS)[0] for s in range(2000)]
    assert set(tokens) <= {0, 1}
    assert abs(tokens.count(1) / 2000 - 0.128 / 0.928) < 4 * math.sqrt(0.138 * 0.862 / 2000)


def test_the_record_shows_each_stage_of_the_drawn_word() -> None:
    _, rec = sampling.draw(LOGP, RULE, 0, WORDS)
    assert rec.stages == ["model", "T = 0.5", "top-k 3", "top-p 0.85"]
    assert rec.rows[0] == ("le", pytest.approx([0.5, 0.25 / 0.325, 0.8, 0.8 / 0.928], abs=1e-6))
    assert [w for w, _ in rec.rows] == ["le", "la", "un", "une", "des"]


def test_the_stepper_samples_from_the_models_own_step(tiny_lm) -> None:
    """Top-k 1 leaves only the argmax: sampling then writes greedy's translation, step for step; a sampled
    step records the model's own p of its word; back and step again draws the same word."""
    text = "a man is riding a bike ."
    greedy = Stepper(tiny_lm, text).run()
    one = Stepper(tiny_lm, text, sampling=SamplingRule(top_k=1, seed=9)).run()
    assert [s.token for s in one.steps] == [s.token for s in greedy.steps]
    hot = Stepper(tiny_lm, text, sampling=SamplingRule(temperature=3.0, seed=5))
    first = hot.step()
    model_p = dict(first.sample.rows)[first.token][0]
    assert model_p == pytest.approx(first.prob, abs=1e-5)  # the StepRecord's log p of the written word
    words = [first.token, *(hot.step().token for _ in range(3))]
    hot.back()
    hot.back()
    assert [hot.step().token, hot.step().token] == words[2:]


def test_the_pages_line_names_both_ps_of_the_drawn_word() -> None:
    """ui.stepper.views_sampling: the drawn word's p under the model (0.5) and after all three transforms (0.862)."""
    from ui.stepper.views_sampling import drawn_line, stage_frame

    step = next(s for s in range(40) if sampling.draw(LOGP, RULE, s, WORDS)[0] == 0)
    _, rec = sampling.draw(LOGP, RULE, step, WORDS)
    assert drawn_line(rec, "le").startswith("Sampled “le”: p = 0.500 under the model's distribution, p = 0.862 "
                                            "after T = 0.5 · top-k 3 · top-p 0.85 (2 words left to draw from")
    frame = stage_frame(rec, "le")
    assert list(frame.columns) == ["word", "model", "T = 0.5", "top-k 3", "top-p 0.85", ""]
    assert list(frame[""]) == ["◀ drawn", "", "", "", ""]
    assert list(frame["top-k 3"]) == pytest.approx([0.8, 0.128, 0.072, 0, 0], abs=1e-6)
