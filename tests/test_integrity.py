"""A shipped checkpoint is refused when damaged wherever it is copied; a checkpoint with no digest says so."""

from __future__ import annotations

import logging
import shutil
from pathlib import Path

import pytest
import torch

from nmt.decoding.fusion import load_lm
from nmt.models import checkpoint, seal
from nmt.models.checkpoint import CheckpointError, identity_digest, read_checkpoint, weights_digest
from tests.tool_run import run_nmt
from ui.common import models

ROOT = Path(__file__).resolve().parent.parent
SHIPPED = sorted((ROOT / "checkpoints").rglob("*.pt"))  # the fusion LM and controller in checkpoints/fusion/ too


def _damaged_copy(src: Path, dst: Path, drop_digest: bool) -> Path:
    """``src`` saved to ``dst`` with one weight changed (and, if asked, its own digest deleted)."""
    raw = read_checkpoint(src, verify=False)  # the raw dict, loaded as safely as any checkpoint
    name = sorted(raw["model"])[0]
    raw["model"][name] = raw["model"][name].clone()
    raw["model"][name].view(-1)[0] += 1
    if drop_digest:
        raw.pop("weights_sha256", None)
    torch.save(raw, dst)
    return dst


def test_every_shipped_checkpoint_is_registered() -> None:
    """nmt/models/shipped.sha256 names each file of checkpoints/ by its identity, with its weights' digest."""
    lines = [ln.split("  ") for ln in (ROOT / "nmt" / "models" / "shipped.sha256").read_text().splitlines()]
    assert sorted(n for _, _, n in lines) == [p.relative_to(ROOT / "checkpoints").as_posix() for p in SHIPPED]
    assert len(SHIPPED) == 12
    for weights, identity, name in lines:
        ck = read_checkpoint(ROOT / "checkpoints" / name)
        assert identity_digest(ck) == identity and weights_digest(ck["model"]) == weights


def test_the_checkpoint_folder_fits_its_limits() -> None:
    """Each file in checkpoints/ ≤ 40 MB and the folder ≤ 250 MB (decimal megabytes, the lead's limits);
    the everyday model made room by storing the Europarl pair's vocabulary matrices as int8."""
    files = [p for p in (ROOT / "checkpoints").rglob("*") if p.is_file()]
    assert max(p.stat().st_size for p in files) <= 40_000_000
    assert sum(p.stat().st_size for p in files) <= 250_000_000


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


def test_damaged_copy_of_the_fusion_language_model_is_refused_without_its_own_digest(tmp_path: Path) -> None:
    """The shipped LM (checkpoints/fusion/) is registered by identity too: its digest deleted, still refused."""
    bad = _damaged_copy(ROOT / "checkpoints" / "fusion" / "tatoeba-fr-lm.pt", tmp_path / "lm.pt", drop_digest=True)
    with pytest.raises(CheckpointError, match=r"^lm\.pt is damaged: its weights do not match"):
        load_lm(bad)


def test_checkpoint_without_any_digest_says_so(tiny_ckpt: Path, tmp_path: Path,
                                               caplog: pytest.LogCaptureFixture) -> None:
    """A file with neither seal nor weights digest (written before both) loads only when asked for."""
    raw = torch.load(tiny_ckpt, map_location="cpu", weights_only=True)
    assert checkpoint.load(tiny_ckpt).verified  # it was written with its own digest
    del raw["weights_sha256"], raw[seal.SEAL]
    torch.save(raw, tmp_path / "nodigest.pt")
    with pytest.raises(CheckpointError, match=r"^nodigest\.pt is not sealed \(no SHA-256 of its contents\): seal it"):
        checkpoint.load(tmp_path / "nodigest.pt")
    with caplog.at_level(logging.WARNING, logger="nmt.models.checkpoint"):
        lm = checkpoint.load(tmp_path / "nodigest.pt", allow_unsealed=True)
    assert not lm.verified
    assert caplog.messages == ["nodigest.pt records no SHA-256 digest of its weights, so damage to it cannot be "
                               "detected"]
    assert models.unverified_note(lm) == (
        "nodigest.pt records no SHA-256 digest of its weights, so damage to the file cannot be detected: its "
        "translations may not be what it was trained to write.")


BUILD = "edited.pt does not hold a model this program can build: "
EDITS = {  # what was edited → the one-line message (written out by hand)
    "hidden_dim": (lambda r: r["config"].__setitem__("hidden_dim", 7),
                   BUILD + "its config does not fit its weights: decoder.C.weight is [192, 128] in the file but "
                   "[21, 14] by its config"),  # C: context 2n → the decoder's 3 gates of n; n = 64, then 7
    "vocabulary": (lambda r: r.__setitem__("src_vocab", r["src_vocab"][:10]),
                   BUILD + "its src vocabulary has 10 words but its model 74"),
    "language": (lambda r: r.__setitem__("tgt_lang", "xx"), BUILD + "unsupported language 'xx'; expected one of "
                 "('en', 'fr', 'de')"),
    "arch": (lambda r: r["config"].__setitem__("arch", "transformer"),
             BUILD + "arch must be one of ('rnnsearch', 'luong'), got 'transformer'"),
    "config": (lambda r: r.pop("config"), "edited.pt is not a usable checkpoint: it has no config"),
}


@pytest.mark.parametrize("edit", list(EDITS))
def test_edited_checkpoint_is_one_line_naming_the_file(edit: str, tiny_ckpt: Path, tmp_path: Path) -> None:
    """An edited config, vocabulary, language or architecture once gave 19-51-line tracebacks in the CLIs.
    Edited and saved as it is, the seal refuses it; sealed again (a writer of ours that went wrong), what
    does not fit is named."""
    change, reason = EDITS[edit]
    raw = torch.load(tiny_ckpt, map_location="cpu", weights_only=True)
    change(raw)
    path = tmp_path / "edited.pt"
    torch.save(raw, path)
    if edit != "config":  # without a config it is no checkpoint at all, whatever the seal says
        with pytest.raises(CheckpointError, match=r"^edited\.pt has been changed since it was written: its contents"):
            checkpoint.load(path)
    torch.save(seal.sealed(raw), path)
    with pytest.raises(CheckpointError) as err:
        checkpoint.load(path)
    assert str(err.value) == reason
    res = run_nmt(["translate", "--checkpoint", str(path)], "a dog .\n")
    assert res.returncode == 2 and res.stdout == ""
    assert res.stderr.strip().splitlines()[-1] == f"error: {err.value}" and "Traceback" not in res.stderr
