"""The length-vs-quality page and its plot builders (issue 5)."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest
import sacrebleu
from streamlit.testing.v1 import AppTest

from nmt.decoding.search import translate
from nmt.models import checkpoint
from nmt.tools import experiment
from tests.conftest import FIXTURES, plain
from tests.page_app import app_at
from ui.figures.length import (
    curve_figure,
    curve_rows,
    empty_bucket_note,
    length_figure,
    length_rows,
    results_test_name,
    table1_frame,
    table1_note,
)

EXPORT_SHAPE = {"models": {"rnnsearch": {
    "scores": {"test_2016_flickr": {"greedy": {"by_length": [
        {"lo": 0, "hi": 10, "n": 5, "score": 60.0}, {"lo": 10, "hi": 20, "n": 3, "score": 50.0}]}}},
    "curve": [{"type": "valid", "update": 100, "epoch": 1, "bleu": 20.0, "elapsed": 10.0},
              {"type": "valid", "update": 200, "epoch": 2, "bleu": 30.0, "elapsed": 20.0}]}}}


@pytest.fixture(scope="module")
def experiment_results(tiny_checkpoint_dir: Path, tmp_path_factory) -> Path:
    """A checkpoints folder whose results JSON came from nmt.tools.experiment on the fixture data."""
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


GAPPED = {"models": {m: {"tests": {"europarl/test": {"beam": 1, "all": {"score": 30.0}, "by_length": [
    {"lo": 80, "hi": 90, "n": 34, "score": 20.0}, {"lo": 90, "hi": 100, "n": 3, "score": 15.0},
    *([] if m == "B" else [{"lo": 100, "hi": 110, "n": 1, "score": 9.0}]),
    {"lo": 110, "hi": 120, "n": 2, "score": 10.0}]}}} for m in ("A", "B")}}


def test_empty_length_bucket_is_named_not_skipped() -> None:
    """test2000q4's 100-109 bucket holds no sentence for B: it is a row with n 0, a gap in B's line
    and a note, and the x axis keeps every bucket in order."""
    rows = length_rows(GAPPED)
    b = rows[rows["model"] == "B"]
    assert b["bucket"].tolist() == ["80–89", "90–99", "100–109", "110–119"]
    assert b["n"].tolist() == [34, 3, 0, 2]
    fig = length_figure(rows)
    line_b = next(t for t in fig.data if t.name == "B")
    assert list(line_b.x) == ["80–89", "90–99", "100–109", "110–119"]
    assert line_b.y[2] is None or line_b.y[2] != line_b.y[2]  # None or NaN: a gap, not a point
    assert [a.text for a in fig.layout.annotations] == ["no sentences"] and fig.layout.annotations[0].x == "100–109"
    assert list(fig.layout.xaxis.categoryarray) == ["80–89", "90–99", "100–109", "110–119"]
    assert empty_bucket_note(rows) == ("No test sentence is 100–109 words long (B only): that bucket is shown empty, "
                                       "not skipped.")
    assert empty_bucket_note(length_rows(EXPORT_SHAPE)) == ""


def test_table1_puts_paper_numbers_beside_ours() -> None:
    res = {"models": {"RNNsearch-50": {"tests": {"wmt/newstest2014-fren": {
        "all": {"score": 20.0, "ci95": 1.0}, "no_unk": {"score": 25.0}, "no_unk_sentences": 10}}}}}
    t = table1_frame(res, "wmt/newstest2014-fren", origin="x.results.json")
    assert t.loc[0, "paper (all)"] == 26.75 and t.loc[0, "BLEU (all)"] == 20.0 and t.loc[0, "BLEU (no UNK)"] == 25.0
    assert t.loc[0, "decoding"] == "greedy" and t.loc[0, "from"] == "x.results.json"
    assert "paper (all)" not in table1_frame(res | {}, "other").columns


def test_table1_of_export_results_has_all_bleu_and_says_no_unk_is_absent() -> None:
    """nmt.tools.export results score all sentences only: Table 1 shows that column and says the other is missing."""
    res = {"models": {"rnnsearch": {"scores": {"test_2016_flickr": {
        "greedy": {"bleu": {"score": 54.3, "ci95": 1.2}}, "beam5": {"bleu": {"score": 55.5}}}}}}}
    t = table1_frame(res, "test_2016_flickr", origin="m30k.results.json")
    assert t[["decoding", "BLEU (all)"]].values.tolist() == [["greedy", 54.3], ["beam5", 55.5]]
    assert t["BLEU (no UNK)"].isna().all() and t.loc[0, "± CI (all)"] == 1.2
    note = table1_note(t, "m30k.results.json")
    assert "nmt.tools.export" in note and "no-UNK column is empty" in note and "nmt.tools.experiment" in note
    assert "no Table 1" in table1_note(table1_frame(res, "val", "m30k.results.json"), "m30k.results.json")
    none_free = {"models": {"m": {"tests": {"t": {"all": {"score": 3.0}, "no_unk": None, "no_unk_sentences": 0}}}}}
    t = table1_frame(none_free, "t")
    assert t.loc[0, "BLEU (no UNK)"] is None and "every sentence has an unknown word" in table1_note(t, "f")


def test_results_test_name_follows_the_file() -> None:
    assert results_test_name("multi30k/test_2016_flickr", "test_2016_flickr", {"test_2016_flickr"}) == \
        "test_2016_flickr"  # nmt.tools.export names
    assert results_test_name("tiny/test", "test", {"tiny/test", "test"}) == "tiny/test"  # nmt.tools.experiment names
    assert results_test_name("europarl/test2000q4", "test2000q4", set()) == "europarl/test2000q4"


def test_figures_have_projector_sized_text() -> None:
    for fig in (length_figure(length_rows(EXPORT_SHAPE)), curve_figure(curve_rows(EXPORT_SHAPE))):
        assert fig.layout.font.size == 14 and fig.layout.title.font.size == 18


def test_training_curves() -> None:
    rows = curve_rows(EXPORT_SHAPE)
    assert rows["valid BLEU"].tolist() == [20.0, 30.0]
    assert len(curve_figure(rows).data) == 1


def _app(ckpts: Path, monkeypatch, data: Path = FIXTURES) -> AppTest:
    monkeypatch.setenv("RNNSEARCH_CHECKPOINTS", str(ckpts))
    monkeypatch.setenv("RNNSEARCH_DATA", str(data))
    return app_at("pages/length_quality.py", 120)



def _length_figure(at: AppTest) -> dict:
    """The figure JSON of the top chart (BLEU by source length)."""
    specs = [json.loads(el.proto.spec) for el in at.get("plotly_chart")]
    return next(s for s in specs if s["layout"]["title"]["text"].startswith("BLEU by source length"))


def test_page_shows_curves_and_recomputes(experiment_results: Path, monkeypatch) -> None:
    at = _app(experiment_results, monkeypatch).run()
    assert not at.exception
    at.selectbox(key="lq_results").set_value("tiny.results.json").run()
    assert not at.exception
    for kind in ("selectbox", "radio"):  # every control is in the URL under its own key
        for w in getattr(at, kind):
            assert w.proto.query_param_key == w.key, w.key
    assert any("Table 1" in s.value for s in at.subheader)
    table = at.dataframe[-1].value
    assert set(table["model"]) == {"RNNsearch-50", "RNNencdec-50"} and table["BLEU (no UNK)"].notna().all()
    assert any("python -m nmt experiment" in plain(c.value) for c in at.caption)
    at.selectbox(key="lq_rtest").set_value("tiny/test").run()
    assert "tiny/train" not in at.selectbox(key="lq_rtest").options  # training data is no test set
    at.button(key="lq_go").click().run()
    assert not at.exception
    first = [s.value for s in at.success]
    assert len(first) == 1 and "tiny\\/test: BLEU" in first[0]
    # The recomputed curve is in the top chart at once, and its Table 1 row below it.
    names = [t["name"] for t in _length_figure(at)["data"]]
    assert "tiny-en-fr-rnnsearch (recomputed)" in names and "RNNsearch-50" in names
    assert "recomputed on this server" in set(at.dataframe[-1].value["from"])
    at.button(key="lq_go").click().run()  # the same settings again: served from the shared cache
    assert not at.exception and not at.error and [s.value for s in at.success] == first  # no boundary message
    again = _app(experiment_results, monkeypatch).run()  # a new session, same settings
    again.selectbox(key="lq_rtest").set_value("tiny/test").run()
    again.button(key="lq_go").click().run()
    assert not again.exception and not again.error and [s.value for s in again.success] == first


def test_export_results_say_table1_has_no_unk_column(experiment_results: Path, monkeypatch) -> None:
    at = _app(experiment_results, monkeypatch)
    at.query_params["lq_results"] = "m30k.results.json"
    at.run()
    assert not at.exception and at.selectbox(key="lq_results").value == "m30k.results.json"
    assert any("nmt.tools.export" in plain(c.value) and "no-UNK column is empty" in plain(c.value) for c in at.caption)
    assert at.dataframe[-1].value["BLEU (no UNK)"].isna().all()


def test_recompute_where_no_sentence_is_free_of_unknown_words(experiment_results: Path, tmp_path: Path,
                                                              monkeypatch) -> None:
    """The held-out half of the fixture test set uses words outside the tiny vocabularies."""
    (tmp_path / "unk").mkdir()
    for lang in ("en", "fr"):
        lines = (FIXTURES / "tiny" / f"test.{lang}").read_text(encoding="utf-8").splitlines()[10:]
        (tmp_path / "unk" / f"test.{lang}").write_text("\n".join(lines) + "\n", encoding="utf-8")
    at = _app(experiment_results, monkeypatch, data=tmp_path).run()
    at.selectbox(key="lq_results").set_value("tiny.results.json").run()
    at.selectbox(key="lq_rtest").set_value("unk/test").run()  # the built-in sets are offered too
    at.selectbox(key="lq_limit").set_value(0).run()
    at.button(key="lq_go").click().run()
    assert not at.exception
    assert any("no sentence is free of unknown words" in s.value for s in at.success)
    assert at.selectbox(key="lq_test").value == "unk/test"  # the top shows what was just recomputed
    assert [t["name"] for t in _length_figure(at)["data"]] == ["tiny-en-fr-rnnsearch (recomputed)"]
    rows = at.dataframe[-1].value
    row = rows[rows["from"] == "recomputed on this server"]
    assert len(row) == 1 and row["no-UNK sentences"].iloc[0] == 0 and row["BLEU (no UNK)"].isna().all()


def test_page_without_results_or_data_explains(tmp_path: Path, monkeypatch) -> None:
    monkeypatch.setenv("RNNSEARCH_DATA", str(tmp_path / "nowhere"))
    at = _app(tmp_path, monkeypatch).run()
    assert not at.exception
    assert any("No results files" in i.value for i in at.info)
