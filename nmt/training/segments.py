"""Training in segments (issue 20): a lent GPU gives minutes at a time, so one model is trained over
several sessions, each starting from the weights the last one brought back.

``train.py --init-from CKPT`` starts a new run folder from a checkpoint's weights (a run's ``last.pt``
or ``best.pt``, or an exported fp16 / int8 checkpoint, dequantised) with its vocabularies, a fresh
optimiser whose learning rate rises linearly over ``--warmup`` updates, and the update count and the
place in the epochs where the checkpoint stopped (the batches it has not seen come next; the
timeline's update numbers go on). Every checkpoint records the segments of its weights' history in
``meta["segments"]``: device, minutes of wall time and of training, and the updates each covered; a
checkpoint written before segments were recorded counts as one segment. ``best.pt`` is the best of
its own segment (validation BLEU starts afresh).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import torch

from nmt.models import quantize
from nmt.text.truecase import Truecaser
from nmt.training.resume import MODEL_KEYS, shape_differences


def init_problems(ckpt: dict[str, Any], args: dict[str, Any], truecase: dict[str, dict[str, Any]]) -> list[str]:
    """Why the checkpoint's weights cannot start a run with ``args``: a different model shape or
    language pair, or truecase models other than the run's (``truecase``: side → model dict); the
    vocabularies are the checkpoint's own, so they always fit."""
    out = shape_differences(ckpt, args, MODEL_KEYS, "the checkpoint")
    for side, key in (("src", "src_lang"), ("tgt", "tgt_lang")):
        if ckpt.get(key) and ckpt[key] != args[side]:
            out.append(f"--{side} is {args[side]} but the checkpoint translates {ckpt['src_lang']}→{ckpt['tgt_lang']}")
    if _spellings(ckpt.get("truecase") or {}) != _spellings(truecase):
        out.append("its truecase models are not the ones --truecase reads (the vocabularies would not match the text)")
    return out


def _spellings(stored: dict[str, dict[str, Any]]) -> dict[str, dict[str, str]] | None:
    """Each side's ``lowercase → spelling`` map, whichever form stored it (None if one is damaged)."""
    try:
        return {side: Truecaser.from_dict(d).best for side, d in stored.items()}
    except (ValueError, AttributeError, TypeError):
        return None


def init_weights(ckpt: dict[str, Any]) -> dict[str, torch.Tensor]:
    """The checkpoint's weights as fp32 (int8 matrices dequantised, fp16 widened)."""
    weights = quantize.dequantized(ckpt["model"])
    return {k: v.float() if v.is_floating_point() else v for k, v in weights.items()}


def previous_segments(ckpt: dict[str, Any]) -> list[dict[str, Any]]:
    """The segments behind a checkpoint's weights: its recorded ones, else one made from its meta."""
    meta = ckpt.get("meta", {})
    if meta.get("segments"):
        return [dict(s) for s in meta["segments"]]
    return [{"device": meta.get("device", "unknown"), "minutes": round(meta.get("wall_seconds", 0.0) / 60, 1),
             "train_minutes": round(meta.get("train_seconds", 0.0) / 60, 1),
             "updates": [0, int(meta.get("updates", 0))], "from": None}]


def start_progress(ckpt: dict[str, Any], path: str | Path) -> dict[str, Any]:
    """The progress a run started from ``ckpt`` (read from ``path``) begins with: its update count, its
    place in the epochs (the batches it has not seen yet come next), this segment's first update and
    origin, and the segments before it."""
    meta = ckpt.get("meta", {})
    update = int(meta.get("updates", 0))
    return {"update": update, "epoch": int(meta.get("epochs", 0)), "batch_in_epoch": int(meta.get("batch_in_epoch", 0)),
            "segment_start": update, "segment_from": Path(path).name, "segments_before": previous_segments(ckpt)}


def warmup_lr(lr: float, done: int, warmup: int) -> float | None:
    """The learning rate of a segment's update number ``done`` (0-based) during a linear warm-up over
    ``warmup`` updates (lr·(done + 1)/warmup), or None once it is over (the schedule's own rate)."""
    return lr * (done + 1) / warmup if done < warmup else None


def segments(st: dict[str, Any], device: str) -> list[dict[str, Any]]:
    """Every segment of the weights' history, this run's last (``st``: the run's progress, resumed
    invocations included)."""
    now = {"device": device, "minutes": round(st["wall"] / 60, 1), "train_minutes": round(st["elapsed"] / 60, 1),
           "updates": [st.get("segment_start", 0), st["update"]], "from": st.get("segment_from")}
    return [*st.get("segments_before", []), now]
