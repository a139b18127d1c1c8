"""Stepping: one token at a time, from an explicit state, with optional forced tokens."""

from __future__ import annotations

import copy
import dataclasses
import math

import torch

from nmt.decoding.recorder import StepView, encode_sources, finish_trace, new_trace
from nmt.decoding.sampling import SamplingRule, draw
from nmt.decoding.source import MAX_SOURCE_TOKENS, InputError, max_target_len, prepare_source
from nmt.decoding.toolkit import masked, rules_of
from nmt.decoding.trace import DecodeTrace, StepRecord
from nmt.models.candidates import CandidateSpec
from nmt.models.checkpoint import LoadedModel
from nmt.models.rnnsearch import DecoderState, StepOutput
from nmt.text.vocab import BOS_ID, EOS_ID, UNK_ID


class Stepper:
    """Decode one sentence a token at a time; any step may be forced or given its α; ``back`` undoes exactly.

    The stepper holds this sentence's states (the model holds none), so each user session keeps
    its own stepper while all share one model. Attention surgery is a loop over a stepper:
    :meth:`peek` shows the model's own next step, ``step(alpha=α')`` writes the next word with an
    edited α (:meth:`nmt.models.rnnsearch.RNNSearch.step`), and :meth:`fork` re-syncs a second stepper to the
    first ``at`` steps of this one, from where it can go another way.
    """

    def __init__(
        self, lm: LoadedModel, text: str, *, context: str | None = None, topk: int = 5,
        max_src_tokens: int = MAX_SOURCE_TOKENS, unk_replace: bool = False, pretokenized: bool = False,
        candidates: CandidateSpec | None = None, sampling: SamplingRule | None = None,
        toolkit_rules: bool = True,
    ) -> None:
        """``candidates``: write only words of the sentence's candidate list (:mod:`nmt.models.candidates`);
        ``sampling``: draw each word not forced by this rule (:mod:`nmt.decoding.sampling`) instead of the argmax.
        An imported model steps by its toolkit's rules (:mod:`nmt.decoding.toolkit`: length limit, tokens never
        written, never ``</s>`` first) unless ``toolkit_rules`` is False; a forced word is written as asked."""
        self.lm = lm
        self.sampling = sampling
        self.context = context or lm.config.context
        self.topk = topk
        self.unk_replace = unk_replace
        self.source = prepare_source(lm, text, max_src_tokens, pretokenized, candidates)
        self.trace = new_trace(lm, self.source, "step", self.context)
        self.rules = rules_of(lm) if toolkit_rules else None
        self.max_len = (self.rules.max_len if self.rules else max_target_len)(len(self.source.ids))
        with torch.no_grad():
            self.enc = encode_sources(lm, [self.source])
            bos = torch.full((1,), BOS_ID, dtype=torch.long, device=lm.device)
            self._states: list[DecoderState] = [lm.model.initial_state(self.enc, bos)]

    @property
    def done(self) -> bool:
        steps = self.trace.steps
        return bool(steps) and (steps[-1].token_id == EOS_ID or len(steps) >= self.max_len)

    @property
    def position(self) -> int:
        return len(self.trace.steps)

    def state_before(self, i: int) -> DecoderState:
        """The decoder state step i read (s_{i-1} and y_{i-1}), for 0 ≤ i ≤ :attr:`position`."""
        return self._states[i]

    @torch.no_grad()
    def peek(self, alpha: torch.Tensor | None = None) -> StepOutput:
        """The model's next step (with ``alpha`` (1, Tx) in place of its own α), without taking it."""
        return self.lm.model.step(self.enc, self._states[-1], self.context, alpha)

    @torch.no_grad()
    def step(
        self, force: str | int | None = None, *, alpha: torch.Tensor | None = None,
        energies: torch.Tensor | None = None,
    ) -> StepRecord:
        """Produce the next word: the argmax (or a draw of :attr:`sampling`), or ``force`` (a word or an id).

        ``alpha`` (1, Tx) replaces the model's α at this step (c_i, p(y_i) and s_i read it; later
        steps use the model's own again); ``energies`` (1, Tx) are recorded instead of the model's.
        """
        if self.done:
            raise InputError("Decoding has already ended; go back or reset to continue.")
        state = self._states[-1]
        out = self.peek(alpha)
        if energies is not None:
            out = dataclasses.replace(out, attended=dataclasses.replace(out.attended, energies=energies))
        sample = None
        lp = out.log_probs if self.rules is None else masked(self.lm, self.rules, out.log_probs, self.position)
        if force is None and self.sampling is not None:  # the same model step, another rule to pick from it
            token_id, sample = draw(lp[0], self.sampling, self.position, self.lm.tgt_vocab.itos)
            forced_ = False
        elif force is None:
            token_id, forced_ = int(lp[0].argmax()), False
        else:
            token_id = force if isinstance(force, int) else self.lm.tgt_vocab.stoi.get(force, UNK_ID)
            if not 0 <= token_id < len(self.lm.tgt_vocab):
                raise InputError(f"token id {token_id} is outside the target vocabulary")
            if self.source.candidates is not None and not math.isfinite(float(out.log_probs[0, token_id])):
                raise InputError(f"“{self.lm.tgt_vocab.itos[token_id]}” is not in this sentence's candidate "
                                 "list, so the model gives it p = 0: turn the candidate list off to force it.")
            forced_ = True
        rec = StepView(out, state.s, self.topk).record(
            self.lm, 0, self.position, token_id, forced_, len(self.source.ids))
        rec.sample = sample
        self.trace.steps.append(rec)
        self._states.append(DecoderState(out.state.s, torch.tensor([token_id], device=self.lm.device)))
        finish_trace(self.lm, self.trace, self.unk_replace)
        return rec

    def back(self) -> None:
        """Undo the last step (no-op at the start)."""
        if self.trace.steps:
            self.trace.steps.pop()
            self._states.pop()
            finish_trace(self.lm, self.trace, self.unk_replace)

    def fork(self, at: int | None = None) -> Stepper:
        """A second stepper re-synced to this one's first ``at`` steps (default: all), sharing the
        encoder state; stepping either leaves the other alone."""
        at = self.position if at is None else max(0, min(at, self.position))
        twin = copy.copy(self)
        twin.trace = dataclasses.replace(self.trace, steps=[copy.copy(r) for r in self.trace.steps[:at]])
        twin._states = list(self._states[: at + 1])
        finish_trace(self.lm, twin.trace, self.unk_replace)
        return twin

    def run(self) -> DecodeTrace:
        """Step greedily to the end."""
        while not self.done:
            self.step()
        return self.trace
