"""Attention's coverage flags (nmt/coverage.py) on hand-made α matrices, and their correlation with quality.

Columns are source tokens (``</s>`` last), rows target steps. C_j is each column's sum, written out by
hand below; a real word is unread below 0.2 and re-read above 3; ``</s>`` is never flagged. The
correlation is Spearman's ρ, checked on data whose ranks are exactly reversed (ρ = −1) and on a split
whose flags say nothing (no flagged sentence: no ρ at all).
"""

from __future__ import annotations

import math

import pytest

from nmt.coverage import coverage, flags_vs_quality


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
