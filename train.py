"""Train an RNNsearch (``--context attention``), RNNencdec (``--context fixed``) or Luong model.

    python train.py --data data/multi30k --src en --tgt fr --context attention --out runs/search
    python train.py --arch luong --score general --attention local-p --window 10 --input-feeding ...
    python train.py --config configs/m30k-en-fr-rnnsearch.toml --data data/multi30k
    torchrun --nproc_per_node 2 train.py ...        # data-parallel (gloo on CPU, nccl on GPU)

A run directory holds ``last.pt`` (weights, optimiser and position: ``--resume`` continues a
killed run where it stopped; it refuses a run whose model, optimiser or training data differ,
the latter unless ``--force-resume``), ``best.pt`` (best validation BLEU), ``metrics.jsonl`` (one JSON
object per log line, read by the training-curve view) and ``args.json``. ``--init-from CKPT --warmup N``
starts a new segment of a model's training in a fresh folder from CKPT's weights (:mod:`nmt.segments`).
Checkpoint writes are atomic. On the CPU, runs are seeded and deterministic. ``--amp auto`` trains in bf16 where the
hardware has it natively, else fp32 (see :mod:`nmt.device`); the log and checkpoints say which.

With the environment variable ``NMT_RANK_REPORT=DIR`` every rank writes ``DIR/rank{N}.json`` (its
final learning rate and a digest of its weights) at the end: data-parallel ranks must agree.

A run goes through named phases: config, data and model (:mod:`nmt.training`: ``configure``,
``load_data``, ``build_run``), then the loop (``loop``: ``update`` and ``after_update``), with
validation (``validation``) and saving (``save``), and ``finish``.
"""

from __future__ import annotations

import argparse
import json
import math
import os
import random
import signal
import sys
import time
import tomllib
from pathlib import Path
from typing import Any

import torch
import torch.distributed as dist
from tqdm import tqdm

from nmt import segments, timeline_record
from nmt.checkpoint import LoadedModel, atomic_save, make_checkpoint, weights_digest
from nmt.data import encode_examples
from nmt.decoding import translate
from nmt.device import AMP_CHOICES
from nmt.luong import ARCHS, ATTENTIONS, CELLS, ENCODERS, SCORES
from nmt.metrics import corpus_bleu
from nmt.model import CONTEXT_MODES, RNNSearch, sequence_loss
from nmt.sampled_softmax import epoch_batches, positions
from nmt.training import Run, build_run, configure, load_data, load_training_data

__all__ = ["DEFAULTS", "load_training_data", "main", "parse_args"]  # load_training_data: nmt.training's

DEFAULTS: dict[str, Any] = {
    "data": "data", "src": "en", "tgt": "fr", "train_split": "train", "valid_split": "val",
    "train_limit": None, "valid_limit": None, "pretokenized": False, "max_len": 50, "src_vocab": 10000,
    "tgt_vocab": 10000,
    "min_freq": 1, "context": "attention", "emb_dim": 256, "hidden_dim": 512, "attn_dim": 512,
    "maxout_dim": 256, "dropout": 0.0, "optimizer": "adam", "lr": 5e-4, "batch_size": 64,
    "epochs": 20, "max_updates": 0, "time_budget": 0.0, "valid_every": 500, "save_every": 200,
    "patience": 8, "lr_decay": 0.5, "lr_patience": 2, "min_lr": 1e-5, "label_smoothing": 0.0,
    "clip": 1.0, "seed": 1234, "threads": 0, "device": "auto", "amp": "auto", "out": "runs/model",
    "resume": False, "force_resume": False, "log_every": 50, "progress": True,
    # Luong et al. (2015) models (--arch luong, see nmt/luong.py); recorded only for them
    "arch": "rnnsearch", "score": "general", "attention": "global", "window": 10, "input_feeding": True,
    "cell": "lstm", "layers": 1, "encoder": "bidirectional",
    # issue 20: truecase models (PREFIX.{src,tgt}.json, scripts/prep_large_vocab.py) and Jean et al.'s
    # softmax over each data partition's τ target words (nmt/sampled_softmax.py; 0 = full softmax)
    "truecase": "", "sampled_vocab": 0,
    # issue 23: a training timeline (nmt/timeline.py) in OUT/timeline.npz; presets: a group of the stepper's
    # presets (configs/timeline_sentences.json, the sentences of ui/presets.py),
    # "auto" (from the --out folder's name) or "none"; note: a line the "Watch it learn" page shows
    "timeline": False, "timeline_presets": "auto", "timeline_note": "",
    # issue 20: a new segment of a model's training (nmt/segments.py): start from this checkpoint's
    # weights with a fresh optimiser whose learning rate rises linearly over WARMUP updates
    "init_from": "", "warmup": 0,
    # issue 20: torch.compile of RNNsearch's per-position step (nmt.training.compile_step; same results)
    "compile": False,
}


