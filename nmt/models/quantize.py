"""int8 storage of weight matrices with one scale per row (symmetric, round to nearest).

A row w (one word's embedding, one output unit's weights) is stored as q = round(w / s) with
s = max|w| / 127, so q ∈ [−127, 127] and the dequantised row q·s differs from w by at most s/2 per
entry. A checkpoint keeps each such matrix under its own name as an ``int8`` tensor and its scales
(fp32, one per row) under ``NAME + SCALE_SUFFIX`` in the same ``ckpt["model"]`` dict, so
``torch.load(weights_only=True)`` reads it and ``weights_sha256`` digests what is stored (the int8
bytes and the scales). :func:`dequantized` turns such a dict back into ordinary float weights.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

import torch

SCALE_SUFFIX = ".int8_row_scale"
QMAX = 127
SCHEME = "int8, symmetric per row: q = round(w / s), s = max|row| / 127 (fp32); w ≈ q * s"


def quantize_rows(w: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
    """``(q, s)``: int8 matrix and fp32 per-row scales of a 2-D float matrix (all-zero rows: s = 1)."""
    if w.dim() != 2 or not w.is_floating_point():
        raise ValueError(f"int8 storage needs a 2-D float matrix, not {tuple(w.shape)} {w.dtype}")
    w32 = w.detach().float()
    amax = w32.abs().amax(dim=1)
    scale = torch.where(amax > 0, amax / QMAX, torch.ones_like(amax))
    q = torch.round(w32 / scale[:, None]).clamp_(-QMAX, QMAX).to(torch.int8)
    return q, scale


def dequantize_rows(q: torch.Tensor, scale: torch.Tensor) -> torch.Tensor:
    """The fp32 matrix q · s of an int8 matrix and its per-row scales."""
    if q.dtype != torch.int8 or scale.shape != q.shape[:1]:
        raise ValueError("dequantising needs an int8 matrix and one scale per row")
    return q.float() * scale.float()[:, None]


VOCABULARY_MATRICES = {
    "rnnsearch": ("encoder.embed.weight", "decoder.embed.weight", "decoder.W_o.weight"),  # E_x, E_y, W_o
    "luong": ("src_embed.weight", "tgt_embed.weight", "W_s.weight"),  # embeddings, W_s of eq. (6)
}


def vocabulary_matrices(weights: dict[str, torch.Tensor], config: dict[str, Any]) -> list[str]:
    """The embedding and output matrices (one row per source or target word) of a model's weights.

    Named per architecture, not guessed from shapes (an LSTM's 4n gate rows can equal a vocabulary
    size); the output bias is 1-D and stays as it is."""
    names = VOCABULARY_MATRICES[str(config.get("arch", "rnnsearch"))]
    return sorted(n for n in names if n in weights)


def all_matrices(weights: dict[str, torch.Tensor]) -> list[str]:
    """Every 2-D float matrix (biases, 3-D stacks and vectors stay as they are)."""
    return sorted(k for k, v in weights.items() if v.dim() == 2 and v.is_floating_point())


def quantized(weights: dict[str, torch.Tensor], names: Iterable[str]) -> dict[str, torch.Tensor]:
    """A copy of ``weights`` with ``names`` stored as int8 plus their ``SCALE_SUFFIX`` scales."""
    out = dict(weights)
    for name in names:
        if name.endswith(SCALE_SUFFIX) or name + SCALE_SUFFIX in weights:
            raise ValueError(f"{name} is already stored as int8")
        out[name], out[name + SCALE_SUFFIX] = quantize_rows(weights[name])
    return out


def int8_names(weights: dict[str, torch.Tensor]) -> list[str]:
    """Names of the matrices a weights dict stores as int8."""
    return sorted(k.removesuffix(SCALE_SUFFIX) for k in weights if k.endswith(SCALE_SUFFIX))


def dequantized(weights: dict[str, torch.Tensor]) -> dict[str, torch.Tensor]:
    """Float weights of a stored dict: int8 matrices times their scales, scale entries dropped.

    An int8 tensor without its scales is refused (``load_state_dict`` would silently copy the raw
    integers into float parameters)."""
    names = set(int8_names(weights))
    for k, v in weights.items():
        if v.dtype == torch.int8 and k not in names:
            raise ValueError(f"{k} is stored as int8 without its {SCALE_SUFFIX} scales")
    return {k: dequantize_rows(v, weights[k + SCALE_SUFFIX]) if k in names else v
            for k, v in weights.items() if not k.endswith(SCALE_SUFFIX)}
