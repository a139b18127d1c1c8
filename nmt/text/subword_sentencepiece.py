"""Sentencepiece pieces at runtime, for imported subword models (OpenNMT-py's ``sentencepiece`` transform).

An imported checkpoint records its sentencepiece model inside its (sealed) metadata, so that nothing
outside the checkpoint is read when it is used::

    meta["tokenisation"]["subword"] = {"kind": "sentencepiece", "model_b64": <base64 of the .model bytes>,
                                       "sha256": <hex SHA-256 of those bytes>}

:class:`nmt.text.tokenize.Tokenizer` applies it after its own word split (this app's Moses tokens, or the
text split at spaces): the words joined by single spaces are encoded into pieces, as OpenNMT-py's
transform encodes a line (``SentencePieceProcessor.encode(line, out_type=str)``: deterministic, the
best segmentation); pieces decode back into words (``decode_pieces``, then split at spaces) before the
words are detokenised. ``sentencepiece`` is imported only when such a model is used.
"""

from __future__ import annotations

import base64
import binascii
import hashlib
from collections.abc import Sequence
from typing import Any

KIND = "sentencepiece"


class SentencePiece:
    """One sentencepiece model: words → pieces and pieces → words (a :class:`nmt.text.subword.Segmenter`)."""

    kind = KIND

    def __init__(self, model: bytes) -> None:
        """``model``: the bytes of a sentencepiece ``.model`` file (a protocol buffer; parsing runs no code)."""
        try:
            import sentencepiece as spm  # only for models that use it
        except ImportError:
            raise ValueError("it needs the sentencepiece package (pip install -r requirements.txt)") from None

        self.sha256 = hashlib.sha256(model).hexdigest()
        try:
            self._sp = spm.SentencePieceProcessor(model_proto=model)
        except (RuntimeError, TypeError, OSError) as err:
            raise ValueError(f"not a sentencepiece model ({str(err).splitlines()[0][:120]})") from None

    def encode(self, words: Sequence[str]) -> list[str]:
        """The pieces of one sentence's words (joined by single spaces, as OpenNMT-py joins a line's tokens)."""
        return self._sp.encode(" ".join(words), out_type=str) if words else []

    def decode(self, pieces: Sequence[str]) -> list[str]:
        """The words that ``pieces`` spell (their text split at spaces)."""
        return self._sp.decode_pieces(list(pieces)).split() if pieces else []


def record(model: bytes) -> dict[str, str]:
    """The tokenisation record of a sentencepiece model (what ``meta["tokenisation"]["subword"]`` holds)."""
    return {"kind": KIND, "model_b64": base64.b64encode(model).decode("ascii"),
            "sha256": hashlib.sha256(model).hexdigest()}


def from_record(rec: dict[str, Any]) -> SentencePiece:
    """The model a record holds; ``ValueError`` (one line) when it is not one or its bytes do not match its digest."""
    if not isinstance(rec, dict) or rec.get("kind") != KIND:
        raise ValueError(f"not a {KIND} record")
    try:
        model = base64.b64decode(str(rec.get("model_b64", "")), validate=True)
    except (binascii.Error, ValueError):
        raise ValueError("its sentencepiece model is not base64") from None
    if hashlib.sha256(model).hexdigest() != rec.get("sha256"):
        raise ValueError("its sentencepiece model does not match the SHA-256 recorded beside it")
    return SentencePiece(model)
