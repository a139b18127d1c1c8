"""The length-vs-quality page and its plot builders (issue 5)."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest
import sacrebleu
from streamlit.testing.v1 import AppTest

from nmt import checkpoint, experiment
from nmt.decoding import translate
from tests.conftest import FIXTURES, ROOT
from ui.views.length import curve_figure, curve_rows, length_figure, length_rows, table1_frame

EXPORT_SHAPE = {"models": {"rnnsearch": {
    "scores": {"test_2016_flickr": {"greedy": {"by_length": [
        {"lo": 0, "hi": 10, "n": 5, "score": 60.0}, {"lo": 10, "hi": 20, "n": 3, "score": 50.0}]}}},
    "curve": [{"type": "valid", "update": 100, "epoch": 1, "bleu": 20.0, "elapsed": 10.0},
              {"type": "valid", "update": 200, "epoch": 2, "bleu": 30.0, "elapsed": 20.0}]}}}


@pytest.fixture(scope="module")
def experiment_results(tiny_checkpoint_dir: Path, tmp_path_factory) -> Path:
    """A checkpoints folder whose results JSON came from nmt.experiment on the fixture data."""
    d = tmp_path_factory.mktemp("lq")
    for f in tiny_checkpoint_dir.glob("*.pt"):
        shutil.copy(f, d / f.name)
    rc = experiment.main(["--data", str(FIXTURES), "--out", str(d / "tiny.results.json"), "--bootstrap", "20",
                          "--model", f"RNNsearch-50={d / 'tiny-en-fr-rnnsearch.pt'}",
                          "--model", f"RNNencdec-50={d / 'tiny-en-fr-rnnencdec.pt'}", "--test", "tiny/test"])
    assert rc == 0
    (d / "m30k.results.json").write_text(json.dumps(EXPORT_SHAPE))
    return d


def test_experiment_results_hold_table1_and_buckets(experiment_results: Path) -> None:
    res = json.loads((experiment_results / "tiny.results.json").read_text())
    t = res["models"]["RNNsearch-50"]["tests"]["tiny/test"]
    src = (FIXTURES / "tiny" / "test.en").read_text(encoding="utf-8").splitlines()
    ref = (FIXTURES / "tiny" / "test.fr").read_text(encoding="utf-8").splitlines()
    hyps = translate(checkpoint.load(experiment_results / "tiny-en-fr-rnnsearch.pt"), src)
    assert t["sentences"] == 20 and "ci95" in t["all"]
    assert t["all"]["score"] == pytest.approx(sacrebleu.corpus_bleu(hyps, [ref]).score, abs=0.01)
    assert t["no_unk_sentences"] == 10  # the fixture's held-out half uses words the training pairs never had
    assert sum(b["n"] for b in t["by_length"]) == 20
    assert res["paper_table1_newstest2014"]["RNNsearch-50"]["all"] == 26.75


def test_length_rows_read_both_shapes(experiment_results: Path) -> None:
    exp = length_rows(json.loads((experiment_results / "tiny.results.json").read_text()))
    assert set(exp["model"]) == {"RNNsearch-50", "RNNencdec-50"} and set(exp["test"]) == {"tiny/test"}
    exp2 = length_rows(EXPORT_SHAPE)
    assert exp2["bucket"].tolist() == ["0–9", "10–19"] and exp2["bleu"].tolist() == [60.0, 50.0]


def test_length_figure_has_a_line_per_model_with_hover_sizes() -> None:
    fig = length_figure(length_rows(EXPORT_SHAPE))
    assert len(fig.data) == 1 and list(fig.data[0].y) == [60.0, 50.0]
    assert "sentences in bucket" in fig.data[0].hovertemplate
    assert [c[0] for c in fig.data[0].customdata] == [5, 3]


def test_table1_puts_paper_numbers_beside_ours() -> None:
    res = {"models": {"RNNsearch-50": {"tests": {"wmt/newstest2014-fren": {
        "all": {"score": 20.0, "ci95": 1.0}, "no_unk": {"score": 25.0}, "no_unk_sentences": 10}}}}}
    t = table1_frame(res, "wmt/newstest2014-fren")
    assert t.loc[0, "paper (all)"] == 26.75 and t.loc[0, "BLEU (all)"] == 20.0
    assert "paper (all)" not in table1_frame(res | {}, "other").columns


def test_training_curves() -> None:
    rows = curve_rows(EXPORT_SHAPE)
    assert rows["valid BLEU"].tolist() == [20.0, 30.0]
    assert len(curve_figure(rows).data) == 1


def _app(ckpts: Path, monkeypatch) -> AppTest:
    monkeypatch.setenv("RNNSEARCH_CHECKPOINTS", str(ckpts))
    monkeypatch.setenv("RNNSEARCH_DATA", str(FIXTURES))
    return AppTest.from_file(str(ROOT / "pages" / "length_quality.py"), default_timeout=120)


def test_page_shows_curves_and_recomputes(experiment_results: Path, monkeypatch) -> None:
    at = _app(experiment_results, monkeypatch).run()
    assert not at.exception
    at.selectbox(key="lq_results").set_value("tiny.results.json").run()
    assert not at.exception
    assert at.query_params["results"] == ["tiny.results.json"] or at.query_params["results"] == "tiny.results.json"
    assert any("Table 1" in s.value for s in at.subheader)
    at.selectbox(key="lq_rtest").set_value("tiny/val").run()
    assert "tiny/train" not in at.selectbox(key="lq_rtest").options  # training data is no test set
    at.button(key="lq_go").click().run()
    assert not at.exception
    first = [s.value for s in at.success]
    assert len(first) == 1 and "tiny\\/val: BLEU" in first[0]
    at.button(key="lq_go").click().run()  # the same settings again: served from the shared cache
    assert not at.exception and [s.value for s in at.success] == first
    again = _app(experiment_results, monkeypatch).run()  # a new session, same settings
    again.selectbox(key="lq_rtest").set_value("tiny/val").run()
    again.button(key="lq_go").click().run()
    assert not again.exception and [s.value for s in again.success] == first


def test_page_without_results_or_data_explains(tmp_path: Path, monkeypatch) -> None:
    monkeypatch.setenv("RNNSEARCH_DATA", str(tmp_path / "nowhere"))
    at = _app(tmp_path, monkeypatch).run()
    assert not at.exception
    assert any("No results files" in i.value for i in at.info)
