"""Moses tokenisation for en/fr/de through sacremoses (normalise, tokenise, detokenise)."""

from __future__ import annotations

from functools import cache

from sacremoses import MosesDetokenizer, MosesPunctNormalizer, MosesTokenizer

SUPPORTED_LANGS = ("en", "fr", "de")


@cache
def _moses(lang: str) -> tuple[MosesPunctNormalizer, MosesTokenizer, MosesDetokenizer]:
    if lang not in SUPPORTED_LANGS:
        raise ValueError(f"unsupported language {lang!r}; expected one of {SUPPORTED_LANGS}")
    return MosesPunctNormalizer(lang=lang), MosesTokenizer(lang=lang), MosesDetokenizer(lang=lang)


class Tokenizer:
    """Turns raw text into model tokens and model tokens back into readable text, for one language."""

    def __init__(self, lang: str) -> None:
        self.lang = lang
        self._norm, self._tok, self._detok = _moses(lang)

    def tokenize(self, text: str) -> list[str]:
        """Normalised, Moses-tokenised words of one raw sentence (no HTML escaping)."""
        text = self._norm.normalize(text.strip())
        if not text:
            return []
        return self._tok.tokenize(text, escape=False, aggressive_dash_splits=False)

    def detokenize(self, tokens: list[str]) -> str:
        """Readable sentence from model tokens."""
        return self._detok.detokenize(list(tokens))
