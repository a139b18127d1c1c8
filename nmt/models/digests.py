"""Digests of checkpoints: of their weights, of their identity, and the shipped files' registries.

``weights_digest`` covers every tensor as stored; ``identity_digest`` everything else a shipped
checkpoint holds; ``nmt/models/shipped.sha256`` registers both for each shipped file (so a copy is
recognised under any name), and a folder's ``weights.sha256`` the weights of files that predate
their own digest. :mod:`nmt.models.checkpoint` checks them; :mod:`nmt.models.seal` builds on them.
"""

from __future__ import annotations

import hashlib
import json
from pathlib import Path
from typing import Any

import torch

from nmt.models.storage import tensor_bytes

MANIFEST = "weights.sha256"  # digests of shipped checkpoints that predate ``weights_sha256``
SHIPPED = Path(__file__).resolve().parent / "shipped.sha256"  # <weights digest>  <identity digest>  <name>
NOT_IDENTITY = ("model", "weights_sha256", "train_state")  # what identity_digest leaves out


def weights_digest(weights: dict[str, torch.Tensor]) -> str:
    """SHA-256 over every tensor's name, dtype, shape and bytes, in name order."""
    h = hashlib.sha256()
    for name in sorted(weights):
        t = weights[name]
        h.update(f"{name}|{t.dtype}|{tuple(t.shape)}|".encode())
        h.update(tensor_bytes(t))  # no copy when contiguous (a read file is checked first: nmt.models.storage)
    return h.hexdigest()


def identity_digest(ckpt: dict[str, Any]) -> str:
    """SHA-256 of everything in a checkpoint but its weights and training state (config, vocabularies,
    languages, meta, truecasers): the same for every copy of a file, whatever its name or place."""
    rest = {k: v for k, v in ckpt.items() if k not in NOT_IDENTITY}
    try:
        text = json.dumps(rest, sort_keys=True, default=str)
    except (TypeError, ValueError, RecursionError):  # keys of mixed types: no shipped file has them
        return ""
    return hashlib.sha256(text.encode()).hexdigest()


def shipped_digest(ckpt: dict[str, Any], registry: Path = SHIPPED) -> str | None:
    """The weights digest registered for a shipped checkpoint with ``ckpt``'s identity, if it is one."""
    try:
        lines = registry.read_text(encoding="utf-8").splitlines()
    except OSError:
        return None
    identity = identity_digest(ckpt)
    for line in lines:
        weights, _, rest = line.strip().partition("  ")
        if rest.partition("  ")[0] == identity:
            return weights
    return None


def registered_weights(ckpt: dict[str, Any], registry: Path = SHIPPED) -> bool:
    """Whether ``ckpt``'s weights are those of a shipped checkpoint (by their digest in the registry)."""
    try:
        known = {line.partition("  ")[0] for line in registry.read_text(encoding="utf-8").splitlines()}
    except OSError:
        return False
    return weights_digest(ckpt["model"]) in known


def shipped_names(registry: Path = SHIPPED) -> set[str]:
    """The file names of the shipped checkpoints (the last column of the registry)."""
    try:
        lines = registry.read_text(encoding="utf-8").splitlines()
    except OSError:
        return set()
    return {line.strip().split("  ")[-1] for line in lines if line.strip()}


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
