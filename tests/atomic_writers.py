"""The writers that must survive ``kill -9``, each with deterministic contents to write and a reader that
says which version a file holds (or fails on a half-written one). ``python -m tests.atomic_writers KIND PATH``
writes versions 1, 2, 1, 2 … to PATH forever, printing ``start N`` (flushed) before each write: the kill
test's child.
"""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

import numpy as np

KINDS = ("dictionary", "checkpoint", "timeline", "lm-ids")


def payload(kind: str, version: int) -> Any:
    """Version ``version`` of what ``kind``'s writer writes: big enough that one write takes a while."""
    rng = np.random.default_rng(version)
    if kind == "dictionary":  # ~0.3 MB of text, xz-compressed: a few tenths of a second (the kill comes at 0.05 s)
        return {f"w{version}_{i}": [(f"t{j}_{(i * 7919 + j * 31 + version) % 10**6}", 10 - j) for j in range(3)]
                for i in range(8_000)}
    if kind == "checkpoint":  # a sealed checkpoint with 96 MB of weights (the seal's writer, atomic_save)
        import torch

        from tests import hostile_checkpoints as hc
        ckpt = hc.tiny_checkpoint()
        ckpt["meta"]["version"] = version
        ckpt["train_state"] = {"pad": torch.full((24_000_000,), float(version))}
        return ckpt
    if kind == "lm-ids":  # the fusion LM's token-id cache (nmt.training.lm_training): 400,000 ids, ~0.3 s a write
        return [[version]] + [[(i * 31 + j) % 6000 for j in range(50)] for i in range(8_000)]
    from nmt.training.timeline import Timeline  # 20 MB of α, compressed
    return Timeline({"version": version}, [{"update": version}],
                    {(u, 0): rng.random((50, 50)).astype(np.float32) for u in range(2_000)})


def write(kind: str, path: Path, value: Any) -> None:
    if kind == "dictionary":
        from nmt.text.lexicon import write_lexicon
        write_lexicon(value, path)
    elif kind == "checkpoint":
        from nmt.models.checkpoint import atomic_save
        atomic_save(value, path)
    elif kind == "lm-ids":
        from nmt.training.lm_training import save_ids
        save_ids(value, path)
    else:
        from nmt.training import timeline
        timeline.write(value, path)


def version_of(kind: str, path: Path) -> int:
    """Which version ``path`` holds, read in full by the project's own reader (a damaged file raises)."""
    if kind == "dictionary":
        from nmt.text.lexicon import read_lexicon
        lex = read_lexicon(path)
        version = int(next(iter(lex))[1:].partition("_")[0])
        assert lex == payload(kind, version)
        return version
    if kind == "checkpoint":
        from nmt.models.checkpoint import read_checkpoint
        ckpt = read_checkpoint(path)  # its seal and weights digest checked
        version = int(ckpt["meta"]["version"])
        assert float(ckpt["train_state"]["pad"][-1]) == version and ckpt["train_state"]["pad"].numel() == 24_000_000
        return version
    if kind == "lm-ids":
        from nmt.training.lm_training import load_ids
        ids = load_ids(path)
        assert ids == payload(kind, ids[0][0])
        return ids[0][0]
    from nmt.training import timeline
    tl = timeline.read(path)
    version = int(tl.header["version"])
    assert len(tl.alpha) == 2_000 and np.array_equal(tl.alpha[(1_999, 0)], payload(kind, version).alpha[(1_999, 0)])
    return version


def main(kind: str, path: str) -> None:
    values = [payload(kind, 1), payload(kind, 2)]
    n = 0
    while True:
        print(f"start {n}", flush=True)
        write(kind, Path(path), values[n % 2])
        n += 1


if __name__ == "__main__":
    main(sys.argv[1], sys.argv[2])
