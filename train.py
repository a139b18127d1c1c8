"""Train an RNNsearch (``--context attention``), RNNencdec (``--context fixed``) or Luong model.

    python train.py --data data/multi30k --src en --tgt fr --context attention --out runs/search
    python train.py --arch luong --score general --attention local-p --window 10 --input-feeding ...
    python train.py --config configs/m30k-en-fr-rnnsearch.toml --data data/multi30k
    torchrun --nproc_per_node 2 train.py ...        # data-parallel (gloo on CPU, nccl on GPU)

A run directory holds ``last.pt`` (weights, optimiser and position: ``--resume`` continues a
killed run where it stopped; it refuses a run whose model, optimiser or training data differ,
the latter unless ``--force-resume``), ``best.pt`` (best validation BLEU), ``metrics.jsonl`` (one JSON
object per log line, read by the training-curve view) and ``args.json``. ``--init-from CKPT --warmup N``
starts a new segment of a model's training in a fresh folder from CKPT's weights (:mod:`nmt.training.segments`).
Checkpoint writes are atomic. On the CPU, runs are seeded and deterministic. ``--amp auto`` trains in bf16 where the
hardware has it natively, else fp32 (see :mod:`nmt.models.device`); the log and checkpoints say which.

With the environment variable ``NMT_RANK_REPORT=DIR`` every rank writes ``DIR/rank{N}.json`` (its
final learning rate and a digest of its weights) at the end: data-parallel ranks must agree.

A run goes through named phases: config, data and model (:mod:`nmt.training.setup`: ``configure``,
``load_data``, ``build_run``), then the one training loop (:func:`nmt.training.loop.train`, the loop the fusion
LM and the deep-fusion controller train with too) over the translation task (:class:`nmt.training.nmt_task.NMTTask`:
batches, loss, validation, checkpoints, the timeline hook), and its ``finish``.
"""

from __future__ import annotations

import argparse
import json
import tomllib
from typing import Any

from nmt.models.device import AMP_CHOICES
from nmt.models.luong import ATTENTIONS, CELLS, ENCODERS, SCORES
from nmt.models.registry import ARCHS
from nmt.models.rnnsearch import CONTEXT_MODES
from nmt.training import timeline_record
from nmt.training.nmt_task import train_run
from nmt.training.setup import build_run, configure, load_data, load_training_data

__all__ = ["DEFAULTS", "load_training_data", "main", "parse_args"]  # load_training_data: nmt.training.setup's

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
    # Luong et al. (2015) models (--arch luong, see nmt/models/luong.py); recorded only for them
    "arch": "rnnsearch", "score": "general", "attention": "global", "window": 10, "input_feeding": True,
    "cell": "lstm", "layers": 1, "encoder": "bidirectional",
    # issue 20: truecase models (PREFIX.{src,tgt}.json, scripts/prep_large_vocab.py) and Jean et al.'s
    # softmax over each data partition's τ target words (nmt/training/sampled_softmax.py; 0 = full softmax)
    "truecase": "", "sampled_vocab": 0,
    # issue 23: a training timeline (nmt/training/timeline.py) in OUT/timeline.npz; presets: a group of the stepper's
    # presets (configs/timeline_sentences.json, the sentences of ui/common/presets.py),
    # "auto" (from the --out folder's name) or "none"; note: a line the "Watch it learn" page shows
    "timeline": False, "timeline_presets": "auto", "timeline_note": "",
    # issue 20: a new segment of a model's training (nmt/training/segments.py): start from this checkpoint's
    # weights with a fresh optimiser whose learning rate rises linearly over WARMUP updates
    "init_from": "", "warmup": 0,
    # issue 20: torch.compile of RNNsearch's per-position step (nmt.training.setup.compile_step; same results)
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


def main(argv: list[str] | None = None) -> dict[str, Any]:
    """Train as the options say, phase by phase; returns the final summary (also written to ``summary.json``)."""
    env = configure(parse_args(argv))
    run = build_run(env, load_data(env))
    run.timeline = timeline_record.start(run, timeline_record.preset_sentences())  # None without --timeline
    if env.is_main:
        (env.out / "args.json").write_text(json.dumps(run.meta_base["args"], indent=2))
    return train_run(run)  # the one training loop (nmt.training.loop); SIGTERM / SIGINT: finish the update, save, stop


if __name__ == "__main__":
    main()
