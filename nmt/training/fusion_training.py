"""Deep fusion's controller as a task for the one training loop (:mod:`nmt.training.loop`), as
``python -m scripts.train_fusion`` runs it (Gülçehre et al. 2015 §4.2): TM and LM frozen.

Only the gate (v_g, b_g) and W_f of :class:`nmt.decoding.fusion.DeepFusionController` learn; the TM's and
the LM's weights are frozen (``requires_grad`` off, eval mode). The loss is the cross-entropy of the
TM's own deep output with W_f (g_i s_i^LM) added to t̃_i (:meth:`nmt.models.rnnsearch.RNNSearch.log_probs`), over
the TM's teacher-forced states (:meth:`nmt.models.rnnsearch.RNNSearch.teacher_force`) and the LM's
(:meth:`nmt.models.lm.GRULanguageModel.teacher_force`). Batches: one ``random.Random(seed)`` shuffles the
training pairs before each round ("epoch" of the loop), whose first 20 batches' worth of pairs,
sorted by target length, make its 20 batches. No clipping, no validation while training. The
checkpoint is small (the controller only) and records which TM and LM it belongs to (file names and
weight digests), the data hash, device, time, and the held-out loss per token before (= the TM
alone, W_f = 0) and after.
"""

from __future__ import annotations

import argparse
import json
import platform
import random
import time
from pathlib import Path
from typing import Any

import torch

from nmt.decoding.fusion import CONTROLLER_ARCH, DeepFusionController, load_lm
from nmt.models import checkpoint
from nmt.models.lm import GRULanguageModel
from nmt.models.rnnsearch import RNNSearch
from nmt.text.data import Batch, Example, files_sha256, make_batch, read_parallel, tokenize_pairs
from nmt.text.vocab import PAD_ID
from nmt.training import loop
from nmt.training.lm_training import TATOEBA_CREDIT

ROUND_BATCHES = 20  # batches per round: the pairs of one shuffle, sorted by length
# Options a resumed run must share with the saved one (the models, the data and its order, the recipe).
RESUME_KEYS = ("tm", "lm", "data", "train_pairs", "batch_size", "lr", "seed")
NOT_RECORDED = ("state", "resume", "progress", "max_updates", "save_minutes")  # not in the old checkpoints


def fused_loss(tm: RNNSearch, lm: GRULanguageModel, ctl: DeepFusionController, batch: Any) -> torch.Tensor:
    """Summed cross-entropy of deep fusion over a batch (the TM's and LM's passes without gradients)."""
    with torch.no_grad():
        forced = tm.teacher_force(tm.encode(batch.src, batch.src_len), batch.tgt_in, readout=False)
        h_lm, _ = lm.teacher_force(batch.tgt_in)  # (B, T, n_LM): s_i^LM predicts y_i
    _, extra = ctl(h_lm)  # (B, T, 2l)
    log_probs = tm.log_probs(forced.s_prev, forced.y_emb, forced.context, extra)  # (B, T, K_y)
    return torch.nn.functional.nll_loss(log_probs.flatten(0, 1), batch.tgt_out.flatten(), ignore_index=PAD_ID,
                                        reduction="sum")


@torch.no_grad()
def held_out(tm: RNNSearch, lm: GRULanguageModel, ctl: DeepFusionController, batches: list) -> float:
    """Mean cross-entropy per target token over held-out batches."""
    total = sum(float(fused_loss(tm, lm, ctl, b)) for b in batches)
    return round(total / sum(b.n_tgt_tokens for b in batches), 4)


def digest(path: Path) -> str | None:
    """The weights digest a checkpoint records (which TM / LM a controller belongs to)."""
    return checkpoint.read_checkpoint(path, mmap=True).get("weights_sha256")


def pairs(args: argparse.Namespace, split: str, limit: int | None, seed: int) -> list[Example]:
    """Tokenised pairs of a split (a random ``limit`` of them), both sides ≤ 50 words."""
    src, tgt = read_parallel(args.data, split, "en", "fr")
    idx = list(range(len(src)))
    random.Random(seed).shuffle(idx)
    idx = idx[:limit] if limit else idx
    ex = tokenize_pairs([src[i] for i in idx], [tgt[i] for i in idx], "en", "fr")
    return [e for e in ex if 0 < len(e.src) <= 50 and 0 < len(e.tgt) <= 50]


def recorded_args(args: argparse.Namespace) -> dict[str, Any]:
    """The options as a checkpoint records them (paths as text)."""
    return {k: str(v) if isinstance(v, Path) else v for k, v in vars(args).items() if k not in NOT_RECORDED}


def loop_config(args: argparse.Namespace) -> loop.LoopConfig:
    """The controller's schedule: a time budget (or an update count), no clipping, a log line every 20 updates."""
    return loop.LoopConfig(epochs=None, max_updates=args.max_updates, time_budget_s=args.minutes * 60,
                           save_every_s=args.save_minutes * 60, clip=None, log_every=20, progress=args.progress)


