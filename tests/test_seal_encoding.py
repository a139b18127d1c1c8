"""The seal's canonical encoding (nmt/models/seal.py) written out by hand, byte for byte, and what it covers.

The other seal tests edit a checkpoint and watch it be refused; none of them pinned the encoding
itself, so a seal that rounded floats, joined a vocabulary without each word's length, ignored the
order-free reading of dict keys, let ``True`` pass for ``1`` or left an entry out still passed them.
Here the expected digests are SHA-256 of bytes built in this file from the format the module's
docstring states: a type tag, lengths as little-endian 64-bit, floats as ``float.hex``.
"""

from __future__ import annotations

import hashlib
import struct

import pytest
import torch

from nmt.models import checkpoint, seal
from nmt.models.checkpoint import CheckpointError
from nmt.models.digests import NOT_IDENTITY, identity_digest
from tests import hostile_checkpoints as hc


def q(n: int) -> bytes:
    return struct.pack("<Q", n)


def s(text: str) -> bytes:
    data = text.encode()
    return b"s" + q(len(data)) + data


def test_a_small_checkpoint_by_hand() -> None:
    """{"format": 3, "meta": {"lr": 0.5, "ok": True, "x": None}, "src_vocab": ["a", "bc"]} (plus model and
    seal, left out): a dict of 3 entries in key order, each key then its value."""
    ck = {"model": {"w": torch.zeros(1)}, "src_vocab": ["a", "bc"], "format": 3, seal.SEAL: "0" * 64,
          "meta": {"x": None, "ok": True, "lr": 0.5}}
    want = (b"d" + q(3) + s("format") + b"i3;" + s("meta") + b"d" + q(3) + s("lr") + b"f" + b"0x1.0000000000000p-1;"
            + s("ok") + b"T" + s("x") + b"N" + s("src_vocab") + b"l" + q(2) + s("a") + s("bc"))
    assert seal.content_digest(ck) == hashlib.sha256(want).hexdigest()


def test_a_vocabulary_is_each_word_with_its_length() -> None:
    """["a b", "c"] and ["a", "b c"] hold the same characters: each word's own length tells them apart
    (a vocabulary fed as one joined text would not)."""
    one, two = {"src_vocab": ["a b", "c"]}, {"src_vocab": ["a", "b c"]}
    assert seal.content_digest(one) != seal.content_digest(two)
    want = b"d" + q(1) + s("src_vocab") + b"l" + q(2) + s("a b") + s("c")
    assert seal.content_digest(one) == hashlib.sha256(want).hexdigest()


def test_a_float_is_sealed_exactly_and_true_is_not_one() -> None:
    """A learning rate changed in its 17th digit changes the seal (no rounding); True and 1, 0 and 0.0
    are different values."""
    lr = 0.1
    assert seal.content_digest({"meta": {"lr": lr}}) != seal.content_digest({"meta": {"lr": lr + 2 ** -56}})
    assert seal.content_digest({"meta": {"x": True}}) != seal.content_digest({"meta": {"x": 1}})
    assert seal.content_digest({"meta": {"x": 0}}) != seal.content_digest({"meta": {"x": 0.0}})


def test_dict_order_does_not_matter_but_every_entry_does() -> None:
    """The same entries in another order: the same seal. Every entry but the weights and the seal is covered:
    meta, the vocabularies, the config, the training state, the weights digest."""
    a = {"meta": {"b": 1, "a": 2}, "config": {"h": 4}}
    b = {"config": {"h": 4}, "meta": {"a": 2, "b": 1}}
    assert seal.content_digest(a) == seal.content_digest(b)
    base = hc.tiny_checkpoint()
    digest = seal.content_digest(base)
    for key in ("meta", "src_vocab", "tgt_vocab", "config", "weights_sha256", "src_lang"):
        assert key in base, key
        edited = dict(base)
        edited[key] = "0" * 64 if key == "weights_sha256" else ([*base[key], "x"] if isinstance(base[key], list)
                                                                 else base[key] + "x" if isinstance(base[key], str)
                                                                 else {**base[key], "added": 1})
        assert seal.content_digest(edited) != digest, key
    assert seal.content_digest({**base, "model": {}}) == digest  # the weights have their own digest
    assert seal.content_digest({**base, seal.SEAL: "f" * 64}) == digest


def test_the_identity_of_a_shipped_file_leaves_out_only_weights_and_training_state() -> None:
    assert NOT_IDENTITY == ("model", "weights_sha256", "train_state")
    base = hc.tiny_checkpoint()
    assert identity_digest({**base, "train_state": {"x": 1}}) == identity_digest(base)
    assert identity_digest({**base, "meta": {**base["meta"], "x": 1}}) != identity_digest(base)


@pytest.mark.parametrize("value,allowed", [("1", True), (" 1 ", True), ("0", False), ("", False), ("yes", False)])
def test_unsealed_files_load_only_when_the_variable_is_one(value: str, allowed: bool, tmp_path,
                                                           monkeypatch: pytest.MonkeyPatch) -> None:
    """``RNNSEARCH_ALLOW_UNSEALED=0`` (or anything but 1) refuses an unsealed file as no variable does."""
    monkeypatch.setenv(seal.UNSEALED_ENV, value)
    assert seal.unsealed_allowed(None) is allowed
    path = tmp_path / "old.pt"
    path.write_bytes(hc.kinds(hc.tiny_checkpoint())["unsealed.pt"])
    if allowed:
        assert checkpoint.load(path).verified
    else:
        with pytest.raises(CheckpointError, match="is not sealed"):
            checkpoint.load(path)
    assert seal.unsealed_allowed(False) is False and seal.unsealed_allowed(True) is True  # a flag wins