def parse_args(argv: list[str] | None = None) -> argparse.Namespace:
    """Command-line options over the defaults, with a TOML ``--config`` in between."""
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--config", help="TOML file of options (command-line flags override it)")
    for key, val in DEFAULTS.items():
        flag = "--" + key.replace("_", "-")
        if isinstance(val, bool):
            p.add_argument(flag, action=argparse.BooleanOptionalAction, default=None)
        else:
            typ = type(val) if val is not None else int
            p.add_argument(flag, type=typ, default=None)
    ns = p.parse_args(argv)
    merged = dict(DEFAULTS)
    if ns.config:
        with open(ns.config, "rb") as f:
            cfg = tomllib.load(f)
        unknown = set(cfg) - set(DEFAULTS)
        if unknown:
            p.error(f"unknown keys in {ns.config}: {sorted(unknown)}")
        merged.update(cfg)
    merged.update({k: v for k, v in vars(ns).items() if v is not None and k != "config"})
    merged["config"] = ns.config
    if merged["context"] not in CONTEXT_MODES:
        p.error(f"--context must be one of {CONTEXT_MODES}")
    for key, allowed in (("arch", ARCHS), ("score", SCORES), ("attention", ATTENTIONS), ("cell", CELLS),
                         ("encoder", ENCODERS)):
        if merged[key] not in allowed:
            p.error(f"--{key} must be one of {allowed}")
    if merged["arch"] == "luong" and merged["context"] != "attention":
        p.error("--arch luong has only --context attention")
    if merged["optimizer"] not in ("adam", "adadelta"):
        p.error("--optimizer must be adam or adadelta")
    if str(merged["amp"]).lower() not in AMP_CHOICES:
        p.error("--amp must be auto (bf16 where native), bf16 or off")
    return argparse.Namespace(**merged)


# ----------------------------------------------------------------------------------------------


def log_jsonl(path: Path, record: dict[str, Any]) -> None:
    with open(path, "a", encoding="utf-8") as f:
        f.write(json.dumps(record) + "\n")


def sync_ranks(stopped: str, interrupted: bool, bleu: float | None, is_main: bool,
               device: torch.device) -> tuple[str, float | None]:
    """Agree across data-parallel ranks, once per update, on stopping and on rank 0's validation BLEU.

    Rank 0 alone validates and decides on early stopping and the time and update budgets (another
    rank's clock must not stop it alone: the ranks would wait on each other for ever); a signal on
    any rank stops all. Returns this rank's stop reason ("" to go on) and the BLEU rank 0 validated
    at this update (None if it did not), which every rank feeds its learning-rate scheduler."""
    vote = bool(stopped) if is_main else bool(interrupted)
    validated = is_main and bleu is not None
    t = torch.tensor([float(vote), bleu if validated else 0.0, float(validated)], dtype=torch.float64, device=device)
    dist.all_reduce(t)
    n_stop, bleu_sum, n_valid = t.tolist()
    rank0_bleu = bleu_sum if n_valid else None
    if not n_stop:
        return "", rank0_bleu
    return stopped or ("signal on another rank" if is_main else "stopped by rank 0"), rank0_bleu


def validate(model: RNNSearch, lm: LoadedModel, v_src: list[str], v_tgt: list[str]) -> dict[str, Any]:
    """Greedy validation BLEU (cased and lowercased) of the current weights."""
    model.eval()
    hyps = translate(lm, v_src, beam=1)
    model.train()
    return {"bleu": corpus_bleu(hyps, v_tgt)["score"], "bleu_lc": corpus_bleu(hyps, v_tgt, lowercase=True)["score"],
            "sample": hyps[0]}


# ----------------------------------------------------------------------------------------------
# Phase 4, saving: last.pt (with the optimiser and position) and best.pt
# ----------------------------------------------------------------------------------------------


def save(run: Run, path: Path, with_state: bool) -> None:
    """Write a checkpoint of the current weights; ``with_state`` adds what ``--resume`` needs."""
    st, ts = run.st, None
    if with_state:
        py = random.getstate()
        ts = {"optimizer": run.optimizer.state_dict(), "scheduler": run.scheduler.state_dict(), "progress": dict(st),
              "torch_rng": torch.get_rng_state(), "py_rng": [py[0], list(py[1]), py[2]]}
    st["wall"] = run.wall_base + time.time() - run.wall_t0
    meta = {**run.meta_base, "updates": st["update"], "epochs": st["epoch"], "batch_in_epoch": st["batch_in_epoch"],
            "train_seconds": round(st["elapsed"], 1),
            "wall_seconds": round(st["wall"], 1),
            "train_tokens": st["tokens"],
            "train_tokens_per_s": round(st["tokens"] / max(st["elapsed"], 1e-9), 1),
            "best_valid_bleu": st["best_bleu"],
            "segments": segments.segments(st, run.meta_base["device"])}
    args = run.env.args
    atomic_save(make_checkpoint(run.model, run.data.src_vocab, run.data.tgt_vocab, args.src, args.tgt, meta,
                                train_state=ts, truecase=run.data.truecase), path)