class FusionTask:
    """The deep-fusion controller on parallel text (a :class:`nmt.training.loop.Task`; set up as the old script did)."""

    scheduler = None  # a fixed learning rate

    def __init__(self, args: argparse.Namespace) -> None:
        self.args = args
        torch.set_num_threads(args.threads)
        self.tm_l, lm_l = checkpoint.load(args.tm), load_lm(args.lm)
        self.tm, self.lm = self.tm_l.model.requires_grad_(False).eval(), lm_l.model.requires_grad_(False).eval()
        torch.manual_seed(args.seed)  # the controller's draws follow from the seed alone, whatever loading drew
        self.model = DeepFusionController(self.lm.cfg.hidden_dim, 2 * self.tm.cfg.maxout_dim)
        self.train = pairs(args, "train", args.train_pairs, args.seed)
        dev = pairs(args, "dev", args.valid_pairs, 0)
        self.valid = [make_batch(dev[k : k + 100], self.tm_l.src_vocab, self.tm_l.tgt_vocab)
                      for k in range(0, len(dev), 100)]
        self.before = held_out(self.tm, self.lm, self.model, self.valid)
        print(f"train {len(self.train)} pairs; held-out loss/token before (TM alone) {self.before}", flush=True)
        self.optimizer = torch.optim.Adam(self.model.parameters(), lr=args.lr)
        self.order, self.rng, self.rounds_drawn = list(self.train), random.Random(args.seed), 0
        self.progress = loop.new_progress()
        if args.resume and args.state and args.state.exists():
            loop.load_state_file(args.state, self.model, self, recorded_args(args), RESUME_KEYS)
            print(f"resumed at update {self.progress['update']}", flush=True)

    def batches(self, epoch: int) -> list[Batch]:
        """Round ``epoch``'s batches: the shuffles of the rounds before are replayed (a resumed run)."""
        if epoch < self.rounds_drawn:
            self.order, self.rng, self.rounds_drawn = list(self.train), random.Random(self.args.seed), 0
        for _ in range(self.rounds_drawn, epoch + 1):
            self.rng.shuffle(self.order)
        self.rounds_drawn = epoch + 1
        bs = self.args.batch_size
        chunk = sorted(self.order[: bs * ROUND_BATCHES], key=lambda e: len(e.tgt))
        return [make_batch(chunk[k : k + bs], self.tm_l.src_vocab, self.tm_l.tgt_vocab)
                for k in range(0, len(chunk), bs)]

    def loss(self, batch: Batch) -> tuple[torch.Tensor, int]:
        """Summed cross-entropy of deep fusion (:func:`fused_loss`) and the batch's target tokens."""
        return fused_loss(self.tm, self.lm, self.model, batch), batch.n_tgt_tokens

    def before_step(self, progress: dict[str, Any]) -> None:
        """Nothing: the learning rate is fixed."""

    def evaluate(self) -> None:
        """No validation while training (the held-out loss is measured at the end)."""

    def after_update(self, progress: dict[str, Any]) -> None:
        """No hook."""

    def log(self, record: dict[str, Any]) -> None:
        """A progress line on stdout."""
        print(f"update {record['update']} loss/token {record['loss']:.3f} {record['tok_s']:.0f} tok/s", flush=True)

    def save(self, kind: str, train_state: dict[str, Any] | None) -> None:
        """With ``--state``, what ``--resume`` needs (the controller's checkpoint is written at the end)."""
        if self.args.state is not None:
            loop.save_state_file(self.args.state, self.model, self, recorded_args(self.args))

    def write(self) -> dict[str, Any]:
        """Measure the held-out loss after training and write the controller's checkpoint; its scores."""
        args, st, tm, lm = self.args, self.progress, self.tm, self.lm
        after = held_out(tm, lm, self.model, self.valid)
        weights = {k: v.detach().cpu().half() for k, v in self.model.state_dict().items()}
        scores = {f"{args.data.name}/dev[:{args.valid_pairs}]": {"loss_per_token_tm_alone": self.before,
                                                                "loss_per_token_deep_fusion": after}}
        meta = {
            "kind": "deep-fusion controller (Gülçehre et al. 2015 §4.2): gate v_g, b_g and W_f only",
            "args": recorded_args(args),
            "tm": {"file": args.tm.name, "weights_sha256": digest(args.tm)},
            "lm": {"file": args.lm.name, "weights_sha256": digest(args.lm)},
            "train_data": {"dir": args.data.name, "split": "train", "pairs_used": len(self.train),
                           "sha256": files_sha256([args.data / "train.en.gz", args.data / "train.fr.gz"])},
            "device": "cpu", "cpu": platform.processor() or platform.machine(), "threads": args.threads,
            "torch": torch.__version__, "updates": st["update"], "train_tokens": st["tokens"],
            "train_seconds": round(st["elapsed"], 1), "written": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()),
            "scores": scores, "credit": TATOEBA_CREDIT,
        }
        cfg = {"arch": CONTROLLER_ARCH, "lm_hidden": lm.cfg.hidden_dim, "readout_dim": 2 * tm.cfg.maxout_dim}
        checkpoint.atomic_save({"format": checkpoint.FORMAT, "config": cfg, "model": weights,
                                "weights_sha256": checkpoint.weights_digest(weights), "meta": meta}, args.out)
        print(json.dumps(scores), flush=True)
        return scores


def train_fusion(args: argparse.Namespace) -> dict[str, Any]:
    """Train the controller with the one loop and write its checkpoint; the progress."""
    task = FusionTask(args)
    st = loop.train(task, loop_config(args))
    task.write()
    return st
