"""The stepper's fusion views (ui/stepper/views_fusion.py) on hand-made fusion steps."""

from __future__ import annotations

from nmt.decoding.fusion import FusionStep
from ui.stepper import views_fusion as fv

STEP = FusionStep(i=2, token="chat", tm_logprob=-0.5, lm_logprob=-2.0, score=-0.9, gate=None,
                  tm_top=[("chien", 0.5), ("chat", 0.4)], lm_top=[("chat", 0.3), ("<b>", 0.2)],
                  fused_top=[("chat", -0.9), ("chien", -1.2)])


def test_topk_rows_pair_each_rank_and_mark_the_written_word() -> None:
    rows = fv.topk_rows(STEP)
    assert [(r["tm_word"], r["lm_word"], r["fused_word"]) for r in rows] == [("chien", "chat", "chat"),
                                                                           ("chat", "<b>", "chien")]
    assert [r["written"] for r in rows] == [{"lm", "fused"}, {"tm"}]
    assert rows[1]["p_tm"] == 0.4 and rows[0]["p_lm"] == 0.3 and rows[1]["score"] == -1.2


def test_shallow_line_fills_in_the_equation_and_html_escapes_words() -> None:
    assert fv.written_line(STEP, "shallow", 0.2) == (
        "score = log p_TM + β log p_LM = -0.500 + 0.2 × (-2.000) = -0.900")
    html = fv.topk_html(STEP, "shallow", 0.2)
    assert "&lt;b&gt;" in html and "<b>" not in html
    assert "-0.90" in html and "40.0%" in html and "30.0%" in html


def test_deep_fusion_shows_the_gate_per_step() -> None:
    deep = [FusionStep(i, w, -1.0, -2.0, -1.1, g, [(w, 0.5)], [(w, 0.2)], [(w, 0.6)])
            for i, (w, g) in enumerate([("le", 0.25), ("chat", 0.75), ("</s>", 0.5)])]
    assert fv.gate_series(deep) == [{"i": 0, "word": "le", "g": 0.25}, {"i": 1, "word": "chat", "g": 0.75},
                                    {"i": 2, "word": "</s>", "g": 0.5}]
    assert fv.written_line(deep[1], "deep", 0.0).startswith("g_1 = 0.750; log p_fused = -1.100")
    assert fv.gate_chart(deep, shown=1) is not None
    assert fv.gate_series([STEP]) == [] and fv.gate_chart([STEP]) is None  # shallow fusion has no gate


def test_lm_caption_names_data_perplexity_and_credit() -> None:
    meta = {"train_data": {"dir": "tatoeba-fr-en", "split": "train", "sentences": 163994}, "train_tokens": 564320,
            "scores": {"tatoeba-fr-en/dev": {"perplexity": 61.5}}, "credit": "tatoeba.org"}
    assert fv.lm_caption(meta) == ("Language model: a GRU over this model's target vocabulary, trained for 564,320 "
                                   "tokens on tatoeba-fr-en/train (163,994 sentences); held-out perplexity 61.5. "
                                   "tatoeba.org")


def test_deep_fusion_table_shows_probabilities_not_log_probabilities() -> None:
    deep = FusionStep(0, "le", -1.0, -2.0, -0.5, 0.4, [("le", 0.37)], [("le", 0.14)], [("le", -0.5)])
    html = fv.topk_html(deep, "deep", 0.0)
    assert "60.7%" in html and "p fused" in html  # e^−0.5 = 0.6065
    assert "-0.50" not in html.split("g_0")[0]
    assert fv.lm_caption({}) == "Language model: a GRU over this model's target vocabulary."
    assert fv.lm_caption({"train_data": {"dir": "d"}, "scores": {"x": {}}}) == (
        "Language model: a GRU over this model's target vocabulary, trained on d/?.")
