"""Checkpoints: weights, config, vocabularies and provenance in one file, loaded safely.

A checkpoint is a plain dict (tensors, strings, numbers, lists, dicts) written with ``torch.save``
and read with ``torch.load(..., weights_only=True)``: loading never runs pickled code.

Storage: weights are fp32 (training runs), fp16 (``half``, shipped) or, opt-in, with the embedding
and output matrices as int8 with a per-row scale (``int8``, :mod:`nmt.quantize`; recorded in
``meta["storage"]``, dequantised to fp32 on load).

Integrity: every checkpoint written by :func:`make_checkpoint` records ``weights_sha256``, a digest
of its tensors (names, dtypes, shapes and bytes) *as stored* (for int8 storage: the int8 matrices and
their fp32 scales, taken before dequantising). Loading for decoding recomputes it and refuses a
file whose weights changed. Checkpoints shipped before the digest existed are listed in
``checkpoints/weights.sha256`` (``<digest>  <file name>``), which is checked the same way. Every
failure is a :class:`CheckpointError` with a one-line, plain message.
"""

from __future__ import annotations

import hashlib
import os
import pickle
import tempfile
import zipfile
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import torch
from torch.torch_version import TorchVersion

from nmt import quantize
from nmt.luong import build_model
from nmt.model import ModelConfig, RNNSearch
from nmt.tokenize import Tokenizer
from nmt.truecase import Truecaser
from nmt.vocab import Vocab

FORMAT = "rnnsearch-explorer/1"
MANIFEST = "weights.sha256"  # digests of shipped checkpoints that predate ``weights_sha256``


class CheckpointError(ValueError):
    """A file that is not a usable checkpoint; the message is one plain line naming the file."""


def weights_digest(weights: dict[str, torch.Tensor]) -> str:
    """SHA-256 over every tensor's name, dtype, shape and bytes, in name order."""
    h = hashlib.sha256()
    for name in sorted(weights):
        t = weights[name].detach().cpu().contiguous()
        h.update(f"{name}|{t.dtype}|{tuple(t.shape)}|".encode())
        h.update(t.reshape(-1).view(torch.uint8).numpy().tobytes())
    return h.hexdigest()


def manifest_digest(path: str | Path) -> str | None:
    """The digest recorded for ``path`` in the ``weights.sha256`` file beside it, if any."""
    path = Path(path)
    try:
        lines = (path.parent / MANIFEST).read_text(encoding="utf-8").splitlines()
    except OSError:
        return None
    for line in lines:
        digest, _, name = line.strip().partition("  ")
        if name == path.name:
            return digest
    return None


def atomic_save(obj: Any, path: str | Path) -> None:
    """Write ``obj`` so that ``path`` holds either the old or the new file, never half of one."""
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=path.name, suffix=".tmp")
    os.close(fd)
    try:
        torch.save(obj, tmp)
        os.chmod(tmp, 0o644)  # mkstemp's 0600 would make shipped files private
        os.replace(tmp, path)
    finally:
        if os.path.exists(tmp):
            os.unlink(tmp)


def make_checkpoint(
    model: RNNSearch,
    src_vocab: Vocab,
    tgt_vocab: Vocab,
    src_lang: str,
    tgt_lang: str,
    meta: dict[str, Any],
    half: bool = False,
    train_state: dict[str, Any] | None = None,
    truecase: dict[str, Truecaser] | None = None,
    int8: bool = False,
) -> dict[str, Any]:
    """The checkpoint dict of a model; ``half`` stores weights as fp16 (for shipping).

    ``truecase`` ({"src": …, "tgt": …}) stores the truecase models of a model trained on truecased
    text (as plain dicts, under ``ckpt["truecase"]``); checkpoints without it tokenise as before.
    ``int8`` stores the embedding and output matrices as int8 (:func:`int8_storage`)."""
    weights = {k: (v.detach().cpu().half() if half and v.is_floating_point() else v.detach().cpu())
               for k, v in model.state_dict().items()}
    ckpt: dict[str, Any] = {
        "format": FORMAT,
        "config": model.cfg.to_dict(),
        "model": weights,
        "weights_sha256": weights_digest(weights),
        "src_lang": src_lang,
        "tgt_lang": tgt_lang,
        "src_vocab": src_vocab.to_list(),
        "tgt_vocab": tgt_vocab.to_list(),
        "meta": meta,
    }
    if train_state is not None:
        ckpt["train_state"] = train_state
    if truecase:
        ckpt["truecase"] = {side: tc.to_dict() for side, tc in truecase.items()}
    return int8_storage(ckpt) if int8 else ckpt


def int8_storage(ckpt: dict[str, Any], names: list[str] | None = None) -> dict[str, Any]:
    """A copy of a checkpoint dict with ``names`` (default: the embedding and output matrices) as int8.

    Each matrix gets one fp32 scale per row (:mod:`nmt.quantize`); ``weights_sha256`` is recomputed
    over the stored tensors, and ``meta["storage"]`` records the scheme and the matrices."""
    weights = ckpt["model"]
    names = quantize.vocabulary_matrices(weights, ckpt["config"]) if names is None else names
    stored = quantize.quantized(weights, names)
    meta = {**ckpt.get("meta", {}), "storage": {"int8": sorted(names), "scheme": quantize.SCHEME,
                                                "weights_sha256": "over the int8 matrices and their scales"}}
    return {**ckpt, "model": stored, "weights_sha256": weights_digest(stored), "meta": meta}


