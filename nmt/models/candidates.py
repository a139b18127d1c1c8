"""Decoding candidate lists for a large target vocabulary (Jean et al. 2015 §3.2).

At test time the full softmax over a very large vocabulary is costly, so each source sentence gets
its own candidate list: the K most frequent target words plus the K′ likeliest translations of
every source word from a word-alignment dictionary (:mod:`nmt.text.lexicon`); the paper uses K = 30k or
15k and K′ = 10 (or 20). ``<unk>``, ``</s>`` and the other specials are always in the list.

How it is carried, decided here once: :func:`nmt.decoding.source.prepare_source` builds a sentence's list
(:func:`build`) when a :class:`CandidateSpec` is given; :func:`nmt.decoding.recorder.encode_sources` turns
the batch's lists into a (B, K_y) mask of allowed words (:func:`allowed_mask`) on the encoder state,
which follows beams and finished sentences as the state's rows do; and the model's own ``step``
(:meth:`nmt.models.rnnsearch.RNNSearch.step`, :meth:`nmt.models.luong.LuongNMT.step`) computes its output layer for
the words of the batch's lists only and puts every other word's logit at −∞ before its softmax
(:func:`output_logits`), so p is renormalised over the list:

    p(y_i = k | y_<i, x) = exp(o_k) / Σ_{k′ ∈ V_x} exp(o_k′)   for k ∈ V_x, 0 otherwise.

Greedy, beam, the stepper, ensembles and fusion thus decode with a candidate list without a line of
their own. The trace records the list's make-up (:class:`CandidateList`): its size, K, K′, and which
source word's translations brought in each word that is not among the K most frequent, so a view can
list "the words this sentence may use" and mark a written word that came in through a source word.
As in Jean et al., only the rows of the output matrix for the union of the batch's lists are
multiplied: a step costs |union|·d instead of K_y·d there, the part of a step that grows with the
vocabulary (``bench/candidates.py`` times both).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field

import torch

from nmt.text.vocab import SPECIALS, Vocab

Translations = Mapping[str, Sequence[str]]  # source word → its likeliest translations, best first

MAX_K_TRANSLATIONS = 50


class CandidateError(ValueError):
    """A candidate-list setting that cannot be used (one line, fit to show as is)."""


@dataclass(frozen=True)
class CandidateSpec:
    """How each sentence's candidate list is made: the ``k_frequent`` most frequent target words plus
    the first ``k_translations`` dictionary translations of each source word (the paper: K′ = 10)."""

    k_frequent: int
    k_translations: int = 10

    def __post_init__(self) -> None:
        if self.k_frequent < 0:
            raise CandidateError(f"K (the most frequent words) must be 0 or more, not {self.k_frequent}")
        if not 0 <= self.k_translations <= MAX_K_TRANSLATIONS:
            raise CandidateError(f"K′ (translations per source word) must be 0 to {MAX_K_TRANSLATIONS}, "
                                 f"not {self.k_translations}")


@dataclass
class CandidateList:
    """One sentence's candidate list as its trace carries it (the ids themselves stay on the source)."""

    k_frequent: int
    k_translations: int
    size: int  # words in the list, the specials included
    vocab_size: int  # K_y, the whole target vocabulary
    # each word in the list that is not among the K most frequent → the source words whose
    # dictionary translations brought it in, in source order
    via: dict[str, list[str]] = field(default_factory=dict)

    @property
    def spec(self) -> CandidateSpec:
        """The setting it was made with (to decode the same sentence again with the same list)."""
        return CandidateSpec(self.k_frequent, self.k_translations)


def frequent_ids(k_frequent: int, vocab_size: int) -> range:
    """The specials and the K most frequent words: :class:`nmt.text.vocab.Vocab` lists words most frequent
    first after the specials, so they are ids 0 … len(SPECIALS) + K − 1."""
    return range(min(len(SPECIALS) + k_frequent, vocab_size))


def build(src_tokens: Sequence[str], translations: Translations, tgt_vocab: Vocab,
          spec: CandidateSpec) -> tuple[list[int], CandidateList]:
    """A sentence's candidate ids (sorted) and the record of how they were made."""
    ids = set(frequent_ids(spec.k_frequent, len(tgt_vocab)))
    via: dict[str, list[str]] = {}
    for w in src_tokens:
        for t in list(translations.get(w, ()))[: spec.k_translations]:
            k = tgt_vocab.stoi.get(t)
            if k is None:
                continue
            ids.add(k)
            if k >= len(SPECIALS) + spec.k_frequent and w not in via.setdefault(t, []):
                via[t].append(w)
    return sorted(ids), CandidateList(spec.k_frequent, spec.k_translations, len(ids), len(tgt_vocab), via)


def allowed_mask(lists: Sequence[Sequence[int] | None], vocab_size: int,
                 device: torch.device | str = "cpu") -> torch.Tensor | None:
    """(B, K_y) True where a word is in that sentence's list (a row without a list allows every word);
    None when no sentence has a list."""
    if all(ids is None for ids in lists):
        return None
    mask = torch.ones(len(lists), vocab_size, dtype=torch.bool, device=device)
    for b, ids in enumerate(lists):
        if ids is not None:
            mask[b] = False
            mask[b, torch.as_tensor(list(ids), dtype=torch.long, device=device)] = True
    return mask


def output_logits(layer: torch.nn.Linear, x: torch.Tensor, allowed: torch.Tensor | None) -> torch.Tensor:
    """The output layer's logits (N, K_y) for x (N, d): W x + b for every word without lists
    (``allowed`` None). With lists (§3.2), only the rows of W and b for the union U of the batch's
    lists are used (N·|U|·d multiplications instead of N·K_y·d; the whole layer when U is more than
    half of it) and every word outside a row's own list is −∞, so a softmax renormalises over that list."""
    if allowed is None:
        return layer(x)
    union = allowed.any(0).nonzero().squeeze(-1)  # (U,)  the words some row of the batch may use
    if 2 * union.numel() > layer.out_features:  # most of the layer: gathering its rows costs more than it saves
        return layer(x).masked_fill(~allowed, float("-inf"))
    bias = None if layer.bias is None else layer.bias[union]
    part = torch.nn.functional.linear(x, layer.weight[union], bias)  # (N, U)
    out = part.new_full((*part.shape[:-1], layer.out_features), float("-inf"))  # (N, K_y)
    out[..., union] = part
    return out.masked_fill(~allowed, float("-inf"))
