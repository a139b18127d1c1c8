"""The attention comparison page (issue 11): model names, local-window overlay, and the page on tiny models."""

from __future__ import annotations

import math
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from streamlit.testing.v1 import AppTest

import train
from nmt.decoding.trace import DecodeTrace, StepRecord
from nmt.models.registry import describe_model
from tests.conftest import TINY_DATA
from tests.page_app import app_at
from tests.state_keys import unlisted
from ui.common import checkpoint_files, models
from ui.common import widgets as W
from ui.compare import state
from ui.figures import stepper as sv
from ui.figures import stepper_charts as sc
from ui.figures import stepper_html as sh
from ui.figures.compare import compare_chart, local_note, summary_frame, window_frame

ROOT = Path(__file__).resolve().parent.parent


def _name(config: dict, context: str | None = None) -> str:
    return describe_model(config, context).full_name


def test_models_are_named_by_what_they_are() -> None:
    luong = {"arch": "luong", "attention": "local-p", "score": "general", "input_feeding": True}
    assert _name(luong) == "Luong 2015, local-p, general, input feeding"
    assert _name({**luong, "attention": "global", "score": "dot", "input_feeding": False}) == \
        "Luong 2015, global, dot, no input feeding"
    assert _name({"context": "attention"}) == "RNNsearch (Bahdanau 2015)"
    assert _name({"context": "fixed"}) == "RNNencdec"
    assert _name({}) == "RNNsearch (Bahdanau 2015)"


def test_one_description_per_checkpoint_and_mode() -> None:
    """Kind, context, name and colour of each (config, decoding mode); a Luong model is never "rnnsearch"."""
    cases = [({}, None, ("rnnsearch", "attention", "RNNsearch", "#206fb2", True)),
             ({"context": "fixed"}, None, ("rnnencdec", "fixed", "RNNencdec", "#e6550d", False)),
             ({}, "fixed", ("ablation", "fixed", "RNNsearch, c_i frozen", "#b2182b", False)),
             ({}, "mean", ("mean", "mean", "mean context", "#31a354", True)),
             ({"arch": "luong", "context": "attention"}, None,
              ("luong", "attention", "Luong 2015, global, ?, input feeding", "#01665e", True))]
    for config, mode, want in cases:
        d = describe_model(config, mode)
        assert (d.kind, d.context, d.name, d.colour, d.has_alpha) == want


def _trace(windows: list[tuple[float, list[int]] | None]) -> DecodeTrace:
    src = ["a", "red", "car", "is", "here", "</s>"]
    steps = [StepRecord(i=i, token=f"w{i}", token_id=5 + i, logprob=-0.5, forced=False, energies=[0.0] * 6,
                        alpha=[1 / 6] * 6, topk=[(f"w{i}", 0.6)], state_norm=1.0, context_norm=1.0,
                        position=None if w is None else w[0], window=None if w is None else w[1])
             for i, w in enumerate(windows)]
    return DecodeTrace(source="a red car is here", src_tokens=src, src_unk=[False] * 6, method="greedy",
                       context="attention", steps=steps)


def test_window_frame_outlines_the_window_and_marks_p_t() -> None:
    df = window_frame(_trace([(2.4, [1, 3]), (4.6, [3, 7])]))  # the second window runs past the sentence
    win = df[df["kind"] == "window"]
    assert list(zip(win["i"], win["j"])) == [(0, 1), (0, 2), (0, 3), (1, 3), (1, 4), (1, 5)]
    centre = df[df["kind"] == "p_t"]
    assert list(zip(centre["i"], centre["j"])) == [(0, 2), (1, 5)]  # nearest cell to p_t = 2.4 and 4.6
    assert window_frame(_trace([None, None])).empty  # global attention: nothing to draw
    assert len(compare_chart(_trace([(2.4, [1, 3])]), "x").to_dict()["layer"]) == 3  # α, window, p_t
    assert "layer" not in compare_chart(_trace([None]), "x").to_dict()  # just the heatmap


