"""The seal of a checkpoint: one digest over everything it holds, and the shape a checkpoint must have.

Every writer (``train.py``, ``nmt.tools.export``, the int8 script, the fusion and language-model scripts)
saves through :func:`nmt.models.checkpoint.atomic_save`, which adds ``content_sha256``: a SHA-256 of every
entry of the checkpoint dict but its weights (``model``) and the seal itself, in a canonical encoding
(type-tagged, keys sorted). That covers ``weights_sha256``, which in turn covers every tensor, so the
two digests together seal every value the file holds: one changed byte of a vocabulary word, of the
config or of ``meta`` is refused on loading, wherever the file lies and under any name.

The shipped checkpoints predate the seal and stay as committed; they are sealed by
``nmt/models/shipped.sha256``, which records each one's identity (everything but the weights) and its weights'
digest (:func:`nmt.models.digests.shipped_digest`). Any other file without a seal is refused unless the
caller asks for unsealed files explicitly (``--allow-unsealed``, or ``RNNSEARCH_ALLOW_UNSEALED=1``);
``python -m nmt seal FILE…`` (:func:`nmt.tools.seal.reseal`) seals such files once, after checking their weights.

:func:`check_structure` is what a checkpoint must look like before anything reads it (the types of
its config, vocabularies, languages and meta), so a malformed file is one plain line, never a
``TypeError`` deep in the program.
"""

from __future__ import annotations

import hashlib
import math
import os
import struct
from typing import Any

import torch

from nmt.models import storage
from nmt.models.digests import weights_digest

FORMAT = "rnnsearch-explorer/1"  # what a checkpoint dict of ours says it is (re-exported by nmt.models.checkpoint)
SEAL = "content_sha256"
UNSEALED_ENV = "RNNSEARCH_ALLOW_UNSEALED"
# Config entries that size a model: whole numbers (not bools), within these bounds.
SIZE_FIELDS = {"src_vocab_size": 4, "tgt_vocab_size": 4, "vocab_size": 4, "emb_dim": 1, "hidden_dim": 1,
               "attn_dim": 1, "maxout_dim": 1, "layers": 1, "max_positions": 1, "window": 0, "lm_hidden": 1,
               "readout_dim": 1}
MAX_SIZE = 10_000_000
TEXT_FIELDS = ("context", "arch", "score", "attention", "cell", "encoder", "bridge")
MAX_DEPTH = 64  # nesting deeper than this is not something a writer of ours produces


MAX_CONTENT_BYTES = 64 * 2**20  # text and numbers a seal covers (a 30,000-word vocabulary: about 0.3 MB)


class _Digest:
    """A SHA-256 fed one piece at a time, refusing (ValueError) more than :data:`MAX_CONTENT_BYTES` of
    anything but tensors, whose bytes are their own (:class:`nmt.models.storage.Ledger`): the cost of a
    digest is bounded by the file, however often it refers to one object."""

    def __init__(self) -> None:
        self.h = hashlib.sha256()
        self.fed = 0
        self.ledger = storage.Ledger()

    def update(self, data: bytes) -> None:
        self.fed += len(data)
        if self.fed > MAX_CONTENT_BYTES:
            raise ValueError(f"it holds more than {MAX_CONTENT_BYTES // 2**20} MB of text and numbers besides "
                             "its weights (or refers to one part of it many times)")
        self.h.update(data)

    def text(self, obj: str) -> None:
        if len(obj) > MAX_CONTENT_BYTES:  # before encoding it: a string is at most 4 bytes a character
            self.update(b"\0" * (MAX_CONTENT_BYTES + 1))
        data = obj.encode("utf-8", "surrogatepass")
        self.update(b"s" + struct.pack("<Q", len(data)))
        self.update(data)

    def tensor(self, t: torch.Tensor, where: str) -> None:
        self.ledger.add(where, t)  # before any copy: it holds its own elements, shared with no other
        self.h.update(f"X{t.dtype}|{tuple(t.shape)}|".encode())
        self.h.update(storage.tensor_bytes(t))


def _feed(h: _Digest, obj: Any, where: str, depth: int = 0) -> None:
    """Feed ``obj`` to ``h`` in a type-tagged canonical encoding; ValueError for a type a
    checkpoint never holds (``where`` names the entry)."""
    if depth > MAX_DEPTH:
        raise ValueError(f"{where} is nested too deeply")
    if obj is None or isinstance(obj, bool):
        h.update(b"N" if obj is None else (b"T" if obj else b"F"))
    elif isinstance(obj, int):
        h.update(b"i" + str(obj).encode() + b";")
    elif isinstance(obj, float):
        h.update(b"f" + obj.hex().encode() + b";")
    elif isinstance(obj, str):
        h.text(obj)
    elif isinstance(obj, (list, tuple)):
        h.update((b"l" if isinstance(obj, list) else b"t") + struct.pack("<Q", len(obj)))
        for i, item in enumerate(obj):
            if type(item) is str:  # a vocabulary: word by word, streamed
                h.text(item)
            else:
                _feed(h, item, f"{where}[{i}]", depth + 1)
    elif isinstance(obj, dict):
        h.update(b"d" + struct.pack("<Q", len(obj)))
        for key in sorted(obj, key=lambda k: (type(k).__name__, str(k))):
            if not isinstance(key, (str, int)) or isinstance(key, bool):
                raise ValueError(f"{where} has a key of type {type(key).__name__}")
            _feed(h, key, where, depth + 1)
            _feed(h, obj[key], f"{where}[{repr(key)[:60]}]", depth + 1)
    elif isinstance(obj, torch.Tensor):
        h.tensor(obj, where)
    else:
        raise ValueError(f"{where} holds a {type(obj).__name__}")


