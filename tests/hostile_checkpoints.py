"""Hostile files for the checkpoint readers: one of each kind, and a seeded fuzz set of hundreds.

Everything is generated from a tiny, untrained RNNsearch (vocabularies of 8 words, 4-unit layers:
a file of a few kilobytes), so hundreds of files are written and read in seconds.
"""

from __future__ import annotations

import copy
import hashlib
import io
import math
import pickle
import random
import shutil
import zipfile
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
import torch

from nmt.models import seal
from nmt.models.checkpoint import make_checkpoint
from nmt.models.registry import build_model
from nmt.models.rnnsearch import ModelConfig, RNNSearch
from nmt.text.vocab import SPECIALS, Vocab

TEXT = b"root:x:0:0:root:/root:/bin/bash\ndaemon:x:1:1:daemon:/usr/sbin:/usr/sbin/nologin\n"
# Values each field is swapped for: every type a pickle of plain data can hold, and odd numbers.
SWAPS: tuple[Any, ...] = (None, True, 0, -1, 10**12, 1.5, float("nan"), "x", "", [], [1, 2], {}, {"a": 1}, (1,),
                          b"bytes", torch.zeros(2))
META = {"args": {"epochs": 1}, "scores": {"val": {"greedy": {"bleu": 1.0}}}, "train_seconds": 3.0,
        "train_data": {"dir": "multi30k"}, "updates": 4}


def tiny_checkpoint(context: str = "attention") -> dict[str, Any]:
    """A sealed checkpoint dict of a tiny untrained RNNsearch (en→fr, 8-word vocabularies)."""
    torch.manual_seed(0)
    src = Vocab([*SPECIALS, "a", "dog", "runs", "."])
    tgt = Vocab([*SPECIALS, "un", "chien", "court", "."])
    cfg = ModelConfig(src_vocab_size=8, tgt_vocab_size=8, emb_dim=4, hidden_dim=4, attn_dim=4, maxout_dim=4,
                      context=context)
    return make_checkpoint(RNNSearch(cfg), src, tgt, "en", "fr", copy.deepcopy(META))



class Bomb:
    """A pickled callable whose unpickling would create ``marker`` (``open(marker, "w")``): a loader that
    refuses it without running it leaves no marker behind (the importers' tests)."""

    def __init__(self, marker: Path) -> None:
        self.marker = marker

    def __reduce__(self) -> tuple:
        return (open, (str(self.marker), "w"))


def _save(obj: Any) -> bytes:
    buf = io.BytesIO()
    torch.save(obj, buf)
    return buf.getvalue()


def _zip(names: dict[str, bytes]) -> bytes:
    buf = io.BytesIO()
    with zipfile.ZipFile(buf, "w") as z:
        for name, data in names.items():
            z.writestr(name, data)
    return buf.getvalue()


def _edited(good: dict[str, Any], change: Callable[[dict[str, Any]], None], reseal: bool) -> bytes:
    ckpt = copy.deepcopy(good)
    change(ckpt)
    return _save(seal.sealed(ckpt) if reseal else ckpt)


