"""A shipped checkpoint is refused when damaged wherever it is copied; a checkpoint with no digest says so."""

from __future__ import annotations

import logging
import shutil
from pathlib import Path

import pytest
import torch

from nmt import checkpoint
from nmt.checkpoint import CheckpointError, identity_digest, read_checkpoint, weights_digest
from ui import models

ROOT = Path(__file__).resolve().parent.parent
SHIPPED = sorted((ROOT / "checkpoints").glob("*.pt"))


def _damaged_copy(src: Path, dst: Path, drop_digest: bool) -> Path:
    """``src`` saved to ``dst`` with one weight changed (and, if asked, its own digest deleted)."""
    raw = torch.load(src, map_location="cpu", weights_only=True)
    name = sorted(raw["model"])[0]
    raw["model"][name] = raw["model"][name].clone()
    raw["model"][name].view(-1)[0] += 1
    if drop_digest:
        raw.pop("weights_sha256", None)
    torch.save(raw, dst)
    return dst


def test_every_shipped_checkpoint_is_registered() -> None:
    """nmt/shipped.sha256 names each file of checkpoints/ by its identity, with its weights' digest."""
    lines = [ln.split("  ") for ln in (ROOT / "nmt" / "shipped.sha256").read_text().splitlines()]
    assert sorted(n for _, _, n in lines) == [p.name for p in SHIPPED] and len(SHIPPED) == 6
    for weights, identity, name in lines:
        ck = read_checkpoint(ROOT / "checkpoints" / name)
        assert identity_digest(ck) == identity and weights_digest(ck["model"]) == weights


@pytest.mark.parametrize("name,drop", [("m30k-en-fr-rnnsearch.pt", False), ("m30k-en-fr-rnnencdec.pt", False),
                                       ("europarl-en-fr-rnnsearch-50.pt", True)])
def test_damaged_copy_of_a_shipped_checkpoint_is_refused_anywhere(name: str, drop: bool, tmp_path: Path) -> None:
    """The two oldest files carry no digest of their own (only checkpoints/weights.sha256, by file name);
    the Europarl one has its own digest deleted: a renamed copy outside checkpoints/ is refused all the same."""
    bad = _damaged_copy(ROOT / "checkpoints" / name, tmp_path / "my-model.pt", drop)
    with pytest.raises(CheckpointError, match=r"^my-model\.pt is damaged: its weights do not match"):
        checkpoint.load(bad)
    good = tmp_path / "copy.pt"
    shutil.copy(ROOT / "checkpoints" / name, good)
    assert checkpoint.load(good).verified


def test_checkpoint_without_any_digest_says_so(tiny_ckpt: Path, tmp_path: Path,
                                               caplog: pytest.LogCaptureFixture) -> None:
    raw = torch.load(tiny_ckpt, map_location="cpu", weights_only=True)
    assert checkpoint.load(tiny_ckpt).verified  # it was written with its own digest
    del raw["weights_sha256"]
    torch.save(raw, tmp_path / "nodigest.pt")
    with caplog.at_level(logging.WARNING, logger="nmt.checkpoint"):
        lm = checkpoint.load(tmp_path / "nodigest.pt")
    assert not lm.verified
    assert caplog.messages == ["nodigest.pt records no SHA-256 digest of its weights, so damage to it cannot be "
                               "detected"]
    assert models.unverified_note(lm) == (
        "nodigest.pt records no SHA-256 digest of its weights, so damage to the file cannot be detected: its "
        "translations may not be what it was trained to write.")
