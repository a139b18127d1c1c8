"""scripts/ig_gap_recompute.py's bookkeeping: shards fold into one file, and the summary counts only
the sentences finished from the first one on (issue 24 item 9)."""

from __future__ import annotations

import json
from pathlib import Path

from scripts import ig_gap_recompute as ig


def _line(kind: str, k: int, gap: float) -> str:
    side = {"agreement": {"kendall_tau": [0.5], "top1": [1.0], "jsd": [0.1]}, "gap": [gap], "points": [50],
            "links": []}
    return json.dumps({"kind": kind, "k": k, "fixed": side, "by_gap": side}) + "\n"


def test_shards_merge_and_the_summary_stops_at_the_first_gap(tmp_path: Path) -> None:
    out = tmp_path / "ig.jsonl"
    out.write_text(_line("corpus", 0, 0.1) + _line("corpus", 2, 0.3) + _line("corpus", 4, 9.0))
    (tmp_path / "ig.jsonl.part1").write_text(_line("corpus", 1, 0.2) + _line("corpus", 2, 0.3))
    assert [p.name for p in ig._parts(out)] == ["ig.jsonl.part1"]
    # sentence 3 is missing: sentences 0, 1, 2 are the finished prefix; sentence 4 waits for 3
    s = ig.summarise(out)
    assert (s["sentences"], s["steps"]) == (3, 3)
    assert s["by_gap"]["gap_mean"] == 0.2 and s["by_gap"]["gap_max"] == 0.3
    assert ig.merge(out) == 4 and not ig._parts(out)
    assert [(r["kind"], r["k"]) for r in ig._rows(out)] == [("corpus", 0), ("corpus", 1), ("corpus", 2),
                                                             ("corpus", 4)]


def _gold_line(kind: str, k: int, tau: float, links: list[list[int]]) -> str:
    fixed = {"agreement": {"kendall_tau": [0.0], "top1": [0.0], "jsd": [0.5]}, "gap": [0.4], "points": [20],
             "links": [[0, 0]]}
    by_gap = {"agreement": {"kendall_tau": [tau], "top1": [1.0], "jsd": [0.1]}, "gap": [0.01], "points": [100],
              "links": links}
    return json.dumps({"kind": kind, "k": k, "fixed": fixed, "by_gap": by_gap}) + "\n"


def test_apply_swaps_the_ig_row_only_once_every_sentence_is_done(tmp_path: Path) -> None:
    gold = tmp_path / "g"
    (tmp_path / "g.en-fr.sure").write_text("0-0 1-1\n0-0\n")
    (tmp_path / "g.en-fr.possible").write_text("0-0 1-1\n0-0\n")
    old_ig, old_aer = {"kendall_tau": 0.9, "top1": 0.9, "jsd": 0.9}, {"aer": 0.99}
    faith = tmp_path / "faith.json"
    faith.write_text(json.dumps({"corpus_all_1000": {"sentences": 2, "agreement": {"ig": old_ig}},
                                 "aer_all_447": {"sentences": 2, "ig": old_aer},
                                 "ig_completeness": {"table_points": 20, "recomputed": {"command": "CMD"}}}))
    lines = tmp_path / "ig.jsonl"
    lines.write_text(_gold_line("corpus", 0, 0.2, []) + _gold_line("gold", 0, 0.0, [[0, 0], [0, 1]])
                     + _gold_line("gold", 1, 0.0, [[0, 0]]))
    assert not ig.apply(faith, lines, str(gold))  # corpus sentence 1 is missing
    f = json.loads(faith.read_text())
    assert f["corpus_all_1000"]["agreement"]["ig"] == old_ig and f["aer_all_447"]["ig"] == old_aer
    assert "first 1 of 2 sentences" in f["ig_completeness"]["caveat"]
    assert f["ig_completeness"]["recomputed"]["command"] == "CMD"

    (tmp_path / "ig.jsonl.part1").write_text(_gold_line("corpus", 1, 0.6, []))
    assert ig.apply(faith, lines, str(gold), date="2026-11-26")
    f = json.loads(faith.read_text())
    c = f["ig_completeness"]
    assert f["corpus_all_1000"]["agreement"]["ig"] == {"kendall_tau": 0.4, "top1": 1.0, "jsd": 0.1}  # means by hand
    # links {(0,0),(0,1)} and {(0,0)} against S = P = {(0,0),(1,1)} and {(0,0)}: |A∩S| = |A∩P| = 2, |A| = |S| = 3
    assert f["aer_all_447"]["ig"] == {"aer": 0.3333, "precision": 0.6667, "recall": 0.6667, "links_predicted": 3,
                                      "links_sure": 3}
    assert c["before"] == {"agreement": old_ig, "aer": old_aer} and "caveat" not in c
    assert (c["table_points"], c["former_points"], c["recomputed"]["date"]) == ("by_gap", 20, "2026-11-26")
    assert c["recomputed"]["file"] == lines.as_posix()
    assert ig.apply(faith, lines, str(gold))  # again: the fixed-point row stays where it was kept
    assert json.loads(faith.read_text())["ig_completeness"]["before"] == {"agreement": old_ig, "aer": old_aer}


