"""Training: overfitting, checkpoints, resuming after a stop, data-parallel training."""

from __future__ import annotations

import json
import os
import shutil
import socket
import subprocess
import sys
from pathlib import Path

import pytest
import torch

import train
from nmt import checkpoint
from tests.conftest import ROOT, TINY_ARGS


def read_metrics(run: Path) -> list[dict]:
    return [json.loads(line) for line in (run / "metrics.jsonl").read_text().splitlines()]


def test_tiny_model_overfits_twenty_pairs(tiny_run: Path) -> None:
    losses = [m["loss"] for m in read_metrics(tiny_run) if m["type"] == "train"]
    assert losses[0] > 2.0
    assert losses[-1] < 0.01  # near-zero cross-entropy per token


def test_checkpoint_records_provenance(tiny_ckpt: Path) -> None:
    ck = checkpoint.read_checkpoint(tiny_ckpt)
    meta = ck["meta"]
    assert len(meta["train_data"]["sha256"]) == 64
    assert meta["device"].startswith("cpu") and meta["train_seconds"] > 0
    assert ck["config"]["context"] == "attention"
    assert ck["src_vocab"][:4] == ["<pad>", "<unk>", "<s>", "</s>"]


def test_checkpoint_round_trip_is_exact(tiny_lm, tmp_path: Path) -> None:
    path = tmp_path / "copy.pt"
    checkpoint.atomic_save(checkpoint.make_checkpoint(
        tiny_lm.model, tiny_lm.src_vocab, tiny_lm.tgt_vocab, "en", "fr", {"x": 1}), path)
    again = checkpoint.load(path)
    for (k, a), (k2, b) in zip(tiny_lm.model.state_dict().items(), again.model.state_dict().items()):
        assert k == k2 and torch.equal(a, b)
    assert again.src_vocab.itos == tiny_lm.src_vocab.itos and again.tgt_vocab.itos == tiny_lm.tgt_vocab.itos
    assert again.meta == {"x": 1}


def test_fp16_checkpoint_is_close_and_loads_as_fp32(tiny_lm, tmp_path: Path) -> None:
    path = tmp_path / "half.pt"
    checkpoint.atomic_save(checkpoint.make_checkpoint(
        tiny_lm.model, tiny_lm.src_vocab, tiny_lm.tgt_vocab, "en", "fr", {}, half=True), path)
    assert checkpoint.read_checkpoint(path)["model"]["decoder.W_o.weight"].dtype == torch.float16
    again = checkpoint.load(path)
    w = again.model.decoder.W_o.weight
    assert w.dtype == torch.float32
    torch.testing.assert_close(w, tiny_lm.model.decoder.W_o.weight, atol=1e-3, rtol=1e-3)


def test_loading_refuses_pickled_code(tmp_path: Path) -> None:
    class Evil:
        def __reduce__(self):
            return (os.system, ("echo pwned",))

    path = tmp_path / "evil.pt"
    torch.save({"format": checkpoint.FORMAT, "x": Evil()}, path)
    with pytest.raises(Exception, match=r"(?i)weights only|unsupported global"):
        checkpoint.read_checkpoint(path)


def test_resume_continues_the_same_run(tmp_path: Path) -> None:
    args = [*TINY_ARGS, "--dropout", "0.3", "--save-every", "3", "--epochs", "5", "--batch-size", "8"]
    straight = tmp_path / "straight"
    train.main([*args, "--out", str(straight), "--max-updates", "11"])
    # "killed" after update 7 (mid-epoch), then resumed
    broken = tmp_path / "broken"
    train.main([*args, "--out", str(broken), "--max-updates", "7"])
    assert checkpoint.read_checkpoint(broken / "last.pt")["train_state"]["progress"]["update"] == 7
    train.main([*args, "--out", str(broken), "--max-updates", "11", "--resume"])
    a = checkpoint.read_checkpoint(straight / "last.pt")
    b = checkpoint.read_checkpoint(broken / "last.pt")
    assert b["train_state"]["progress"]["update"] == 11
    for k in a["model"]:
        assert torch.equal(a["model"][k], b["model"][k]), k


def test_resume_after_a_real_kill(tmp_path: Path) -> None:
    out = tmp_path / "killed"
    cmd = [sys.executable, str(ROOT / "train.py"), *TINY_ARGS, "--epochs", "400", "--save-every", "5",
           "--out", str(out)]
    proc = subprocess.Popen(cmd, cwd=ROOT, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        for _ in range(600):
            if (out / "last.pt").exists():
                break
            try:
                proc.wait(timeout=0.1)
            except subprocess.TimeoutExpired:
                continue
        proc.kill()
        proc.wait()
    finally:
        if proc.poll() is None:
            proc.kill()
    done = checkpoint.read_checkpoint(out / "last.pt")["train_state"]["progress"]["update"]
    assert done >= 2  # saved at an epoch end (2 updates) or every 5 updates
    train.main([*TINY_ARGS, "--epochs", "400", "--out", str(out), "--resume", "--max-updates", str(done + 4)])
    assert checkpoint.read_checkpoint(out / "last.pt")["train_state"]["progress"]["update"] == done + 4


def test_config_file_and_flags(tmp_path: Path) -> None:
    cfg = tmp_path / "c.toml"
    cfg.write_text('context = "fixed"\nhidden_dim = 16\n')
    args = train.parse_args(["--config", str(cfg), "--hidden-dim", "24"])
    assert args.context == "fixed" and args.hidden_dim == 24
    cfg.write_text("no_such_option = 1\n")
    with pytest.raises(SystemExit):
        train.parse_args(["--config", str(cfg)])


@pytest.mark.slow
def test_data_parallel_training_with_gloo(tmp_path: Path) -> None:
    if shutil.which("torchrun") is None:
        pytest.skip("torchrun not on PATH")
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    out = tmp_path / "ddp"
    cmd = ["torchrun", "--nproc_per_node", "2", "--master_addr", "127.0.0.1", "--master_port", str(port),
           str(ROOT / "train.py"), *TINY_ARGS, "--epochs", "3", "--out", str(out)]
    res = subprocess.run(cmd, cwd=ROOT, capture_output=True, text=True, timeout=300,
                         env={**os.environ, "OMP_NUM_THREADS": "1"})
    assert res.returncode == 0, res.stderr[-3000:]
    meta = checkpoint.read_checkpoint(out / "best.pt")["meta"]
    assert meta["world_size"] == 2
    summary = json.loads((out / "summary.json").read_text())
    assert summary["updates"] == 3  # 2 batches per epoch, split over 2 ranks → 1 update each epoch


def test_sigterm_saves_and_stops(tmp_path: Path) -> None:
    import signal
    import time

    out = tmp_path / "term"
    cmd = [sys.executable, str(ROOT / "train.py"), *TINY_ARGS, "--epochs", "100000", "--save-every", "100000",
           "--out", str(out)]
    proc = subprocess.Popen(cmd, cwd=ROOT, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        deadline = time.time() + 60
        while time.time() < deadline and not (out / "metrics.jsonl").exists():
            time.sleep(0.1)
        proc.send_signal(signal.SIGTERM)
        assert proc.wait(timeout=60) == 0
    finally:
        if proc.poll() is None:
            proc.kill()
    progress = checkpoint.read_checkpoint(out / "last.pt")["train_state"]["progress"]
    assert progress["update"] >= 10  # metrics are logged every 10 updates
    assert json.loads((out / "summary.json").read_text())["stopped"] == "signal 15"
