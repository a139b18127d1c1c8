"""The surgery panel's and the debate tests' pure builders (``ui.explanation.views_surgery``) on hand-made numbers."""

from __future__ import annotations

import math

import pandas as pd
import pytest

from nmt.decoding.surgery import Edit, SurgeryPreset
from tests.conftest import plain
from ui.explanation import views_surgery as S

# ----------------------------------------------------------------------------------------------
# Surgery
# ----------------------------------------------------------------------------------------------

ORIGINAL = ["un", "chien", "court", "</s>"]
EDITED = ["un", "chat", "court", "vite", "</s>"]


def test_first_difference() -> None:
    assert S.first_difference(ORIGINAL, EDITED) == 1
    assert S.first_difference(ORIGINAL, ORIGINAL) is None
    assert S.first_difference(["a", "b"], ["a", "b", "c"]) == 2  # one ended where the other goes on


def test_surgery_table_aligns_words_and_marks_the_edit_and_first_change() -> None:
    df = S.surgery_frame(ORIGINAL, EDITED, [1], [-0.1, -0.2, -0.3, -0.4], [-0.1, -1.5, -0.3, -0.6, -0.2],
                         forced_lp=[-0.1, -2.2, -0.5, -0.4])
    assert df["original"].tolist() == ["un", "chien", "court", "</s>", ""]
    assert df["edited"].tolist() == EDITED
    assert df["note"].tolist() == ["", "α edited, first change", "", "differs", "differs"]
    assert df["same"].tolist() == [True, False, True, False, False]
    assert df["Δ log p (original word)"].tolist()[:4] == pytest.approx([0.0, -2.0, -0.2, 0.0])
    assert math.isnan(df["Δ log p (original word)"].iloc[4])
    styled = S.surgery_style(df).to_html()
    assert "#fde0cf" in styled and "#dbe9f6" not in styled  # the edited step changed: orange wins
    same = S.surgery_frame(ORIGINAL, ORIGINAL, [2], [-0.1] * 4, [-0.1] * 4)
    assert same["note"].tolist() == ["", "", "α edited", ""] and "#dbe9f6" in S.surgery_style(same).to_html()


def test_surgery_summary_in_words() -> None:
    s = plain(S.surgery_summary(ORIGINAL, EDITED, 1, "one-hot on 'a' (j=0)", delta=math.log(0.5)))
    assert s == ("At step 1 (“chien”) α was changed: one-hot on 'a' (j=0). The translation changes at that very "
                 "step: “chat” instead of “chien”. log p of “chien” moved by -0.693 nats (p × 0.5).")
    s = plain(S.surgery_summary(ORIGINAL, ["un", "chien", "saute", "</s>"], 1, "uniform α"))
    assert "changes from step 2 on: “saute” instead of “court”." in s
    assert plain(S.surgery_summary(ORIGINAL, ORIGINAL, 0, "uniform α")).endswith("stays the same word for word.")
    assert plain(S.surgery_summary(["a", "</s>"], ["a", "b", "</s>"], 1, "uniform α")).endswith(
        "changes at that very step: “b” instead of “</s>”.")
    assert plain(S.surgery_summary(["a"], ["a", "b"], 0, "uniform α")).endswith(
        "changes from step 1 on: “b” instead of (nothing: it had ended).")


# ----------------------------------------------------------------------------------------------
# The debate's tests
# ----------------------------------------------------------------------------------------------


def test_permutation_reading() -> None:
    flips = [True] * 14 + [False] * 6
    tvd = [0.1 * k for k in range(20)]  # median (0.9 + 1.0) / 2 = 0.95
    assert plain(S.permutation_reading(flips, tvd, "pomme")) == (
        "Shuffling α changed the word in 14 of 20 trials (median total variation distance of p 0.95). At this step "
        "the model really uses what α points at to write “pomme”.")
    assert "α hardly matters here" in S.permutation_reading([False] * 20, [0.01] * 20, "dans")
    assert "survives every shuffle" in S.permutation_reading([False] * 20, [0.4] * 20, "dans")
    assert "only in part" in S.permutation_reading([True] * 3 + [False] * 17, [0.4] * 20, "dans")
    assert "10 of 20" in S.permutation_reading([True, False] * 10, [0.5] * 20, "x") and \
        "really uses" in S.permutation_reading([True, False] * 10, [0.5] * 20, "x")  # half counts as using it


