"""Each checkpoint file's ``meta`` (and config), read once per version of the file and kept for the process.

A page view asks for the meta of every listed file several times; reading one means unpickling it
(memory-mapped). Kept under (path, size, modification time in ns), a rewritten file is read again and
an unchanged one never: with hundreds of files in the Your-models folder a view reads none of them
(an earlier cache of 64 entries thrashed from 55 files on, re-reading every file on every view).
"""

from __future__ import annotations

import collections
import copy
import hashlib
import json
import os
import threading
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from nmt.models import checkpoint

UNREADABLE = "unreadable"  # the key under which read_meta keeps why a file cannot be read
META_ENTRIES = 100_000  # files kept: a folder of thousands of models is read once, not per view


@dataclass(frozen=True)
class _Entry:
    meta: dict[str, Any]  # meta, config and languages, or {UNREADABLE: why}
    vocabularies: str | None  # a digest of what ensemble members must share; None if unreadable


_entries: collections.OrderedDict[tuple[str, int, int], _Entry] = collections.OrderedDict()
_lock = threading.Lock()


def _entry(path: str) -> _Entry:
    """The file's entry: read once per (path, size, modification time in ns), which a rewritten file changes."""
    try:
        st_ = os.stat(path)
        key = (path, st_.st_size, st_.st_mtime_ns)
    except OSError as err:
        return _Entry({UNREADABLE: f"{Path(path).name} cannot be read ({err.strerror or err})"}, None)
    with _lock:
        entry = _entries.get(key)
        if entry is not None:
            _entries.move_to_end(key)
            return entry
    entry = _read(path)
    with _lock:
        _entries[key] = entry
        while len(_entries) > META_ENTRIES:
            _entries.popitem(last=False)
    return entry


def read_meta(path: str, mtime: float, keys: tuple[str, ...] | None = None) -> dict[str, Any]:
    """A checkpoint's ``meta`` dict (plus ``config`` and ``langs``) without reading its weights (memory-mapped),
    a copy; ``{UNREADABLE: why}`` for a file that is not a usable checkpoint. ``mtime`` (the listing's) is
    not the key: the file is stat'ed anew. ``keys``: only those entries (and ``UNREADABLE``) are copied, for
    the callers that read a few of a large meta on every listing of every file."""
    meta = _entry(path).meta
    if keys is not None:
        meta = {k: v for k, v in meta.items() if k in keys or k == UNREADABLE}
    return copy.deepcopy(meta)


def vocabulary_digest(path: str) -> str | None:
    """One digest of what ensemble members must share (languages, truecasers, vocabularies); None if unreadable."""
    return _entry(path).vocabularies


def _read(path: str) -> _Entry:
    try:
        ckpt = checkpoint.read_checkpoint(path, mmap=True)
        checkpoint.buildable(ckpt, path)  # a config that does not fit its weights: refused here, not on loading
    except Exception as err:  # not an intact, sealed checkpoint of ours: left out, and why (one line)
        why = str(err) if isinstance(err, checkpoint.CheckpointError) else f"{Path(path).name} ({type(err).__name__})"
        return _Entry({UNREADABLE: why}, None)
    meta = dict(ckpt.get("meta") or {})
    meta["config"] = dict(ckpt.get("config") or {})
    meta["langs"] = f"{ckpt.get('src_lang', '?')}→{ckpt.get('tgt_lang', '?')}"
    shared = [ckpt.get(k) for k in ("src_lang", "tgt_lang", "src_vocab", "tgt_vocab", "truecase")]
    return _Entry(meta, hashlib.sha256(json.dumps(shared, sort_keys=True, default=str).encode()).hexdigest())
