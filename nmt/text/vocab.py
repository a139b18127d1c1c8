"""Word vocabularies with a frequency shortlist (the paper keeps the 30k most frequent words)."""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable, Sequence

PAD, UNK, BOS, EOS = "<pad>", "<unk>", "<s>", "</s>"
SPECIALS = (PAD, UNK, BOS, EOS)
PAD_ID, UNK_ID, BOS_ID, EOS_ID = 0, 1, 2, 3


class Vocab:
    """Maps words to ids and back; every word outside the shortlist maps to ``<unk>``."""

    def __init__(self, itos: Sequence[str]) -> None:
        if tuple(itos[: len(SPECIALS)]) != SPECIALS:
            raise ValueError(f"vocabulary must start with {SPECIALS}")
        self.itos: list[str] = list(itos)
        self.stoi: dict[str, int] = {w: i for i, w in enumerate(self.itos)}
        if len(self.stoi) != len(self.itos):
            raise ValueError("vocabulary has duplicate entries")

    @classmethod
    def build(cls, sentences: Iterable[Sequence[str]], max_size: int, min_freq: int = 1) -> Vocab:
        """Shortlist of the ``max_size`` most frequent words seen at least ``min_freq`` times."""
        counts: Counter[str] = Counter()
        for sent in sentences:
            counts.update(sent)
        for s in SPECIALS:
            counts.pop(s, None)
        # Most frequent first; ties broken alphabetically so the vocabulary is deterministic.
        words = sorted((w for w, c in counts.items() if c >= min_freq), key=lambda w: (-counts[w], w))
        return cls(list(SPECIALS) + words[: max(0, max_size - len(SPECIALS))])

    def __len__(self) -> int:
        return len(self.itos)

    def __contains__(self, word: str) -> bool:
        return word in self.stoi

    def encode(self, tokens: Sequence[str], add_eos: bool = True) -> list[int]:
        """Ids of tokens (unknown words become ``<unk>``), with ``</s>`` appended by default."""
        ids = [self.stoi.get(t, UNK_ID) for t in tokens]
        return [*ids, EOS_ID] if add_eos else ids

    def decode(self, ids: Iterable[int], strip_specials: bool = True) -> list[str]:
        """Words of ids, stopping at ``</s>``; specials dropped unless asked to keep them."""
        out = []
        for i in ids:
            i = int(i)
            if i == EOS_ID and strip_specials:
                break
            if strip_specials and i in (PAD_ID, BOS_ID):
                continue
            out.append(self.itos[i])
        return out

    def to_list(self) -> list[str]:
        """Serialisable form, stored inside checkpoints."""
        return list(self.itos)
