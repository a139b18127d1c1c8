"""Summaries for scripts/europarl_gpu.sh: throughput of the probe and of the runs, and the results merge.

    python scripts/gpu_throughput.py probe runs/probe OUT.json   # tokens/s per batch size; picks the batch
    python scripts/gpu_throughput.py train runs OUT.json         # tokens/s of the four long runs
    python scripts/gpu_throughput.py merge runs OUT.json         # one results JSON from the four models
    python scripts/gpu_throughput.py lv SEG OUT.json             # issue 20: probe + 30k pair, into OUT's
                                                                 # "large_vocab_30k" (SEG: what fetch brought)

Throughput is read from each run's ``metrics.jsonl`` (target tokens per second of wall time over
each logging window, as ``train.py`` writes it); the first two windows (CUDA start-up) are left out
and the median of the rest is taken. The runs train concurrently on one GPU, so the aggregate is
the sum over runs.
"""

from __future__ import annotations

import json
import statistics
import sys
from pathlib import Path
from typing import Any

# The batch chosen is the smallest whose aggregate tokens/s is within this fraction of the best:
# past that point a larger batch buys little speed and costs updates.
WITHIN = 0.85


def run_tok_s(run: Path, skip: int = 2) -> float | None:
    """Median tokens/s of a run's training windows after the first ``skip``, or None."""
    path = run / "metrics.jsonl"
    if not path.exists():
        return None
    rates = [r["tok_s"] for r in map(json.loads, path.read_text().splitlines()) if r.get("type") == "train"]
    return statistics.median(rates[skip:] if len(rates) > skip else rates) if rates else None


def probe(root: Path) -> dict[str, Any]:
    """Aggregate tokens/s per batch size (runs named ``b{BATCH}-{MODEL}``) and the batch chosen."""
    by_batch: dict[int, dict[str, float | None]] = {}
    for run in sorted(root.glob("b*-*")):
        batch, _, model = run.name[1:].partition("-")
        by_batch.setdefault(int(batch), {})[model] = run_tok_s(run)
    rows = []
    for batch in sorted(by_batch):
        rates = by_batch[batch]
        ok = all(v is not None for v in rates.values())
        rows.append({"batch": batch, "per_run_tok_s": rates,
                     "aggregate_tok_s": round(sum(v for v in rates.values() if v), 1) if ok else None})
    valid = [r for r in rows if r["aggregate_tok_s"]]
    best = max((r["aggregate_tok_s"] for r in valid), default=0.0)
    chosen = min((r["batch"] for r in valid if r["aggregate_tok_s"] >= WITHIN * best), default=512)
    (root / "batch").write_text(str(chosen))
    return {"what": "four runs at once on one GPU, bf16 autocast, a few seconds each", "rows": rows,
            "rule": f"smallest batch within {WITHIN:.0%} of the best aggregate", "chosen_batch": chosen}


def runs_tok_s(root: Path, pattern: str) -> dict[str, Any]:
    """Each run ``root/pattern``'s median tokens/s and summary, and the sum of the medians."""
    runs = {}
    for run in sorted(root.glob(pattern)):
        summary = json.loads((run / "summary.json").read_text()) if (run / "summary.json").exists() else {}
        runs[run.name] = {"median_tok_s": run_tok_s(run), "summary": summary}
    return {"runs": runs, "aggregate_tok_s": round(sum(r["median_tok_s"] or 0.0 for r in runs.values()), 1)}


def train(root: Path) -> dict[str, Any]:
    """Tokens/s of the long runs ``europarl-en-fr-*`` and their sum."""
    return {"what": "target tokens/s while the runs trained concurrently on one GPU",
            **runs_tok_s(root, "europarl-en-fr-*")}


def merge(root: Path) -> dict[str, Any]:
    """The four ``results-*.json`` of nmt.tools.experiment as one, with each model's dev-set export scores."""
    out: dict[str, Any] = {"models": {}}
    for path in sorted(root.glob("results-*.json")):
        res = json.loads(path.read_text())
        out.setdefault("paper_table1_newstest2014", res.get("paper_table1_newstest2014"))
        out["models"].update(res["models"])
    for path in sorted(root.glob("export-*.json")):
        for name, entry in json.loads(path.read_text())["models"].items():
            if name in out["models"]:
                out["models"][name]["dev"] = {"scores": entry["scores"], "curve": entry["curve"],
                                              "training": entry["training"], "args": entry["args"]}
    return out


def large_vocab(seg: Path, dest: Path) -> dict[str, Any]:
    """Issue 20's probe (``SEG/probe.json``) and the concurrent 30k runs (their logs, ``SEG/*-logs.tgz``
    unpacked under ``SEG/runs``) as ``dest``'s ``large_vocab_30k`` entry; the rest of ``dest`` is kept."""
    probe = json.loads((seg / "probe.json").read_text())
    entry = {"what": "issue 20: a 30k-word truecased RNNsearch-50 and RNNencdec-50 (Europarl 950k + 3x Tatoeba, "
                     "1,306,361 pairs) trained at once on one GPU for the same 5.5 minutes, after a one-process "
                     "probe of the update alone (scripts/lv_probe.py)",
             "probe": probe, **runs_tok_s(seg / "runs", "large-vocab-en-fr-*"),
             "target": ">= 1,000,000 target tokens/s for one RNNsearch-50 run (issue 20 item 5): compare "
                       "probe.chosen.tok_s (alone) and runs[...rnnsearch].median_tok_s (beside its twin)"}
    out = json.loads(dest.read_text()) if dest.exists() else {}
    out["large_vocab_30k"] = entry
    return out


def main(argv: list[str]) -> None:
    what, root, dest = argv[0], Path(argv[1]), Path(argv[2])
    if what == "lv":
        dest.write_text(json.dumps(large_vocab(root, dest), indent=1, ensure_ascii=False) + "\n")
        return
    result = {"probe": probe, "train": train, "merge": merge}[what](root)
    text = json.dumps(result, indent=1, ensure_ascii=False)
    dest.write_text(text)
    if what == "probe":
        (root / "probe.json").write_text(text)
        for row in result["rows"]:
            print(f"batch {row['batch']:5d}: {row['aggregate_tok_s']} tok/s  {row['per_run_tok_s']}")
        print(f"chosen batch {result['chosen_batch']}")
    elif what == "train":
        print(f"aggregate {result['aggregate_tok_s']} tok/s")


if __name__ == "__main__":
    main(sys.argv[1:])
