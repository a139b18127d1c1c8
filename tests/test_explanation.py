"""The "Is attention an explanation?" page's pure builders (``ui.explanation.views``) on hand-made numbers.

The surgery and debate builders are tested in tests/test_surgery_views.py, the page on tiny models in
tests/test_explanation_page.py.
"""

from __future__ import annotations

import math

import numpy as np
import pytest

from nmt.explanation.attribution import METHODS, Attributions
from tests.conftest import plain
from ui.explanation import views as V
from ui.figures.common import chart_png, readable


def _att(alpha: list[list[float]], scores: dict[str, list[list[float]]], src: list[str] | None = None,
         tgt: list[str] | None = None, steps: list[int] | None = None) -> Attributions:
    src = src or ["a", "dog", "runs", "</s>"][: len(alpha[0])]
    tgt = tgt or ["un", "chien", "court", "</s>"]
    steps = steps if steps is not None else list(range(len(alpha)))
    return Attributions(src, tgt, steps, len(src), np.array(alpha, dtype=float),
                        {m: np.array(v, dtype=float) for m, v in scores.items()},
                        logprob=np.full(len(alpha), -0.5), ig_delta=np.zeros(len(alpha)))


# ----------------------------------------------------------------------------------------------
# Scaling and assembling
# ----------------------------------------------------------------------------------------------


def test_scale_row_divides_by_the_largest_absolute_value() -> None:
    assert V.scale_row([2.0, -4.0, 1.0]).tolist() == [0.5, -1.0, 0.25]
    assert V.scale_row([0.1, 0.3, 0.6]).tolist() == pytest.approx([1 / 6, 0.5, 1.0])
    assert V.scale_row([0.0, 0.0]).tolist() == [0.0, 0.0]  # nothing to scale: stays zero, no NaN
    assert V.scale_row([]).tolist() == []


def test_rows_round_trip_through_the_shared_store_format() -> None:
    att = _att([[0.7, 0.2, 0.1], [0.1, 0.1, 0.8]],
               {m: [[1.0, 2.0, -3.0], [0.5, 0.0, 4.0]] for m in METHODS}, src=["a", "dog", "</s>"])
    rows = V.split_rows(att)
    assert rows[1]["alpha"] == [0.1, 0.1, 0.8] and rows[0]["scores"]["ig"] == [1.0, 2.0, -3.0]
    # steps 2 and 0 in another order, as the store hands them back for the matrix view
    back = V.assemble(att.src_tokens, att.tgt_tokens, [0, 1], rows)
    assert back.alpha.tolist() == att.alpha.tolist() and list(back.scores) == list(METHODS)
    assert back.scores["loo_alpha"].tolist() == [[1.0, 2.0, -3.0], [0.5, 0.0, 4.0]]
    with pytest.raises(ValueError):
        V.assemble(att.src_tokens, att.tgt_tokens, [0], rows)


# ----------------------------------------------------------------------------------------------
# One target word
# ----------------------------------------------------------------------------------------------


def test_bars_scale_each_row_and_rank_by_signed_score() -> None:
    att = _att([[0.6, 0.3, 0.1]], {"ig": [[0.5, -2.0, 1.0]]}, src=["a", "dog", "</s>"])
    df = V.bars_frame(att, 0)
    ig = df[df["key"] == "ig"].set_index("j")
    assert ig["scaled"].tolist() == [0.25, -1.0, 0.5]
    assert ig["raw"].tolist() == [0.5, -2.0, 1.0]
    assert ig["rank"].tolist() == [2, 3, 1]  # the largest signed score first
    assert ig["sign"].tolist() == [V.SUPPORTS, V.AGAINST, V.SUPPORTS]
    alpha = df[df["key"] == V.ALPHA]
    assert alpha["scaled"].tolist() == pytest.approx([1.0, 0.5, 1 / 6])
    assert list(df["method"].unique()) == ["α (attention)", "integrated gradients"]
    png = chart_png(readable(V.bars_chart(df, att.src_tokens)))  # a spec Vega-Lite can draw (it is picky with facets)
    assert png.startswith(b"\x89PNG")


def test_attribution_csv_has_raw_and_scaled_columns() -> None:
    att = _att([[0.6, 0.3, 0.1]], {"saliency": [[1.0, 4.0, 2.0]]}, src=["a", "dog", "</s>"])
    df = V.attribution_frame(att, 0)
    assert list(df.columns) == ["j", "source", "alpha", "saliency", "alpha scaled", "saliency scaled"]
    assert df["saliency scaled"].tolist() == [0.25, 1.0, 0.5]
    assert df["source"].tolist() == ["a", "dog", "</s>"]


