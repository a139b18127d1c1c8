"""Attention's coverage flags (nmt/explanation/coverage.py) on hand-made α matrices, and their correlation with quality.

Columns are source tokens (``</s>`` last), rows target steps. C_j is each column's sum, written out by
hand below; a real word is unread below 0.2 and re-read above 3; ``</s>`` is never flagged. The
correlation is Spearman's ρ, checked on data whose ranks are exactly reversed (ρ = −1) and on a split
whose flags say nothing (no flagged sentence: no ρ at all).
"""

from __future__ import annotations

import math

import pytest

from nmt.explanation.coverage import coverage, flags_vs_quality


def test_unread_and_reread_words_from_column_sums() -> None:
    alpha = [  # 5 target steps over 4 source words + </s>
        [0.90, 0.05, 0.00, 0.05, 0.00],
        [0.80, 0.10, 0.00, 0.10, 0.00],
        [0.70, 0.20, 0.05, 0.05, 0.00],
        [0.80, 0.10, 0.05, 0.05, 0.00],
        [0.00, 0.00, 0.05, 0.00, 0.95],
    ]
    cov = coverage(alpha, 5)
    assert cov.received == pytest.approx((3.20, 0.45, 0.15, 0.25, 0.95))  # the column sums by hand
    assert cov.unread == (2,)  # C_2 = 0.15 < 0.2; </s> (0.95) and C_3 = 0.25 are not
    assert cov.reread == (0,)  # C_0 = 3.2 > 3
    assert cov.flags == 2
    assert coverage(alpha, 5, unread=0.3).unread == (2, 3)
    assert coverage([[0.0, 1.0]] * 4, 2).unread == (0,) and coverage([[0.0, 1.0]] * 4, 2).reread == ()
    assert coverage([None, None], 3) is None and coverage([], 3) is None  # a fixed context: no α


def test_flags_against_sentence_chrf() -> None:
    res = flags_vs_quality([0, 1, 2, 3, 4], [90.0, 80.0, 70.0, 60.0, 50.0])
    assert res["spearman_rho"] == pytest.approx(-1.0) and res["flagged"] == 4
    assert res["chrf_flagged"] == pytest.approx(65.0) and res["chrf_clean"] == pytest.approx(90.0)
    none = flags_vs_quality([0, 0, 0], [50.0, 60.0, 70.0])
    assert none["spearman_rho"] is None and math.isnan(none["chrf_flagged"]) and none["chrf_clean"] == 60.0


def test_the_alignment_browsers_rows_carry_the_flags_and_their_line() -> None:
    """The corpus table's facts of a translation: its flag count and the flagged words, from its trace's α."""
    from tests.traces import make_trace
    from ui.figures.alignment import coverage_line, own_facts

    rows = [[0.9, 0.0, 0.1], [0.9, 0.05, 0.05], [0.9, 0.05, 0.05], [0.9, 0.0, 0.1], [0.1, 0.0, 0.9]]
    t = make_trace(rows, ["chien"] * 4 + ["</s>"])  # source s0 s1 </s>
    facts = own_facts(t, "le chien et le chat")
    assert (facts["flags"], facts["unread"], facts["re-read"]) == (2, "s1", "s0")  # C = 3.7, 0.1, 1.2
    line = coverage_line([{"flags": f, "chrF": q} for f, q in [(0, 80.0), (1, 70.0), (2, 40.0), (0, 90.0)]])
    assert "2 of 4 sentences flagged" in line and "mean chrF 55.0 flagged vs 85.0 clean" in line
    assert "ρ(flags, chrF) = -0.95" in line
    assert coverage_line([{"flags": None, "chrF": 50.0}] * 5) is None
