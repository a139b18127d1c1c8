"""Any file given as a checkpoint is refused in one line naming it, or loads; none gives a traceback.

The fuzz set (:mod:`tests.hostile_checkpoints`, seeded) is every first byte before text and before a
real checkpoint, truncations, and every field of the top level, the config and meta swapped for
values of every type, saved as they are and sealed again.
"""

from __future__ import annotations

import fnmatch
import time
from pathlib import Path

import pytest
import torch

from nmt.models import checkpoint, seal
from nmt.models.checkpoint import CheckpointError
from nmt.tools.seal import reseal
from tests import hostile_checkpoints as hc
from tests.tool_run import run_nmt
from ui.common import checkpoint_files

ROOT = Path(__file__).resolve().parent.parent
SEED = 36
# Sealed swaps that still make a usable model (written out by hand): meta is free-form (a table of
# anything plain), and a dropout of 0 is a valid dropout.
MAY_LOAD = ("swap-meta-*-sealed.pt", "swap-top-meta-11-sealed.pt", "swap-top-meta-12-sealed.pt",
            "swap-config-dropout-2-sealed.pt")


@pytest.fixture(scope="module")
def fuzz_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The seeded fuzz set, written to a folder."""
    good = hc.tiny_checkpoint()
    raw = hc._save(good)
    files = {**hc.kinds(good), **hc.first_bytes(raw, SEED), **hc.truncations(raw, SEED)}
    files.update({name: data for name, (data, _) in hc.type_swaps(good).items()})
    d = tmp_path_factory.mktemp("fuzz")
    for name, data in files.items():
        (d / name).write_bytes(data)
    return d


def test_the_fuzz_set_has_every_kind(fuzz_dir: Path) -> None:
    names = [p.name for p in fuzz_dir.iterdir()]
    assert len(names) >= 500
    assert sum(n.startswith("byte") for n in names) == 512  # 256 first bytes, before text and before a checkpoint
    assert sum(n.startswith("cut") for n in names) == 40
    # 9 top-level entries but the weights, 8 config and 5 meta fields; 16 values each, saved as they are and
    # sealed again: not the seal itself (16), nor bytes, over which no seal is made (the 7 top-level entries
    # but the format and the seal, and the 13 fields; with the format swapped the file is not ours, and kept)
    assert sum(n.startswith("swap-") for n in names) == 22 * 16 * 2 - 16 - (7 + 13)


@pytest.mark.solo  # a time bound on 500 loads: not beside another worker's tests
def test_every_fuzzed_file_is_refused_in_one_line_or_loads(fuzz_dir: Path) -> None:
    start = time.perf_counter()
    loaded, refused = [], 0
    for path in sorted(fuzz_dir.iterdir()):
        try:
            checkpoint.load(path)
        except CheckpointError as err:  # anything else fails the test with its traceback
            message = str(err)
            assert "\n" not in message and message.startswith(path.name + " ") and len(message) < 400, message
            refused += 1
            continue
        loaded.append(path.name)
    seconds = time.perf_counter() - start
    assert all(any(fnmatch.fnmatch(n, pattern) for pattern in MAY_LOAD) for n in loaded), loaded
    assert refused >= 500 and len(loaded) == 5 * 15 + 2 + 1  # meta fields: 15 sealed swaps each (no bytes)
    assert seconds < 60, f"{seconds:.1f} s"


def test_the_listing_names_each_unreadable_fuzzed_file(fuzz_dir: Path) -> None:
    """What the app's pickers would make of each file: a one-line reason, or usable."""
    usable = []
    for path, mtime in checkpoint_files.listed(fuzz_dir):
        reason = checkpoint_files.problem(path, mtime)
        if reason is None:
            usable.append(path.name)
        else:
            assert "\n" not in reason and path.name in reason
    assert all(any(fnmatch.fnmatch(n, pattern) for pattern in MAY_LOAD) for n in usable), usable
    assert len(usable) == 5 * 15 + 2 + 1


