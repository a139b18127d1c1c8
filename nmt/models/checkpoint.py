"""Checkpoints: weights, config, vocabularies and provenance in one file, loaded safely.

A checkpoint is a plain dict (tensors, strings, numbers, lists, dicts) written with ``torch.save``
and read with ``torch.load(..., weights_only=True)``: loading never runs pickled code.

Storage: weights are fp32 (training runs), fp16 (``half``, shipped) or, opt-in, with the embedding
and output matrices as int8 with a per-row scale (``int8``, :mod:`nmt.models.quantize`; recorded in
``meta["storage"]``, dequantised to fp32 on load).

Integrity: every checkpoint written by :func:`make_checkpoint` records ``weights_sha256``, a digest
of its tensors (names, dtypes, shapes and bytes) *as stored* (for int8 storage: the int8 matrices and
their fp32 scales, taken before dequantising). Loading for decoding recomputes it and refuses a
file whose weights changed. Checkpoints shipped before the digest existed are listed in
``checkpoints/weights.sha256`` (``<digest>  <file name>``), which is checked the same way. The
shipped checkpoints are also registered in ``nmt/models/shipped.sha256`` by their *identity* (a digest of
everything but the weights: config, vocabularies, languages, meta), so a damaged copy of one is
refused wherever it is copied, under any name, and also when its own ``weights_sha256`` was deleted.
Everything else is sealed too (:mod:`nmt.models.seal`): every writer saves through :func:`atomic_save`,
which records ``content_sha256`` over all but the tensors, and every read checks it (a shipped file
is sealed by its registered identity). A file without a seal is refused unless unsealed files are
allowed (``--allow-unsealed``); so is one with no weights digest, which then loads with
:attr:`LoadedModel.verified` false and a warning on the ``nmt.models.checkpoint`` logger. Before anything
reads a file's parts, their types are checked and every tensor must hold its own elements
(:func:`nmt.models.seal.check_structure`, :mod:`nmt.models.storage`); before a model is built, that its
config fits its weights and its size cap (:func:`check_fits`), and its weights digest. Every failure is a
:class:`CheckpointError` with a one-line, plain message.
"""

from __future__ import annotations

import logging
import lzma
import math
import os
import pickle
import warnings
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import torch
from torch.torch_version import TorchVersion

from nmt.models import provenance, quantize, seal, storage
from nmt.models.contract import DecodableModel
from nmt.models.digests import MANIFEST as MANIFEST  # re-exported: the digests a checkpoint is checked against
from nmt.models.digests import SHIPPED as SHIPPED
from nmt.models.digests import identity_digest as identity_digest
from nmt.models.digests import (
    manifest_digest,
    registered_weights,
    shipped_digest,
    weights_digest,
)
from nmt.models.kinds import ModelDescription
from nmt.models.registry import build_model, describe_model
from nmt.models.rnnsearch import ModelConfig, RNNSearch
from nmt.models.seal import FORMAT as FORMAT  # re-exported: every writer names it as checkpoint.FORMAT
from nmt.models.shapes import on_meta, weight_shapes
from nmt.text import lexicon, subword
from nmt.text.atomic import atomic_path
from nmt.text.tokenize import Tokenizer
from nmt.text.truecase import Truecaser
from nmt.text.vocab import Vocab

LOG = logging.getLogger("nmt.models.checkpoint")


class CheckpointError(ValueError):
    """A file that is not a usable checkpoint; the message is one plain line naming the file."""


def atomic_save(obj: Any, path: str | Path) -> None:
    """Write ``obj`` so that ``path`` holds either the old or the new file, never half of one."""
    with atomic_path(path) as tmp:  # synced, then renamed (nmt.text.atomic)
        torch.save(seal.sealed(obj), tmp)  # a checkpoint of ours gets its seal (nmt.models.seal); other dicts as given


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
    int8_also: Sequence[str] = (),
) -> dict[str, Any]:
    """The checkpoint dict of a model; ``half`` stores weights as fp16 (for shipping).

    ``truecase`` ({"src": …, "tgt": …}) stores the truecase models of a model trained on truecased
    text (as plain dicts, under ``ckpt["truecase"]``); checkpoints without it tokenise as before.
    ``int8`` stores the embedding and output matrices as int8 (:func:`int8_storage`), and with them the
    2-D matrices named in ``int8_also``."""
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
    if not int8:
        return seal.sealed(ckpt)
    return int8_storage(ckpt, sorted(set(quantize.vocabulary_matrices(weights, ckpt["config"])) | set(int8_also)))


