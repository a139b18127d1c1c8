"""Parallel corpora: reading ``DIR/{split}.{lang}[.gz|.xz]``, length filtering, and minibatches.

Minibatches follow the paper's App. B.2: take a chunk of ~20 minibatches of sentence pairs, sort it
by length, split it into minibatches, and shuffle the order of minibatches.
"""

from __future__ import annotations

import gzip
import hashlib
import lzma
import random
import zlib
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np
import torch

from nmt.text.tokenize import Tokenizer
from nmt.text.vocab import BOS_ID, PAD_ID, Vocab


class CorpusError(ValueError):
    """A corpus file that cannot be read as UTF-8 text lines; the message names the file, not its folder."""


def corpus_file(data_dir: str | Path, split: str, lang: str) -> Path:
    """The file holding ``split`` in ``lang``: plain, gzipped or xz-compressed."""
    base = Path(data_dir) / f"{split}.{lang}"
    for candidate in (base, base.with_name(base.name + ".gz"), base.with_name(base.name + ".xz")):
        if candidate.exists():
            return candidate
    raise FileNotFoundError(
        f"no {split}.{lang}[.gz|.xz] in {data_dir} (see README: getting the data)"
    )


def read_lines(path: str | Path, limit: int | None = None) -> list[str]:
    """Lines of a UTF-8 text file (plain, .gz or .xz), without their newline."""
    path = Path(path)
    opener = {".gz": gzip.open, ".xz": lzma.open}.get(path.suffix, open)
    out: list[str] = []
    try:
        with opener(path, "rt", encoding="utf-8") as f:
            for line in f:
                out.append(line.rstrip("\n").rstrip("\r"))
                if limit is not None and len(out) >= limit:
                    break
    except (EOFError, gzip.BadGzipFile, lzma.LZMAError, zlib.error) as err:
        raise CorpusError(f"{path.name} is truncated or damaged after {len(out)} lines ({err or 'unexpected end'})"
                          ) from None
    except UnicodeDecodeError as err:
        raise CorpusError(f"{path.name} is not UTF-8 text (line {len(out) + 1}: {err.reason})") from None
    return out


def read_parallel(
    data_dir: str | Path, split: str, src: str, tgt: str, limit: int | None = None
) -> tuple[list[str], list[str]]:
    """Raw source and target sentences of one split; fails clearly if line counts differ."""
    s = read_lines(corpus_file(data_dir, split, src), limit)
    t = read_lines(corpus_file(data_dir, split, tgt), limit)
    if len(s) != len(t):
        raise ValueError(f"{split}: {len(s)} {src} lines but {len(t)} {tgt} lines")
    return s, t


def files_sha256(paths: Sequence[Path]) -> str:
    """One hash over the bytes of the training files, recorded in checkpoints."""
    h = hashlib.sha256()
    for p in paths:
        h.update(Path(p).read_bytes())
    return h.hexdigest()


@dataclass(frozen=True, eq=False)
class Ids:
    """A pair's ids (``</s>`` appended) under two vocabularies, kept so that every epoch's batches skip
    the vocabulary lookups (with 1.4M pairs those were ~80 % of building an epoch's batches)."""

    src_vocab: Vocab
    tgt_vocab: Vocab
    src: np.ndarray  # (T_x + 1,) int32
    tgt: np.ndarray  # (T_y + 1,) int32


@dataclass
class Example:
    """One tokenised sentence pair (``ids``: its ids under the training vocabularies, once encoded)."""

    src: list[str]
    tgt: list[str]
    ids: Ids | None = field(default=None, repr=False, compare=False)

    def encoded(self, src_vocab: Vocab, tgt_vocab: Vocab) -> tuple[Sequence[int], Sequence[int]]:
        """Source and target ids with ``</s>``: the stored ones when they are these vocabularies'."""
        c = self.ids
        if c is not None and c.src_vocab is src_vocab and c.tgt_vocab is tgt_vocab:
            return c.src, c.tgt
        return src_vocab.encode(self.src), tgt_vocab.encode(self.tgt)


def encode_examples(examples: Sequence[Example], src_vocab: Vocab, tgt_vocab: Vocab) -> None:
    """Store every pair's ids under these vocabularies (once per run, before its first epoch)."""
    for e in examples:
        e.ids = Ids(src_vocab, tgt_vocab, np.asarray(src_vocab.encode(e.src), dtype=np.int32),
                    np.asarray(tgt_vocab.encode(e.tgt), dtype=np.int32))