def truecasers(ckpt: dict[str, Any]) -> dict[str, Truecaser | None]:
    """The source and target truecasers a checkpoint records (``None`` for a side without one)."""
    stored = ckpt.get("truecase") or {}
    return {side: Truecaser.from_dict(stored[side]) if side in stored else None for side in ("src", "tgt")}


def read_checkpoint(path: str | Path, mmap: bool = False, verify: bool | None = None) -> dict[str, Any]:
    """The raw checkpoint dict, loaded without unpickling arbitrary objects.

    With ``mmap`` the weights stay on disk until touched (cheap when only ``meta`` is wanted).
    ``verify`` (default: not ``mmap``) checks the weights against their recorded digest.
    Raises :class:`CheckpointError` for anything that is not an intact checkpoint of ours.
    """
    name = Path(path).name
    try:
        size = os.path.getsize(path)
    except OSError as err:
        raise CheckpointError(f"{name} cannot be read ({err.strerror or err})") from None
    if size == 0:
        raise CheckpointError(f"{name} is empty (0 bytes), not a checkpoint")
    try:
        # TorchVersion is a plain ``str`` subclass that early runs wrote into ``meta``; allow just it.
        with torch.serialization.safe_globals([TorchVersion]):
            ckpt = torch.load(path, map_location="cpu", weights_only=True, mmap=mmap)
    except pickle.UnpicklingError as err:
        if "GLOBAL" in str(err):  # an object whose loading would run code named by the file
            raise CheckpointError(f"{name} holds objects that can only be loaded by running code from the file; "
                                  "it is not a valid checkpoint and will not be loaded unsafely") from None
        raise CheckpointError(f"{name} is not a valid checkpoint: it is truncated, damaged or not a PyTorch "
                              "file") from None
    except (RuntimeError, EOFError, OSError, zipfile.BadZipFile, ValueError, KeyError):
        raise CheckpointError(f"{name} is not a valid checkpoint: it is truncated, damaged or not a PyTorch "
                              "file") from None
    if not isinstance(ckpt, dict) or ckpt.get("format") != FORMAT or not isinstance(ckpt.get("model"), dict):
        raise CheckpointError(f"{name} is not an RNNsearch Explorer checkpoint")
    if verify if verify is not None else not mmap:
        expected = ckpt.get("weights_sha256") or manifest_digest(path)
        if expected is not None and weights_digest(ckpt["model"]) != expected:
            raise CheckpointError(f"{name} is damaged: its weights do not match the SHA-256 digest recorded "
                                  "when it was written, so it will not be used")
    return ckpt


@dataclass
class LoadedModel:
    """A ready-to-decode model with its vocabularies, tokenisers and provenance."""

    model: RNNSearch
    src_vocab: Vocab
    tgt_vocab: Vocab
    src_tok: Tokenizer
    tgt_tok: Tokenizer
    meta: dict[str, Any] = field(default_factory=dict)
    path: str = ""

    @property
    def config(self) -> ModelConfig:
        return self.model.cfg

    @property
    def device(self) -> torch.device:
        return next(self.model.parameters()).device


def model_from_checkpoint(ckpt: dict[str, Any], device: str | torch.device = "cpu") -> RNNSearch:
    """An fp32 model in eval mode with the checkpoint's weights."""
    model = build_model(ckpt["config"], init=False)  # RNNSearch, or LuongNMT for arch "luong"; no QR/init
    try:
        weights = quantize.dequantized(ckpt["model"])  # int8 storage → fp32; other dicts unchanged
    except ValueError as err:
        raise CheckpointError(f"the checkpoint's weights are not usable: {err}") from None
    model.load_state_dict({k: v.float() if v.is_floating_point() else v for k, v in weights.items()})
    return model.to(device).eval()


def load(path: str | Path, device: str | torch.device = "cpu") -> LoadedModel:
    """Load a checkpoint file for decoding."""
    return loaded_from(read_checkpoint(path), device, str(path))


def loaded_from(ckpt: dict[str, Any], device: str | torch.device = "cpu", path: str = "") -> LoadedModel:
    """A ready-to-decode model from a checkpoint dict already read."""
    tc = truecasers(ckpt)
    return LoadedModel(
        model=model_from_checkpoint(ckpt, device),
        src_vocab=Vocab(ckpt["src_vocab"]),
        tgt_vocab=Vocab(ckpt["tgt_vocab"]),
        src_tok=Tokenizer(ckpt["src_lang"], tc["src"]),
        tgt_tok=Tokenizer(ckpt["tgt_lang"], tc["tgt"]),
        meta=dict(ckpt.get("meta", {})),
        path=path,
    )
