"""The translation model's task for the one training loop (:mod:`nmt.training.loop`), as ``train.py`` runs it.

Batches: the epoch's length-sorted, shuffled batches (seed + epoch; with ``--sampled-vocab`` each with
its partition's target words V′, Jean et al. 2015 §3). Loss: the summed cross-entropy
(:func:`nmt.models.rnnsearch.sequence_loss`, label smoothing) of the teacher-forced logits (B, T, K_y), in bf16
where ``--amp`` chose it, through the DistributedDataParallel wrapper on several ranks. Validation:
greedy BLEU of the validation text (the schedule's and early stopping's score). Checkpoints:
``best.pt`` (weights) and ``last.pt`` (weights, optimiser and position, for ``--resume``) in the run
folder; ``metrics.jsonl`` gets the log records, ``summary.json`` the end. Only this task records a
training timeline (``--timeline``, :mod:`nmt.training.timeline_record`), from its ``after_update`` hook.
"""

from __future__ import annotations

import json
import os
import sys
from pathlib import Path
from typing import Any

import torch
import torch.distributed as dist

from nmt.decoding.search import translate
from nmt.models.checkpoint import LoadedModel, atomic_save, make_checkpoint, weights_digest
from nmt.models.rnnsearch import RNNSearch, sequence_loss
from nmt.text.data import encode_examples
from nmt.text.metrics import corpus_bleu
from nmt.training import loop, segments, timeline_record
from nmt.training.sampled_softmax import epoch_batches, positions
from nmt.training.setup import Run


def log_jsonl(path: Path, record: dict[str, Any]) -> None:
    """Append one JSON record (a line) to ``path``."""
    with open(path, "a", encoding="utf-8") as f:
        f.write(json.dumps(record) + "\n")


def validate(model: RNNSearch, lm: LoadedModel, v_src: list[str], v_tgt: list[str]) -> dict[str, Any]:
    """Greedy validation BLEU (cased and lowercased) of the current weights."""
    model.eval()
    hyps = translate(lm, v_src, beam=1)
    model.train()
    return {"bleu": corpus_bleu(hyps, v_tgt)["score"], "bleu_lc": corpus_bleu(hyps, v_tgt, lowercase=True)["score"],
            "sample": hyps[0]}


def loop_config(args: Any) -> loop.LoopConfig:
    """``train.py``'s options as the loop's schedule."""
    return loop.LoopConfig(
        epochs=args.epochs, max_updates=args.max_updates, time_budget_s=args.time_budget * 60,
        valid_every=args.valid_every, patience=args.patience, save_every=args.save_every, save_each_epoch=True,
        clip=args.clip, log_every=args.log_every, progress=args.progress, score_name="bleu")


def ranks(run: Run) -> loop.Ranks:
    """This process among the run's data-parallel ranks."""
    env = run.env
    return loop.Ranks(env.rank, env.world, env.distributed, env.device)


