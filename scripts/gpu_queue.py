"""The GPU queue's bookkeeping (issue 47), for ``scripts/gpu_queue.sh``: which item is next, what its probe
adds to ``bench/results-gpu.json``, whether a continued model may replace the shipped one, and whether a
call's output fits what a device call brings back.

    python scripts/gpu_queue.py next --queue scripts/gpu_queue.json        # shell assignments, or ID=''
    python scripts/gpu_queue.py bench --probe OUT/probe.json --item ID --into bench/results-gpu.json --out F
    python scripts/gpu_queue.py verdict --item ID --queue Q --new NEW.pt [--old OLD.pt] --out OUT/verdict.json
    python scripts/gpu_queue.py check-out OUT                              # ≤ 8 files, ≤ 64 MiB
    python scripts/gpu_queue.py done --queue scripts/gpu_queue.json --item ID --note "…"   # after landing it

An item is one model trained in one device call; ``done`` is set by hand (``done``) once its files have
landed, so an item whose call failed is simply the next one again.
"""

from __future__ import annotations

import argparse
import json
import shlex
import sys
from pathlib import Path
from typing import Any

MAX_FILES, MAX_BYTES = 8, 64 * 2**20  # what one device call brings back (/work/.library/device/README.md)
SHELL = {"ID": "id", "CONFIG": "config", "INIT": "init", "MINUTES": "minutes", "CKPT": "checkpoint",
         "NAME": "name", "REPLACE": "replace", "SPLITS": "splits", "TIMELINE_OF": "timeline_of"}


def load(path: Path) -> dict[str, Any]:
    """The queue file: ``{"items": [{"id", "config", "checkpoint", "replace", "done", …}, …]}``."""
    return json.loads(path.read_text(encoding="utf-8"))


def next_item(queue: dict[str, Any]) -> dict[str, Any] | None:
    """The first item not done, in the file's order."""
    return next((it for it in queue["items"] if not it.get("done")), None)


def shell_vars(item: dict[str, Any] | None) -> str:
    """``NAME='value'`` lines for ``eval`` in the runbook (lists joined by spaces); ``ID=''`` when none."""
    if item is None:
        return "ID=''"
    out = []
    for var, key in SHELL.items():
        v = item.get(key)
        v = " ".join(map(str, v)) if isinstance(v, list) else "" if v is None else str(v)
        out.append(f"{var}={shlex.quote(v)}")
    return "\n".join(out)


def greedy_bleu(scores: dict[str, Any], split: str) -> float | None:
    """Greedy BLEU of ``split`` in a checkpoint's ``meta["scores"]`` (nmt.tools.export's layout)."""
    return (scores.get(split) or {}).get("greedy", {}).get("bleu", {}).get("score")


def verdict(item: dict[str, Any], new: dict[str, Any], old: dict[str, Any] | None) -> dict[str, Any]:
    """Whether the new checkpoint goes to ``item["checkpoint"]``. ``replace = "if-better"``: only when it
    scores strictly higher greedy BLEU than ``old`` on every split of ``item["compare_on"]`` (a split missing
    on either side counts against); ``"absent"``: only when no checkpoint is shipped there (``old`` None)."""
    rule = item.get("replace", "absent")
    if rule == "absent":
        return {"item": item["id"], "rule": rule, "replace": old is None}
    rows = {s: {"new": greedy_bleu(new, s), "old": greedy_bleu(old or {}, s)} for s in item.get("compare_on", [])}
    better = bool(rows) and all(r["new"] is not None and r["old"] is not None and r["new"] > r["old"]
                                for r in rows.values())
    return {"item": item["id"], "rule": rule, "replace": better, "greedy_bleu": rows}