def tokenize_pairs(
    src_lines: Sequence[str], tgt_lines: Sequence[str], src_lang: str, tgt_lang: str
) -> list[Example]:
    """Moses-tokenise both sides of every pair."""
    ts, tt = Tokenizer(src_lang), Tokenizer(tgt_lang)
    return [Example(ts.tokenize(s), tt.tokenize(t)) for s, t in zip(src_lines, tgt_lines, strict=True)]


def filter_by_length(examples: Sequence[Example], max_len: int, min_len: int = 1) -> list[Example]:
    """Pairs whose both sides have between ``min_len`` and ``max_len`` tokens (RNNsearch-30/50)."""
    return [e for e in examples if min_len <= len(e.src) <= max_len and min_len <= len(e.tgt) <= max_len]


@dataclass
class Batch:
    """Padded id tensors of a minibatch.

    src: (B, Tx) source ids with ``</s>``;  src_len: (B,)
    tgt_in: (B, Ty) ``<s> y_1 … y_{T}``;   tgt_out: (B, Ty) ``y_1 … y_T </s>``;  tgt_len: (B,)
    """

    src: torch.Tensor
    src_len: torch.Tensor
    tgt_in: torch.Tensor
    tgt_out: torch.Tensor
    tgt_len: torch.Tensor

    @property
    def n_tgt_tokens(self) -> int:
        return int(self.tgt_len.sum())

    def to(self, device: torch.device | str) -> Batch:
        return Batch(*(t.to(device, non_blocking=True) for t in
                       (self.src, self.src_len, self.tgt_in, self.tgt_out, self.tgt_len)))


def pad_ids(seqs: Sequence[Sequence[int]], pad: int = PAD_ID) -> tuple[torch.Tensor, torch.Tensor]:
    """(B, T) right-padded tensor and (B,) lengths of id sequences."""
    lengths = np.fromiter(map(len, seqs), dtype=np.int64, count=len(seqs))
    out = np.full((len(seqs), int(lengths.max()) if len(seqs) else 0), pad, dtype=np.int64)
    for i, s in enumerate(seqs):  # numpy rows, not a tensor per sentence: an epoch of batches is built
        out[i, : len(s)] = s      # for every epoch, and this is most of its cost
    return torch.from_numpy(out), torch.from_numpy(lengths)


def make_batch(examples: Sequence[Example], src_vocab: Vocab, tgt_vocab: Vocab) -> Batch:
    """Tensorise a list of pairs."""
    ids = [e.encoded(src_vocab, tgt_vocab) for e in examples]
    src, src_len = pad_ids([s for s, _ in ids])
    tgt_out, tgt_len = pad_ids([t for _, t in ids])  # y_1 … y_T </s>
    # <s> y_1 … y_T: tgt_out shifted right by one; the shifted </s> falls on padding.
    tgt_in = torch.cat([torch.full_like(tgt_out[:, :1], BOS_ID), tgt_out[:, :-1]], dim=1)
    tgt_in.masked_fill_(torch.arange(tgt_in.shape[1]) >= tgt_len.unsqueeze(1), PAD_ID)
    return Batch(src, src_len, tgt_in, tgt_out, tgt_len)


def batches(
    examples: Sequence[Example],
    src_vocab: Vocab,
    tgt_vocab: Vocab,
    batch_size: int,
    shuffle: bool = True,
    seed: int = 0,
    chunk_batches: int = 20,
) -> Iterator[Batch]:
    """Minibatches sorted by length within chunks of ``chunk_batches`` batches (App. B.2)."""
    order = list(range(len(examples)))
    rng = random.Random(seed)
    if shuffle:
        rng.shuffle(order)
    chunk = batch_size * chunk_batches
    for start in range(0, len(order), chunk):
        idx = sorted(order[start : start + chunk], key=lambda i: (len(examples[i].src), len(examples[i].tgt)))
        groups = [idx[k : k + batch_size] for k in range(0, len(idx), batch_size)]
        if shuffle:
            rng.shuffle(groups)
        for g in groups:
            yield make_batch([examples[i] for i in g], src_vocab, tgt_vocab)
