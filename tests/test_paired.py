"""The paired comparison of two systems (nmt/tools/paired.py), against values known without the code under test.

Two systems that wrote the same translations are flagged as such: sacrebleu's bootstrap gives them the
smallest p it can, 1 / (resamples + 1) (it counts resampled differences strictly above the observed one,
none when both are 0), so its p alone would call them different. A
system that writes the reference on every sentence while the baseline writes nothing shared scores BLEU
100 against 0, and every resample favours it: p = 1 / (resamples + 1), the smallest the test can give.
Length buckets are tested from exactly MIN_BUCKET sentences on; the largest chrF differences come in
order, a verbatim reference scoring chrF 100.
"""

from __future__ import annotations

import pytest

from nmt.tools import paired

REFS = [f"le chat numéro {k} dort sur le tapis rouge" for k in range(40)]
JUNK = ["xyz qqq" for _ in REFS]


def test_identical_systems_are_flagged_whatever_the_p_value() -> None:
    res = paired.paired_test([("A", REFS), ("B", list(REFS))], REFS, resamples=200)
    assert res["BLEU"]["A"]["score"] == res["BLEU"]["B"]["score"] == 100.0
    assert res["BLEU"]["A"]["p_value"] is None  # the baseline
    assert res["BLEU"]["B"]["p_value"] == pytest.approx(1 / 201, abs=1e-4)  # sacrebleu's, as it computes it
    assert "bs:200" in res["signatures"]["BLEU"]
    same = paired.compare(("A", "B"), REFS, REFS, (REFS, list(REFS)), [5] * len(REFS), resamples=20)
    assert same["identical_outputs"] == {"B": True} and same["largest_differences"]["B"][0]["delta_chrf"] == 0.0
    other = paired.compare(("A", "B"), REFS, REFS, (JUNK, REFS), [5] * len(REFS), resamples=20)
    assert other["identical_outputs"] == {"B": False}


def test_a_system_better_on_every_sentence_gets_the_smallest_p() -> None:
    res = paired.paired_test([("base", JUNK), ("good", REFS)], REFS, resamples=999)
    assert (res["BLEU"]["base"]["score"], res["BLEU"]["good"]["score"]) == (0.0, 100.0)
    assert res["BLEU"]["good"]["p_value"] == pytest.approx(1 / 1000, abs=1e-4)
    assert res["chrF"]["good"]["p_value"] == pytest.approx(1 / 1000, abs=1e-4)


def test_buckets_are_tested_from_the_minimum_size_and_differences_come_largest_first() -> None:
    n = paired.MIN_BUCKET
    lengths = [3] * n + [15] * (n - 1)  # bucket [0, 10) has exactly MIN_BUCKET sentences, [10, 20) one fewer
    refs = (REFS * 2)[: 2 * n - 1]
    a = [r if k % 2 else "xyz" for k, r in enumerate(refs)]
    res = paired.compare(("A", "B"), [f"src {k}" for k in range(len(refs))], refs, (a, refs), lengths, resamples=50)
    first, second = res["by_length"]
    assert (first["lo"], first["hi"], first["n"], second["n"]) == (0, 10, n, n - 1)
    assert "BLEU" in first and "chrF" in first and "BLEU" not in second
    top = res["largest_differences"]["B"]
    assert len(top) == paired.TOP and top[0]["k"] == 0 and top[0]["chrf_b"] == 100.0
    assert all(row["k"] % 2 == 0 and row["delta_chrf"] > 0 for row in top)  # only the "xyz" lines differ
    assert [abs(r["delta_chrf"]) for r in top] == sorted((abs(r["delta_chrf"]) for r in top), reverse=True)
    assert res["baseline"] == "A" and res["systems"] == ["B"] and res["resamples"] == 50


def test_the_numbers_are_sacrebleus_own_paired_bootstrap() -> None:
    """paired_test reports what sacrebleu's PairedTest computes on the same systems (its fixed seed)."""
    from sacrebleu.metrics import BLEU, CHRF
    from sacrebleu.significance import PairedTest

    half = [r if k % 3 else "le chien" for k, r in enumerate(REFS)]
    ours = paired.paired_test([("A", JUNK), ("B", half)], REFS, resamples=300)
    _, theirs = PairedTest([("A", JUNK), ("B", half)], {"BLEU": BLEU(), "chrF": CHRF()}, [REFS], test_type="bs",
                           n_samples=300)()
    for metric, key in (("BLEU", "BLEU"), ("chrF", "chrF2")):
        b = theirs[key][1]
        assert ours[metric]["B"] == {"score": round(b.score, 2), "mean": round(float(b.mean), 2),
                                     "ci95": round(float(b.ci), 2), "p_value": round(float(b.p_value), 4)}


def test_differences_either_way_by_size_then_line_and_buckets_at_their_edges() -> None:
    """chrF is 100 for the reference and 0 for JUNK (no character in common). A and B as below: B − A is
    −100, +100, 0, +100, −100, 0 on lines k = 0…5, so by |Δ| then k the order is 0, 1, 3, 4, 2, 5 (a
    loss of 100 ranks with a gain of 100). Source lengths 3, 10, 10, 20, 9, 19: [0, 10) holds k 0 and 4,
    [10, 20) k 1, 2, 5 (10 is not in the first), [20, 30) k 3 (the longest has a bucket of its own)."""
    refs, junk = REFS[:6], JUNK[:6]
    a = [refs[0], junk[1], refs[2], junk[3], refs[4], refs[5]]
    b = [junk[0], refs[1], refs[2], refs[3], junk[4], refs[5]]
    res = paired.compare(("A", "B"), [f"src {k}" for k in range(6)], refs, (a, b), [3, 10, 10, 20, 9, 19],
                         resamples=50)
    top = res["largest_differences"]["B"]
    assert [(r["k"], r["delta_chrf"]) for r in top] == [(0, -100.0), (1, 100.0), (3, 100.0), (4, -100.0),
                                                        (2, 0.0), (5, 0.0)]
    assert [(r["lo"], r["hi"], r["n"]) for r in res["by_length"]] == [(0, 10, 2), (10, 20, 3), (20, 30, 1)]
