"""Training: overfitting, checkpoints, resuming after a stop (and refusing a mismatched one), the
precision chosen, data-parallel training."""

from __future__ import annotations

import hashlib
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
from nmt.models import checkpoint
from nmt.models.device import CpuInfo, cpu_info
from nmt.training import setup as training
from tests.conftest import ROOT, TINY_ARGS, TINY_DATA
from tests.tool_run import run_main


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
    assert meta["cpu"] == cpu_info().model and meta["cpu"]
    assert (meta["precision"], meta["precision_reason"]) == ("fp32", "amp=off")  # TINY_ARGS: --amp off
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
    with pytest.raises(checkpoint.CheckpointError, match="will not be loaded unsafely"):
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


@pytest.mark.solo  # a real kill -9 while it writes: not beside another worker's tests
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
    with pytest.raises(SystemExit):
        train.parse_args(["--amp", "fp8"])


def torchrun(args: list[str], env: dict[str, str] | None = None) -> subprocess.CompletedProcess[str]:
    """``train.py`` on 2 gloo ranks, started as ``python -m torch.distributed.run`` (no PATH needed)."""
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    cmd = [sys.executable, "-m", "torch.distributed.run", "--nproc_per_node", "2", "--master_addr", "127.0.0.1",
           "--master_port", str(port), str(ROOT / "train.py"), *args]
    return subprocess.run(cmd, cwd=ROOT, capture_output=True, text=True, timeout=300,
                          env={**os.environ, "OMP_NUM_THREADS": "1", **(env or {})})


@pytest.mark.solo  # two DDP ranks: not beside another worker's tests
@pytest.mark.slow
def test_data_parallel_training_with_gloo(tmp_path: Path) -> None:
    out = tmp_path / "ddp"
    res = torchrun([*TINY_ARGS, "--epochs", "3", "--out", str(out)])
    assert res.returncode == 0, res.stderr[-3000:]
    meta = checkpoint.read_checkpoint(out / "best.pt")["meta"]
    assert meta["world_size"] == 2
    summary = json.loads((out / "summary.json").read_text())
    assert summary["updates"] == 3  # 2 batches per epoch, split over 2 ranks → 1 update each epoch


@pytest.mark.solo  # SIGTERM with a deadline: not beside another worker's tests
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


@pytest.mark.solo  # two DDP ranks: not beside another worker's tests
@pytest.mark.slow
def test_data_parallel_ranks_decay_the_learning_rate_together(tmp_path: Path) -> None:
    """Rank 0 validates; every rank must take the same learning-rate decision and keep equal weights."""
    out, report = tmp_path / "ddp", tmp_path / "ranks"
    lr = 0.01
    args = ["--data", str(TINY_DATA), "--emb-dim", "8", "--hidden-dim", "8", "--attn-dim", "8", "--maxout-dim", "8",
            "--batch-size", "5", "--lr", str(lr), "--valid-every", "1", "--valid-limit", "2", "--lr-patience", "0",
            "--lr-decay", "0.5", "--patience", "100", "--max-updates", "4", "--epochs", "10", "--threads", "1",
            "--amp", "off", "--no-progress", "--log-every", "1", "--save-every", "100", "--out", str(out)]
    res = torchrun(args, {"NMT_RANK_REPORT": str(report)})
    assert res.returncode == 0, res.stderr[-3000:]
    ranks = [json.loads((report / f"rank{r}.json").read_text()) for r in (0, 1)]
    assert [r["update"] for r in ranks] == [4, 4]
    # the decay rank 0's validations call for (ReduceLROnPlateau, mode max, patience 0, factor 0.5)
    bleus = [m["bleu"] for m in read_metrics(out) if m["type"] == "valid"]
    assert len(bleus) == 4
    best, decays = -1.0, 0
    for b in bleus:
        if b > best * (1 + 1e-4) or best < 0:
            best = b
        else:
            decays += 1
    assert decays >= 1, bleus  # the test is about what happens after a decay
    assert ranks[0]["lr"] == ranks[1]["lr"] == [pytest.approx(lr * 0.5**decays, rel=1e-12)]
    assert ranks[0]["weights_sha256"] == ranks[1]["weights_sha256"]
    assert checkpoint.read_checkpoint(out / "last.pt")["weights_sha256"] == ranks[0]["weights_sha256"]


# --- resuming a run with other options -----------------------------------------------------------


