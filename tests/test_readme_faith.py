"""The faithfulness tables' IG row as the README writes it (scripts/readme_faith.py): which points the row
used, and the note under it on the gap and the former fixed-point row (issue 24 item 9)."""

from __future__ import annotations

from scripts.readme_faith import faith_table, ig_note


def test_the_readme_names_the_ig_rows_points_and_its_former_row() -> None:
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
