"""The GPU queue (issue 47): its bookkeeping on hand-made values, the committed queue, and the one-call
runbook rehearsed end to end on the CPU with the tiny fixtures (scripts/gpu_queue.sh run, then land)."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import tomllib
from pathlib import Path

import pytest

from nmt.models import checkpoint
from scripts import gpu_queue as G

ROOT = Path(__file__).resolve().parent.parent
FIX = ROOT / "tests" / "fixtures" / "gpu_queue"


def _scores(tatoeba: float, news: float) -> dict:
    return {"tatoeba-test": {"greedy": {"bleu": {"score": tatoeba}}},
            "newstest2014": {"greedy": {"bleu": {"score": news}}}}


ITEM_B = {"id": "b", "replace": "if-better", "compare_on": ["tatoeba-test", "newstest2014"]}


def test_a_continued_model_replaces_the_shipped_one_only_if_better_on_both() -> None:
    shipped = _scores(44.17, 14.27)  # the everyday model's greedy BLEU in its meta["scores"]
    assert G.verdict(ITEM_B, _scores(45.0, 15.1), shipped)["replace"] is True
    assert G.verdict(ITEM_B, _scores(45.0, 14.0), shipped)["replace"] is False  # worse on newstest2014
    assert G.verdict(ITEM_B, _scores(44.17, 15.1), shipped)["replace"] is False  # a tie is no gain
    assert G.verdict(ITEM_B, {"tatoeba-test": shipped["tatoeba-test"]}, shipped)["replace"] is False  # missing
    rows = G.verdict(ITEM_B, _scores(45.0, 15.1), shipped)["greedy_bleu"]
    assert rows == {"tatoeba-test": {"new": 45.0, "old": 44.17}, "newstest2014": {"new": 15.1, "old": 14.27}}


def test_a_new_model_ships_only_where_none_is() -> None:
    item = {"id": "a", "replace": "absent"}
    assert G.verdict(item, _scores(1, 1), None)["replace"] is True
    assert G.verdict(item, _scores(99, 99), _scores(1, 1))["replace"] is False


def test_bench_entry_takes_eager_and_compiled_at_the_chosen_batch() -> None:
    probe = {"device": "NVIDIA H200", "torch": "2.x", "failed": [],
             "chosen": {"batch": 2048, "tau": 0, "compiled": True},
             "rows": [{"batch": 1024, "tau": 0, "compiled": False, "tok_s": 1.0, "flops_per_token": 9.0},
                      {"batch": 2048, "tau": 0, "compiled": False, "tok_s": 400e3, "flops_per_token": 2e8,
                       "mfu_datasheet": 0.081, "mfu_measured_peak": 0.1},
                      {"batch": 2048, "tau": 0, "compiled": True, "tok_s": 1.1e6, "flops_per_token": 2e8,
                       "mfu_datasheet": 0.222, "mfu_measured_peak": 0.3}]}
    e = G.bench_entry(probe, "a", "2026-11-29")
    assert e["eager"] == {"tok_s": 400e3, "flops_per_token": 2e8, "mfu_datasheet": 0.081, "mfu_measured_peak": 0.1}
    assert e["compiled"]["tok_s"] == 1.1e6 and e["batch"] == 2048 and e["chosen_compiled"] is True
    merged = G.merged_bench({"what": "x", "queue_probes": [{"item": "old"}]}, e)
    assert merged["what"] == "x" and [p["item"] for p in merged["queue_probes"]] == ["old", "a"]


def test_check_out_counts_files_and_bytes(tmp_path: Path) -> None:
    for k in range(8):
        (tmp_path / f"f{k}").write_text("x")
    assert G.check_out(tmp_path) == []
    (tmp_path / "f8").write_text("x")
    assert G.check_out(tmp_path) == ["9 files, more than 8"]
    (tmp_path / "f8").unlink()
    with open(tmp_path / "f0", "wb") as f:  # sparse: 64 MiB + 1 byte without writing them
        f.truncate(64 * 2**20 + 1)
    assert G.check_out(tmp_path) == ["64.0 MiB, more than 64 MiB"]


def test_next_item_and_its_shell_lines() -> None:
    queue = {"items": [{"id": "a", "done": True}, {"id": "b c", "splits": ["x", "y"], "init": None}]}
    assert G.next_item(queue)["id"] == "b c"
    lines = G.shell_vars(G.next_item(queue)).splitlines()
    assert "ID='b c'" in lines and "SPLITS='x y'" in lines and "INIT=''" in lines
    assert G.shell_vars(G.next_item({"items": [{"id": "a", "done": True}]})) == "ID=''"


def test_the_committed_queue_is_the_issues_order() -> None:
    queue = G.load(ROOT / "scripts" / "gpu_queue.json")
    a, b, c = queue["items"]
    assert [a["id"][0], b["id"][0], c["id"][0]] == ["a", "b", "c"] and not any(it["done"] for it in queue["items"])
    shipped = "checkpoints/europarl-tatoeba-en-fr-rnnsearch-30k.pt"
    assert tomllib.loads((ROOT / a["config"]).read_text())["context"] == "fixed"
    assert a["checkpoint"] == "checkpoints/europarl-tatoeba-en-fr-rnnencdec-30k.pt" and a["replace"] == "absent"
    assert b["init"] == shipped == b["checkpoint"] and b["replace"] == "if-better"
    assert b["compare_on"] == ["tatoeba-test", "newstest2014"]
    cfg_c = tomllib.loads((ROOT / c["config"]).read_text())
    assert (cfg_c["src"], cfg_c["tgt"], cfg_c["context"]) == ("fr", "en", "attention")
    twin = tomllib.loads((ROOT / a["config"]).read_text())
    for key in ("src_vocab", "tgt_vocab", "emb_dim", "hidden_dim", "train_split", "data", "truecase"):
        assert cfg_c[key] == twin[key], key


def test_the_rehearsal_runs_one_call_end_to_end_and_lands(tmp_path: Path) -> None:
    """scripts/gpu_queue.sh run on the tiny fixtures (a CPU, eager only), then land: the item's checkpoint
    comes back in parts with its results, probe entry, verdict and logs, within one call's limits; landing
    ships it (no model was there) and marks the item done."""
    queue, ckpt = tmp_path / "queue.json", tmp_path / "ckpts" / "tiny-rnnencdec.pt"
    queue.write_text((FIX / "queue.json").read_text().replace("CHECKPOINT", str(ckpt)))
    ckpt.parent.mkdir()
    bench = tmp_path / "bench.json"
    shutil.copy(ROOT / "bench" / "results-gpu.json", bench)
    out = tmp_path / "out"
    env = {**os.environ, "QUEUE": str(queue), "DATA": "tests/fixtures/tiny", "OUT": str(out),
           "WORK": str(tmp_path / "work"), "BENCH": str(bench), "PROBE_BATCH": "10", "PROBE_SECONDS": "0.3",
           "COMPILE": "0", "PY": sys.executable, "OMP_NUM_THREADS": "1"}
    run = subprocess.run(["bash", "scripts/gpu_queue.sh", "run"], cwd=ROOT, env=env, capture_output=True,
                         text=True, timeout=120)
    assert run.returncode == 0, run.stdout + run.stderr
    assert "fits one call's return" in run.stdout
    assert sorted(p.name for p in out.iterdir()) == [
        "logs.tgz", "results-gpu.json", "results.json", "tiny-rnnencdec.pt.part.00", "verdict.json"]
    assert json.loads((out / "verdict.json").read_text()) == {"item": "a-tiny-rnnencdec", "rule": "absent",
                                                              "replace": True}
    probes = json.loads((out / "results-gpu.json").read_text())
    assert set(json.loads(bench.read_text())) | {"queue_probes"} == set(probes)  # the committed keys kept
    entry = probes["queue_probes"][-1]
    assert (entry["item"], entry["batch"], entry["device"], "compiled" in entry) == ("a-tiny-rnnencdec", 10, "cpu",
                                                                                        False)
    summary = json.loads(subprocess.run(["tar", "xzOf", str(out / "logs.tgz"), "summary.json"],
                                        capture_output=True, text=True, check=True).stdout)
    assert summary["stopped"] == "time budget"  # the wall-clock stop, not the epochs
    landed = subprocess.run(["bash", "scripts/gpu_queue.sh", "land", str(out)], cwd=ROOT, env=env,
                            capture_output=True, text=True, timeout=60)
    assert landed.returncode == 0 and f"shipped {ckpt}" in landed.stdout, landed.stdout + landed.stderr
    shipped = checkpoint.read_checkpoint(ckpt)
    assert shipped["config"]["context"] == "fixed" and set(shipped["meta"]["scores"]) == {"val"}
    # trained for the item's 0.05 minutes (the deadline leaves more) at the probe's batch
    assert (shipped["meta"]["args"]["time_budget"], shipped["meta"]["args"]["batch_size"]) == (0.05, 10)
    assert G.next_item(G.load(queue)) is None and "landed" in G.load(queue)["items"][0]["done_note"]


@pytest.mark.parametrize("script", ["gpu_queue.sh"])
def test_the_runbook_is_valid_bash(script: str) -> None:
    assert subprocess.run(["bash", "-n", str(ROOT / "scripts" / script)]).returncode == 0
