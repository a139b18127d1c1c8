"""Training with a very large target vocabulary: the softmax over a partition's words only.

Jean et al. (2015) §3: p(y_t | y_<t, x) needs a normaliser over all K target words, so the output
layer's cost grows with K. Their importance-sampling estimate takes the proposal Q uniform over a
subset V′ of the vocabulary, and then its correction term −log Q cancels: the model is trained with

    log p′(y_t) = w_tᵀφ + b_t − log Σ_{k ∈ V′} exp(w_kᵀφ + b_k),       y_t ∈ V′,

i.e. the ordinary cross-entropy of the softmax restricted to V′. V′ is chosen per *partition* of the
training data (§3, "in practice"): the target sentences are read in order and their distinct words
accumulated until there are τ of them; those sentences form one partition and V′ is their words.
Every minibatch comes from one partition. With V′ = the whole vocabulary the loss is the full
softmax's (tested), and at test time the full output layer (or a candidate list, §3.2 of the paper,
:mod:`nmt.models.candidates`) is used: only training changes.

Here ``<pad>`` (id 0) is always in V′ and sorts first, so the targets' positions in V′ keep padding
at 0 and :func:`nmt.models.rnnsearch.sequence_loss` (``ignore_index=0``) applies unchanged.
"""

from __future__ import annotations

import random
from collections.abc import Iterator, Sequence
from dataclasses import dataclass

import numpy as np
import torch
import torch.nn.functional as F
from torch import nn

from nmt.models.rnnsearch import sequence_loss
from nmt.text.data import Batch, Example, batches
from nmt.text.vocab import PAD_ID, Vocab


@dataclass
class Partition:
    """Examples ``start``…``end - 1`` of a sequence and V′, the sorted ids of their target words."""

    start: int
    end: int
    vocab: list[int]


def partition_corpus(targets: Sequence[Sequence[int]], tau: int) -> list[Partition]:
    """Consecutive partitions whose V′ (``<pad>`` and every id of their targets) has at most τ words.

    A sentence whose words would take V′ past τ starts the next partition (one sentence alone may
    exceed τ; it then forms its own partition)."""
    if tau < 2:
        raise ValueError("tau must leave room for <pad> and at least one word")
    parts: list[Partition] = []
    start, words = 0, {PAD_ID}
    for i, ids in enumerate(targets):
        new = set(ids) - words
        if i > start and len(words) + len(new) > tau:
            parts.append(Partition(start, i, sorted(words)))
            start, words = i, {PAD_ID}
            new = set(ids) - words
        words |= new
    if len(targets) > start:
        parts.append(Partition(start, len(targets), sorted(words)))
    return parts


class RestrictedLinear(nn.Linear):
    """An output layer that scores only ``candidates`` (V′) when they are set, all words otherwise.

    It shares its weight and bias with the layer it replaces (same parameter objects and names), so
    optimiser state, state dicts and checkpoints are those of the ordinary model."""

    candidates: torch.Tensor | None = None

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        if self.candidates is None:
            return super().forward(x)
        bias = None if self.bias is None else self.bias[self.candidates]
        return F.linear(x, self.weight[self.candidates], bias)  # w_kᵀφ + b_k, k ∈ V′


OUTPUT_LAYERS = ("decoder.W_o", "W_s")  # RNNsearch's W_o, Luong's W_s (eq. 6)


def install(model: nn.Module) -> RestrictedLinear:
    """Replace the model's output layer by a :class:`RestrictedLinear` sharing its parameters."""
    for path in OUTPUT_LAYERS:
        parent_path, _, name = path.rpartition(".")
        parent = getattr(model, parent_path, None) if parent_path else model
        old = getattr(parent, name, None)
        if isinstance(old, nn.Linear):
            if not isinstance(old, RestrictedLinear):
                new = RestrictedLinear(old.in_features, old.out_features, bias=old.bias is not None,
                                       device="meta")
                new.weight, new.bias = old.weight, old.bias
                setattr(parent, name, new)
            return getattr(parent, name)
    raise ValueError("the model has no known output layer to restrict")


def positions(tgt_out: torch.Tensor, vocab: torch.Tensor) -> torch.Tensor:
    """Each target id's index in the sorted V′ (padding → 0); every target must be in V′."""
    pos = torch.searchsorted(vocab, tgt_out)
    found = vocab[pos.clamp(max=len(vocab) - 1)] == tgt_out
    if not bool(found.all()):
        raise ValueError("a target word is missing from the partition's vocabulary V′")
    return pos


def sampled_loss(logits: torch.Tensor, tgt_out: torch.Tensor, vocab: torch.Tensor,
                 label_smoothing: float = 0.0) -> torch.Tensor:
    """Summed −log p′(y_t) of (B, T, |V′|) restricted logits, padding ignored (Jean et al. §3)."""
    return sequence_loss(logits, positions(tgt_out, vocab), label_smoothing)


def partition_batches(examples: Sequence[Example], src_vocab: Vocab, tgt_vocab: Vocab, batch_size: int,
                      tau: int, seed: int = 0) -> Iterator[tuple[Batch, torch.Tensor]]:
    """Minibatches with their partition's V′: the examples shuffled (``seed``), partitioned, and each
    partition batched as :func:`nmt.text.data.batches` does; partitions come in random order."""
    order = list(range(len(examples)))
    rng = random.Random(seed)
    rng.shuffle(order)
    shuffled = [examples[i] for i in order]
    parts = partition_corpus([np.asarray(e.encoded(src_vocab, tgt_vocab)[1]).tolist() for e in shuffled], tau)
    rng.shuffle(parts)
    for k, p in enumerate(parts):
        vocab = torch.tensor(p.vocab, dtype=torch.long)
        for batch in batches(shuffled[p.start : p.end], src_vocab, tgt_vocab, batch_size, seed=seed + k):
            yield batch, vocab


def epoch_batches(examples: Sequence[Example], src_vocab: Vocab, tgt_vocab: Vocab, batch_size: int, tau: int,
                  seed: int) -> list[tuple[Batch, torch.Tensor | None]]:
    """One epoch of (minibatch, V′): :func:`partition_batches` for τ > 0, else :func:`nmt.text.data.batches`
    with ``None`` (the full softmax)."""
    if tau > 0:
        return list(partition_batches(examples, src_vocab, tgt_vocab, batch_size, tau, seed))
    return [(b, None) for b in batches(examples, src_vocab, tgt_vocab, batch_size, shuffle=True, seed=seed)]
