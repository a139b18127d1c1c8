"""scripts/large_vocab_results.py: issue 20's bars from hand-made result files."""

from __future__ import annotations

import json
from pathlib import Path

from scripts.large_vocab_results import main


def result(score: float, buckets: list[tuple[int, int, float]] | None = None) -> dict:
    return {"all": {"score": score}, "by_length": [{"lo": lo, "n": n, "score": s} for lo, n, s in buckets or []]}


def test_bars_by_hand(tmp_path: Path) -> None:
    a, b = tmp_path / "a.json", tmp_path / "b.json"
    a.write_text(json.dumps({"models": {
        "RNNsearch-50": {"checkpoint": "x-rnnsearch-30k.pt", "tests_beam5": {
            "tatoeba-fr-en/test": result(43.0), "wmt/newstest2014-fren": result(13.0)}},
        "RNNencdec-50": {"checkpoint": "x-rnnencdec-30k.pt", "tests_beam5": {"wmt/newstest2014-fren": result(4.0)}}}}))
    b.write_text(json.dumps({"models": {"RNNsearch-50": {"tests_beam5": {
        "europarl-v7-fr-en/test2000q4": result(30.0, [(0, 5, 20.0), (10, 50, 32.0), (50, 7, 24.0)])}}}}))
    unk = tmp_path / "unk.json"
    unk.write_text(json.dumps([{"checkpoint": "x-rnnsearch-30k.pt", "data": "tatoeba-fr-en", "split": "test",
                                "decoding": "beam5", "sentences": 1000, "lines_with_unk": 80,
                                "dictionary": {"bleu": 44.0}}]))
    aer = tmp_path / "aer.json"
    aer.write_text(json.dumps({"checkpoint": "x-rnnsearch-30k.pt", "sentences": 447, "aer": 0.53, "links": ["0-0"]}))
    out = tmp_path / "out.json"
    main(["--experiment", str(a), str(b), "--unk", str(unk), "--aer", str(aer), "--segment", "1", "--out", str(out)])
    res = json.loads(out.read_text())
    assert res["hansards_aer"] == {"checkpoint": "x-rnnsearch-30k.pt", "sentences": 447, "aer": 0.53}
    bars = {k: (v["value"], v["met"]) for k, v in res["bars"].items()}
    assert bars["tatoeba_with_replacement"] == (44.0, True)
    assert bars["tatoeba_unk_line_share"] == (0.08, True)  # 80 of 1,000 lines ≤ 10 %
    assert bars["test2000q4"] == (30.0, False)
    assert bars["newstest2014"] == (13.0, False)
    assert bars["search_over_encdec_newstest2014"] == (3.25, True)  # 13 / 4
    assert bars["fig2_50_59_over_10_19"] == (0.75, False)  # 24 / 32
    # the two files' tests merged under one model
    assert set(res["beam5"]["RNNsearch-50"]["tests_beam5"]) == {
        "tatoeba-fr-en/test", "wmt/newstest2014-fren", "europarl-v7-fr-en/test2000q4"}