def content_digest(ckpt: dict[str, Any]) -> str:
    """SHA-256 of every entry of a checkpoint dict but ``model`` and the seal (canonically encoded)."""
    h = _Digest()
    _feed(h, {k: v for k, v in ckpt.items() if k not in ("model", SEAL)}, "the checkpoint")
    return h.h.hexdigest()


def sealed(ckpt: dict[str, Any]) -> dict[str, Any]:
    """``ckpt`` with its weights digest (when missing) and its seal set; other dicts unchanged."""
    if not isinstance(ckpt, dict) or ckpt.get("format") != FORMAT or not isinstance(ckpt.get("model"), dict):
        return ckpt
    out = dict(ckpt)
    out.setdefault("weights_sha256", weights_digest(out["model"]))
    out[SEAL] = content_digest(out)
    return out


def unsealed_allowed(flag: bool | None) -> bool:
    """Whether unsealed files may load: ``flag`` when given, else ``$RNNSEARCH_ALLOW_UNSEALED`` is 1."""
    return flag if flag is not None else os.environ.get(UNSEALED_ENV, "").strip() == "1"


def _check_config(config: Any) -> None:
    if config is None:
        raise ValueError("it has no config")
    if not isinstance(config, dict):
        raise ValueError(f"its config is a {type(config).__name__}, not a table of settings")
    for key, value in config.items():
        if not isinstance(key, str):
            raise ValueError(f"its config has a key of type {type(key).__name__}")
        if key in SIZE_FIELDS:
            if not isinstance(value, int) or isinstance(value, bool):
                raise ValueError(f"its config's {key} is a {type(value).__name__}, not a whole number")
            if not SIZE_FIELDS[key] <= value <= MAX_SIZE:
                raise ValueError(f"its config's {key} is {value}, outside {SIZE_FIELDS[key]}–{MAX_SIZE}")
        elif key == "dropout":
            if not isinstance(value, (int, float)) or isinstance(value, bool) or not 0 <= value < 1:
                raise ValueError(f"its config's dropout is {str(value)[:40]!r}, not a number in [0, 1)")
        elif key in TEXT_FIELDS and not isinstance(value, str):
            raise ValueError(f"its config's {key} is a {type(value).__name__}, not text")
        elif isinstance(value, float) and not math.isfinite(value):
            raise ValueError(f"its config's {key} is not a finite number")


def _is_digest(value: Any) -> bool:
    return isinstance(value, str) and len(value) == 64 and all(c in "0123456789abcdef" for c in value)


def _check_words(ckpt: dict[str, Any]) -> None:
    for key in ("src_vocab", "tgt_vocab"):
        if key not in ckpt:
            continue
        words = ckpt[key]
        if not isinstance(words, list) or not words:
            raise ValueError(f"its {key} is a {type(words).__name__}, not a list of words")
        bad = [w for w in words if not isinstance(w, str)]
        if bad:  # a list, so that a None among the words is found too
            raise ValueError(f"its {key} holds {repr(bad[0])[:20]} ({type(bad[0]).__name__}), not only words")
        if len(set(words)) != len(words):  # also a list that refers to one string many times (cheap: no copy)
            seen: set[str] = set()
            twice = next(w for w in words if w in seen or seen.add(w))
            raise ValueError(f"its {key} holds the word {twice[:20]!r} more than once")
    for key in ("src_lang", "tgt_lang"):
        if key in ckpt and not isinstance(ckpt[key], str):
            raise ValueError(f"its {key} is a {type(ckpt[key]).__name__}, not text")
    for key in ("weights_sha256", SEAL):
        if key in ckpt and not _is_digest(ckpt[key]):
            raise ValueError(f"its {key} is not a SHA-256 digest (64 hexadecimal digits)")
    for key in ("meta", "truecase", "train_state"):
        if key in ckpt and not isinstance(ckpt[key], dict):
            raise ValueError(f"its {key} is a {type(ckpt[key]).__name__}, not a table")


def check_structure(ckpt: dict[str, Any]) -> None:
    """Raise ValueError (a short reason) unless ``ckpt`` has the types every reader relies on."""
    bad_key = next((k for k in ckpt if not isinstance(k, str)), None)
    if bad_key is not None:
        raise ValueError(f"it has an entry named by a {type(bad_key).__name__}")
    model = ckpt["model"]
    if not model or not all(isinstance(k, str) and isinstance(v, torch.Tensor) for k, v in model.items()):
        raise ValueError("its weights are not a table of named tensors")
    storage.check_tensors((f"its weight {k[:60]}", v) for k, v in model.items())
    _check_config(ckpt.get("config"))
    _check_words(ckpt)