def int8_storage(ckpt: dict[str, Any], names: list[str] | None = None) -> dict[str, Any]:
    """A copy of a checkpoint dict with ``names`` (default: the embedding and output matrices) as int8.

    Each matrix gets one fp32 scale per row (:mod:`nmt.models.quantize`); ``weights_sha256`` is recomputed
    over the stored tensors, and ``meta["storage"]`` records the scheme and the matrices."""
    weights = ckpt["model"]
    names = quantize.vocabulary_matrices(weights, ckpt["config"]) if names is None else names
    stored = quantize.quantized(weights, names)
    meta = {**ckpt.get("meta", {}), "storage": {"int8": sorted(names), "scheme": quantize.SCHEME,
                                                "weights_sha256": "over the int8 matrices and their scales"}}
    return seal.sealed({**ckpt, "model": stored, "weights_sha256": weights_digest(stored), "meta": meta})


def truecasers(ckpt: dict[str, Any]) -> dict[str, Truecaser | None]:
    """The source and target truecasers a checkpoint records (``None`` for a side without one)."""
    stored = ckpt.get("truecase") or {}
    return {side: Truecaser.from_dict(stored[side]) if side in stored else None for side in ("src", "tgt")}


def read_checkpoint(path: str | Path, mmap: bool = False, verify: bool | None = None,
                    allow_unsealed: bool | None = None) -> dict[str, Any]:
    """The raw checkpoint dict, loaded without unpickling arbitrary objects.

    With ``mmap`` the weights stay on disk until touched (cheap when only ``meta`` is wanted).
    ``verify`` (default: not ``mmap``) checks the weights against their recorded digest; the seal
    of everything else (:mod:`nmt.models.seal`) is checked on every read. ``allow_unsealed`` (default:
    ``$RNNSEARCH_ALLOW_UNSEALED``) lets a file without a seal through.
    Raises :class:`CheckpointError` for anything that is not an intact checkpoint of ours.
    """
    name = Path(path).name
    ckpt = _unpickled(path, name, mmap)
    if not isinstance(ckpt, dict) or ckpt.get("format") != FORMAT or not isinstance(ckpt.get("model"), dict):
        raise CheckpointError(f"{name} is not an RNNsearch Explorer checkpoint")
    try:
        seal.check_structure(ckpt)
        content = seal.content_digest(ckpt)  # also refuses any value of a type no writer of ours stores
    except (ValueError, RecursionError) as err:
        raise CheckpointError(f"{name} is not a usable checkpoint: {str(err)[:200]}") from None
    allow = seal.unsealed_allowed(allow_unsealed)
    check_seal(ckpt, name, content, allow)
    if verify if verify is not None else not mmap:
        check_weights(ckpt, path, allow)
    elif not allow and not known_digests(ckpt, path):  # refused in listings too, not only on loading
        check_weights(ckpt, path, allow)
    return ckpt


def _unpickled(path: str | Path, name: str, mmap: bool) -> Any:
    """Whatever ``torch.load`` makes of the file with pickled code refused; any failure is one line."""
    try:
        size = os.path.getsize(path)
    except OSError as err:
        raise CheckpointError(f"{name} cannot be read ({err.strerror or err})") from None
    if size == 0:
        raise CheckpointError(f"{name} is empty (0 bytes), not a checkpoint")
    damaged = f"{name} is not a valid checkpoint: it is truncated, damaged or not a PyTorch file"
    try:
        # TorchVersion is a plain ``str`` subclass that early runs wrote into ``meta``; allow just it.
        with torch.serialization.safe_globals([TorchVersion]), warnings.catch_warnings():
            warnings.simplefilter("ignore")  # e.g. "Detected pickle protocol 114": the line below says it all
            return torch.load(path, map_location="cpu", weights_only=True, mmap=mmap)
    except pickle.UnpicklingError as err:
        if "GLOBAL" in str(err):  # an object whose loading would run code named by the file
            raise CheckpointError(f"{name} holds objects that can only be loaded by running code from the file; "
                                  "it is not a valid checkpoint and will not be loaded unsafely") from None
        raise CheckpointError(damaged) from None
    except Exception:  # any byte pattern: IndexError, struct.error, zip errors, MemoryError…
        raise CheckpointError(damaged) from None


