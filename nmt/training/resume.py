"""Resuming a run safely: refuse a mismatched ``--resume``, and keep ``metrics.jsonl`` free of repeats.

A run is resumed from its ``last.pt``. Resuming with a different model shape or optimiser cannot
work (the saved weights and optimiser state do not fit); resuming on different training data, or
with a different batch size, seed or number of ranks, would silently continue a different run
(the saved position in the epoch would point into other batches); resuming with another training
recipe (dropout, label smoothing, clipping, learning rate) would record one recipe and train with
another. :func:`resume_problems` names each such difference; ``train.py`` refuses the first kind
always and the others unless ``--force-resume`` (which then trains with the new recipe, the new
learning rate set on the restored optimiser). :func:`remove_stale_temporaries` clears the
``*.tmp`` files a save killed midway leaves behind.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from nmt.text import atomic

# Options that fix the shape of the weights or of the optimiser state: never resumable across.
MODEL_KEYS = ("context", "emb_dim", "hidden_dim", "attn_dim", "maxout_dim",
              "arch", "score", "attention", "window", "input_feeding", "cell", "layers", "encoder")
OPTIMIZER_KEYS = ("optimizer",)
# Options that decide which training pairs a run sees, and in which order.
DATA_KEYS = ("src", "tgt", "train_split", "train_limit", "max_len", "batch_size", "seed")
# Options of the training recipe: the checkpoint records them, so a silent change would misreport the run.
RECIPE_KEYS = ("dropout", "label_smoothing", "clip", "lr", "lr_decay", "min_lr", "sampled_vocab", "truecase",
               "warmup")  # not init_from: a resumed run's weights come from its last.pt whatever it names


def _show(value: Any) -> str:
    return "unset" if value is None else str(value)


def _difference(key: str, saved: Any, now: Any, where: str = "the saved run") -> str:
    return f"{key} is {_show(saved)} in {where} but {_show(now)} now"


def shape_differences(ckpt: dict[str, Any], args: dict[str, Any], keys: tuple[str, ...],
                      where: str = "the saved run") -> list[str]:
    """The options among ``keys`` (model shape, optimiser) whose value in the checkpoint differs from
    ``args``; the weights' own config wins over the recorded options, which win over the defaults."""
    saved = {"arch": "rnnsearch", **ckpt.get("meta", {}).get("args", {}), **ckpt.get("config", {})}
    return [_difference(k, saved[k], args[k], where) for k in keys if k in saved and k in args and saved[k] != args[k]]


def resume_problems(ckpt: dict[str, Any], args: dict[str, Any], data_sha256: str,
                    world_size: int) -> tuple[list[str], list[str]]:
    """Differences between a saved run and the options it is being resumed with.

    ``ckpt`` is the run's ``last.pt`` dict, ``args`` the new options. Returns (fatal, data): fatal
    differences (model shape, optimiser) make resuming impossible; data differences (training
    files, their selection and order, number of ranks) make it a different run. Options the saved
    run did not record (older checkpoints) are not compared."""
    meta = ckpt.get("meta", {})
    saved_args = meta.get("args", {})
    fatal = shape_differences(ckpt, args, MODEL_KEYS + OPTIMIZER_KEYS)
    data: list[str] = []
    for key in DATA_KEYS + RECIPE_KEYS:
        if key in saved_args and key in args and saved_args[key] != args[key]:
            data.append(_difference(key, saved_args[key], args[key]))
    saved_sha = meta.get("train_data", {}).get("sha256")
    if saved_sha and saved_sha != data_sha256:
        data.append(f"the training files differ (sha256 {saved_sha[:12]}… in the saved run but "
                    f"{data_sha256[:12]}… now)")
    if "world_size" in meta and meta["world_size"] != world_size:
        data.append(_difference("world_size", meta["world_size"], world_size))
    return fatal, data


def remove_stale_temporaries(out: Path) -> list[str]:
    """Delete the temporary files of saves a kill cut short (``last.pt….tmp``, ``best.pt….tmp``,
    written by :func:`nmt.models.checkpoint.atomic_save`); returns their names."""
    gone = []
    for pattern in ("last.pt*.tmp", "best.pt*.tmp"):
        for f in sorted(out.glob(pattern)):
            f.unlink(missing_ok=True)
            gone.append(f.name)
    return gone


def refusal(run: str | Path, fatal: list[str], data: list[str], force: bool) -> str | None:
    """The one-line error for a resume that must not go ahead, or None if it may.

    ``force`` (``--force-resume``) lets data differences through, never fatal ones."""
    if not fatal and (not data or force):
        return None
    msg = f"cannot resume {run}: " + "; ".join(fatal + data)
    if not fatal:
        msg += " (--force-resume resumes anyway)"
    return msg


def rewind_metrics(path: Path, update: int) -> int:
    """Drop the records of ``metrics.jsonl`` after ``update`` (the update training restarts from).

    A killed run may have logged updates past its last checkpoint; the resumed run logs them again,
    so each update would appear twice. Unparseable lines (a write cut short by the kill) go too.
    Returns how many lines were dropped."""
    if not path.exists():
        return 0
    lines = path.read_text(encoding="utf-8").splitlines()
    keep = []
    for line in lines:
        try:
            rec = json.loads(line)
        except json.JSONDecodeError:
            continue
        if isinstance(rec, dict) and isinstance(rec.get("update"), int) and rec["update"] <= update:
            keep.append(line)
    if len(keep) != len(lines):
        atomic.write_text(path, "".join(line + "\n" for line in keep))
    return len(lines) - len(keep)
