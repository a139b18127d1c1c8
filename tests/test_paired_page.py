"""The page "Is A really better than B?" (pages/paired_compare.py) and its builders (ui/paired/views.py).

The builders are checked on result dicts written by hand in :func:`nmt.tools.paired.compare`'s shape: the
verdict's words below and above p = 0.05 and at sacrebleu's floor 1 / (resamples + 1), identical
outputs said as such, and the rows of the three tables. The page runs on the shipped checkpoints
(skipped without them): the default view draws, Run on 40 sentences shows the verdict and the tables,
and picking a sentence draws both models' α; on the tiny pair (trained by tests/conftest.py), a split of 5
pairs gets its one-line error and no table.
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path
from typing import Any

import pandas as pd
import pytest
from streamlit.testing.v1 import AppTest

from nmt.text import corpora
from tests.conftest import FIXTURES, plain
from tests.page_app import app_at
from tests.stepper_app import chart_rows
from ui.common import models
from ui.paired import views as V

ROOT = Path(__file__).resolve().parent.parent
PAGE = "pages/paired_compare.py"
PAIR = ("europarl-en-fr-rnnencdec-50.pt", "europarl-en-fr-rnnsearch-50.pt")


def result(bleu_b: float = 9.87, p_bleu: float | None = 0.001, chrf_b: float = 34.88, p_chrf: float = 0.3,
           identical: bool = False, resamples: int = 1000) -> dict[str, Any]:
    """A comparison of B with the baseline A in nmt.tools.paired.compare's shape, numbers chosen by hand."""
    def scores(a: float, b: float, p: float | None) -> dict[str, Any]:
        return {"A": {"score": a, "mean": a + 0.01, "ci95": 1.5, "p_value": None},
                "B": {"score": b, "mean": b - 0.02, "ci95": 2.5, "p_value": p}}

    return {
        "baseline": "A", "systems": ["B"], "sentences": 45, "resamples": resamples, "min_bucket": 30,
        "overall": {"BLEU": scores(4.02, bleu_b, p_bleu), "chrF": scores(25.26, chrf_b, p_chrf)},
        "by_length": [{"lo": 0, "hi": 10, "n": 31, "BLEU": scores(5.0, 7.5, 0.04), "chrF": scores(30.0, 29.0, 0.6)},
                      {"lo": 10, "hi": 20, "n": 14}],
        "identical_outputs": {"B": identical},
        "largest_differences": {"B": [
            {"k": 3, "source": "the cat .", "reference": "le chat .", "a": "=un chien .", "b": "le chat .",
             "chrf_a": 10.0, "chrf_b": 100.0, "delta_chrf": 90.0},
            {"k": 0, "source": "a dog .", "reference": "un chien .", "a": "un chien .", "b": "une vache .",
             "chrf_a": 100.0, "chrf_b": 30.0, "delta_chrf": -70.0}]},
    }


def test_the_verdict_below_above_and_at_the_floor() -> None:
    assert V.verdict(result(p_bleu=0.001), "A", "B") == (
        "B is better than A by +5.85 BLEU, p ≤ 0.001 (1,000 paired resamples): unlikely to be chance.")
    assert V.verdict(result(p_bleu=0.012), "A", "B") == (
        "B is better than A by +5.85 BLEU, p = 0.012 (1,000 paired resamples): unlikely to be chance.")
    assert V.verdict(result(p_bleu=0.05), "A", "B") == (
        "B scores higher than A by +5.85 BLEU, p = 0.050 (1,000 paired resamples): not distinguishable from "
        "chance at p < 0.05.")
    lower = V.verdict(result(bleu_b=3.0, p_bleu=0.3), "RNNencdec", "RNNsearch")
    assert lower.startswith("RNNsearch scores lower than RNNencdec by −1.02 BLEU, p = 0.300")
    assert "not distinguishable" in lower
    assert V.verdict(result(bleu_b=3.0, p_bleu=0.01), "A", "B").startswith("B is worse than A by −1.02 BLEU, p = 0.010")
    assert V.verdict(result(p_chrf=0.3), "A", "B", "chrF").startswith("B scores higher than A by +9.62 chrF, p = 0.300")
    # the floor moves with the resamples: 1/201 = 0.004975 is written p ≤ 0.005, not p = 0.005
    assert "p ≤ 0.005 (200 paired resamples): unlikely" in V.verdict(result(p_bleu=0.005, resamples=200), "A", "B")
    assert V.p_text(0.006, 200) == "p = 0.006" and V.p_text(None, 1000) == "—"
    assert V.at_floor(0.001, 1000) and not V.at_floor(0.002, 1000)


