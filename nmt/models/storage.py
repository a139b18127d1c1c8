"""What the tensors of a file may claim before anything allocates for them.

``torch.load`` keeps a tensor's view on its storage as written: a 12 KB file can hold a tensor of
10⁹ elements that all read one stored number (``torch.zeros(1).expand(n)``: stride 0), or a hundred
tensors that are views of one small storage. Every step that copies such a tensor (``contiguous``,
``.float()``, ``load_state_dict``, a digest) then allocates what the file never held. So, before any
of them, :func:`check_tensors` asks every tensor of a checkpoint to hold its own elements: a CPU,
strided, dense tensor (no zero or overlapping strides) whose storage has room for all it declares,
no two of them sharing bytes. After that a tensor's bytes are bytes the file holds.

:func:`model_bytes_cap` is the most memory the fp32 model a checkpoint's config asks for may take
(``$RNNSEARCH_MAX_MODEL_BYTES``, default 2 GiB: four times the largest model this project trains);
:func:`nmt.models.checkpoint.check_fits` refuses a config over it before a model is built.
:func:`tensor_bytes` is a tensor's bytes as a buffer, without a copy, for hashing.
"""

from __future__ import annotations

import bisect
import os
from collections.abc import Iterable

import torch

MODEL_BYTES_ENV = "RNNSEARCH_MAX_MODEL_BYTES"
MAX_MODEL_BYTES = 2 * 2**30


def model_bytes_cap() -> int:
    """The most bytes a model's fp32 weights may take: ``$RNNSEARCH_MAX_MODEL_BYTES``, else 2 GiB."""
    raw = os.environ.get(MODEL_BYTES_ENV, "").strip()
    return int(raw) if raw.isdigit() and int(raw) > 0 else MAX_MODEL_BYTES


def _dense(t: torch.Tensor) -> bool:
    """Whether ``t``'s strides lay its elements out one after another (in any order of dimensions)."""
    expected = 1
    for stride, size in sorted((st, sz) for st, sz in zip(t.stride(), t.shape) if sz > 1):
        if stride != expected:
            return False
        expected *= size
    return True


def span(t: torch.Tensor, where: str) -> tuple[int, int, int]:
    """``(storage address, first byte, end byte)`` of a tensor that holds its own elements; ValueError
    (naming ``where``) for one that claims more than its storage holds."""
    if t.layout != torch.strided or t.device.type != "cpu":
        raise ValueError(f"{where} is not an ordinary tensor ({t.layout}, {t.device.type})")
    if not _dense(t):
        raise ValueError(f"{where} repeats its stored numbers (strides {list(t.stride())[:8]} for shape "
                         f"{list(t.shape)[:8]}), which would take memory the file does not hold")
    size = t.element_size()
    first, end = t.storage_offset() * size, (t.storage_offset() + t.numel()) * size
    stored = t.untyped_storage().nbytes()
    if t.storage_offset() < 0 or end > stored:
        raise ValueError(f"{where} declares {t.numel()} numbers but its storage holds {stored // size}")
    return t.untyped_storage().data_ptr(), first, end


class Ledger:
    """The storage bytes the tensors of one file have claimed so far: a tensor that shares a byte with
    one before it (or is the same tensor again) is refused."""

    def __init__(self) -> None:
        self.spans: dict[int, list[tuple[int, int, str]]] = {}
        self.total = 0  # bytes declared, in all

    def add(self, where: str, t: torch.Tensor) -> None:
        """Claim ``t``'s bytes (ValueError naming ``where`` when they are not its own, see :func:`span`)."""
        address, first, end = span(t, where)
        self.total += end - first
        if end == first:
            return
        regions = self.spans.setdefault(address, [])
        i = bisect.bisect_left(regions, (first, end, where))
        for other in regions[max(i - 1, 0):i + 1]:
            if other[0] < end and first < other[1]:
                raise ValueError(f"{where} shares its stored numbers with {other[2]}, which would take memory "
                                 "the file does not hold")
        regions.insert(i, (first, end, where))


def check_tensors(named: Iterable[tuple[str, torch.Tensor]], ledger: Ledger | None = None) -> int:
    """Raise ValueError unless every tensor holds its own elements and no two share a byte of
    storage; the bytes they declare, in all."""
    ledger = ledger or Ledger()
    for where, t in named:
        ledger.add(where, t)
    return ledger.total


def tensor_bytes(t: torch.Tensor) -> memoryview:
    """A tensor's bytes as a buffer (no copy when it is contiguous; checked tensors only)."""
    flat = t.detach().cpu().contiguous().reshape(-1)
    return memoryview(flat.view(torch.uint8).numpy()) if flat.numel() else memoryview(b"")