# ----------------------------------------------------------------------------------------------
# Phase 5, validation: BLEU, the learning-rate schedule, best.pt and early stopping
# ----------------------------------------------------------------------------------------------


def validation(run: Run) -> float | None:
    """Validate on rank 0: step the schedule, save best.pt on improvement, log; the BLEU (None elsewhere)."""
    env, st = run.env, run.st
    if not env.is_main:
        return None
    v = validate(run.model, run.lm, run.data.v_src, run.data.v_tgt)
    run.scheduler.step(v["bleu"])
    improved = v["bleu"] > st["best_bleu"]
    st["bad_evals"] = 0 if improved else st["bad_evals"] + 1
    if improved:
        st["best_bleu"] = v["bleu"]
        save(run, env.best_path, with_state=False)
    log_jsonl(env.metrics_path, {"type": "valid", "update": st["update"], "epoch": st["epoch"] + 1,
                                 "bleu": v["bleu"], "bleu_lc": v["bleu_lc"],
                                 "lr": run.optimizer.param_groups[0]["lr"], "elapsed": round(st["elapsed"], 1)})
    tqdm.write(f"update {st['update']}: valid BLEU {v['bleu']:.2f} (lc {v['bleu_lc']:.2f}) "
               f"best {st['best_bleu']:.2f} | {v['sample']}", file=sys.stderr)
    if st["bad_evals"] >= env.args.patience:
        st["stopped"] = "early stopping"
    return v["bleu"]


# ----------------------------------------------------------------------------------------------
# Phase 6, the loop: updates, log lines, stopping, and the end of the run
# ----------------------------------------------------------------------------------------------


def update(run: Run, batch: Any, bar: tqdm, v_prime: torch.Tensor | None = None) -> None:
    """One optimiser update on ``batch``, its accounting, and a log line every ``--log-every`` updates.

    With ``v_prime`` (``--sampled-vocab``, Jean et al. 2015 §3) the softmax runs over the partition's
    target words V′ only, the targets given as positions in V′.

    No value is read back from the GPU between log lines: the host queues the next update's
    kernels while the GPU still runs this one (a read would wait for it)."""
    env, st, args = run.env, run.st, run.env.args
    n_tok = batch.n_tgt_tokens  # summed on the host, before the copy
    if v_prime is not None:  # targets as positions in V′, found on the host (no device read)
        batch.tgt_out = positions(batch.tgt_out, v_prime)
        run.restricted.candidates = v_prime.to(env.device)
    batch = batch.to(env.device)
    with torch.autocast(env.device.type, dtype=torch.bfloat16, enabled=env.precision.bf16):
        logits = run.train_model(batch.src, batch.src_len, batch.tgt_in)
    if run.restricted is not None:
        run.restricted.candidates = None  # validation and checkpoints use the full output layer
    loss_sum = sequence_loss(logits, batch.tgt_out, args.label_smoothing)
    run.optimizer.zero_grad(set_to_none=True)
    (loss_sum / n_tok).backward()
    grad_norm = torch.nn.utils.clip_grad_norm_(run.model.parameters(), args.clip)
    if (lr := segments.warmup_lr(args.lr, st["update"] - st["segment_start"], args.warmup)) is not None:
        for group in run.optimizer.param_groups:
            group["lr"] = lr
    run.optimizer.step()
    now = time.time()
    st["elapsed"] += now - run.t_last
    run.t_last = now
    st["update"] += 1
    st["batch_in_epoch"] += 1
    st["tokens"] += n_tok * env.world
    run.win_tokens += n_tok
    run.win_loss = run.win_loss + loss_sum.detach()  # a device tensor until the log line reads it
    bar.update(1)
    if st["update"] % args.log_every == 0 and env.is_main:
        dt = time.time() - run.win_t
        mean_loss = float(run.win_loss) / run.win_tokens
        rec = {"type": "train", "update": st["update"], "epoch": st["epoch"] + 1,
               "loss": mean_loss, "ppl": math.exp(min(mean_loss, 50)),
               "tok_s": run.win_tokens * env.world / dt, "lr": run.optimizer.param_groups[0]["lr"],
               "grad_norm": float(grad_norm), "elapsed": round(st["elapsed"], 1)}
        log_jsonl(env.metrics_path, rec)
        bar.set_postfix(loss=f"{rec['loss']:.3f}", tok_s=f"{rec['tok_s']:.0f}")
        run.win_tokens, run.win_loss, run.win_t = 0, 0.0, time.time()


