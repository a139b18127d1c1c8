"""Subword models: the segmenter a checkpoint records, and α over words made of its pieces.

A checkpoint of a subword model records ``meta["tokenisation"]["subword"]``, one of

    {"kind": "bpe", "codes": <subword-nmt codes text>, "separator": "@@"}      (:mod:`nmt.text.subword_bpe`)
    {"kind": "sentencepiece", "model_b64": ..., "sha256": ...}                 (nmt/text/subword_sentencepiece.py)

:func:`segmenter` builds its segmenter for one side (dispatching on ``kind``); the tokeniser
(:class:`nmt.text.tokenize.Tokenizer`) splits words into pieces with it and joins pieces into words again.

Pieces into words, for the heatmap's "Words" view (:func:`word_spans`):

* BPE: a piece ending with the separator ("vél@@") continues into the next piece;
* sentencepiece: a piece starting with "▁" starts a new word; the others continue the word before.

Special symbols (``</s>``, ``<unk>`` …) are words of their own in both. Merging α (rows i: target
pieces, columns j: source pieces; each row a distribution over the source, Σ_j α_ij = 1):

    columns (source words J):  α'_iJ = Σ_{j ∈ J} α_ij            the weight the step gave the word's pieces
    rows    (target words I):  α''_IJ = (1/|I|) Σ_{i ∈ I} α'_iJ   the mean of the word's steps

Summing columns keeps each row a distribution (Σ_J α'_iJ = 1). Rows are averaged, not summed: a row
is one step's distribution over the source, and a target word written in three pieces read the
source three times; their sum would weigh 3, their mean is again a distribution (Σ_J α''_IJ = 1).
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from typing import Any, Protocol

import numpy as np

from nmt.text.subword_bpe import SEPARATOR, BpeSegmenter
from nmt.text.vocab import SPECIALS

SP_SPACE = "▁"  # sentencepiece's word-start mark (U+2581)
KINDS = ("bpe", "sentencepiece")


class Segmenter(Protocol):
    """Words → pieces and back for one side of a subword model."""

    kind: str

    def encode(self, words: Sequence[str]) -> list[str]: ...

    def decode(self, pieces: Sequence[str]) -> list[str]: ...


def segmenter(record: Any, vocabulary: Iterable[str]) -> Segmenter | None:
    """The segmenter ``meta["tokenisation"]["subword"]`` asks for (None for a word-level model), for a
    side whose model vocabulary is ``vocabulary`` (its specials are left out); ValueError for a record
    this program cannot apply."""
    if record is None:
        return None
    if not isinstance(record, dict):
        raise ValueError("its tokenisation's subword entry is not a table")
    kind = record.get("kind")
    if kind == "bpe":
        known = [w for w in vocabulary if w not in SPECIALS] if record.get("restrict_to_vocabulary") else None
        return BpeSegmenter(record.get("codes", ""), record.get("separator", SEPARATOR), known)
    if kind == "sentencepiece":  # OpenNMT-py's sentencepiece transform: one model for both sides
        from nmt.text import subword_sentencepiece

        return subword_sentencepiece.from_record(record)
    raise ValueError(f"its subword kind {kind!r} is not one of {KINDS}")


def word_spans(pieces: Sequence[str], kind: str, separator: str = SEPARATOR,
               specials: Iterable[str] = SPECIALS) -> list[tuple[int, int]]:
    """The pieces of each word as half-open index ranges [start, end), in order, covering every piece."""
    if kind not in KINDS:
        raise ValueError(f"kind must be one of {KINDS}, got {kind!r}")
    special = set(specials)
    spans: list[tuple[int, int]] = []
    start = 0
    for j, p in enumerate(pieces):
        if kind == "sentencepiece" and j > start and (p.startswith(SP_SPACE) or p in special):
            spans.append((start, j))  # p starts the next word
            start = j
        ends = p in special or not p.endswith(separator) if kind == "bpe" else p in special
        if ends:
            spans.append((start, j + 1))
            start = j + 1
    if start < len(pieces):  # BPE: a dangling "@@" at the end; sentencepiece: the last word
        spans.append((start, len(pieces)))
    return spans


def word_labels(pieces: Sequence[str], spans: Sequence[tuple[int, int]], kind: str,
                separator: str = SEPARATOR) -> list[str]:
    """Each word's text: its pieces joined, the separator (BPE) or the "▁" mark (sentencepiece) removed."""
    out = []
    for a, b in spans:
        if kind == "bpe":
            out.append("".join(p[: -len(separator)] if p.endswith(separator) else p for p in pieces[a:b]))
        else:
            out.append("".join(pieces[a:b]).replace(SP_SPACE, "") or SP_SPACE)
    return out


def sum_columns(alpha: np.ndarray, spans: Sequence[tuple[int, int]]) -> np.ndarray:
    """α (T_y × T_x over source pieces) → (T_y × words): each word's pieces' α summed."""
    a = np.asarray(alpha, dtype=float)
    return np.stack([a[:, s:e].sum(axis=1) for s, e in spans], axis=1) if spans else a[:, :0]


def average_rows(alpha: np.ndarray, spans: Sequence[tuple[int, int]]) -> np.ndarray:
    """α (target pieces × T_x) → (target words × T_x): each word's rows averaged (still distributions)."""
    a = np.asarray(alpha, dtype=float)
    return np.stack([a[s:e].mean(axis=0) for s, e in spans], axis=0) if spans else a[:0]
