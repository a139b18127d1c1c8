"""Truecasing: sentence-initial capitals stop making unknown words (Moses truecase.perl via sacremoses).

A truecaser learns, from tokenised training text, each word's most frequent spelling *away from
the start of a sentence* (``My`` is learnt from the lower-case ``my`` seen mid-sentence, ``Tom``
from ``Tom``). Truecasing rewrites every word it knows to that spelling, so ``My brother Tom`` becomes
``my brother Tom`` and shares its ids with ``… my brother …``. Detruecasing (Moses
detruecase.perl) capitalises the first letter of each sentence-initial word of the model's output.

The model is stored in checkpoints as a plain ``{"best": {lowercase: spelling}}`` dict, or as
``{"spellings": "…\n…"}`` when each key is its spelling lower-cased (safe for
``torch.load(weights_only=True)``); :meth:`Truecaser.restrict` keeps only the entries whose
spelling is in the model's vocabulary, which changes no word id (see its docstring).
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Sequence
from pathlib import Path
from typing import Any

from sacremoses import MosesDetruecaser, MosesTruecaser

from nmt.text.vocab import BOS, PAD, UNK, Vocab

_SPECIALS = frozenset((UNK, BOS, PAD, "</s>"))
# sacremoses' truecaser re-splits the joined line, treating "<…>" as XML tags and "|" as factor
# separators; tokens holding those characters stand in as this (letterless) word while truecasing.
_ODD = ("<", ">", "|")
_STAND_IN = "@@"


class Truecaser:
    """A trained truecase model: ``best`` maps a lower-cased word to its usual spelling."""

    def __init__(self, best: dict[str, str]) -> None:
        self.best = dict(best)
        self._moses = MosesTruecaser()
        self._moses.model = {"best": self.best, "known": {}, "casing": {}}
        self._detrue = MosesDetruecaser()

    @classmethod
    def train(cls, sentences: Iterable[Sequence[str]]) -> Truecaser:
        """Learn from tokenised sentences (Moses' train-truecaser.perl: sentence starts not counted)."""
        moses = MosesTruecaser()
        model = moses.train((list(s) for s in sentences), possibly_use_first_token=False)  # streamed
        return cls(dict(model["best"]))

    def to_dict(self) -> dict[str, Any]:
        """Plain, ``weights_only``-loadable form stored in checkpoints: the spellings alone, one per line,
        when every entry's key is its spelling lower-cased (as training makes them; a tenth of the
        bytes of the dict for 30k words), else the ``best`` dict."""
        if all(k == v.lower() and "\n" not in v for k, v in self.best.items()):
            return {"spellings": "\n".join(self.best.values())}
        return {"best": dict(self.best)}

    @classmethod
    def from_dict(cls, d: dict[str, Any]) -> Truecaser:
        """Inverse of :meth:`to_dict`."""
        if isinstance(d.get("spellings"), str):
            return cls({w.lower(): w for w in d["spellings"].split("\n") if w})
        best = d.get("best")
        if not isinstance(best, dict) or not all(isinstance(k, str) and isinstance(v, str) for k, v in best.items()):
            raise ValueError("a truecase model needs a {'best': {str: str}} or {'spellings': str} dict")
        return cls(best)

    def restrict(self, vocab: Vocab | Iterable[str]) -> Truecaser:
        """Only the entries whose spelling is a vocabulary word.

        A dropped entry's word is out of vocabulary whatever its casing, so it maps to ``<unk>``
        with or without truecasing: word ids are unchanged, the stored model much smaller.
        (A dropped word keeps the case it was typed with, which is what ``<unk>`` copying shows.)
        """
        words = set(vocab.itos) if isinstance(vocab, Vocab) else set(vocab)
        return Truecaser({k: v for k, v in self.best.items() if v in words})

    def truecase(self, tokens: Sequence[str]) -> list[str]:
        """Tokens with every known word in its usual spelling; one output token per input token."""
        tokens = list(tokens)
        if not tokens:
            return []
        odd = {i for i, t in enumerate(tokens) if t in _SPECIALS or any(c in t for c in _ODD)}
        line = " ".join(_STAND_IN if i in odd else t for i, t in enumerate(tokens))
        out = self._moses.truecase(line)
        if len(out) != len(tokens):  # cannot happen for space-free tokens; never misalign the sentence
            return tokens
        return [tokens[i] if i in odd else w for i, w in enumerate(out)]

    def detruecase(self, tokens: Sequence[str]) -> list[str]:
        """Model output with sentence-initial words capitalised (Moses detruecase.perl)."""
        return detruecase(tokens, self._detrue)


def detruecase(tokens: Sequence[str], detrue: MosesDetruecaser | None = None) -> list[str]:
    """Capitalise the first letter of each sentence-initial word (``<unk>`` has none to change)."""
    tokens = list(tokens)
    if not tokens:
        return []
    out = (detrue or MosesDetruecaser()).detruecase(" ".join(tokens))
    return out if len(out) == len(tokens) else tokens


def load_models(prefix: str, src: str, tgt: str) -> dict[str, Truecaser]:
    """``{"src": …, "tgt": …}`` from ``PREFIX.{src}.json`` and ``PREFIX.{tgt}.json`` (written by
    ``scripts/prep_large_vocab.py``); no models for an empty prefix."""
    if not prefix:
        return {}
    return {side: Truecaser.from_dict(json.loads(Path(f"{prefix}.{lang}.json").read_text(encoding="utf-8")))
            for side, lang in (("src", src), ("tgt", tgt))}