def seal_of(ckpt: dict[str, Any]) -> str:
    """What seals a checkpoint: its own ``content_sha256``, the shipped registry, or "none"."""
    if seal.SEAL in ckpt:
        return seal.SEAL
    return "nmt/models/shipped.sha256" if shipped_digest(ckpt) is not None else "none"


def check_seal(ckpt: dict[str, Any], name: str, content: str | None = None, allow_unsealed: bool = False) -> None:
    """Refuse a checkpoint whose contents (all but the tensors, which ``weights_sha256`` covers) differ
    from its seal, or that has no seal unless ``allow_unsealed``. A shipped file is sealed by
    ``nmt/models/shipped.sha256``: its identity is registered there and its own weights digest, if it records
    one, must be the registered one (a training state is not part of any shipped file)."""
    if seal.SEAL in ckpt:
        if ckpt[seal.SEAL] != (content or seal.content_digest(ckpt)):
            raise CheckpointError(f"{name} has been changed since it was written: its contents do not match "
                                  "the seal (SHA-256) recorded in it, so it will not be used")
        return
    registered = shipped_digest(ckpt)
    if registered is not None and "train_state" not in ckpt and ckpt.get("weights_sha256", registered) == registered:
        return
    if registered is not None:
        raise CheckpointError(f"{name} has been changed: it does not match the shipped checkpoint registered in "
                              "nmt/models/shipped.sha256, so it will not be used")
    if registered_weights(ckpt):
        raise CheckpointError(f"{name} has been changed: its weights are a shipped checkpoint's but the rest of it "
                              "does not match the one registered in nmt/models/shipped.sha256, so it will not be used")
    if not allow_unsealed:
        raise CheckpointError(f"{name} is not sealed (no SHA-256 of its contents): seal it once with "
                              f"`python -m nmt seal {name}` if you trust it, or allow unsealed files with "
                              f"--allow-unsealed ({seal.UNSEALED_ENV}=1)")


def known_digests(ckpt: dict[str, Any], path: str | Path) -> set[str]:
    """Every digest known for a checkpoint's weights: its own, the shipped registry's, the folder manifest's."""
    return {d for d in (ckpt.get("weights_sha256"), shipped_digest(ckpt), manifest_digest(path)) if d}


def check_weights(ckpt: dict[str, Any], path: str | Path, allow_unsealed: bool = True) -> bool:
    """Compare the weights with every digest known for them (their own, the shipped registry's, the
    folder manifest's); raise :class:`CheckpointError` on a mismatch, or when none is known unless
    ``allow_unsealed`` (then False, with a warning)."""
    expected = known_digests(ckpt, path)
    if not expected and not allow_unsealed:
        raise CheckpointError(f"{Path(path).name} records no SHA-256 digest of its weights, so damage to it cannot "
                              f"be detected: allow such files with --allow-unsealed ({seal.UNSEALED_ENV}=1)")
    if not expected:
        LOG.warning("%s records no SHA-256 digest of its weights, so damage to it cannot be detected",
                    Path(path).name)
        return False
    if expected != {weights_digest(ckpt["model"])}:  # hashed once, however many digests are known
        raise CheckpointError(f"{Path(path).name} is damaged: its weights do not match the SHA-256 digest recorded "
                              "when it was written, so it will not be used")
    return True


