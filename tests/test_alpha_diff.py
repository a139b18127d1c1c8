"""α of two models as a difference (nmt/explanation/alpha_diff.py) on hand-made matrices.

Source « the cat </s> », target « le chat </s> ». A looks at the diagonal exactly; B agrees on rows 0 and 2
and splits row 1 evenly between "the" and "cat", so its largest weight ties: argmax takes the first, "the",
and row 1 disagrees. JSD of (0, 1, 0) and (½, ½, 0): m = (¼, ¾, 0), ½·[1·ln(1/¾)] + ½·[½ ln(½/¼) + ½ ln(½/¾)]
= ½ ln(4/3) + ¼ ln 2 + ¼ ln(2/3) = 0.215762.
"""

from __future__ import annotations

import math

import numpy as np
import pytest

from nmt.explanation import alpha_diff as ad

SRC, TGT = ["the", "cat", "</s>"], ["le", "chat", "</s>"]
A = np.eye(3)
B = np.array([[1.0, 0, 0], [0.5, 0.5, 0], [0, 0, 1.0]])


def test_one_sentence_by_hand() -> None:
    d = ad.compare(SRC, TGT, A, B)
    assert d.diff.tolist() == [[0, 0, 0], [0.5, -0.5, 0], [0, 0, 0]]
    assert d.agree == [True, False, True] and d.agreement == pytest.approx(2 / 3)
    want = 0.5 * math.log(4 / 3) + 0.25 * math.log(2) + 0.25 * math.log(2 / 3)
    assert d.jsd == pytest.approx([0.0, want, 0.0]) and want == pytest.approx(0.215762, abs=1e-6)
    assert d.mean_jsd == pytest.approx(want / 3)
    with pytest.raises(ValueError):
        ad.compare(SRC, TGT[:2], A, B)


def test_source_words_over_a_test_set() -> None:
    """Two sentences: the one above, and « cat </s> » where B moves all of row 0 from "cat" to "</s>"."""
    d1 = ad.compare(SRC, TGT, A, B)
    a2 = np.array([[1.0, 0], [0, 1.0]])
    d2 = ad.compare(["cat", "</s>"], ["chat", "</s>"], a2, np.array([[0, 1.0], [0, 1.0]]))
    rows = {r["word"]: r for r in ad.by_source_word([(d1, A), (d2, a2)])}
    # "cat": A gives 1 and 1 (mean 1), B gives 0.5 and 0 (mean 0.25); "</s>": A 1, 1; B 1, 2; "the": A 1, B 1.5
    assert rows["cat"] == {"word": "cat", "occurrences": 2, "a": 1.0, "b": 0.25, "delta": -0.75}
    assert rows["</s>"] == {"word": "</s>", "occurrences": 2, "a": 1.0, "b": 1.5, "delta": 0.5}
    assert rows["the"]["delta"] == 0.5
    assert [r["word"] for r in ad.by_source_word([(d1, A), (d2, a2)])] == ["cat", "</s>", "the"]


def test_the_pages_table_and_line() -> None:
    from ui.paired import views_alpha_diff as vd

    d = ad.compare(SRC, TGT, A, B)
    frame = vd.row_frame(d, [0, 1, 2], [0, 0, 2])
    assert frame.to_dict("records")[1] == {"target word": "chat", "A looks at": "cat", "B looks at": "the",
                                           "same top-1": False, "JSD (nats)": 0.2158}
    assert vd.summary_line(d).startswith("Top-1 agreement 67% of 3 target words; mean Jensen–Shannon divergence "
                                         "0.072 nats")
    spec = vd.diff_chart(d, "α_B − α_A").to_dict()
    assert spec["encoding"]["color"]["scale"] == {"scheme": "blueorange", "domain": [-0.5, 0.5], "domainMid": 0}