@pytest.fixture(scope="module")
def short_run(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A tiny run stopped after 2 updates (``last.pt`` at update 2): something to resume."""
    out = tmp_path_factory.mktemp("short") / "run"
    train.main([*TINY_ARGS, "--epochs", "5", "--max-updates", "2", "--out", str(out)])
    return out


def refused(capsys: pytest.CaptureFixture[str], argv: list[str]) -> str:
    """The last stderr line of a ``train.main`` that must exit with status 2."""
    capsys.readouterr()
    with pytest.raises(SystemExit) as e:
        train.main(argv)
    assert e.value.code == 2
    return capsys.readouterr().err.splitlines()[-1]


def saved_update(run: Path) -> int:
    return checkpoint.read_checkpoint(run / "last.pt")["train_state"]["progress"]["update"]


def test_resume_refuses_another_model_shape(short_run: Path, tmp_path: Path,
                                            capsys: pytest.CaptureFixture[str]) -> None:
    run = tmp_path / "run"
    shutil.copytree(short_run, run)
    base = [*TINY_ARGS, "--epochs", "5", "--out", str(run), "--resume"]
    msg = f"cannot resume {run}: hidden_dim is 64 in the saved run but 128 now"
    assert refused(capsys, [*base, "--hidden-dim", "128"]) == msg
    assert refused(capsys, [*base, "--hidden-dim", "128", "--force-resume"]) == msg  # shapes: never
    assert refused(capsys, [*base, "--context", "fixed", "--optimizer", "adadelta"]) == (
        f"cannot resume {run}: context is attention in the saved run but fixed now; "
        "optimizer is adam in the saved run but adadelta now")
    assert saved_update(run) == 2
    (run / "last.pt").write_bytes(b"not a checkpoint")
    assert refused(capsys, base).startswith(f"cannot resume {run}: ")


def test_resume_refuses_other_data_unless_forced(short_run: Path, tmp_path: Path,
                                                 capsys: pytest.CaptureFixture[str]) -> None:
    run = tmp_path / "run"
    shutil.copytree(short_run, run)
    base = [*TINY_ARGS, "--epochs", "5", "--out", str(run), "--resume"]
    assert refused(capsys, [*base, "--train-limit", "10"]) == (
        f"cannot resume {run}: train_limit is unset in the saved run but 10 now (--force-resume resumes anyway)")
    assert refused(capsys, [*base, "--batch-size", "5", "--seed", "7"]) == (
        f"cannot resume {run}: batch_size is 10 in the saved run but 5 now; seed is 1234 in the saved run but 7 "
        "now (--force-resume resumes anyway)")
    # the same file names with one word changed
    data = tmp_path / "data"
    shutil.copytree(TINY_DATA, data)
    (data / "train.fr").write_text((data / "train.fr").read_text().replace("homme", "femme", 1))
    old = hashlib.sha256((TINY_DATA / "train.en").read_bytes() + (TINY_DATA / "train.fr").read_bytes()).hexdigest()
    new = hashlib.sha256((data / "train.en").read_bytes() + (data / "train.fr").read_bytes()).hexdigest()
    assert old != new
    other = [*base, "--data", str(data)]
    assert refused(capsys, other) == (f"cannot resume {run}: the training files differ (sha256 {old[:12]}… in the "
                                      f"saved run but {new[:12]}… now) (--force-resume resumes anyway)")
    assert saved_update(run) == 2
    train.main([*other, "--force-resume", "--max-updates", "3"])
    assert "warning: --force-resume: resuming" in capsys.readouterr().err
    assert saved_update(run) == 3


def test_resume_refuses_another_recipe_unless_forced_and_applies_it(short_run: Path, tmp_path: Path,
                                                                    capsys: pytest.CaptureFixture[str]) -> None:
    """A changed dropout, label smoothing, clipping or learning rate was once accepted silently (and
    --lr ignored while recorded); forced, the new learning rate is what the optimiser uses and records."""
    run = tmp_path / "run"
    shutil.copytree(short_run, run)
    saved = torch.load(run / "last.pt", weights_only=True)["meta"]["args"]
    base = [*TINY_ARGS, "--epochs", "5", "--out", str(run), "--resume"]
    assert refused(capsys, [*base, "--dropout", "0.5", "--label-smoothing", "0.2", "--clip", "5.0"]) == (
        f"cannot resume {run}: dropout is {saved['dropout']} in the saved run but 0.5 now; label_smoothing is "
        f"{saved['label_smoothing']} in the saved run but 0.2 now; clip is {saved['clip']} in the saved run but "
        "5.0 now (--force-resume resumes anyway)")
    assert refused(capsys, [*base, "--lr", "0.0005"]) == (
        f"cannot resume {run}: lr is {saved['lr']} in the saved run but 0.0005 now (--force-resume resumes anyway)")
    train.main([*base, "--lr", "0.0005", "--force-resume", "--max-updates", "3"])
    ckpt = torch.load(run / "last.pt", weights_only=True)
    assert ckpt["meta"]["args"]["lr"] == 0.0005
    assert [g["lr"] for g in ckpt["train_state"]["optimizer"]["param_groups"]] == [0.0005]


def test_a_save_killed_midway_leaves_no_temporary_file(short_run: Path, tmp_path: Path) -> None:
    run = tmp_path / "run"
    shutil.copytree(short_run, run)
    for name in ("last.ptx1y2z3.tmp", "best.pt.123-abc.tmp"):  # old mkstemp names, and nmt.text.atomic's
        (run / name).write_bytes(b"half a checkpoint")
    (run / "notes.tmp").write_text("not ours")
    train.main([*TINY_ARGS, "--epochs", "5", "--out", str(run), "--resume", "--max-updates", "3"])
    assert sorted(p.name for p in run.glob("*.tmp")) == ["notes.tmp"]


def test_refused_resume_is_one_line_without_a_traceback(short_run: Path, tmp_path: Path) -> None:
    run = tmp_path / "run"
    shutil.copytree(short_run, run)
    res = run_main(train.main, [*TINY_ARGS, "--out", str(run), "--resume", "--hidden-dim", "128"])
    assert res.returncode == 2
    assert "Traceback" not in res.stderr
    assert res.stderr.splitlines()[-1] == f"cannot resume {run}: hidden_dim is 64 in the saved run but 128 now"


def test_metrics_log_each_update_once_after_a_kill(tmp_path: Path) -> None:
    out = tmp_path / "run"
    args = [*TINY_ARGS, "--epochs", "10", "--batch-size", "8", "--log-every", "1", "--save-every", "100",
            "--valid-every", "4", "--out", str(out)]
    train.main([*args, "--max-updates", "5"])
    shutil.copy(out / "last.pt", tmp_path / "at5.pt")
    train.main([*args, "--max-updates", "9", "--resume"])
    before = read_metrics(out)
    # killed after logging update 9 (mid-write of the next line) but before last.pt got past update 5
    shutil.copy(tmp_path / "at5.pt", out / "last.pt")
    with open(out / "metrics.jsonl", "a") as f:
        f.write('{"type": "train", "upd')
    train.main([*args, "--max-updates", "9", "--resume"])
    after = read_metrics(out)
    assert [m["update"] for m in after if m["type"] == "train"] == [1, 2, 3, 4, 5, 6, 7, 8, 9]
    assert [m["update"] for m in after if m["type"] == "valid"] == [4, 5, 8, 9]
    # the updates done again are the same updates (CPU runs are deterministic)
    assert [m.get("loss", m.get("bleu")) for m in after] == [m.get("loss", m.get("bleu")) for m in before]
    # a fresh run in the same directory starts a fresh log
    train.main([*args, "--max-updates", "2"])
    assert [(m["type"], m["update"]) for m in read_metrics(out)] == [("train", 1), ("train", 2), ("valid", 2)]


# --- precision -----------------------------------------------------------------------------------


def test_precision_is_chosen_logged_and_recorded(tmp_path: Path, capsys: pytest.CaptureFixture[str],
                                                 monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(training, "cpu_info", lambda: CpuInfo("Fake EPYC 7B12", frozenset({"avx2"})))  # configure()
    base = [*TINY_ARGS, "--max-updates", "1"]
    weights, metas = {}, {}
    for amp in ("off", "auto", "bf16"):
        out = tmp_path / amp
        capsys.readouterr()
        train.main([*base, "--amp", amp, "--out", str(out)])
        err = capsys.readouterr().err
        ck = checkpoint.read_checkpoint(out / "last.pt")
        weights[amp], metas[amp] = ck["model"], ck["meta"]
        assert metas[amp]["cpu"] == "Fake EPYC 7B12"
        line = next(x for x in err.splitlines() if x.startswith("precision:"))
        if amp == "auto":
            assert line == "precision: fp32 (amp=auto: this CPU, Fake EPYC 7B12, has no native bf16)"
        elif amp == "bf16":
            assert line == ("precision: bf16 (amp=bf16) WARNING: this CPU, Fake EPYC 7B12, has no native bf16; "
                            "bf16 autocast may be many times slower than fp32")
    assert [metas[a]["precision"] for a in ("off", "auto", "bf16")] == ["fp32", "fp32", "bf16"]
    # auto on this (fake) CPU trains exactly as fp32; forced bf16 really trains in bf16
    assert all(torch.equal(weights["off"][k], weights["auto"][k]) for k in weights["off"])
    assert not all(torch.equal(weights["off"][k], weights["bf16"][k]) for k in weights["off"])


def test_pretokenized_split_gives_the_tokens_the_tokenizer_would(tmp_path: Path) -> None:
    """scripts/pretokenize.py writes what nmt.text.tokenize gives, and ``--pretokenized`` reads it back as
    the same training pairs (so a GPU run that skips tokenising trains on the same data)."""
    sys.path.insert(0, str(ROOT / "scripts"))
    import pretokenize

    for lang in ("en", "fr"):
        pretokenize.main(str(TINY_DATA / f"train.{lang}"), str(tmp_path / f"train.tok.{lang}.xz"))
    for lang in ("en", "fr"):
        shutil.copy(TINY_DATA / f"val.{lang}", tmp_path / f"val.{lang}")
    raw = train.load_training_data(train.parse_args(["--data", str(TINY_DATA)]))[0]
    pre = train.load_training_data(train.parse_args(["--data", str(tmp_path), "--train-split", "train.tok",
                                                     "--pretokenized"]))[0]
    assert [(e.src, e.tgt) for e in pre] == [(e.src, e.tgt) for e in raw]
    assert any("'" in w or w == "," for e in raw for w in e.src + e.tgt)  # Moses really split something
