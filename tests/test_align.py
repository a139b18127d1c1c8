"""Attention alignments and AER against Sure/Possible gold links."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest

from nmt.decoding.search import forced
from nmt.decoding.trace import DecodeTrace, StepRecord
from nmt.explanation.align import alignment_error, argmax_links, parse_links, threshold_links
from nmt.tools import align as align_tool


def test_parse_links() -> None:
    assert parse_links("0-0 3-1  2-2") == {(0, 0), (3, 1), (2, 2)}
    assert parse_links("") == set()
    with pytest.raises(ValueError, match="malformed"):
        parse_links("0-0 1:2")


def test_aer_hand_worked_example() -> None:
    # S = {0-0, 1-1}; P = S ∪ {1-2, 2-2}; A = {0-0, 1-2, 2-1}
    # |A∩S| = 1 (0-0); |A∩P| = 2 (0-0, 1-2); |A| = 3; |S| = 2
    # AER = 1 − (1 + 2) / (3 + 2) = 0.4; precision = 2/3; recall = 1/2
    sure = [{(0, 0), (1, 1)}]
    possible = [{(1, 2), (2, 2)}]  # Possible is taken to include Sure
    res = alignment_error([{(0, 0), (1, 2), (2, 1)}], sure, possible)
    assert res["aer"] == pytest.approx(0.4)
    assert res["precision"] == pytest.approx(2 / 3)
    assert res["recall"] == pytest.approx(0.5)


def test_perfect_and_empty_alignments() -> None:
    s = [{(0, 0), (1, 1)}]
    assert alignment_error(s, s, s)["aer"] == 0.0
    assert alignment_error([set()], s, s)["aer"] == 1.0


def _step(i: int, token: str, alpha: list[float] | None) -> StepRecord:
    return StepRecord(i, token, 0, 0.0, True, alpha, alpha, [], 1.0, 1.0)


def test_argmax_links_skip_eos_on_both_sides() -> None:
    t = DecodeTrace("a b", ["a", "b", "</s>"], [False] * 3, "forced", "attention", steps=[
        _step(0, "x", [0.1, 0.7, 0.2]),
        _step(1, "y", [0.2, 0.1, 0.7]),  # most weight on </s>: the best real word is 'a'
        _step(2, "</s>", [0.0, 0.0, 1.0]),
    ])
    assert argmax_links(t) == {(1, 0), (0, 1)}


def test_threshold_links_keep_every_weight_at_or_above_tau() -> None:
    t = DecodeTrace("a b", ["a", "b", "</s>"], [False] * 3, "forced", "attention", steps=[
        _step(0, "x", [0.45, 0.45, 0.1]),  # two source words above 0.3: two links
        _step(1, "y", [0.2, 0.1, 0.7]),  # only </s> above 0.3: no link at all
        _step(2, "</s>", [0.0, 0.0, 1.0]),
    ])
    assert threshold_links(t, 0.3) == {(0, 0), (1, 0)}
    assert threshold_links(t, 0.2) == {(0, 0), (1, 0), (0, 1)}  # α = τ counts
    assert threshold_links(t, 0.5) == set()


def test_align_cli_thresholds(tiny_ckpt: Path, tmp_path: Path) -> None:
    """τ = 0 links every target word to every source word: with all pairs Sure, recall is 1 and AER 0."""
    (tmp_path / "g.en").write_text("a dog runs .\n")
    (tmp_path / "g.fr").write_text("un chien court .\n")
    every = " ".join(f"{j}-{i}" for j in range(4) for i in range(4))
    (tmp_path / "g.en-fr.sure").write_text(every + "\n")
    (tmp_path / "g.en-fr.possible").write_text(every + "\n")
    out = tmp_path / "res.json"
    assert align_tool.main(["--checkpoint", str(tiny_ckpt), "--aer", str(tmp_path / "g"), "--json", str(out),
                       "--thresholds", "0", "1.01"]) == 0
    res = json.loads(out.read_text())["thresholded"]
    assert res["0"]["links_predicted"] == 16 and res["0"]["recall"] == 1.0 and res["0"]["aer"] == 0.0
    assert res["1.01"]["links_predicted"] == 0 and res["1.01"]["aer"] == 1.0


def test_argmax_links_of_a_fixed_context_trace_are_empty() -> None:
    t = DecodeTrace("a", ["a", "</s>"], [False] * 2, "forced", "fixed", steps=[_step(0, "x", None)])
    assert argmax_links(t) == set()


def test_align_cli_on_a_gold_set(tiny_lm, tiny_ckpt: Path, tmp_path: Path) -> None:
    """The CLI links each target word (not </s>) to argmax_j α_ij over the source words (not </s>),
    read here from forced decoding with numpy, and pools AER over the gold set.

    Gold: sentence 1 has every (j, i) pair Sure, sentence 2 none, so whatever the links are,
    |A| = 6 + 4, |S| = 30, |A∩S| = |A∩P| = 6: AER = 1 − 12/40 = 0.7, precision 0.6, recall 0.2."""
    src = ["a man is riding .", "a dog runs ."]
    tgt = ["un homme fait du vélo .", "un chien court ."]
    (tmp_path / "g.en").write_text("\n".join(src) + "\n")
    (tmp_path / "g.fr").write_text("\n".join(tgt) + "\n")
    every = " ".join(f"{j}-{i}" for j in range(5) for i in range(6))
    (tmp_path / "g.en-fr.sure").write_text(every + "\n\n")
    (tmp_path / "g.en-fr.possible").write_text(every + "\n\n")
    out = tmp_path / "res.json"
    assert align_tool.main(["--checkpoint", str(tiny_ckpt), "--aer", str(tmp_path / "g"), "--json", str(out)]) == 0
    res = json.loads(out.read_text())
    assert res["sentences"] == 2 and res["links_predicted"] == 10 and res["links_sure"] == 30
    assert res["aer"] == pytest.approx(0.7) and res["precision"] == pytest.approx(0.6)
    assert res["recall"] == pytest.approx(0.2)
    for links, t in zip(res["links"], forced(tiny_lm, src, tgt, pretokenized=True), strict=True):
        best = np.argmax(t.alpha_matrix()[:-1, :-1], axis=1)  # rows: target words; columns: source words
        assert links == " ".join(f"{j}-{i}" for j, i in sorted((int(j), i) for i, j in enumerate(best)))


def test_recorded_aer_rows_read_the_results_files_then_the_references() -> None:
    from ui.figures.alignment import AER_REFERENCES, recorded_aer_rows

    res = {"ep.results.json": {"models": {
        "RNNsearch-50": {"hansards_aer": {"argmax": {"aer": 0.5, "precision": 0.52, "recall": 0.44},
                                          "thresholded": {"0.2": {"aer": 0.48, "precision": 0.5, "recall": 0.55},
                                                          "0.3": {"aer": 0.9, "precision": 0.0, "recall": 0.0}},
                                          "tau_from_trial": 0.2}},
        "RNNencdec-50": {}}, "hansards_statistical_aligner": {
            "aligner": "eflomal", "extra_training_pairs": 1000,
            "forward": {"aer": 0.07, "precision": 0.9, "recall": 0.9},
            "intersection": {"aer": 0.06, "precision": 0.97, "recall": 0.9}}},
        "m30k.results.json": {"models": {"x": {}}}}
    rows = recorded_aer_rows(res)
    assert [(r["aligner"], r["AER"], r["recall"]) for r in rows[:2]] == [
        ("RNNsearch-50: argmax α", "0.500", "0.44"), ("RNNsearch-50: α ≥ 0.2 (τ tuned on trial)", "0.480", "0.55")]
    assert all(isinstance(r[c], str) for r in rows for c in ("AER", "precision", "recall"))  # one Arrow type
    assert rows[0]["source"] == "ep.results.json"
    assert [(r["aligner"], r["AER"]) for r in rows[2:4]] == [
        ("eflomal: forward (+ 1,000 Europarl pairs)", "0.070"),
        ("eflomal: intersection (+ 1,000 Europarl pairs)", "0.060")]
    assert rows[4:] == list(AER_REFERENCES) and len(rows) == 6
