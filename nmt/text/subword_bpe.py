"""BPE subwords (Sennrich et al. 2016) with the ``subword-nmt`` package, as JoeyNMT 2.3 applies them.

A model trained on BPE pieces reads and writes pieces such as ``vélo@@ s`` for "vélos": every piece
but a word's last ends with the separator (``@@``). The merge operations (subword-nmt's codes file)
are stored in the checkpoint (``meta["tokenisation"]["subword"]``, :mod:`nmt.text.subword`), so the app
splits words exactly as the model was trained, with subword-nmt's own ``apply_bpe.BPE`` (not a
re-implementation).

JoeyNMT 2.3's ``SubwordNMTTokenizer`` (joeynmt/tokenizers.py) does, after lower-casing the line:

    pieces = bpe.process_line(line).strip().split()          BPE(codes, separator="@@"), no dropout
    bpe.vocab = the model's vocabulary minus its specials   set_vocab: a piece the model does not know
                                                            is split back into smaller known pieces
    text = " ".join(pieces).replace("@@ ", "") minus a final "@@"      post_process (the separator)

:class:`BpeSegmenter` does the same, given the vocabulary of its side (``restrict``: JoeyNMT always
restricts; a record without it does not).
"""

from __future__ import annotations

import io
from collections.abc import Iterable, Sequence

KIND = "bpe"
SEPARATOR = "@@"


def check_codes(codes: str) -> None:
    """Raise ValueError unless ``codes`` is a subword-nmt codes text: an optional ``#version:`` line, then
    one merge a line, two symbols apart (subword-nmt itself would ``sys.exit`` on a bad line)."""
    if not isinstance(codes, str) or not codes.strip():
        raise ValueError("its BPE codes are not a non-empty text")
    lines = codes.rstrip("\n").split("\n")
    if lines[0].startswith("#version:"):
        version = lines[0].split()[-1]
        if not all(part.isdigit() for part in version.split(".")):
            raise ValueError(f"its BPE codes have an unreadable version line {lines[0][:40]!r}")
        lines = lines[1:]
    for n, line in enumerate(lines, 1):
        if len(line.strip("\r\n ").split(" ")) != 2:
            raise ValueError(f"its BPE codes' merge {n} is not two symbols: {line[:40]!r}")


class BpeSegmenter:
    """Words → BPE pieces and back, for one side of a model (see the module's equations)."""

    kind = KIND

    def __init__(self, codes: str, separator: str = SEPARATOR, vocabulary: Iterable[str] | None = None) -> None:
        check_codes(codes)
        if not isinstance(separator, str) or not separator or any(c.isspace() for c in separator):
            raise ValueError(f"its BPE separator {separator!r} is not a non-empty string without spaces")
        from subword_nmt.apply_bpe import BPE  # here: only a BPE model needs the package

        self.separator = separator
        self._bpe = BPE(io.StringIO(codes), separator=separator)
        if vocabulary is not None:  # JoeyNMT's set_vocab: only pieces the model knows
            self._bpe.vocab = set(vocabulary)

    def encode(self, words: Sequence[str]) -> list[str]:
        """The pieces of tokenised ``words`` (each word's pieces but the last end with the separator)."""
        return self._bpe.process_line(" ".join(words)).strip().split()

    def decode(self, pieces: Sequence[str]) -> list[str]:
        """The words of ``pieces``: a piece ending with the separator joins the next (a dangling one at
        the end loses its separator), as JoeyNMT's post-processing does."""
        text = " ".join(pieces).replace(self.separator + " ", "")
        if text.endswith(self.separator):
            text = text[: -len(self.separator)]
        return text.split()