def test_summary_frame_keeps_the_comparison_columns() -> None:
    df = summary_frame([{"model": "A", "translation": "t", "words": 2, "log p (own)": -1.0, "BLEU": 10.0,
                         "context": "attention"}])
    assert list(df.columns) == ["model", "translation", "words", "log p (own)", "log p (reference)",
                                "log p / word (reference)", "BLEU", "chrF"]
    assert df.loc[0, "BLEU"] == 10.0 and df["log p (reference)"].isna().all()


@pytest.fixture(scope="module")
def mixed_checkpoints(tiny_checkpoint_dir: Path, tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The tiny RNNsearch / RNNencdec pair and a tiny local-p Luong model in one folder."""
    d = tmp_path_factory.mktemp("mixed")
    for f in tiny_checkpoint_dir.glob("*.pt"):
        shutil.copy(f, d / f.name)
    run = tmp_path_factory.mktemp("luong") / "run"
    train.main(["--data", str(TINY_DATA), "--arch", "luong", "--score", "general", "--attention", "local-p",
                "--window", "2", "--emb-dim", "16", "--hidden-dim", "24", "--epochs", "4", "--batch-size", "10",
                "--valid-every", "100000", "--max-updates", "8", "--no-progress", "--threads", "1", "--amp", "off",
                "--out", str(run)])
    shutil.copy(run / "best.pt", d / "tiny-en-fr-luong-local-p.pt")
    return d


def test_page_shows_rnnsearch_and_luong_side_by_side(mixed_checkpoints: Path, monkeypatch: pytest.MonkeyPatch
                                                     ) -> None:
    monkeypatch.setenv("RNNSEARCH_CHECKPOINTS", str(mixed_checkpoints))
    at = app_at("pages/compare_attention.py", 120)
    at.query_params.update({"cmp_text": "A dog runs.", "cmp_ref": "Un chien court."})
    at.run()
    assert not at.exception, at.exception
    options = at.multiselect(key="cmp_models").options
    assert options == ["RNNsearch (Bahdanau 2015) · tiny-en-fr-rnnsearch.pt",  # RNNencdec has no α: not offered
                       "Luong 2015, local-p, general, input feeding · tiny-en-fr-luong-local-p.pt"]
    summary = at.dataframe[0].value
    assert list(summary["model"]) == ["RNNsearch (Bahdanau 2015)", "Luong 2015, local-p, general, input feeding"]
    assert summary["log p (reference)"].notna().all() and summary["BLEU"].notna().all()
    assert any("Local attention reads only a window" in c.value for c in at.caption)
    assert len(at.get("vega_lite_chart")) == 2
    luong = next(g for g in checkpoint_files.scan(mixed_checkpoints) if "luong" in g.name)
    assert models.describe(luong.search)["model"] == "Luong 2015, local-p, general, input feeding"
    assert luong.search.kind == models.resolve(luong, False, False).kind == "luong"  # not "rnnsearch"
    assert "Luong 2015, local-p, general, input feeding" in models.group_label(luong)  # the stepper's picker
    assert W.kind_label(luong.search) == \
        "tiny-en-fr-luong-local-p.pt (Luong 2015, local-p, general, input feeding)"  # the analysis pages' picker
    # issue 49: every key the page left is listed in ui/compare/state.py (prefixed cmp_) or is ui/common's
    assert state.PREFIX == "cmp_" and all(k.startswith(state.PREFIX) for k in state.KEYS)
    assert unlisted(at, state.KEYS) == []
    assert {"cmp_models", "cmp_text", "cmp_ref", "cmp_dl_summary_0",
            "cmp_dl_tiny-en-fr-luong-local-p_0"} <= set(at.session_state.keys())


# ----------------------------------------------------------------------------------------------
# The stepper with a local-attention model
# ----------------------------------------------------------------------------------------------


def test_gaussian_factor_is_eq_10_with_sigma_half_the_window() -> None:
    assert sv.gaussian_factor(4, 4.0, 10) == 1.0
    assert sv.gaussian_factor(9, 4.0, 10) == pytest.approx(math.exp(-0.5))  # 5 words away, σ = 5
    assert sv.gaussian_factor(2, 3.5, 2) == pytest.approx(math.exp(-2.25 / 2))  # σ = 1


def test_stepper_builders_show_the_window_and_p_t() -> None:
    trace = _trace([(2.4, [1, 3]), (4.6, [3, 5])])
    table = sv.source_table(trace, trace.steps[0], half_width=2)
    assert list(table["in window"]) == ["—", "yes", "yes", "yes", "—", "—"]
    expected = [0.0] + [math.exp(-((j - 2.4) ** 2) / 2) for j in (1, 2, 3)] + [0.0, 0.0]
    assert list(table["Gaussian"]) == pytest.approx(expected)
    assert "Gaussian" not in sv.source_table(trace, trace.steps[0]).columns  # local-m: no Gaussian
    assert "in window" not in sv.source_table(_trace([None]), _trace([None]).steps[0]).columns
    spec = sc.heatmap(trace)
    assert {"test": "datum.in_window", "value": sc.WINDOW} in spec["encoding"]["stroke"]["condition"]
    inside = {(v["i"], v["j"]) for v in spec["data"]["values"] if v["in_window"]}
    assert inside == {(0, 1), (0, 2), (0, 3), (1, 3), (1, 4), (1, 5)}
    html = sh.source_html(trace, trace.steps[0])
    assert html.count("opacity:.35") == 3 and "around p_t = 2.4" in html  # j = 0, 4, 5 dimmed
    assert "in_window" not in str(sc.heatmap(_trace([None]))["encoding"]["stroke"])


def test_stepper_runs_a_luong_model_and_names_it(mixed_checkpoints: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("RNNSEARCH_CHECKPOINTS", str(mixed_checkpoints))
    luong = next(g for g in checkpoint_files.scan(mixed_checkpoints) if "luong" in g.name)
    assert models.load(luong.search).model.capabilities.gaussian_half_width() == 2  # the fixture's local-p, D = 2
    first = checkpoint_files.scan(mixed_checkpoints)[0].search
    assert models.load(first).model.capabilities.gaussian_half_width() is None
    choice = models.resolve(luong, freeze=False, ablation=False)
    assert choice.label.startswith("Luong 2015, local-p, general, input feeding") and choice.context == "attention"
    at = AppTest.from_file(str(ROOT / "app.py"), default_timeout=120)
    at.query_params.update({"text": "A dog runs.", "model": luong.name, "step": "2"})
    at.run()
    assert not at.exception, at.exception
    assert any("Local attention (Luong et al. 2015) reads only the words" in c.value for c in at.caption)
    assert any("window" in h.proto.body for h in at.get("html"))


def test_the_model_catalogue_imports_no_view_module() -> None:
    """ui.common.models describes checkpoints from nmt.models.kinds, not from a page's view builders."""
    code = ("import sys, ui.common.models; print(sorted(m for m in sys.modules if m.startswith('ui.')"
            " and not m.startswith('ui.common')))")
    out = subprocess.run([sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "[]"


def test_summary_names_keep_the_file_only_where_two_models_share_a_name() -> None:
    from ui.figures.compare import row_name

    labels = ["RNNsearch (Bahdanau 2015) · europarl-en-fr-rnnsearch-50.pt", "RNNsearch (Bahdanau 2015) · m30k.pt",
              "Luong 2015, global, dot, input feeding · m30k-dot.pt"]
    assert [row_name(x, labels) for x in labels] == [
        "RNNsearch (Bahdanau 2015) · europarl-en-fr-rnnsearch-50.pt", "RNNsearch (Bahdanau 2015) · m30k.pt",
        "Luong 2015, global, dot, input feeding"]


def test_the_local_attention_caption_says_which_local_models_use_a_gaussian() -> None:
    """local-p: a predicted p_t and a Gaussian; local-m: p_t = t and no Gaussian; none shown: no caption."""
    assert local_note([]) == ""
    p_only, m_only, both = local_note([True]), local_note([False]), local_note([True, False])
    assert "Gaussian" in p_only and "local-m" not in p_only
    assert "Gaussian" not in m_only and "p_t = t" in m_only and "local-p" not in m_only
    assert "Gaussian" in both and "p_t = t" in both
