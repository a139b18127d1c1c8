"""The "Is attention an explanation?" page: its pure builders on hand-made numbers, and the page on tiny models."""

from __future__ import annotations

import math
import shutil
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd
import pytest
from streamlit.testing.v1 import AppTest

import train
from nmt.attribution import METHODS, Attributions
from nmt.checkpoint import LoadedModel
from nmt.decoding import forced, greedy
from nmt.surgery import Edit, SurgeryPreset, decode_with_surgery
from nmt.trace import DecodeTrace
from tests.conftest import TINY_DATA, plain
from ui.views import explanation as V
from ui.views import surgery as S
from ui.views.common import chart_png, readable

ROOT = Path(__file__).resolve().parent.parent
PAGE = str(ROOT / "pages" / "explanation.py")
TIMEOUT = 120
REF_TEXT, REF = "A man is riding a bike.", "Un chien fait du vélo ."  # the tiny model writes "Un homme …"


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


# ----------------------------------------------------------------------------------------------
# The page on the tiny models
# ----------------------------------------------------------------------------------------------


@pytest.fixture
def env(tiny_checkpoint_dir: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.setenv("RNNSEARCH_CHECKPOINTS", str(tiny_checkpoint_dir))
    return tiny_checkpoint_dir


def run(**params: Any) -> AppTest:
    at = AppTest.from_file(PAGE, default_timeout=TIMEOUT)
    at.query_params.update(params)
    at.run()
    assert not at.exception, at.exception
    assert not at.warning, [w.value for w in at.warning]
    return at


def markdown(at: AppTest) -> str:
    return "\n".join(plain(m.value) for m in at.markdown)


def downloads(at: AppTest) -> list[str]:
    return [d.label for d in at.get("download_button")]


def test_page_shows_alpha_against_attributions(env: Path) -> None:
    at = run()
    assert [t.value for t in at.title] == ["Is attention an explanation?"]
    assert at.selectbox(key="ex_preset").value == "Point α elsewhere"
    assert at.slider(key="ex_step").value == 5  # the preset's step
    table = at.dataframe[0].value
    assert table["method"].tolist() == list(V.METHOD_LABELS.values())
    assert table["τ"].between(-1, 1).all() and table["JSD"].between(0, math.log(2) + 1e-9).all()
    assert "Writing “" in markdown(at)
    assert len(at.get("vega_lite_chart")) == 1
    assert downloads(at) == ["PNG", "SVG", "Attributions CSV", "Agreement CSV", "JSON"]
    keys = {w.key: w.proto.query_param_key for kind in ("selectbox", "slider") for w in getattr(at, kind)
            if w.key and w.key.startswith("ex_")}
    assert keys == {"ex_model": "ex_model", "ex_preset": "ex_preset", "ex_step": "ex_step"}


def test_surgery_shows_the_edited_translation(env: Path) -> None:
    at = run(ex_tab="Surgery", ex_preset="Your own sentence", ex_text="A man is riding a bike.", ex_step="1",
             ex_edit="one-hot", ex_j="0: A")
    assert at.radio(key="ex_edit").value == "one-hot" and at.pills(key="ex_j").value == 0
    text = markdown(at)
    assert "**Original:**" in text and "**Edited:**" in text
    assert "At step 1 (" in text and "α was changed: one-hot on 'A' (j=0)." in text
    table = at.dataframe[0].value
    assert table.loc[1, "note"].startswith("α edited")
    assert downloads(at) == ["Table CSV", "JSON", "PNG", "SVG"]
    assert len(at.get("vega_lite_chart")) == 2
    for w in (at.radio(key="ex_edit"), at.pills(key="ex_j"), at.selectbox(key="ex_seed")):
        assert w.proto.query_param_key == w.key
    pills = at.pills(key="ex_j")
    assert pills.options == ["0: A", "1: man", "2: is", "3: riding", "4: a", "5: bike", "6: .", "7: </s>"]
    pills.set_value(3).run()  # a click on "riding"
    assert "α was changed: one-hot on 'riding' (j=3)." in markdown(at)
    at.radio(key="ex_edit").set_value("uniform").run()
    assert not at.exception
    assert "uniform α" in markdown(at) and at.pills(key="ex_j").disabled


def test_surgery_copies_another_steps_alpha(env: Path, tiny_lm: LoadedModel) -> None:
    lm = tiny_lm
    at = run(ex_tab="Surgery", ex_preset="Your own sentence", ex_text=REF_TEXT, ex_step="2", ex_edit="copy")
    assert at.selectbox(key="ex_from").value == 1 and not at.selectbox(key="ex_from").disabled  # the previous word
    assert at.selectbox(key="ex_from").proto.query_param_key == "ex_from"
    at.selectbox(key="ex_from").set_value(0).run()
    res = decode_with_surgery(lm, REF_TEXT, {2: Edit("copy", step=0)})
    assert res.trace.steps[2].alpha == pytest.approx(res.original.steps[0].alpha)  # the library agrees: α of step 0
    text = markdown(at)
    assert "α was changed: α copied from step 0." in text and f"**Edited:** {res.trace.translation}" in text
    at.radio(key="ex_edit").set_value("zero").run()
    assert at.selectbox(key="ex_from").disabled


def test_surgery_at_every_later_step(env: Path, tiny_lm: LoadedModel) -> None:
    lm = tiny_lm
    at = run(ex_tab="Surgery", ex_preset="Your own sentence", ex_text=REF_TEXT, ex_step="1", ex_edit="zero",
             ex_j="1: man", ex_every="true")
    assert at.toggle(key="ex_every").value is True and at.toggle(key="ex_every").proto.query_param_key == "ex_every"
    res = decode_with_surgery(lm, REF_TEXT, {k: Edit("zero", j=1) for k in range(1, 60)})
    assert all(s.alpha[1] == 0.0 for s in res.trace.steps[1:])  # the library: 'man' never attended again
    text = markdown(at)
    assert "α was changed: zero 'man' (j=1), renormalised, at every step from 1 on." in text
    assert f"**Edited:** {res.trace.translation}" in text
    notes = at.dataframe[0].value["note"].tolist()
    assert [i for i, n in enumerate(notes) if "α edited" in n] == list(range(1, len(res.trace.steps)))
    at.toggle(key="ex_every").set_value(False).run()
    notes = at.dataframe[0].value["note"].tolist()
    assert [i for i, n in enumerate(notes) if "α edited" in n] == [1]
    at.radio(key="ex_edit").set_value("copy").run()
    assert at.toggle(key="ex_every").disabled


def test_whole_sentence_and_debate_tests(env: Path) -> None:
    at = run(ex_tab="Whole sentence", ex_method="integrated gradients")
    # a URL starts no whole-sentence work (600 characters of it cost 108 s of CPU): the button does
    assert not at.get("vega_lite_chart") and not at.dataframe and at.button(key="ex_all").label.startswith(
        "Explain all ")
    at.button(key="ex_all").click().run()
    assert at.radio(key="ex_method").value == "ig" and at.radio(key="ex_method").proto.query_param_key == "ex_method"
    assert len(at.get("vega_lite_chart")) == 2  # α and the chosen method
    assert at.dataframe[0].value["method"].tolist() == list(V.METHOD_LABELS.values())[1:]
    assert downloads(at) == ["PNG", "SVG", "Cells CSV", "Agreement CSV", "JSON"]
    at = run(ex_tab="Debate tests")
    assert not at.get("vega_lite_chart")  # nothing runs before the button
    at.button(key="ex_tests").click().run()
    assert not at.exception
    text = markdown(at)
    assert "Shuffling α changed the word in " in text and " of 20 trials" in text
    assert "Over the whole sentence" in "\n".join(i.value for i in at.info)
    assert len(at.get("vega_lite_chart")) == 2


def test_a_costly_word_waits_for_its_button_and_the_cost_is_counted_in_gradient_units(
        env: Path, tiny_lm: LoadedModel, monkeypatch: pytest.MonkeyPatch) -> None:
    """The last word of a 600-character sentence cost 6.7 s of CPU and +414 MB on opening a URL (issue 24):
    past AUTO_UNITS a word's attributions wait for a button; a result already kept shows without one."""
    from ui import explanation_jobs as jobs
    from ui import heavy

    g = greedy(tiny_lm, [REF_TEXT], topk=1)[0]  # "A man is riding a bike ." + </s>: 8 source tokens
    assert len(g.src_tokens) == 8
    assert jobs.cost(g, [0, 2]) == (1 + 3) * 8 * 50  # Σ (i + 1) · Tx · points, IG counted at its first 50 points
    assert jobs.loo_cost(g, [0, 2]) == 9 * (8 + 2 + 1)  # (Tx + 1) copies decoded up to the last word
    assert not jobs.needs_button(g, [2])  # a short sentence: at once
    monkeypatch.setattr(jobs, "AUTO_LOO", 9 * 10)  # steps 0 and 1 run at once, 2 needs the button
    assert jobs.needs_button(g, [2]) and not jobs.needs_button(g, [1])
    monkeypatch.setattr(jobs, "AUTO_LOO", 10**9)
    heavy.store("explanation").clear()
    monkeypatch.setattr(jobs, "AUTO_UNITS", 2 * 8 * 50)  # steps 0 and 1 run at once, 2 on a button
    at = run(ex_preset="Your own sentence", ex_text=REF_TEXT, ex_step="1")
    assert at.dataframe[0].value["method"].tolist() == list(V.METHOD_LABELS.values())
    at = run(ex_preset="Your own sentence", ex_text=REF_TEXT, ex_step="2")
    word = g.steps[2].token
    assert not at.dataframe and at.button(key="ex_one").label == f"Explain “{word}”"
    at.button(key="ex_one").click().run()
    assert at.dataframe[0].value["method"].tolist() == list(V.METHOD_LABELS.values())
    at = run(ex_preset="Your own sentence", ex_text=REF_TEXT, ex_step="2")  # kept: no button needed
    assert at.dataframe and not [b for b in at.button if b.key == "ex_one"]


def _ref_step(lm: LoadedModel) -> tuple[int, DecodeTrace]:
    """A step where the tiny model's greedy translation and the reference differ (so a cache keyed
    by the source alone would show the wrong word's numbers), with the forced trace."""
    g = greedy(lm, [REF_TEXT], topk=1)[0]
    f = forced(lm, [REF_TEXT], [REF], topk=1)[0]
    step = next(i for i, s in enumerate(f.steps) if i >= len(g.steps) or g.steps[i].token_id != s.token_id)
    return step, f


def test_a_reference_translation_is_explained_by_forced_decoding(env: Path, tiny_lm: LoadedModel) -> None:
    lm = tiny_lm
    step, f = _ref_step(lm)
    assert step == 1 and [s.token for s in f.steps] == ["Un", "chien", "fait", "du", "vélo", ".", "</s>"]
    # the greedy translation first, so that the shared store holds its numbers for this source
    at = run(ex_preset="Your own sentence", ex_text=REF_TEXT, ex_step=str(step))
    assert "(greedy)" in markdown(at)
    box = next(e for e in at.expander if e.label.startswith("Explain a translation of your own"))
    assert not box.proto.expanded
    at = run(ex_preset="Your own sentence", ex_text=REF_TEXT, ex_ref=REF, ex_step=str(step))
    assert at.text_input(key="ex_ref").proto.query_param_key == "ex_ref"
    box = next(e for e in at.expander if e.label.startswith("Explain a translation of your own"))
    assert box.proto.expanded  # a shared link with a translation shows it
    text = markdown(at)
    assert "**Translation** (yours, forced):" in text
    assert f"(log p = {f.steps[step].logprob:.3f})" in text  # the reference's word, not the greedy one's
    assert at.slider(key="ex_step").max == 6

    ids = [s.token_id for s in f.steps]
    for i in (1, 2):  # the model's own word after "Un" is "homme", not "chien"; after "Un chien" it is "fait"
        at = run(ex_tab="Surgery", ex_preset="Your own sentence", ex_text=REF_TEXT, ex_ref=REF, ex_step=str(i),
                 ex_edit="one-hot", ex_j="0: A")
        edited = decode_with_surgery(lm, REF_TEXT, {i: Edit("onehot", j=0)}, target=ids).trace.steps[i].logprob
        mine = decode_with_surgery(lm, REF_TEXT, {i: Edit("onehot", j=0)}, prefix=ids[:i]).trace
        text = markdown(at)
        assert f"**Edited:** {mine.translation}" in text and mine.target_tokens[:i] == ["Un", "chien"][:i]
        line = (f"Your word “{f.steps[i].token}” at step {i}: log p {f.steps[i].logprob:.3f} with the model's α, "
                f"{edited:.3f} with the edit ({edited - f.steps[i].logprob:+.3f} nats")
        assert (line in text) == (i == 1), text  # said only where the model's own word differs from yours
        words = "word" if i == 1 else "2 words"
        assert f"after your translation's first {words} (forced)" in "\n".join(c.value for c in at.caption)
    at = run(ex_tab="Debate tests", ex_preset="Your own sentence", ex_text=REF_TEXT, ex_ref=REF, ex_step="1")
    at.button(key="ex_tests").click().run()
    best = f.steps[1].topk[0][0]  # the model's own most likely word there: what a shuffle can change
    assert not at.exception and best != "chien"
    assert f"the model's most likely word is “{best}”, not your “chien”" in "\n".join(c.value for c in at.caption)
    assert "Shuffling α changed the word in " in markdown(at) and f"“{best}”" in markdown(at)
    at = run(ex_preset="Your own sentence", ex_text=REF_TEXT, ex_ref="Un zorglub fait du zorglub .")
    assert any("Not in the model's French vocabulary: zorglub. The model" in plain(i.value) for i in at.info)


def test_copy_menu_with_a_reference_lists_the_unedited_decoding(env: Path, tiny_lm: LoadedModel) -> None:
    """With your translation, copy takes α from your first words and then the model's own continuation."""
    lm = tiny_lm
    _, f = _ref_step(lm)
    at = run(ex_tab="Surgery", ex_preset="Your own sentence", ex_text=REF_TEXT, ex_ref="Un chien fait du vélo rouge .",
             ex_step="1", ex_edit="copy")
    own = decode_with_surgery(lm, REF_TEXT, None, prefix=[f.steps[0].token_id]).original.target_tokens
    assert own[0] == "Un" and len(own) != 8  # the model's continuation, not the 8 words of the typed translation
    assert at.selectbox(key="ex_from").options == [f"{k}: {w}" for k, w in enumerate(own)]
    assert "**Original (your first words, then the model's own):**" in markdown(at)


def test_a_new_source_clears_the_translation_but_keeps_its_box_open(env: Path) -> None:
    at = run(ex_preset="Your own sentence", ex_text=REF_TEXT, ex_ref=REF)
    assert "(yours, forced)" in markdown(at)
    at.text_area(key="ex_text").input("A dog is sleeping on the bench.").run()
    assert at.text_input(key="ex_ref").value == "" and "(greedy)" in markdown(at)
    box = next(e for e in at.expander if e.label.startswith("Explain a translation of your own"))
    assert box.proto.expanded  # still open for the next translation
    at.text_input(key="ex_ref").input(REF).run()
    at.selectbox(key="ex_preset").set_value("Point α elsewhere").run()
    assert at.text_input(key="ex_ref").value == "" and "(greedy)" in markdown(at) and not at.warning


def test_a_preset_loads_its_step_and_edit(env: Path) -> None:
    at = run(ex_tab="Surgery")
    at.selectbox(key="ex_preset").set_value("Uniform α on a function word").run()
    assert not at.exception and not at.warning
    assert at.slider(key="ex_step").value == 3 and at.radio(key="ex_edit").value == "uniform"
    at.selectbox(key="ex_preset").set_value("Zero the aligned word, lose the word").run()
    assert not at.exception and not at.warning
    assert at.radio(key="ex_edit").value == "zero" and at.pills(key="ex_j").value == 6


def test_bad_input_gets_a_plain_message(env: Path) -> None:
    at = run(ex_model="tiny-en-fr-rnnencdec.pt")
    infos = [plain(i.value) for i in at.info]
    assert any(i.startswith("RNNencdec has no α") and "tiny-en-fr-rnnsearch.pt" in i for i in infos), infos
    assert not at.dataframe and not at.tabs
    at = run(ex_preset="Your own sentence", ex_text="   ")
    assert any("Type an English sentence" in i.value for i in at.info)
    at = run(ex_preset="Your own sentence", ex_text="A camel is eating *zorgs*.")
    assert any("Not in the model's vocabulary: camel" in plain(i.value) for i in at.info)
    assert at.dataframe  # still explained: unknown words are read as <unk>


def test_numbers_no_widget_can_hold_fall_back_to_defaults(env: Path) -> None:
    at = run(ex_tab="Surgery", ex_step="999", ex_edit="scalpel", ex_j="1e309", ex_seed="1e309", ex_preset="nope")
    assert at.selectbox(key="ex_preset").value == "Point α elsewhere"
    assert at.slider(key="ex_step").value == 5 and at.radio(key="ex_edit").value == "one-hot"
    assert at.pills(key="ex_j").value == 2 and at.selectbox(key="ex_seed").value == 0
    assert "**Edited:**" in markdown(at)


def test_a_luong_model_is_named_and_refused_plainly(env: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
                                                    ) -> None:
    run_dir = tmp_path / "luong"
    train.main(["--data", str(TINY_DATA), "--arch", "luong", "--score", "general", "--emb-dim", "16",
                "--hidden-dim", "24", "--epochs", "1", "--batch-size", "10", "--valid-every", "100000",
                "--max-updates", "2", "--no-progress", "--threads", "1", "--amp", "off", "--out", str(run_dir)])
    folder = tmp_path / "ckpts"
    folder.mkdir()
    shutil.copy(run_dir / "best.pt", folder / "tiny-en-fr-luong-global.pt")
    monkeypatch.setenv("RNNSEARCH_CHECKPOINTS", str(folder))
    at = run()
    infos = [plain(i.value) for i in at.info]
    assert infos == ["This page explains RNNsearch (Bahdanau et al. 2015) only; tiny-en-fr-luong-global.pt is a "
                     "Luong 2015, global, general, input feeding model, which the attribution and surgery library "
                     "does not support. There is no RNNsearch checkpoint in the checkpoint folder."], infos
