"""What a decodable model is: the one contract every decoder, view and tool of this project relies on.

Four classes decode: :class:`nmt.models.rnnsearch.RNNSearch` (RNNsearch and RNNencdec, Bahdanau et al. 2015),
:class:`nmt.models.luong.LuongNMT` (Luong et al. 2015), :class:`nmt.decoding.ensemble.Ensemble` (members' log p
averaged per step) and :class:`nmt.decoding.fusion.FusedModel` (a translation model with a language model,
Gulcehre et al. 2015). Each one satisfies :class:`DecodableModel`: it holds weights only, and one
batch of sentences goes through it as explicit state objects::

    enc   = model.encode(src, src_len)          # an EncoderLike: select / restrict / head
    state = model.initial_state(enc, bos)       # DecoderState(s, y_prev); s is a RecurrentState
    out   = model.step(enc, state, context)     # StepOutput: log p (N, K_y), Attended (c_i, e, α), next state

Greedy, beam, forced decoding, the stepper, surgery, attribution and the Look / Generate / Update view
all call that ``step``; none assembles a step from a model's parts. What a model can do beyond the
contract (record α, accept an edited α, split its step into phases, take a deep-fusion input, be
compiled, attend through a local window) is answered once by the model's :attr:`capabilities`, so
no caller asks ``isinstance`` or reads a name to find out.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Protocol, Self, runtime_checkable

import torch

from nmt.models.state import DecoderState, StepOutput

ARCHS = ("rnnsearch", "luong", "ensemble", "fused")


@dataclass(frozen=True)
class Capabilities:
    """What one model can do, beyond encode / initial_state / step; plain data, read by every caller.

    ``context_modes``: the modes ``step(context=…)`` accepts, the trained one first (RNNsearch weights
    also decode with c_i frozen to the summary, "fixed", or uniform α, "mean"). ``phases``: the order
    of Look / Generate / Update inside one step (Jean et al. 2015), or None where the step is not one
    model's (an ensemble, a fusion). ``alpha_editable``: ``step(alpha=…)`` replaces α in c_i
    (attention surgery). ``deep_fusion``: ``step(extra=…)`` adds a gated LM state to its deep output.
    ``compilable``: :func:`nmt.training.setup.compile_step` compiles its recurrent steps. ``local_window``:
    its α lies in a window around p_t (``half_width`` D; ``gaussian``: local-p's Gaussian of σ = D/2).
    ``embeddings_input``: ``encode_embeddings(x, src_len)`` re-encodes from source embeddings
    (gradient attributions) and ``step(rows=…)`` reads out only some rows."""

    arch: str
    context_modes: tuple[str, ...]
    phases: tuple[str, ...] | None = None
    alpha_editable: bool = False
    deep_fusion: bool = False
    compilable: bool = False
    local_window: bool = False
    half_width: int | None = None
    gaussian: bool = False
    embeddings_input: bool = False

    @property
    def trained_context(self) -> str:
        """The context mode it was trained in (its default)."""
        return self.context_modes[0]

    def has_alpha(self, context: str | None = None) -> bool:
        """Whether its steps record α in ``context`` (default: as trained): every mode but the fixed summary."""
        return (context or self.trained_context) != "fixed"

    def editable(self, context: str | None = None) -> bool:
        """Whether α can be edited at a step decoded in ``context`` (attention surgery): only with attention."""
        return self.alpha_editable and (context or self.trained_context) == "attention"

    def gaussian_half_width(self) -> int | None:
        """D of a local-p model (its α carries a Gaussian of σ = D/2 around p_t); None for any other."""
        return self.half_width if self.gaussian else None


@runtime_checkable
class RecurrentState(Protocol):
    """The decoder's recurrent state ``DecoderState.s``: a tensor s_{i-1} (N, n) for RNNsearch, or a state
    object (Luong's layers, an ensemble's members, a fusion's TM and LM) answering the same two calls the
    decoders make, so one beam search serves them all."""

    def index_select(self, dim: int, rows: torch.Tensor) -> Self:
        """Rows ``rows`` of the batch (dim 0 only: beams reordered, finished ones dropped)."""
        ...

    def norm(self, dim: int = -1) -> torch.Tensor:
        """‖s‖ per row (N,): what the trace records as the state's size."""
        ...


@runtime_checkable
class EncoderLike(Protocol):
    """One batch's encoder state: what ``step`` reads of the source. A single model's state also has
    ``memory`` (B, Tx, d), the vectors α weighs into c_i (RNNsearch's annotations h_j, Luong's h̄_s), and
    ``mask`` (B, Tx); an ensemble's holds its members' states instead."""

    def select(self, rows: torch.Tensor) -> Self:
        """Rows ``rows`` (sentences expanded into beams)."""
        ...

    def restrict(self, allowed: torch.Tensor | None) -> Self:
        """The same state with each sentence's candidate words ``allowed`` (B, K_y) (:mod:`nmt.models.candidates`)."""
        ...

    def head(self, n: int) -> Self:
        """The first ``n`` rows, as views (a batch that sheds finished rows from its end)."""
        ...


@runtime_checkable
class DecodableModel(Protocol):
    """A model every decoder can run (see the module docstring); ``cfg`` has ``context`` and ``to_dict()``."""

    cfg: Any

    @property
    def capabilities(self) -> Capabilities:
        """What it can do (:class:`Capabilities`), answered by the model itself."""
        ...

    def encode(self, src: torch.Tensor, src_len: torch.Tensor) -> EncoderLike:
        """The encoder state of a source batch (B, Tx) of lengths (B,)."""
        ...

    def initial_state(self, enc: Any, bos: torch.Tensor) -> DecoderState:
        """The state before the first target word, with y_0 = ``bos`` (N,)."""
        ...

    def step(self, enc: Any, state: DecoderState, context: str | None = None,
             alpha: torch.Tensor | None = None) -> StepOutput:
        """One target position: log p(y_i | y_<i, x), what it attended to, and the next state."""
        ...


def capabilities(model: object) -> Capabilities:
    """``model.capabilities``, with a one-line error for an object that is not a decodable model."""
    if not isinstance(model, DecodableModel):
        raise TypeError(f"{type(model).__name__} is not a decodable model (nmt.models.contract.DecodableModel)")
    return model.capabilities