def test_preset_edit_names_the_radio_label_and_word() -> None:
    def preset(edits: tuple[Edit, ...] = (), freeze: bool = False) -> SurgeryPreset:
        return SurgeryPreset("p", "A dog runs.", 1, edits, "watch", freeze=freeze)

    assert S.preset_edit(None) == ("zero", None)
    assert S.preset_edit(preset()) == ("zero", None)  # a preset about the attributions
    assert S.preset_edit(preset(freeze=True)) == ("freeze", None)
    assert S.preset_edit(preset((Edit("onehot", j=2),))) == ("one-hot", 2)
    assert S.preset_edit(preset((Edit("uniform"), Edit("zero", j=1)))) == ("uniform", None)  # the first edit


def test_adversarial_reading() -> None:
    assert plain(S.adversarial_reading(0.0, 0.9, 0.9, "chien")).startswith(
        "No different α was found that keeps “chien” within ε = 0.01")
    far = plain(S.adversarial_reading(0.5, 0.951, 0.945, "pomme"))
    assert far == ("An α 0.50 nats away from the model's (JSD; at most ln 2 ≈ 0.69) still writes “pomme”, with "
                   "p = 0.945 instead of 0.951. A very different attention gives the same output, so α alone does "
                   "not explain this word.")
    assert "mildly different" in S.adversarial_reading(0.1, 0.9, 0.9, "x")
    forced = plain(S.adversarial_reading(0.5, 0.002, 0.011, "chiens", best="courent"))
    assert forced.startswith("An α 0.50 nats away from the model's (JSD; at most ln 2 ≈ 0.69) still ranks “courent” "
                             "first and gives your “chiens” p = 0.011 instead of 0.002. ")
    assert plain(S.adversarial_reading(0.5, 0.951, 0.945, "pomme", best="pomme")) == far
    tiny = plain(S.adversarial_reading(0.5, 4.2e-6, 3.9e-6, "gros", best="chiens"))
    assert "gives your “gros” p = 3.9e-06 instead of 4.2e-06. That p is below ε = 0.01" in tiny
    assert [S.prob_text(p) for p in (0.0123, 0.001, 0.00042, 0.0)] == ["0.012", "0.001", "4.2e-04", "0.000"]


def test_debate_summary_and_charts() -> None:
    d = S.Debate(tvd=[[0.9, 0.1], [0.0, 0.2]], flipped=[[True, False], [False, False]],
                 alpha=[[0.5, 0.5], [1.0, 0.0]], adv_alpha=[[0.5, 0.5], [0.6, 0.4]], adv_jsd=[0.0, 0.4],
                 adv_prob=[0.9, 0.8], prob=[0.9, 0.81], n=2)
    assert S.debate_summary(d) == ("Over the whole sentence (2 steps), shuffling α changed the word in 25% of 4 "
                                   "trials, and an adversarial α that keeps the word was found at 1 of 2 steps "
                                   "(mean JSD 0.20 nats).")
    adv = S.adversarial_frame(["dog", "</s>"], d.alpha[1], d.adv_alpha[1])
    assert adv["weight"].tolist() == [1.0, 0.0, 0.6, 0.4]
    bars = S.adversarial_chart(adv, ["dog", "</s>"]).to_dict()["encoding"]
    assert bars["xOffset"]["sort"] == ["model's α", "adversarial α'"] and bars["y"]["scale"] == {"domain": [0, 1]}
    tv = S.tvd_frame(d.tvd[0], d.flipped[0])
    assert tv["word"].tolist() == ["changed", "kept"]
    dots = S.tvd_chart(tv).to_dict()
    assert dots["encoding"]["x"]["field"] == "TVD" and dots["encoding"]["x"]["scale"] == {"domain": [0, 1]}
    assert next(iter(dots["datasets"].values())) == [{"trial": 1, "TVD": 0.9, "word": "changed"},
                                                     {"trial": 2, "TVD": 0.1, "word": "kept"}]
    assert S.tvd_chart(pd.DataFrame()) is None
