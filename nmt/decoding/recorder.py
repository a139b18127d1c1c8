"""The per-step recorder every way of decoding shares: one batched model step in, StepRecords out.

:func:`nmt.decoding.search.greedy` / :func:`~nmt.decoding.search.forced`, :func:`nmt.decoding.beam.beam_search` and
:class:`nmt.decoding.stepper.Stepper` all encode with :func:`encode_sources`, start a trace with
:func:`new_trace`, cut each step's records with :class:`StepView` and close the trace with
:func:`finish_trace`, so their traces are alike and a view can switch between them freely.
"""

from __future__ import annotations

from collections.abc import Sequence

import torch

from nmt.decoding.source import Source
from nmt.decoding.trace import DecodeTrace, StepRecord
from nmt.models.candidates import allowed_mask
from nmt.models.checkpoint import LoadedModel
from nmt.models.rnnsearch import EncoderState, StepOutput
from nmt.text.data import pad_ids
from nmt.text.vocab import EOS, EOS_ID


def encode_sources(lm: LoadedModel, sources: Sequence[Source]) -> EncoderState:
    """The encoder state of a batch of sources, padded to the longest, with their candidate lists
    (if any) as the mask of words each may write (:mod:`nmt.models.candidates`)."""
    src, src_len = pad_ids([s.ids for s in sources])
    enc = lm.model.encode(src.to(lm.device), src_len.to(lm.device))
    allowed = allowed_mask([s.candidate_ids for s in sources], len(lm.tgt_vocab), lm.device)
    return enc if allowed is None else enc.restrict(allowed)


def new_trace(lm: LoadedModel, src: Source, method: str, context: str) -> DecodeTrace:
    """An empty trace of ``src`` for one decoding ``method`` in one ``context`` mode."""
    return DecodeTrace(
        source=src.text, src_tokens=[*src.tokens, EOS], src_unk=src.unk, method=method,
        context=context, truncated=src.truncated,
        dictionary={w: lm.dictionary[w] for w in src.tokens if w in lm.dictionary},
        candidates=src.candidates,
    )


class StepView:
    """Host-side copies of one batched step, so records are cut from lists, not tensors."""

    def __init__(self, out: StepOutput, s_prev: torch.Tensor, topk: int) -> None:
        top_lp, top_id = out.log_probs.topk(topk, dim=-1)
        self.log_probs = out.log_probs
        self.top_p = top_lp.exp().tolist()
        self.top_id = top_id.tolist()
        att = out.attended
        self.alpha = None if att.alpha is None else att.alpha.tolist()
        self.energies = None if att.energies is None else att.energies.tolist()
        self.state_norm = s_prev.norm(dim=-1).tolist()
        self.context_norm = att.context.norm(dim=-1).tolist()
        self.position = None if att.position is None else att.position.tolist()  # local attention
        self.window = None if att.window is None else att.window.tolist()
        self.attended = att  # an ensemble's members answer att.member_steps (nmt.decoding.ensemble)

    def record(self, lm: LoadedModel, row: int, i: int, token_id: int, forced: bool, n_src: int) -> StepRecord:
        itos = lm.tgt_vocab.itos
        return StepRecord(
            i=i, token=itos[token_id], token_id=token_id,
            logprob=float(self.log_probs[row, token_id]), forced=forced,
            energies=None if self.energies is None else self.energies[row][:n_src],
            alpha=None if self.alpha is None else self.alpha[row][:n_src],
            topk=[(itos[t], p) for t, p in zip(self.top_id[row], self.top_p[row], strict=True)],
            state_norm=self.state_norm[row], context_norm=self.context_norm[row],
            position=None if self.position is None else self.position[row],
            window=None if self.window is None else self.window[row],
            members=self.attended.member_steps(row, token_id, n_src),
        )


def finish_trace(lm: LoadedModel, trace: DecodeTrace, unk_replace: bool) -> DecodeTrace:
    """Fill the output tokens and the detokenised translation of a trace."""
    trace.finished = bool(trace.steps) and trace.steps[-1].token_id == EOS_ID
    swaps = trace.unk_replacements() if unk_replace else None  # Jean et al. (2015), the trace's own rule
    trace.translation = lm.tgt_tok.detokenize(trace.output_words(swaps))
    return trace


def in_length_order(n: int, lengths: Sequence[int], batch_size: int) -> list[list[int]]:
    """Indices of ``n`` sentences in batches of ``batch_size``, longest first."""
    order = sorted(range(n), key=lambda i: -lengths[i])
    return [order[k : k + batch_size] for k in range(0, n, batch_size)]