def after_update(run: Run) -> bool:
    """Validate when due, decide whether to stop (agreed by every rank), save last.pt when due; True to stop."""
    env, st, args = run.env, run.st, run.env.args
    out_of_time = args.time_budget and st["elapsed"] >= args.time_budget * 60
    out_of_updates = args.max_updates and st["update"] >= args.max_updates
    valid_bleu: float | None = None
    if st["update"] % args.valid_every == 0 or out_of_time or out_of_updates:
        valid_bleu = validation(run)
        run.t_last = time.time()  # validation time is not training time
    if out_of_time:
        st["stopped"] = st["stopped"] or "time budget"
    if out_of_updates:
        st["stopped"] = st["stopped"] or "max updates"
    if run.interrupted:
        st["stopped"] = st["stopped"] or f"signal {run.interrupted[0]}"
    if env.distributed:
        st["stopped"], rank0_bleu = sync_ranks(st["stopped"], bool(run.interrupted), valid_bleu, env.is_main,
                                               env.device)
        if rank0_bleu is not None and not env.is_main:
            run.scheduler.step(rank0_bleu)  # the same decision as rank 0's: learning rates stay equal
    timeline_record.after_update(run)  # --timeline: the scheduled updates
    if env.is_main and (st["update"] % args.save_every == 0 or st["stopped"]):
        save(run, env.last_path, with_state=True)
    return bool(st["stopped"])


def loop(run: Run) -> None:
    """Train epoch by epoch (from the resumed position) until the epochs run out or a stop is decided."""
    env, st, args = run.env, run.st, run.env.args
    run.model.train()
    encode_examples(run.data.examples, run.data.src_vocab, run.data.tgt_vocab)  # once, not every epoch
    run.t_last = run.win_t = time.time()
    while st["epoch"] < args.epochs:
        all_batches = epoch_batches(run.data.examples, run.data.src_vocab, run.data.tgt_vocab, args.batch_size,
                                    args.sampled_vocab, seed=args.seed + st["epoch"])  # (batch, V′ or None)
        mine = all_batches[env.rank::env.world]
        bar = tqdm(total=len(mine), initial=st["batch_in_epoch"], desc=f"epoch {st['epoch'] + 1}",
                   disable=not (env.is_main and args.progress), unit="batch", dynamic_ncols=True)
        for batch, v_prime in mine[st["batch_in_epoch"]:]:
            update(run, batch, bar, v_prime)
            if after_update(run):
                bar.close()
                return
        bar.close()
        st["epoch"] += 1
        st["batch_in_epoch"] = 0
        if env.is_main:
            save(run, env.last_path, with_state=True)


def finish(run: Run) -> dict[str, Any]:
    """Write best.pt (if no validation did), summary.json and the rank report; leave the process group."""
    env, st = run.env, run.st
    summary = {"updates": st["update"], "epochs": st["epoch"], "best_valid_bleu": st["best_bleu"],
               "train_seconds": round(st["elapsed"], 1), "train_tokens": st["tokens"],
               "tokens_per_s": round(st["tokens"] / max(st["elapsed"], 1e-9), 1),
               "stopped": st["stopped"] or "epochs"}
    if env.is_main:
        timeline_record.at_end(run)  # --timeline: the update the run stops at
        if not env.best_path.exists():
            save(run, env.best_path, with_state=False)
        (env.out / "summary.json").write_text(json.dumps(summary, indent=2))
        print(json.dumps(summary), file=sys.stderr)
    report_dir = os.environ.get("NMT_RANK_REPORT")
    if report_dir:
        Path(report_dir).mkdir(parents=True, exist_ok=True)
        (Path(report_dir) / f"rank{env.rank}.json").write_text(json.dumps({
            "rank": env.rank, "update": st["update"], "lr": [g["lr"] for g in run.optimizer.param_groups],
            "weights_sha256": weights_digest(run.model.state_dict())}))
    if env.distributed:
        dist.barrier()
        dist.destroy_process_group()
    return summary


def main(argv: list[str] | None = None) -> dict[str, Any]:
    """Train as the options say, phase by phase; returns the final summary (also written to ``summary.json``)."""
    env = configure(parse_args(argv))
    run = build_run(env, load_data(env))
    run.timeline = timeline_record.start(run, timeline_record.preset_sentences())  # None without --timeline
    if env.is_main:
        (env.out / "args.json").write_text(json.dumps(run.meta_base["args"], indent=2))

    def on_signal(signum: int, _frame: object) -> None:  # SIGTERM / SIGINT: finish the update, save last.pt, stop
        run.interrupted.append(signum)

    for sig in (signal.SIGTERM, signal.SIGINT):
        signal.signal(sig, on_signal)
    loop(run)
    return finish(run)


if __name__ == "__main__":
    main()
