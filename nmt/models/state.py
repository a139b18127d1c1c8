"""Per-sentence state of the encoder-decoder models (never stored on a module).

The models of :mod:`nmt.models.rnnsearch` and :mod:`nmt.models.luong` hold weights only; everything that belongs to one
batch of sentences is one of these objects, passed in and returned, so one model serves many
users at once. Shapes use the notation of :mod:`nmt.models.rnnsearch` (B sentences, N decoder rows).
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import cached_property
from typing import Any

import torch


@dataclass
class EncoderState:
    """What the decoder reads from one batch of source sentences.

    annotations: (B, Tx, 2n)  h_j = [→h_j; ←h_j], zero on padding
    keys:        (B, Tx, n')  U_a h_j, precomputed once per sentence (App. A.1.2)
    mask:        (B, Tx)      True on real tokens (incl. ``</s>``), False on padding
    summary:     (B, 2n)      c = [→h_Tx; ←h_1], the RNNencdec fixed context
    s0:          (B, n)       s_0 = tanh(W_s ←h_1)
    src_len:     (B,)
    allowed:     (B, K_y)     True on each sentence's candidate words (nmt.models.candidates); None: every word
    """

    annotations: torch.Tensor
    keys: torch.Tensor
    mask: torch.Tensor
    summary: torch.Tensor
    s0: torch.Tensor
    src_len: torch.Tensor
    allowed: torch.Tensor | None = None

    @property
    def memory(self) -> torch.Tensor:
        """The vectors α weighs into c_i, by the name every encoder state answers: here h_j (B, Tx, 2n)."""
        return self.annotations

    def select(self, rows: torch.Tensor) -> EncoderState:
        """Rows ``rows`` of the batch (used to expand sentences into beams)."""
        return EncoderState(*(None if t is None else t.index_select(0, rows) for t in self._parts()))

    def head(self, n: int) -> EncoderState:
        """The first ``n`` rows, as views (a batch that sheds rows from its end)."""
        return EncoderState(*(None if t is None else t[:n] for t in self._parts()))

    def restrict(self, allowed: torch.Tensor | None) -> EncoderState:
        """This state with each sentence's candidate words ``allowed`` (B, K_y) (:mod:`nmt.models.candidates`)."""
        return EncoderState(*self._parts()[:-1], allowed)

    def _parts(self) -> tuple[torch.Tensor | None, ...]:
        return (self.annotations, self.keys, self.mask, self.summary, self.s0, self.src_len, self.allowed)


@dataclass
class DecoderState:
    """The decoder's recurrent state before step i: s_{i-1} (N, n) and y_{i-1} (N,)."""

    s: torch.Tensor
    y_prev: torch.Tensor

    def select(self, rows: torch.Tensor) -> DecoderState:
        return DecoderState(self.s.index_select(0, rows), self.y_prev.index_select(0, rows))


@dataclass
class Attended:
    """One decoder step's context: c_i (N, 2n), energies e_ij and weights α_ij (N, Tx) or None (a fixed c);
    a local attention's p_t (N,) and window (N, 2) (first and last source position inside both
    [p_t − D, p_t + D] and the sentence), None otherwise."""

    context: torch.Tensor
    energies: torch.Tensor | None
    alpha: torch.Tensor | None
    position: torch.Tensor | None = None
    window: torch.Tensor | None = None

    def member_steps(self, row: int, token_id: int, n_src: int) -> list[Any] | None:
        """Each ensemble member's share of this step at batch row ``row`` (:class:`nmt.decoding.trace.MemberStep`);
        None for a single model (:class:`nmt.decoding.ensemble.EnsembleAttended` answers)."""
        return None


@dataclass
class Forced:
    """A teacher-forced pass over one target: everything step i reads, for i = 0 … Ty − 1.

    s_prev (B, Ty, n) = s_{i-1};  y_emb (B, Ty, m) = E y_{i-1};  alpha, energies (B, Ty, Tx) or None
    (fixed context);  context (B, Ty, 2n) = c_i;  logits (B, Ty, K_y) (empty without the readout).
    """

    s_prev: torch.Tensor
    y_emb: torch.Tensor
    alpha: torch.Tensor | None
    energies: torch.Tensor | None
    context: torch.Tensor
    logits: torch.Tensor

    @cached_property
    def log_probs(self) -> torch.Tensor:
        """log p(· | y_<i, x) (B, Ty, K_y), in float32 whatever the weights' dtype."""
        return torch.log_softmax(self.logits.float(), dim=-1)


@dataclass
class StepOutput:
    """Result of one decoding step: log p(y_i | y_<i, x) (N, K_y), the context used, next state."""

    log_probs: torch.Tensor
    attended: Attended
    state: DecoderState


