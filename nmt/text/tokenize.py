"""Moses tokenisation for en/fr/de through sacremoses (normalise, tokenise, detokenise).

The vocabulary's own words ``<unk>``, ``<s>`` and ``<pad>`` are kept whole: a model may output
them, and its detokenised output must tokenise back to the same tokens (forced decoding of a
translation reproduces it). Tokenising protects them (sacremoses' ``protected_patterns``);
detokenising treats them as ordinary words. ``</s>`` is not protected: typed text never ends a
sentence early.
"""

from __future__ import annotations

import re
from functools import cache

from sacremoses import MosesDetokenizer, MosesPunctNormalizer, MosesTokenizer

from nmt.text.subword import Segmenter
from nmt.text.truecase import Truecaser
from nmt.text.vocab import BOS, PAD, UNK

SUPPORTED_LANGS = ("en", "fr", "de")
LANGUAGE_NAMES = {"en": "English", "fr": "French", "de": "German"}  # what the app calls them
PROTECTED = (UNK, BOS, PAD)
# sacremoses compiles the patterns case-insensitively; (?-i:…) keeps "<UNK>" ordinary text.
_PROTECTED_PATTERNS = [f"(?-i:{re.escape(w)})" for w in PROTECTED]


@cache
def _moses(lang: str) -> tuple[MosesPunctNormalizer, MosesTokenizer, MosesDetokenizer]:
    if lang not in SUPPORTED_LANGS:
        raise ValueError(f"unsupported language {lang!r}; expected one of {SUPPORTED_LANGS}")
    return MosesPunctNormalizer(lang=lang), MosesTokenizer(lang=lang), MosesDetokenizer(lang=lang)


SPLITS = ("moses", "spaces")


class Tokenizer:
    """Turns raw text into model tokens and model tokens back into readable text, for one language.

    With a ``truecaser`` (checkpoints trained on truecased text, :mod:`nmt.text.truecase`) the tokens
    are truecased after tokenising and detruecased before detokenising. Imported models
    (:mod:`nmt.tools.importers`) may ask for ``lowercase`` tokens and for ``split="spaces"``: the text
    split at single spaces as it is (JoeyNMT's ``pretokenizer: none``), joined by spaces again."""

    def __init__(self, lang: str, truecaser: Truecaser | None = None, lowercase: bool = False,
                 split: str = "moses", subword: Segmenter | None = None) -> None:
        if split not in SPLITS:
            raise ValueError(f"split must be one of {SPLITS}, got {split!r}")
        self.lang = lang
        self.truecaser = truecaser
        self.lowercase, self.split = lowercase, split
        self.subword = subword  # a subword model's pieces (:mod:`nmt.text.subword`): words → pieces → words
        self._norm, self._tok, self._detok = _moses(lang)

    def tokenize(self, text: str) -> list[str]:
        """Normalised, Moses-tokenised words of one raw sentence (no HTML escaping), lower-cased when asked;
        a subword model's pieces of them."""
        words = self.words(text)
        return self.subword.encode(words) if self.subword is not None else words

    def words(self, text: str) -> list[str]:
        """The words of one raw sentence, before a subword model's pieces (what a word-level score compares)."""
        if self.split == "spaces":
            text = text.strip().lower() if self.lowercase else text.strip()
            return text.split(" ") if text else []
        tokens = self._moses_tokens(text)
        return [t.lower() for t in tokens] if self.lowercase else tokens

    def _moses_tokens(self, text: str) -> list[str]:
        text = self._norm.normalize(text.strip())
        if not text:
            return []
        # sacremoses refuses more than MAX_PROTECTED_TOKENS protected matches; past that (absurd
        # input) the words are split like any other text rather than failing.
        n_special = sum(text.count(w) for w in PROTECTED) if "<" in text else 0
        protect = _PROTECTED_PATTERNS if 0 < n_special <= self._tok.MAX_PROTECTED_TOKENS else None
        tokens = self._tok.tokenize(text, escape=False, aggressive_dash_splits=False, protected_patterns=protect)
        return self.truecaser.truecase(tokens) if self.truecaser is not None else tokens

    def detokenize(self, tokens: list[str]) -> str:
        """Readable sentence from model tokens.

        ``<unk>``, ``<s>`` and ``<pad>`` are detokenised as plain words (Moses would otherwise leave
        "L' <unk>" apart, which tokenises back to "L", "'"), then written back. A subword model's pieces
        are joined into words first."""
        if self.subword is not None:
            tokens = self.subword.decode(tokens)
        if self.split == "spaces":
            return " ".join(tokens)
        tokens = list(tokens) if self.truecaser is None else self.truecaser.detruecase(tokens)
        specials = [w for w in PROTECTED if w in tokens]
        if not specials:
            return self._detok.detokenize(tokens)
        marker = "qxprotectedqx"
        while any(marker in t for t in tokens):
            marker += "q"
        stand_in = {w: f"{marker}{k}" for k, w in enumerate(specials)}
        text = self._detok.detokenize([stand_in.get(t, t) for t in tokens])
        for w, placeholder in stand_in.items():
            text = text.replace(placeholder, w)
        return text