def test_agreement_table_against_hand_computed_values() -> None:
    # α = [.5, .5, 0] and scores [0, 0, 5]: τ-b = (C − D) / √((n0 − n1)(n0 − n2)) = (0 − 2) / √(2 · 2) = −1;
    # different argmax; |scores| puts all mass where α has none, so JSD = ln 2.
    # [3, 2, 1]: C = 2, D = 0, one pair tied in α only: τ-b = 2 / √((3 − 1)(3 − 0)) = 2 / √6; same argmax.
    att = _att([[0.5, 0.5, 0.0]], {"ig": [[0.0, 0.0, 5.0]], "x_grad": [[3.0, 2.0, 1.0]]}, src=["a", "dog", "</s>"])
    df = V.agreement_frame(att, 0).set_index("method")
    assert df.loc["integrated gradients", "τ"] == pytest.approx(-1.0)
    assert df.loc["integrated gradients", "top-1"] == 0.0
    assert df.loc["integrated gradients", "JSD"] == pytest.approx(math.log(2))
    assert df.loc["integrated gradients", "top word"] == "</s>"
    assert df.loc["gradient × input", "τ"] == pytest.approx(2 / math.sqrt(6))
    assert df.loc["gradient × input", "top-1"] == 1.0
    assert df.loc["α (attention)", "top word"] == "a"
    reading = plain(V.agreement_reading(df.reset_index(), "chien", "a"))
    assert reading == "Writing “chien”, α looks most at “a”. 1 of 2 methods ranks it first too (gradient × input)."
    forced = plain(V.agreement_reading(df.reset_index(), "chien", "a", forced=True))
    assert forced.startswith("For your word “chien”, α looks most at “a”. ")


def test_sentence_agreement_averages_steps_and_skips_undefined_tau() -> None:
    # step 0: x_grad constant → τ undefined (NaN), top-1 1 (argmax 0 = α's), JSD of [1,0] vs [.5,.5]
    # step 1: same order as α → τ = 1, top-1 1
    att = _att([[1.0, 0.0], [0.2, 0.8]], {"x_grad": [[1.0, 1.0], [0.1, 0.9]]}, src=["dog", "</s>"])
    df = V.sentence_agreement_frame(att).set_index("method")
    assert df.loc["gradient × input", "mean Kendall τ"] == pytest.approx(1.0)
    assert df.loc["gradient × input", "top-1 rate"] == pytest.approx(1.0)
    jsd0 = 0.5 * (math.log(1 / 0.75)) + 0.5 * (0.5 * math.log(0.5 / 0.75) + 0.5 * math.log(0.5 / 0.25))
    jsd1 = 0.5 * (0.2 * math.log(0.2 / 0.15) + 0.8 * math.log(0.8 / 0.85)) + \
        0.5 * (0.1 * math.log(0.1 / 0.15) + 0.9 * math.log(0.9 / 0.85))
    assert df.loc["gradient × input", "mean JSD (nats)"] == pytest.approx((jsd0 + jsd1) / 2)


def test_translation_strip_highlights_the_word_and_escapes_text() -> None:
    s = V.target_strip(["un", "*chien*", "[x](y)"], 1)
    assert s == r"un :blue-background[**\*chien\***] \[x\]\(y\)"


# ----------------------------------------------------------------------------------------------
# The whole sentence
# ----------------------------------------------------------------------------------------------


def test_matrix_rows_are_scaled_and_the_chosen_step_marked() -> None:
    att = _att([[0.5, 0.5], [0.9, 0.1]], {"loo_embed": [[1.0, -4.0], [0.0, 0.0]]}, src=["dog", "</s>"],
               tgt=["chien", "</s>"])
    cells = V.matrix_frame(att, "loo_embed")
    assert cells["value"].tolist() == [0.25, -1.0, 0.0, 0.0] and cells["raw"].tolist() == [1.0, -4.0, 0.0, 0.0]
    assert V.matrix_frame(att, V.ALPHA)["value"].tolist() == [0.5, 0.5, 0.9, 0.1]  # α is drawn as it is
    assert V.row_labels(["chien", "</s>"], 1) == ["chien", "▶ </s>"]
    spec = V.matrix_chart(att, "loo_embed", mark=1).to_dict()
    assert "▶ </s>" in spec["encoding"]["y"]["axis"]["labelExpr"]
    assert chart_png(readable(V.matrix_chart(att, "loo_embed", mark=1))).startswith(b"\x89PNG")
    alpha = V.matrix_chart(att, V.ALPHA, mark=0).to_dict()  # the shared α heatmap, not the diverging scale
    assert alpha["encoding"]["color"]["scale"] == {"domain": [0, 1], "scheme": "blues"}
    rows = next(iter(alpha["datasets"].values()))
    assert [(r["target"], r["source"], r["alpha"]) for r in rows] == [
        ("▶ chien", "dog", 0.5), ("▶ chien", "</s>", 0.5), ("</s>", "dog", 0.9), ("</s>", "</s>", 0.1)]
    wide = V.matrix_cells_frame(att)
    assert list(wide.columns) == ["i", "target", "j", "source", "alpha", "loo_embed"] and len(wide) == 4