def bench_entry(probe: dict[str, Any], item_id: str, date: str) -> dict[str, Any]:
    """The compiled and eager step at the probe's chosen batch: tokens/s, model FLOPs per token and MFU."""
    batch, tau = probe["chosen"]["batch"], probe["chosen"]["tau"]
    keep = ("tok_s", "flops_per_token", "mfu_datasheet", "mfu_measured_peak")
    rows = {("compiled" if r.get("compiled") else "eager"): {k: r.get(k) for k in keep}
            for r in probe.get("rows", []) if r.get("batch") == batch and r.get("tau") == tau}
    return {"item": item_id, "date": date, "device": probe.get("device"), "torch": probe.get("torch"),
            "batch": batch, "tau": tau, **rows, "compile_failed": [f.get("error") for f in probe.get("failed", [])],
            "chosen_compiled": probe["chosen"]["compiled"]}


def merged_bench(results: dict[str, Any], entry: dict[str, Any]) -> dict[str, Any]:
    """``bench/results-gpu.json`` with ``entry`` appended under ``queue_probes`` (other keys kept)."""
    out = dict(results)
    out["queue_probes"] = [*out.get("queue_probes", []), entry]
    return out


def check_out(folder: Path) -> list[str]:
    """What keeps ``folder`` from coming back whole from one device call (none when it fits)."""
    files = [p for p in folder.rglob("*") if p.is_file()]
    size = sum(p.stat().st_size for p in files)
    problems = [f"{len(files)} files, more than {MAX_FILES}"] if len(files) > MAX_FILES else []
    if size > MAX_BYTES:
        problems.append(f"{size / 2**20:.1f} MiB, more than {MAX_BYTES / 2**20:.0f} MiB")
    return problems


def _meta_scores(path: str | None) -> dict[str, Any] | None:
    """A checkpoint's ``meta["scores"]`` (None when there is no such file)."""
    if not path or not Path(path).is_file():
        return None
    sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
    from nmt.models.checkpoint import read_checkpoint

    return dict(read_checkpoint(path, mmap=True).get("meta", {}).get("scores") or {})


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("command", choices=["next", "bench", "verdict", "check-out", "done"])
    p.add_argument("folder", nargs="?", type=Path, help="check-out: the folder that goes back")
    p.add_argument("--queue", type=Path, default=Path("scripts/gpu_queue.json"))
    p.add_argument("--item", default="")
    p.add_argument("--probe", type=Path)
    p.add_argument("--into", type=Path, help="bench: the committed results file to add to")
    p.add_argument("--out", type=Path)
    p.add_argument("--new", help="verdict: the exported checkpoint")
    p.add_argument("--old", help="verdict: the shipped checkpoint it may replace")
    p.add_argument("--date", default="")
    p.add_argument("--note", default="")
    a = p.parse_args(argv)
    if a.command == "next":
        print(shell_vars(next_item(load(a.queue))))
    elif a.command == "bench":
        results = json.loads(a.into.read_text()) if a.into and a.into.is_file() else {}
        entry = bench_entry(json.loads(a.probe.read_text()), a.item, a.date)
        a.out.write_text(json.dumps(merged_bench(results, entry), indent=1))
    elif a.command == "verdict":
        item = next(it for it in load(a.queue)["items"] if it["id"] == a.item)
        if item.get("replace", "absent") == "absent":  # only whether a model is there (no torch to start)
            v = verdict(item, {}, {} if a.old and Path(a.old).is_file() else None)
        else:
            v = verdict(item, _meta_scores(a.new) or {}, _meta_scores(a.old))
        a.out.write_text(json.dumps(v, indent=1))
        print(json.dumps(v))
    elif a.command == "check-out":
        problems = check_out(a.folder)
        print("\n".join(problems) or f"{a.folder} fits one call's return ({MAX_FILES} files, 64 MiB)")
        return 1 if problems else 0
    else:
        queue = load(a.queue)
        item = next(it for it in queue["items"] if it["id"] == a.item)
        item["done"], item["done_note"] = True, a.note
        a.queue.write_text(json.dumps(queue, indent=1, ensure_ascii=False) + "\n", encoding="utf-8")
    return 0


if __name__ == "__main__":
    sys.exit(main())