def _edited_shipped_copy(dst: Path) -> Path:
    """checkpoints/m30k-en-fr-rnnsearch.pt with one byte of one vocabulary word changed ("chien" → "Xhien")."""
    raw = bytearray((ROOT / "checkpoints" / "m30k-en-fr-rnnsearch.pt").read_bytes())
    at = raw.find(b"\x05\x00\x00\x00chien") + 4  # a pickled string: its length, then its bytes
    raw[at] = ord("X")
    dst.write_bytes(bytes(raw))
    return dst


@pytest.mark.parametrize("kind,why", [
    ("text.pt", "is not a valid checkpoint: it is truncated, damaged or not a PyTorch file"),
    ("random.pt", "is not a valid checkpoint: it is truncated, damaged or not a PyTorch file"),
    ("other-pickle.pt", "is not a valid checkpoint: it is truncated, damaged or not a PyTorch file"),
    ("foreign-dict.pt", "is not an RNNsearch Explorer checkpoint"),
    ("zip.pt", "is not a valid checkpoint: it is truncated, damaged or not a PyTorch file"),
    ("int-vocab.pt", "is not a usable checkpoint: its src_vocab holds 0 (int), not only words"),
    ("config-string.pt", "is not a usable checkpoint: its config is a str, not a table of settings"),
    ("meta-list.pt", "is not a usable checkpoint: its meta is a list, not a table"),
    ("edited-word.pt", "has been changed since it was written: its contents do not match the seal (SHA-256) "
                       "recorded in it, so it will not be used"),
    ("shipped-edited.pt", "has been changed: its weights are a shipped checkpoint's but the rest of it does not "
                          "match the one registered in nmt/models/shipped.sha256, so it will not be used"),
    ("none-word.pt", "is not a usable checkpoint: its tgt_vocab holds None (NoneType), not only words"),
    ("no-weights-digest.pt", "records no SHA-256 digest of its weights, so damage to it cannot be detected: allow "
                             "such files with --allow-unsealed (RNNSEARCH_ALLOW_UNSEALED=1)"),
    ("unsealed.pt", "is not sealed (no SHA-256 of its contents): seal it once with `python -m nmt seal "
                    "unsealed.pt` if you trust it, or allow unsealed files with --allow-unsealed "
                    "(RNNSEARCH_ALLOW_UNSEALED=1)"),
])
def test_translate_refuses_a_non_checkpoint_in_one_line(kind: str, why: str, tmp_path: Path) -> None:
    path = tmp_path / kind
    if kind == "shipped-edited.pt":
        _edited_shipped_copy(path)
    else:
        path.write_bytes(hc.kinds(hc.tiny_checkpoint())[kind])
    res = run_nmt(["translate", "--checkpoint", str(path)], "a dog .\n")
    assert (res.returncode, res.stdout, res.stderr) == (2, "", f"error: {kind} {why}\n")


def test_unsealed_files_load_when_asked_and_are_sealed_once(tmp_path: Path) -> None:
    path = tmp_path / "old.pt"
    path.write_bytes(hc.kinds(hc.tiny_checkpoint())["unsealed.pt"])
    assert checkpoint.load(path, allow_unsealed=True).verified  # its weights digest is still there
    res = run_nmt(["translate", "--checkpoint", str(path), "--allow-unsealed"], "a dog .\n")
    assert res.returncode == 0 and len(res.stdout.splitlines()) == 1
    assert reseal(path) == "old.pt: sealed (its weights matched their recorded digest)"
    assert reseal(path) == "old.pt: already sealed (content_sha256), left as it is"
    assert checkpoint.read_checkpoint(path)[seal.SEAL] == seal.content_digest(hc.tiny_checkpoint())


def test_resealing_leaves_shipped_files_as_they_are() -> None:
    path = ROOT / "checkpoints" / "m30k-en-fr-rnnencdec.pt"
    before = path.stat().st_mtime_ns
    assert reseal(path) == "m30k-en-fr-rnnencdec.pt: already sealed (nmt/models/shipped.sha256), left as it is"
    assert path.stat().st_mtime_ns == before