def test_identical_outputs_are_said_plainly_whatever_the_p() -> None:
    said = V.verdict(result(bleu_b=4.02, p_bleu=0.001, identical=True), "A", "B")
    assert said.startswith("B and A wrote the same translation of every sentence: there is no difference to test")
    assert "better" not in said and "chance." not in said
    same_score = V.verdict(result(bleu_b=4.02, p_bleu=0.7), "A", "B")
    assert same_score.startswith("B and A have the same BLEU (+0.00 BLEU, p = 0.700")


def test_the_overall_and_length_tables() -> None:
    df = V.overall_frame(result(), {"A": "A (encdec)", "B": "B (search)"})
    assert list(df["model"]) == ["A (encdec)", "B (search)"]
    assert list(df["BLEU"]) == [4.02, 9.87] and list(df["BLEU 95% CI ±"]) == [1.5, 2.5]
    assert list(df["BLEU p vs A"]) == ["—", "p ≤ 0.001"] and list(df["chrF p vs A"]) == ["—", "p = 0.300"]
    lf = V.length_frame(result())
    assert list(lf["source words"]) == ["0–9", "10–19"] and list(lf["sentences"]) == [31, 14]
    first, second = lf.iloc[0], lf.iloc[1]
    assert (first["BLEU A"], first["BLEU B"], first["ΔBLEU"], first["BLEU p"]) == (5.0, 7.5, 2.5, "p = 0.040")
    assert first["ΔchrF"] == -1.0
    assert second["BLEU p"] == "not tested (< 30 sentences)" and pd.isna(second["BLEU A"])


def test_the_sentence_table_and_the_clicked_row() -> None:
    df = V.sentence_frame(result())
    assert list(df.columns) == list(V.SENTENCE_COLUMNS)
    assert list(df["line"]) == [4, 1] and list(df["ΔchrF"]) == [90.0, -70.0]
    assert list(df["A wrote"]) == ["=un chien .", "un chien ."] and df["reference"].iloc[0] == "le chat ."
    lines = [10, 20, 30, 40]  # the split's lines of the four compared sentences (empty lines left out)
    assert list(V.sentence_frame(result(), lines)["line"]) == [40, 10]
    assert V.picked_line({"selection": {"rows": [1]}}, [40, 10]) == 10
    assert V.picked_line({"selection": {"rows": []}}, [40, 10]) is None
    assert V.picked_line({"selection": {"rows": [5]}}, [40, 10]) is None


def test_the_one_line_problems() -> None:
    assert V.pair_problem("en→fr", "en→fr", same_file=False) is None
    assert V.pair_problem("en→fr", "fr→en", same_file=False) == (
        "A translates en→fr and B fr→en: a paired test needs two models of the same language pair, translating "
        "the same sentences.")
    assert V.pair_problem("en→fr", "en→fr", same_file=True) == (
        "A and B are the same checkpoint: pick two different models.")
    assert V.size_problem(V.MIN_SENTENCES, "x") is None
    assert V.size_problem(1, "tiny/test") == (
        "tiny/test has 1 usable sentence pair; a paired test needs at least 10. Pick a larger split.")


