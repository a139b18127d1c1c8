"""Decoding candidate lists for a large target vocabulary (Jean et al. 2015 §3.2).

At test time the full softmax over a very large vocabulary is costly, so each source sentence gets
its own candidate list: the K most frequent target words plus the K′ likeliest translations of
every source word from a word-alignment dictionary (:mod:`nmt.lexicon`); the paper uses K = 30k or
15k and K′ = 10 (or 20). ``<unk>``, ``</s>`` and the other specials are always in the list.

The decoder hook (a softmax restricted to the list at each step) is :func:`restrict_log_probs`; it
is not yet wired into :mod:`nmt.decoding`: the list and the restriction are ready for the large-vocabulary
model of issue 20 (the shipped models' 10k–16k-word softmax gains nothing from a list).
"""

from __future__ import annotations

from collections.abc import Sequence

import torch

from nmt.lexicon import Lexicon
from nmt.vocab import SPECIALS, Vocab


def candidate_list(src_tokens: Sequence[str], lexicon: Lexicon, tgt_vocab: Vocab, k_frequent: int,
                   k_translations: int) -> list[int]:
    """Sorted target ids: the specials, the ``k_frequent`` most frequent words, and the first
    ``k_translations`` dictionary translations of each source token that are vocabulary words.

    :class:`nmt.vocab.Vocab` lists words most frequent first after the specials, so the K most
    frequent words are ids ``len(SPECIALS)`` … ``len(SPECIALS) + K - 1``."""
    n = len(SPECIALS)
    ids = set(range(min(n + k_frequent, len(tgt_vocab))))
    for w in src_tokens:
        for t, _count in lexicon.get(w, [])[:k_translations]:
            if t in tgt_vocab:
                ids.add(tgt_vocab.stoi[t])
    return sorted(ids)


def restrict_log_probs(log_probs: torch.Tensor, candidates: Sequence[int] | torch.Tensor) -> torch.Tensor:
    """(…, K) log-probabilities renormalised over the candidates; every other word gets −inf."""
    idx = torch.as_tensor(candidates, dtype=torch.long, device=log_probs.device)
    masked = torch.full_like(log_probs, float("-inf"))
    masked[..., idx] = log_probs[..., idx]
    return torch.log_softmax(masked, dim=-1)
