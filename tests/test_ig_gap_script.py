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