@pytest.fixture
def shipped(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv(models.ENV_VAR, raising=False)
    if not all((ROOT / "checkpoints" / n).is_file() for n in PAIR):
        pytest.skip("the shipped Europarl pair is not in checkpoints/")


def _clean(at: AppTest) -> None:
    assert not at.exception and not at.error, [e.value for e in [*at.exception, *at.error]]


def test_the_page_compares_and_opens_both_alphas(shipped: None) -> None:
    at = app_at(PAGE, 300).run()
    _clean(at)
    assert (at.selectbox(key="pr_a").value, at.selectbox(key="pr_b").value) == PAIR
    assert at.selectbox(key="pr_split").value == "wmt/newstest2014-fren"
    assert not at.dataframe  # a URL never starts the work: nothing until Run
    at.selectbox(key="pr_a").set_value("m30k-en-fr-rnnencdec.pt").run()  # an untouched test set follows A's corpus
    assert at.selectbox(key="pr_split").value == "multi30k/test_2016_flickr"
    at.selectbox(key="pr_a").set_value(PAIR[0]).run()
    assert at.selectbox(key="pr_split").value == "wmt/newstest2014-fren"
    at.selectbox(key="pr_split").set_value("europarl-v7-fr-en/test2000q4").run()  # one picked by hand stays
    at.selectbox(key="pr_a").set_value("m30k-en-fr-rnnencdec.pt").run()
    assert at.selectbox(key="pr_split").value == "europarl-v7-fr-en/test2000q4"
    at.selectbox(key="pr_a").set_value(PAIR[0])
    at.selectbox(key="pr_split").set_value("wmt/newstest2014-fren").run()
    at.selectbox(key="pr_limit").set_value(40).run()
    at.button(key="pr_go").click().run()
    _clean(at)
    said = [plain(m.value) for m in at.markdown]
    assert any(s.startswith("#### B (europarl-en-fr-rnnsearch-50) is better than A (europarl-en-fr-rnnencdec-50) "
                            "by +") and "1,000 paired resamples" in s for s in said), said[:3]
    overall, lengths, sentences, by_freq, by_third, b_side, a_side = at.dataframe
    assert list(overall.value["model"]) == ["A (europarl-en-fr-rnnencdec-50)", "B (europarl-en-fr-rnnsearch-50)"]
    assert lengths.value["sentences"].sum() == 40 and len(sentences.value) == 20
    assert not at.get("vega_lite_chart")  # no sentence picked yet
    assert [d.label for d in at.get("download_button")] == ["Comparison JSON", "Sentence table CSV", "By frequency CSV",
                                                            "By part CSV", "N-grams CSV"]
    # checkpoints keep no word counts and Europarl's pre-tokenised train.tok is not among the data: the references
    assert any("Word frequencies: the test set's references (compare-mt's default)" in plain(c.value)
               for c in at.caption)
    assert by_third.value["reference words"].sum() == by_freq.value["reference words"].sum() > 0
    assert list(b_side.value.columns)[:4] == ["n-gram", "n", "A matched", "B matched"] and len(a_side.value) > 0
    line = int(sentences.value["line"].iloc[0])
    at.selectbox(key="pr_row").set_value(line).run()  # what a click on the table's first row sets
    _clean(at)
    assert len(at.get("vega_lite_chart")) == 2  # RNNencdec's one fixed c beside RNNsearch's α


@pytest.mark.parametrize(("written", "count"), [("100", 100), ("0", 0), ("first 40", 40), ("99", 200)])
def test_a_hand_written_number_of_sentences_opens_that_many(shipped: None, written: str, count: int) -> None:
    """``pr_limit=100`` written by hand opens "first 100" as the picker's own words do; a number the picker does
    not offer falls back to the default (200)."""
    at = app_at(PAGE, 300)
    at.query_params.update({"pr_limit": written})
    at.run()
    assert not at.exception and at.selectbox(key="pr_limit").value == count


def test_the_same_checkpoint_twice_gets_one_line(shipped: None) -> None:
    at = app_at(PAGE, 300)
    at.query_params.update({"pr_a": PAIR[1], "pr_b": PAIR[1]})
    at.run()
    assert not at.exception and [plain(w.value) for w in at.warning] == [
        "A and B are the same checkpoint: pick two different models."]


@pytest.fixture
def tiny_env(tiny_checkpoint_dir: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """The tiny RNNsearch / RNNencdec pair as the checkpoint folder; a data folder whose only split,
    multi30k/val, holds the 5 validation pairs of the fixtures (fewer than a paired test needs)."""
    (tmp_path / "multi30k").mkdir()
    for lang in ("en", "fr"):
        shutil.copy(FIXTURES / "tiny" / f"val.{lang}", tmp_path / "multi30k" / f"val.{lang}")
    monkeypatch.setenv(models.ENV_VAR, str(tiny_checkpoint_dir))
    monkeypatch.setenv(corpora.ENV_VAR, str(tmp_path))
    return tmp_path


def test_a_split_too_small_gets_one_line(tiny_env: Path) -> None:
    at = app_at(PAGE, 300)
    at.query_params.update({"pr_split": "multi30k/val"})
    at.run()
    _clean(at)
    assert (at.selectbox(key="pr_a").value, at.selectbox(key="pr_b").value) == (
        "tiny-en-fr-rnnencdec.pt", "tiny-en-fr-rnnsearch.pt")  # the group's RNNencdec is the baseline
    assert at.selectbox(key="pr_split").value == "multi30k/val"
    at.button(key="pr_go").click().run()
    assert not at.exception and [plain(e.value) for e in at.error] == [
        "multi30k/val has 5 usable sentence pairs; a paired test needs at least 10. Pick a larger split."]
    assert not at.dataframe


def words_result() -> dict[str, Any]:
    """result() with compare-mt's word tables of B, numbers chosen by hand."""
    def bucket(name: str, ref: int, fa: float, fb: float, ci: list[float]) -> dict[str, Any]:
        return {"bucket": name, "ref_words": ref, "a": {"out_words": 4, "matches": 2, "f": fa},
                "b": {"out_words": 5, "matches": 3, "f": fb}, "delta_f": round(fb - fa, 4), "delta_ci95": ci}

    gram = {"ngram": "le chat", "n": 2, "a": 0, "b": 3, "score": 0.2, "delta": 3, "delta_ci95": [1.0, 5.0],
            "examples": [1], "example_text": [{"k": 1, "reference": "le chat .", "a": "un chien .", "b": "le chat ."}]}
    return result() | {"words": {"frequency_source": "tiny/train", "by_system": {"B": {
        "by_frequency": [bucket("1", 6, 0.25, 0.5, [-0.1, 0.6])],
        "by_position": [bucket("first third", 3, 0.5, 0.4, [-0.35, 0.05])],
        "ngrams": {"b_not_a": [gram], "a_not_b": []}}}}}


def test_the_word_tables_read_the_result() -> None:
    from ui.paired import views_words as PW

    res = words_result()
    freq = PW.bucket_frame(res, "by_frequency")
    assert freq.iloc[0].to_dict() == {"frequency": "1", "reference words": 6, "F A": 0.25, "F B": 0.5,
                                      "ΔF (B − A)": 0.25, "95% interval": "[−0.100, +0.600]", "A words": 4,
                                      "A matched": 2, "B words": 5, "B matched": 3}
    assert PW.bucket_frame(res, "by_position").iloc[0]["part of the sentence"] == "first third"
    grams = PW.ngram_frame(res, "b_not_a", lines=[7, 9])
    assert grams.iloc[0].to_dict() == {"n-gram": "le chat", "n": 2, "A matched": 0, "B matched": 3, "score": 0.2,
                                       "Δ (B − A)": 3, "95% interval": "[+1.000, +5.000]", "example lines": "9"}
    assert PW.ngram_frame(res, "a_not_b").empty
    assert PW.ngram_examples(res, "b_not_a", 0) == [{"k": 1, "reference": "le chat .", "a": "un chien .",
                                                     "b": "le chat ."}]
    assert PW.ngram_examples(res, "b_not_a", 3) == []
    assert PW.source_line(res).startswith("Word frequencies: tiny/train. ")


def test_the_tiny_pair_counts_frequencies_in_its_training_split(tiny_checkpoint_dir: Path, tmp_path: Path,
                                                                 monkeypatch: pytest.MonkeyPatch) -> None:
    """The tiny models record tests/fixtures/tiny/train as their training split: with that folder among the
    data, the page counts its words there, and the bucket table covers every reference word of the test split."""
    from nmt.models import checkpoint

    shutil.copytree(FIXTURES / "tiny", tmp_path / "tiny")
    monkeypatch.setenv(models.ENV_VAR, str(tiny_checkpoint_dir))
    monkeypatch.setenv(corpora.ENV_VAR, str(tmp_path))
    at = app_at(PAGE, 300)
    at.query_params.update({"pr_split": "tiny/test"})
    at.run()
    at.button(key="pr_go").click().run()
    _clean(at)
    said = " ".join(plain(c.value) for c in at.caption)
    assert "Word frequencies: tiny/train, the training split A's checkpoint records" in said
    lm = checkpoint.load(tiny_checkpoint_dir / "tiny-en-fr-rnnencdec.pt")
    refs = (FIXTURES / "tiny" / "test.fr").read_text(encoding="utf-8").splitlines()
    by_freq = next(d.value for d in at.dataframe if "frequency" in d.value.columns)
    assert by_freq["reference words"].sum() == sum(len(lm.tgt_tok.tokenize(r)) for r in refs)


def test_alpha_difference_of_a_model_and_its_copy_is_zero(tiny_checkpoint_dir: Path, tmp_path: Path,
                                                         monkeypatch: pytest.MonkeyPatch) -> None:
    """A model against a copy of itself: α_B − α_A is 0 in every cell, top-1 agreement 100 %, JSD 0, on the picked
    sentence and over the test set; against the RNNencdec (one fixed c) the page says there is no α to subtract."""
    ckpts = tmp_path / "ckpts"
    shutil.copytree(tiny_checkpoint_dir, ckpts)
    shutil.copy(ckpts / "tiny-en-fr-rnnsearch.pt", ckpts / "copy-en-fr-rnnsearch.pt")
    shutil.copytree(FIXTURES / "tiny", tmp_path / "data" / "tiny")
    monkeypatch.setenv(models.ENV_VAR, str(ckpts))
    monkeypatch.setenv(corpora.ENV_VAR, str(tmp_path / "data"))
    at = app_at(PAGE, 300)
    at.query_params.update({"pr_a": "tiny-en-fr-rnnsearch.pt", "pr_b": "copy-en-fr-rnnsearch.pt",
                            "pr_split": "tiny/test"})
    at.run()
    at.button(key="pr_go").click().run()
    at.selectbox(key="pr_row").set_value(at.selectbox(key="pr_row").options[0]).run()
    _clean(at)
    said = " ".join(plain(c.value) for c in at.caption)
    assert "Top-1 agreement 100% of " in said and "mean Jensen–Shannon divergence 0.000 nats" in said
    rows = next(d.value for d in at.dataframe if "same top-1" in d.value.columns)
    assert rows["same top-1"].all() and (rows["JSD (nats)"] == 0).all()
    k = next(n for n, c in enumerate(at.get("vega_lite_chart")) if "α_B − α_A" in json.loads(c.proto.spec)["title"])
    cells = chart_rows(at, k)
    assert cells and all(abs(r["delta"]) < 1e-12 for r in cells)
    at.button(key="pr_alpha_go").click().run()
    _clean(at)
    words = next(d.value for d in at.dataframe if "attention from A" in d.value.columns)
    assert (words["B − A"] == 0).all() and (words["attention from A"] == words["attention from B"]).all()
    assert "20 of 20 sentences compared: mean top-1 agreement 100%, mean JSD 0.000 nats" in " ".join(
        plain(c.value) for c in at.caption)
    at.selectbox(key="pr_a").set_value("tiny-en-fr-rnnencdec.pt").run()
    at.button(key="pr_go").click().run()
    at.selectbox(key="pr_row").set_value(at.selectbox(key="pr_row").options[0]).run()
    _clean(at)
    assert "One of the two reads one fixed c, not α: there is no difference of α to draw." in [
        plain(c.value) for c in at.caption]
    assert "pr_alpha_go" not in [b.key for b in at.button]  # no test-set comparison offered without α