@dataclass
class LoadedModel:
    """A ready-to-decode model with its vocabularies, tokenisers and provenance: the one object a session
    holds and every view asks (its model answers :class:`nmt.models.contract.DecodableModel`)."""

    model: DecodableModel  # RNNSearch, LuongNMT, Ensemble or FusedModel
    src_vocab: Vocab
    tgt_vocab: Vocab
    src_tok: Tokenizer
    tgt_tok: Tokenizer
    meta: dict[str, Any] = field(default_factory=dict)
    path: str = ""
    verified: bool = False  # its weights matched a known digest when it was loaded (see check_weights)
    dictionary: dict[str, str] = field(default_factory=dict)  # source word → best translation (nmt.text.lexicon)
    dictionary_file: str = ""  # where ``dictionary`` was read from ("" when it has none)
    # source word → its translations, best first (the same file; decoding candidate lists, nmt.models.candidates)
    translations: dict[str, tuple[str, ...]] = field(default_factory=dict)

    @property
    def config(self) -> ModelConfig:
        return self.model.cfg

    @property
    def device(self) -> torch.device:
        return next(self.model.parameters()).device

    @property
    def origin(self) -> str:
        """Where it came from, in one line (:func:`nmt.models.provenance.origin`): trained here on what, or imported."""
        return provenance.origin(self.meta)

    @property
    def subword(self) -> str | None:
        """Its subword kind ("bpe", "sentencepiece"; :mod:`nmt.text.subword`), None for a word-level model: whether
        its tokens are pieces of words, so that α may also be shown summed over words."""
        return provenance.subword_kind(self.meta)

    @property
    def description(self) -> ModelDescription:
        """What it is, in words and colour (:func:`nmt.models.registry.describe_model`), as decoded in its
        trained mode."""
        return describe_model(self.config.to_dict(), name=Path(self.path).stem)


def model_from_checkpoint(ckpt: dict[str, Any], device: str | torch.device = "cpu") -> RNNSearch:
    """An fp32 model in eval mode with the checkpoint's weights."""
    try:
        weights = quantize.dequantized(ckpt["model"])  # int8 storage → fp32; other dicts unchanged
    except ValueError as err:
        raise CheckpointError(f"the checkpoint's weights are not usable: {err}") from None
    model = on_meta(lambda: build_model(ckpt["config"], init=False))  # RNNSearch, or LuongNMT; no storage, no init
    # every weight is the file's (strict), in fp32, and the model's own: never a tensor of the dict read from the file
    stored = ckpt["model"]
    model.load_state_dict({k: v.to(torch.float32 if v.is_floating_point() else v.dtype, copy=stored.get(k) is v)
                           for k, v in weights.items()}, assign=True)
    return model.to(device).eval()


def load(path: str | Path, device: str | torch.device = "cpu", allow_unsealed: bool | None = None) -> LoadedModel:
    """Load a checkpoint file for decoding (refused when damaged or unsealed, see :func:`read_checkpoint`;
    ``verified`` false when no digest of its weights is known)."""
    allow = seal.unsealed_allowed(allow_unsealed)
    ckpt = read_checkpoint(path, verify=False, allow_unsealed=allow)
    buildable(ckpt, str(path))  # its config fits its weights and its size is within bounds: nothing allocated yet
    verified = check_weights(ckpt, path, allow)  # before a model is built and filled
    lm = loaded_from(ckpt, device, str(path))
    lm.verified = verified
    use_dictionary(lm, lexicon.beside(path))
    return lm


def use_dictionary(lm: LoadedModel, path: str | Path | None) -> None:
    """Give ``lm`` the dictionary in ``path`` (nmt.text.lexicon's file) for replacing ``<unk>`` and for
    candidate lists; None: none. A file that cannot be read is a :class:`CheckpointError` naming it."""
    if path is None:
        lm.dictionary, lm.dictionary_file, lm.translations = {}, "", {}
        return
    try:
        lm.translations, lm.dictionary = lexicon.tables(path)
    except (OSError, ValueError, EOFError, lzma.LZMAError) as err:
        raise CheckpointError(f"the dictionary {Path(path).name} cannot be read: {err}") from None
    lm.dictionary_file = str(path)


def loaded_from(ckpt: dict[str, Any], device: str | torch.device = "cpu", path: str = "") -> LoadedModel:
    """A ready-to-decode model from a checkpoint dict already read.

    A dict whose parts do not fit together (an edited config, vocabulary, language or architecture)
    is a :class:`CheckpointError` naming the file and what does not fit, not a traceback."""
    try:
        check_fits(ckpt)
        return _loaded_from(ckpt, device, path)
    except CheckpointError:
        raise
    except BUILD_ERRORS as err:
        raise _cannot_build(path, err) from None