def test_apply_says_whether_its_own_fixed_row_reproduces_the_former_one(tmp_path: Path) -> None:
    gold = tmp_path / "g"
    (tmp_path / "g.en-fr.sure").write_text("0-0 1-1\n0-0\n")
    (tmp_path / "g.en-fr.possible").write_text("0-0 1-1\n0-0\n")
    lines = tmp_path / "ig.jsonl"
    lines.write_text(_gold_line("corpus", 0, 0.2, []) + _gold_line("gold", 0, 0.0, [[0, 0], [0, 1]])
                     + _gold_line("gold", 1, 0.0, [[0, 0]]))
    # the lines' 20-point row: tau 0, top-1 0, JSD 0.5; its links {(0,0)} twice against S = P of 3 links:
    # AER = 1 - (2 + 2) / (2 + 3) = 0.2
    for old_ig, old_aer, verdict in (({"kendall_tau": 0.0, "top1": 0.0, "jsd": 0.5}, 0.2, "equals the former"),
                                     ({"kendall_tau": 0.0, "top1": 0.0, "jsd": 0.5}, 0.3, "differs from the former")):
        faith = tmp_path / "faith.json"
        faith.write_text(json.dumps({"corpus_all_1000": {"sentences": 1, "agreement": {"ig": old_ig}},
                                     "aer_all_447": {"sentences": 2, "ig": {"aer": old_aer}},
                                     "ig_completeness": {"table_points": 20, "what": "STALE"}}))
        assert ig.apply(faith, lines, str(gold))
        what = json.loads(faith.read_text())["ig_completeness"]["what"]
        assert "at 20 fixed points" in what and "50, doubled up to 400 while the gap is above 0.05 nats" in what
        assert f"own 20-point row {verdict} table row" in what
        assert f"(Kendall tau 0.0, top-1 0.0, JSD 0.5, AER {old_aer})" in what and lines.as_posix() in what


def test_the_readme_names_the_ig_rows_points_and_its_former_row() -> None:
    from scripts.readme_faith import faith_table, ig_note

    run = {"agreement": {k: {"kendall_tau": 0.1, "top1": 0.5, "jsd": 0.2}
                         for k in ("saliency", "x_grad", "ig", "loo_embed", "loo_alpha")}}
    aer = {k: {"aer": 0.6} for k in ("alpha", "saliency", "x_grad", "ig", "loo_embed", "loo_alpha")}
    assert "| integrated gradients (20 points) † |" in "\n".join(faith_table(run, aer, 20))
    assert "| integrated gradients (points chosen by the gap) † |" in "\n".join(faith_table(run, aer, "by_gap"))
    side = {"gap_mean": 0.2257, "gap_max": 21.24, "points_mean": 68.4, "points_max": 400, "above_tol": 0.0075}
    c = {"table_points": "by_gap", "former_points": 20,
         "recomputed": {"tol": 0.05, "steps": 14745, "file": "bench/ig.jsonl", "fixed": side,
                        "by_gap": {**side, "gap_mean": 0.0178, "gap_max": 1.2}},
         "before": {"agreement": {"kendall_tau": 0.1646, "top1": 0.504, "jsd": 0.2656}, "aer": {"aer": 0.6344}}}
    note = ig_note({"ig_completeness": c})
    assert note.startswith("† IG with its points chosen per step")
    for part in ("above 0.05 nats, up to 400 (68 on average)", "0.018 nats on average and 1.20 at most, and above "
                 "0.05 at 0.8 % of the 14,745 steps (`bench/ig.jsonl`)",
                 "At a fixed 20 points the gap was 0.23 on average and 21.2 at most",
                 "Kendall τ 0.165, top-1 0.504, JSD 0.266, Hansards AER 0.634."):
        assert part in note