class NMTTask:
    """RNNsearch / RNNencdec / Luong training on parallel text (a :class:`nmt.training.loop.Task`)."""

    def __init__(self, run: Run) -> None:
        self.run = run
        self.model = run.model
        self.optimizer = run.optimizer
        self.scheduler = run.scheduler
        self.progress = run.st
        encode_examples(run.data.examples, run.data.src_vocab, run.data.tgt_vocab)  # once, not every epoch

    def batches(self, epoch: int) -> list[tuple[Any, torch.Tensor | None]]:
        """(batch, V′ or None) of ``epoch``: shuffled with seed + epoch, the same on every rank."""
        run, args = self.run, self.run.env.args
        return epoch_batches(run.data.examples, run.data.src_vocab, run.data.tgt_vocab, args.batch_size,
                             args.sampled_vocab, seed=args.seed + epoch)

    def loss(self, item: tuple[Any, torch.Tensor | None]) -> tuple[torch.Tensor, int]:
        """Summed cross-entropy of the teacher-forced logits (B, T, K_y), or (B, T, |V′|) with ``--sampled-vocab``
        (the targets then given as positions in V′, found on the host: no device read)."""
        run, env = self.run, self.run.env
        batch, v_prime = item
        n_tok = batch.n_tgt_tokens  # summed on the host, before the copy
        if v_prime is not None:
            batch.tgt_out = positions(batch.tgt_out, v_prime)
            run.restricted.candidates = v_prime.to(env.device)
        batch = batch.to(env.device)
        with torch.autocast(env.device.type, dtype=torch.bfloat16, enabled=env.precision.bf16):
            logits = run.train_model(batch.src, batch.src_len, batch.tgt_in)
        if run.restricted is not None:
            run.restricted.candidates = None  # validation and checkpoints use the full output layer
        return sequence_loss(logits, batch.tgt_out, env.args.label_smoothing), n_tok

    def before_step(self, progress: dict[str, Any]) -> None:
        """``--warmup``: the learning rate rises linearly over the segment's first updates."""
        args = self.run.env.args
        if (lr := segments.warmup_lr(args.lr, progress["update"] - progress["segment_start"], args.warmup)) is not None:
            for group in self.optimizer.param_groups:
                group["lr"] = lr

    def evaluate(self) -> loop.Evaluation:
        """Greedy BLEU of the validation text."""
        run = self.run
        v = validate(run.model, run.lm, run.data.v_src, run.data.v_tgt)
        return loop.Evaluation(v["bleu"], {"bleu": v["bleu"], "bleu_lc": v["bleu_lc"]},
                               f"BLEU {v['bleu']:.2f} (lc {v['bleu_lc']:.2f})", v["sample"])

    def save(self, kind: str, train_state: dict[str, Any] | None) -> None:
        """``best.pt`` or ``last.pt`` (with the training state) of the current weights."""
        run, st = self.run, self.run.st
        meta = {**run.meta_base, "updates": st["update"], "epochs": st["epoch"],
                "batch_in_epoch": st["batch_in_epoch"], "train_seconds": round(st["elapsed"], 1),
                "wall_seconds": round(st["wall"], 1), "train_tokens": st["tokens"],
                "train_tokens_per_s": round(st["tokens"] / max(st["elapsed"], 1e-9), 1),
                "best_valid_bleu": st["best_bleu"], "segments": segments.segments(st, run.meta_base["device"])}
        args, env = run.env.args, run.env
        path = env.last_path if kind == "last" else env.best_path
        atomic_save(make_checkpoint(run.model, run.data.src_vocab, run.data.tgt_vocab, args.src, args.tgt, meta,
                                    train_state=train_state, truecase=run.data.truecase), path)

    def log(self, record: dict[str, Any]) -> None:
        """A line of ``metrics.jsonl`` (read by the training-curve view)."""
        log_jsonl(self.run.env.metrics_path, record)

    def after_update(self, progress: dict[str, Any]) -> None:
        """``--timeline``: record the scheduled updates."""
        timeline_record.after_update(self.run)

    def finish(self) -> dict[str, Any]:
        """Write best.pt (if no validation did), summary.json and the rank report; leave the process group."""
        run, env, st = self.run, self.run.env, self.run.st
        summary = {"updates": st["update"], "epochs": st["epoch"], "best_valid_bleu": st["best_bleu"],
                   "train_seconds": round(st["elapsed"], 1), "train_tokens": st["tokens"],
                   "tokens_per_s": round(st["tokens"] / max(st["elapsed"], 1e-9), 1),
                   "stopped": st["stopped"] or "epochs"}
        if env.is_main:
            timeline_record.at_end(run)  # --timeline: the update the run stops at
            if not env.best_path.exists():
                self.save("best", None)
            (env.out / "summary.json").write_text(json.dumps(summary, indent=2))
            print(json.dumps(summary), file=sys.stderr)
        report_dir = os.environ.get("NMT_RANK_REPORT")
        if report_dir:
            Path(report_dir).mkdir(parents=True, exist_ok=True)
            (Path(report_dir) / f"rank{env.rank}.json").write_text(json.dumps({
                "rank": env.rank, "update": st["update"], "lr": [g["lr"] for g in self.optimizer.param_groups],
                "weights_sha256": weights_digest(run.model.state_dict())}))
        if env.distributed:
            dist.barrier()
            dist.destroy_process_group()
        return summary


def train_run(run: Run) -> dict[str, Any]:
    """Train a built run with the one loop and finish it; the summary."""
    task = NMTTask(run)
    loop.train(task, loop_config(run.env.args), ranks(run))
    return task.finish()