def test_a_damaged_unsealed_file_is_not_sealed(tmp_path: Path) -> None:
    """Sealing checks the weights first: a file whose weights no longer match their digest stays refused."""
    good = hc.tiny_checkpoint()
    good.pop(seal.SEAL)
    name = sorted(good["model"])[0]
    good["model"][name] = good["model"][name] + 1
    path = tmp_path / "broken.pt"
    path.write_bytes(hc._save(good))
    res = run_nmt(["seal", str(path)])
    assert res.returncode == 2 and res.stderr.startswith("error: broken.pt is damaged: its weights do not match")
    with pytest.raises(CheckpointError, match="is not sealed"):
        checkpoint.load(path)


def test_every_writer_seals() -> None:
    """make_checkpoint, int8_storage (the int8 script, the language model) and atomic_save (train.py,
    nmt.tools.export, the fusion script: every checkpoint written) give sealed dicts; nothing else calls torch.save
    but for the language model's cache of token ids, which is no checkpoint."""
    good = hc.tiny_checkpoint()
    assert good[seal.SEAL] == seal.content_digest(good)
    int8 = checkpoint.int8_storage(good)
    assert int8[seal.SEAL] == seal.content_digest(int8) != good[seal.SEAL]
    saved = []
    for folder in ("nmt", "scripts", "bench", "ui"):
        saved += [(p.relative_to(ROOT).as_posix(), line.strip()) for p in sorted((ROOT / folder).rglob("*.py"))
                  for line in p.read_text(encoding="utf-8").splitlines() if "torch.save(" in line]
    saved += [("train.py", ln.strip()) for ln in (ROOT / "train.py").read_text().splitlines() if "torch.save(" in ln]
    assert saved == [("nmt/models/checkpoint.py", "torch.save(seal.sealed(obj), tmp)  # a checkpoint of ours gets its "
                      "seal (nmt.models.seal); other dicts as given"),
                     ("nmt/training/lm_training.py", "torch.save(ids, tmp)")]  # written atomically (nmt.text.atomic)


def test_atomic_save_seals_a_checkpoint_and_nothing_else(tmp_path: Path) -> None:
    unsealed = {k: v for k, v in hc.tiny_checkpoint().items() if k not in (seal.SEAL, "weights_sha256")}
    checkpoint.atomic_save(unsealed, tmp_path / "a.pt")
    raw = checkpoint.read_checkpoint(tmp_path / "a.pt")
    assert raw[seal.SEAL] == seal.content_digest(raw) and raw["weights_sha256"] == checkpoint.weights_digest(
        raw["model"])
    checkpoint.atomic_save({"format": "other", "model": {}}, tmp_path / "b.pt")
    assert torch.load(tmp_path / "b.pt") == {"format": "other", "model": {}}


def test_an_edited_shipped_file_is_not_sealed_under_its_own_name(tmp_path: Path) -> None:
    """Its weights and a word changed (so neither the shipped identity nor the shipped weights match): under the
    shipped name, `nmt seal` refuses it in one line; under another name it is sealed (the name is the reason)."""
    ckpt = torch.load(ROOT / "checkpoints" / "m30k-en-fr-rnnsearch.pt", weights_only=True)
    ckpt["tgt_vocab"][ckpt["tgt_vocab"].index("chien")] = "Xhien"
    ckpt["model"]["decoder.W_o.bias"] = ckpt["model"]["decoder.W_o.bias"] + 1
    for name in ("m30k-en-fr-rnnsearch.pt", "mine.pt"):
        torch.save(ckpt, tmp_path / name)
    res = run_nmt(["seal", str(tmp_path / "m30k-en-fr-rnnsearch.pt")])
    assert (res.returncode, res.stdout, res.stderr) == (2, "", "error: m30k-en-fr-rnnsearch.pt is named like a shipped "
                                                        "checkpoint but is not that file (nmt/models/shipped.sha256): "
                                                        "it will not be sealed under that name\n")
    assert reseal(tmp_path / "mine.pt") == "mine.pt: sealed (it recorded no weights digest)"