def buildable(ckpt: dict[str, Any], path: str = "") -> None:
    """Raise the :class:`CheckpointError` that loading ``ckpt`` would, as far as it can be told without
    reading its weights (:func:`check_fits`): what a folder listing checks."""
    try:
        check_fits(ckpt)
    except BUILD_ERRORS as err:
        raise _cannot_build(path, err) from None


BUILD_ERRORS = (KeyError, TypeError, ValueError, RuntimeError, AttributeError, IndexError)


def _cannot_build(path: str, err: Exception) -> CheckpointError:
    name = Path(path).name or "the checkpoint"
    lines = [ln.strip() for ln in str(err).splitlines() if ln.strip()]
    reason = " ".join(lines[:2]) or type(err).__name__  # torch's state-dict error: its first mismatch
    if isinstance(err, KeyError):
        reason = f"it has no {err}"
    return CheckpointError(f"{name} does not hold a model this program can build: {reason[:300]}")


def check_fits(ckpt: dict[str, Any]) -> None:
    """Raise ValueError unless ``ckpt``'s vocabularies have its config's sizes, its languages are known
    and its config builds a model with exactly the stored weights' names and shapes. Nothing is
    allocated (the model is built on the meta device) and no weight is read."""
    for side in ("src", "tgt"):
        words, size = len(ckpt[f"{side}_vocab"]), ckpt["config"][f"{side}_vocab_size"]
        if words != size:
            raise ValueError(f"its {side} vocabulary has {words} words but its model {size}")
        Tokenizer(ckpt[f"{side}_lang"])  # an unsupported language: ValueError
    tokenizers(ckpt)  # an unknown tokenisation: ValueError
    shapes = weight_shapes(lambda: build_model(ckpt["config"], init=False))  # before any memory is taken for them
    need = 4 * sum(math.prod(s) for s in shapes.values())  # its fp32 weights
    if need > storage.model_bytes_cap():
        raise ValueError(f"its config asks for {need / 2**20:,.3f} MB of weights, more than the "
                         f"{storage.model_bytes_cap() / 2**20:,.3f} MB allowed (${storage.MODEL_BYTES_ENV})")
    stored = {k: tuple(v.shape) for k, v in ckpt["model"].items() if not k.endswith(quantize.SCALE_SUFFIX)}
    if shapes != stored:
        missing = sorted(set(shapes) ^ set(stored))
        if missing:
            raise ValueError(f"its config does not fit its weights: {missing[0]} is in only one of them")
        k = min(k for k in shapes if shapes[k] != stored[k])
        raise ValueError(f"its config does not fit its weights: {k} is {list(stored[k])} in the file but "
                         f"{list(shapes[k])} by its config")


def tokenizers(ckpt: dict[str, Any]) -> dict[str, Tokenizer]:
    """The source and target tokenisers a checkpoint asks for: Moses (and its truecasers), or what an
    imported model's ``meta["tokenisation"]`` records (``lowercase``, ``split``, ``subword``: the pieces'
    segmenter, :func:`nmt.text.subword.segmenter`; :mod:`nmt.tools.importers`)."""
    tc, how = truecasers(ckpt), ckpt.get("meta", {}).get("tokenisation") or {}
    if not isinstance(how, dict):
        raise ValueError("its meta's tokenisation is not a table")
    return {side: Tokenizer(ckpt[f"{side}_lang"], tc[side], lowercase=how.get("lowercase", False) is True,
                            split=how.get("split", "moses"),
                            subword=subword.segmenter(how.get("subword"), ckpt[f"{side}_vocab"]))
            for side in ("src", "tgt")}


def _loaded_from(ckpt: dict[str, Any], device: str | torch.device, path: str) -> LoadedModel:
    tok = tokenizers(ckpt)
    return LoadedModel(
        model=model_from_checkpoint(ckpt, device),
        src_vocab=Vocab(ckpt["src_vocab"]),
        tgt_vocab=Vocab(ckpt["tgt_vocab"]),
        src_tok=tok["src"],
        tgt_tok=tok["tgt"],
        meta=dict(ckpt.get("meta", {})),
        path=path,
    )