def kinds(good: dict[str, Any]) -> dict[str, bytes]:
    """One file of each hostile kind (name → bytes), all of them refused by the loader."""
    raw = _save(good)

    def put(key: str, value: Any) -> Callable[[dict[str, Any]], None]:
        return lambda c: c.__setitem__(key, value)

    def word(c: dict[str, Any]) -> None:
        c["tgt_vocab"][5] = "chiens"

    def no_weights_digest(c: dict[str, Any]) -> None:  # sealed again by hand: sealing adds a weights digest
        c.pop("weights_sha256")
        c[seal.SEAL] = seal.content_digest(c)

    return {
        "text.pt": TEXT,
        "random.pt": random.Random(1).randbytes(4096),
        "empty.pt": b"",
        "truncated.pt": raw[: len(raw) // 2],
        "other-pickle.pt": pickle.dumps({"weights": [1, 2, 3]}),
        "list.pt": _save([1, 2, 3]),
        "foreign-dict.pt": _save({"state_dict": {"w": torch.zeros(2)}}),
        "zip.pt": _zip({"hello.txt": b"hello", "data/0": b"\x00" * 8}),
        "config-string.pt": _edited(good, put("config", "hello"), True),
        "meta-list.pt": _edited(good, put("meta", [1, 2]), True),
        "int-vocab.pt": _edited(good, lambda c: c.__setitem__("src_vocab", list(range(8))), True),
        "edited-word.pt": _edited(good, word, False),
        "unsealed.pt": _edited(good, lambda c: c.pop(seal.SEAL), False),
        "hidden-dim.pt": _edited(good, lambda c: c["config"].__setitem__("hidden_dim", 10**6), True),
        "none-word.pt": _edited(good, lambda c: c["tgt_vocab"].__setitem__(5, None), True),
        "no-weights-digest.pt": _edited(good, no_weights_digest, False),
    }


def first_bytes(raw: bytes, seed: int) -> dict[str, bytes]:
    """Every first byte (0-255), before text and before the rest of a real checkpoint: 512 files."""
    rng = random.Random(seed)
    out = {}
    for b in range(256):
        out[f"byte{b:03d}-text.pt"] = bytes([b]) + TEXT
        tail = raw[1:] if b != raw[0] else rng.randbytes(64)
        out[f"byte{b:03d}-ckpt.pt"] = bytes([b]) + tail
    return out


def truncations(raw: bytes, seed: int, n: int = 40) -> dict[str, bytes]:
    """``raw`` cut short at ``n`` places: the first bytes, the last ones, and seeded cuts between."""
    rng = random.Random(seed)
    cuts = sorted({1, 2, 4, 8, 30, 64, len(raw) - 1, len(raw) - 22, *(rng.randrange(1, len(raw)) for _ in range(n))})
    return {f"cut{c:06d}.pt": raw[:c] for c in cuts[:n]}


def type_swaps(good: dict[str, Any]) -> dict[str, tuple[bytes, bool]]:
    """Each top-level, config and meta field swapped for each of :data:`SWAPS`, saved as it is
    (the seal then no longer matches) and sealed again (so the types themselves are tested):
    name → (bytes, whether it was sealed again)."""
    out: dict[str, tuple[bytes, bool]] = {}
    places: list[tuple[str, Callable[[dict[str, Any]], dict[str, Any]], str]] = [
        ("top", lambda c: c, k) for k in good if k != "model"]
    places += [("config", lambda c: c["config"], k) for k in good["config"]]
    places += [("meta", lambda c: c["meta"], k) for k in good["meta"]]
    for where, table, key in places:
        for i, value in enumerate(SWAPS):
            for reseal in (False, True) if key != seal.SEAL else (False,):  # sealing again undoes that swap
                ckpt = copy.deepcopy(good)
                table(ckpt)[key] = value
                try:
                    data = _save(seal.sealed(ckpt) if reseal else ckpt)
                except ValueError:  # a value no seal is made over (bytes): no sealed variant
                    continue
                out[f"swap-{where}-{key}-{i}-{'sealed' if reseal else 'as-is'}.pt"] = (data, reseal)
    return out


# ----------------------------------------------------------------------------------------------
# Memory bombs: small files whose reading would take far more memory than they hold
# ----------------------------------------------------------------------------------------------

BIG_WORD = 2**20  # a 1 MB string
REFERENCES = 2_000  # … referred to 2,000 times (pickle stores it once: a 1 MB file, 2 GB once copied)


def _zeros_digest(shapes: dict[str, tuple[int, ...]], dtype: torch.dtype) -> str:
    """weights_digest of all-zero tensors of ``shapes``, fed in pieces (never holding one of them)."""
    h, chunk, size = hashlib.sha256(), bytes(2**24), torch.empty(0, dtype=dtype).element_size()
    for name in sorted(shapes):
        h.update(f"{name}|{dtype}|{shapes[name]}|".encode())
        left = math.prod(shapes[name]) * size
        while left:
            h.update(chunk[:min(left, len(chunk))])
            left -= min(left, len(chunk))
    return h.hexdigest()


def zero_stride_copy(src: Path, dst: Path, emb_dim: int = 20_000) -> Path:
    """A copy of the checkpoint ``src`` with an embedding size of ``emb_dim`` and every weight a zero-stride
    view of one stored zero (``torch.zeros(1).expand(*shape)``), its weights digest and seal made again as
    the project's seal would make them: a file of kilobytes whose weights claim gigabytes."""
    ckpt = torch.load(src, weights_only=True)
    ckpt["config"]["emb_dim"] = emb_dim
    with torch.device("meta"):
        shapes = {k: tuple(v.shape) for k, v in build_model(ckpt["config"], init=False).state_dict().items()}
    ckpt["model"] = {k: torch.zeros(1, dtype=torch.float16).expand(*s) for k, s in shapes.items()}
    ckpt["weights_sha256"] = _zeros_digest(shapes, torch.float16)
    torch.save(seal.sealed(ckpt), dst)
    return dst


def overlapping_copy(good: dict[str, Any], dst: Path) -> Path:
    """``good`` with every weight a view of one shared storage (each starting at its first number)."""
    ckpt = copy.deepcopy(good)
    shared = torch.zeros(max(v.numel() for v in ckpt["model"].values()))
    ckpt["model"] = {k: shared[:v.numel()].view(v.shape) for k, v in ckpt["model"].items()}
    ckpt[seal.SEAL] = "0" * 64  # a seal is never reached: the weights are refused first
    torch.save(ckpt, dst)
    return dst


def repeated_string_copy(good: dict[str, Any], dst: Path, where: str) -> Path:
    """``good`` whose ``where`` ("src_vocab" or "meta") refers :data:`REFERENCES` times to one 1 MB string."""
    ckpt = copy.deepcopy(good)
    big = "x" * BIG_WORD
    if where == "meta":
        ckpt["meta"]["notes"] = [big] * REFERENCES
    else:
        ckpt[where] = [*ckpt[where], *([big] * REFERENCES)]
    ckpt[seal.SEAL] = "0" * 64  # what would be compared with the digest the reader makes
    torch.save(ckpt, dst)
    return dst


SHIPPED = Path(__file__).resolve().parent.parent / "checkpoints"
PAIR = ("m30k-en-fr-rnnsearch.pt", "m30k-en-fr-rnnencdec.pt")


def shipped_pair_copy(tmp_path_factory: pytest.TempPathFactory, name: str) -> Path:
    """A new folder holding a copy of the shipped Multi30k pair, for a test to add hostile files beside
    (the test is skipped without the shipped pair)."""
    if not all((SHIPPED / n).is_file() for n in PAIR):
        pytest.skip("the shipped Multi30k pair is not in checkpoints/")
    d = tmp_path_factory.mktemp(name)
    for n in PAIR:
        shutil.copy(SHIPPED / n, d / n)
    return d
