"""RNNsearch and RNNencdec: the model of Bahdanau, Cho & Bengio (ICLR 2015), Appendix A.2.

Notation follows the paper: m = embedding size, n = hidden units, n' = alignment-model units,
l = maxout units, Tx / Ty = source / target length, K_x / K_y = vocabulary sizes, B = batch.
Equation numbers refer to the paper. Biases the appendix omits "to make the equations less
cluttered" are kept.

One decoder step is written once, :meth:`RNNSearch.step` (eqs. 5-6 in :class:`AdditiveAttention`, the
GRU in :meth:`Decoder.recur`, the deep output in :meth:`Decoder.readout`): greedy, beam and forced
decoding, the stepper, attention surgery (``step(..., alpha=α')``: a given α replaces the
alignment model's) and attribution all call it or its parts (:meth:`RNNSearch.transition`,
:meth:`RNNSearch.log_probs`, :meth:`RNNSearch.teacher_force`, :meth:`RNNSearch.encode_embeddings`).

Modules hold weights only. Everything that belongs to one sentence (annotations h_j, the
precomputed keys U_a h_j, the decoder state s_i) lives in :class:`EncoderState` and
:class:`DecoderState` (:mod:`nmt.models.state`), which are passed in and returned, so one model serves
many users at once.

The ``context`` setting chooses what c_i is:

* ``attention`` (RNNsearch): c_i = Σ_j α_ij h_j, eqs. (5)-(6);
* ``fixed`` (RNNencdec): c_i = c = [→h_Tx; ←h_1] for every i: the encoder's two final states,
  the paper's "fix c_i to →h_Tx" widened to both directions; no α exists;
* ``mean``: uniform α, c = mean_j h_j (a second frozen mode).

It is set at training time and may be overridden at decode time (an untrained ablation).

Deviations, written down: PyTorch's default ``nn.Linear`` / embedding initialisation
(recurrent matrices orthogonal as in App. B.1) instead of the paper's Gaussian N(0, 0.01²);
optional dropout on embeddings and on the maxout layer (the paper used none for RNNsearch).
"""

from __future__ import annotations

from dataclasses import asdict, dataclass, fields
from typing import Any

import torch
import torch.nn.functional as F
from torch import nn

from nmt.models.candidates import output_logits
from nmt.models.contract import Capabilities
from nmt.models.state import Attended, DecoderState, EncoderState, Forced, StepOutput  # also imported from here
from nmt.text.vocab import PAD_ID

CONTEXT_MODES: tuple[str, ...] = ("attention", "fixed", "mean")


@dataclass
class ModelConfig:
    """Sizes and the context setting of one model."""

    src_vocab_size: int
    tgt_vocab_size: int
    emb_dim: int = 256  # m   (paper: 620)
    hidden_dim: int = 512  # n   (paper: 1000)
    attn_dim: int = 512  # n'  (paper: 1000)
    maxout_dim: int = 256  # l   (paper: 500)
    dropout: float = 0.0
    context: str = "attention"

    def __post_init__(self) -> None:
        if self.context not in CONTEXT_MODES:
            raise ValueError(f"context must be one of {CONTEXT_MODES}, got {self.context!r}")

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)

    @classmethod
    def from_dict(cls, d: dict[str, Any]) -> ModelConfig:
        names = {f.name for f in fields(cls)}
        return cls(**{k: v for k, v in d.items() if k in names})


# ----------------------------------------------------------------------------------------------
# Gated recurrent unit of the appendix (reset gate applied *before* U, as in Cho et al. 2014)
# ----------------------------------------------------------------------------------------------


def gru_update(
    h_prev: torch.Tensor, gx: torch.Tensor, u_zr: torch.Tensor, u_h: torch.Tensor,
    bmm: bool = False, parts: dict[str, torch.Tensor] | None = None,
) -> torch.Tensor:
    """One GRU transition h_i from h_{i-1} given the input projections gx = [W_z x; W_r x; W x].

    z = σ(W_z x + U_z h_{i-1});  r = σ(W_r x + U_r h_{i-1});
    h̃ = tanh(W x + U [r ∘ h_{i-1}]);  h_i = (1 − z) ∘ h_{i-1} + z ∘ h̃.
    With ``bmm`` the leading dimension stacks independent GRUs (the two encoder directions). A given
    ``parts`` dict receives the gates z, r and the candidate h̃ (:mod:`nmt.decoding.phases` shows them).
    """
    n = h_prev.shape[-1]
    mm = torch.bmm if bmm else torch.matmul
    gx_zr, gx_h = gx.split([2 * n, n], dim=-1)
    z, r = torch.sigmoid(gx_zr + mm(h_prev, u_zr)).chunk(2, dim=-1)  # (…, n) each
    h_tilde = torch.tanh(gx_h + mm(r * h_prev, u_h))  # (…, n)
    if parts is not None:
        parts.update(z=z, r=r, candidate=h_tilde)
    return h_prev + z * (h_tilde - h_prev)  # = (1 − z) ∘ h_{i-1} + z ∘ h̃


# ----------------------------------------------------------------------------------------------
# Encoder (A.2.1): bidirectional GRU
# ----------------------------------------------------------------------------------------------


class Encoder(nn.Module):
    """Bidirectional GRU over source embeddings; annotations h_j = [→h_j; ←h_j] (eq. 7 context)."""

    def __init__(self, vocab_size: int, emb_dim: int, hidden_dim: int, dropout: float, init: bool = True) -> None:
        super().__init__()
        n = hidden_dim
        self.embed = nn.Embedding(vocab_size, emb_dim, padding_idx=PAD_ID)  # E (shared by →, ←)
        # Direction d ∈ {→, ←}: [W_z; W_r; W] (m → 3n) with bias, [U_z; U_r] (n → 2n), U (n → n).
        self.w_in = nn.Parameter(torch.empty(2, emb_dim, 3 * n))
        self.b_in = nn.Parameter(torch.zeros(2, 1, 3 * n))
        self.u_zr = nn.Parameter(torch.empty(2, n, 2 * n))
        self.u_h = nn.Parameter(torch.empty(2, n, n))
        self.dropout = nn.Dropout(dropout)
        if not init:
            return
        bound = 1.0 / emb_dim**0.5
        nn.init.uniform_(self.w_in, -bound, bound)
        for d in range(2):
            nn.init.orthogonal_(self.u_zr.data[d, :, :n])
            nn.init.orthogonal_(self.u_zr.data[d, :, n:])
            nn.init.orthogonal_(self.u_h.data[d])

    def transition(self, h_prev: torch.Tensor, gx_t: torch.Tensor) -> torch.Tensor:
        """Both directions' states at one source position from the previous ones (2, B, n) and the input
        projections gx_t (2, B, 3n): eq. (7)'s GRU, one step (compiled by ``train.py --compile``)."""
        return gru_update(h_prev, gx_t, self.u_zr, self.u_h, bmm=True)

    def forward(self, x: torch.Tensor, src_len: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        """Annotations (B, Tx, 2n) and the mask (B, Tx) of padded source embeddings x = E x_j (B, Tx, m)."""
        B, Tx, _ = x.shape
        n = self.u_h.shape[-1]
        pos = torch.arange(Tx, device=x.device).unsqueeze(0)  # (1, Tx)
        mask = pos < src_len.unsqueeze(1)  # (B, Tx)
        # ← reads each sentence backwards *within its length*, so padding never enters a state.
        rev = torch.where(mask, src_len.unsqueeze(1) - 1 - pos, pos)  # (B, Tx), an involution
        x = self.dropout(x)  # (B, Tx, m)
        x_rev = x.gather(1, rev.unsqueeze(-1).expand_as(x))
        xs = torch.stack([x, x_rev])  # (2, B, Tx, m)
        gx = torch.einsum("dbtm,dmk->dbtk", xs, self.w_in) + self.b_in.unsqueeze(1)  # (2, B, Tx, 3n)
        h = xs.new_zeros(2, B, n)  # →h_0 = ←h_{Tx+1} = 0
        outs = []
        for gx_t in gx.unbind(2):  # unbind, not indexing: one gradient buffer, not Tx
            h = self.transition(h, gx_t)  # (2, B, n)
            outs.append(h)
        hs = torch.stack(outs, dim=2)  # (2, B, Tx, n)
        h_fwd = hs[0]
        h_bwd = hs[1].gather(1, rev.unsqueeze(-1).expand(B, Tx, n))  # undo the reversal
        annotations = torch.cat([h_fwd, h_bwd], dim=-1) * mask.unsqueeze(-1)  # (B, Tx, 2n)
        return annotations, mask


# ----------------------------------------------------------------------------------------------
# Alignment model (A.1.2): e_ij = v_aᵀ tanh(W_a s_{i-1} + U_a h_j)
# ----------------------------------------------------------------------------------------------


class AdditiveAttention(nn.Module):
    """The alignment model a(s_{i-1}, h_j), a one-hidden-layer MLP (eq. 6)."""

    def __init__(self, query_dim: int, key_dim: int, attn_dim: int) -> None:
        super().__init__()
        self.W_a = nn.Linear(query_dim, attn_dim, bias=False)  # n → n'
        self.U_a = nn.Linear(key_dim, attn_dim, bias=True)  # 2n → n'
        self.v_a = nn.Linear(attn_dim, 1, bias=False)  # n' → 1

    def keys(self, annotations: torch.Tensor) -> torch.Tensor:
        """U_a h_j for all j (B, Tx, n'): independent of i, so computed once per sentence."""
        return self.U_a(annotations)

    def energies(self, s_prev: torch.Tensor, keys: torch.Tensor) -> torch.Tensor:
        """e_ij = v_aᵀ tanh(W_a s_{i-1} + U_a h_j) (N, Tx) for decoder states s_{i-1} (N, n)   eq. (6)."""
        q = self.W_a(s_prev).unsqueeze(1)  # (N, 1, n')
        return self.v_a(torch.tanh(q + keys)).squeeze(-1)  # (N, Tx)

    def forward(
        self, s_prev: torch.Tensor, keys: torch.Tensor, annotations: torch.Tensor, mask: torch.Tensor,
        alpha: torch.Tensor | None = None,
    ) -> Attended:
        """Energies e_ij, weights α_ij and the context c_i for decoder states s_{i-1} (N, n).

        A given ``alpha`` (N, Tx) replaces the softmax of eq. (6) in c_i (attention surgery); the
        energies recorded are still the alignment model's.
        """
        energies = self.energies(s_prev, keys)  # (N, Tx)
        if alpha is None:
            alpha = self.weights(energies, mask)  # (N, Tx)   eq. (6)
        return Attended(context_of(alpha, annotations), energies.masked_fill(~mask, 0.0), alpha)

    @staticmethod
    def weights(energies: torch.Tensor, mask: torch.Tensor) -> torch.Tensor:
        """α_ij = exp(e_ij) / Σ_k exp(e_ik) over the source tokens k where ``mask`` holds (…, Tx)   eq. (6)."""
        return torch.softmax(energies.masked_fill(~mask, float("-inf")), dim=-1)


def context_of(alpha: torch.Tensor, annotations: torch.Tensor) -> torch.Tensor:
    """c_i = Σ_j α_ij h_j   eq. (5).

    α (N, Tx) over a batch's annotations (N, Tx, 2n) gives (N, 2n); α (…, Tx) over one sentence's
    annotations (Tx, 2n) gives (…, 2n) (many α rows, e.g. permuted or edited, against one sentence).
    """
    if annotations.dim() == 2:
        return alpha @ annotations
    return torch.bmm(alpha.unsqueeze(1), annotations).squeeze(1)


# ----------------------------------------------------------------------------------------------
# Decoder (A.2.2) with deep output and maxout
# ----------------------------------------------------------------------------------------------


class Decoder(nn.Module):
    """GRU decoder whose gates read E y_{i-1}, s_{i-1} and c_i, with a maxout deep output."""

    def __init__(self, cfg: ModelConfig, init: bool = True) -> None:
        super().__init__()
        m, n, l = cfg.emb_dim, cfg.hidden_dim, cfg.maxout_dim
        self.embed = nn.Embedding(cfg.tgt_vocab_size, m, padding_idx=PAD_ID)  # E (target)
        self.attention = AdditiveAttention(n, 2 * n, cfg.attn_dim)
        self.W_s = nn.Linear(n, n)  # s_0 = tanh(W_s ←h_1)
        self.W = nn.Linear(m, 3 * n)  # [W_z; W_r; W] E y_{i-1} (+ bias)
        self.C = nn.Linear(2 * n, 3 * n, bias=False)  # [C_z; C_r; C] c_i
        self.U_zr = nn.Parameter(torch.empty(n, 2 * n))  # [U_z; U_r] s_{i-1}
        self.U = nn.Parameter(torch.empty(n, n))  # U [r_i ∘ s_{i-1}]
        if init:
            nn.init.orthogonal_(self.U_zr.data[:, :n])
            nn.init.orthogonal_(self.U_zr.data[:, n:])
            nn.init.orthogonal_(self.U)
        # Deep output: t̃_i = U_o s_{i-1} + V_o E y_{i-1} + C_o c_i  (2l), t_i = maxout(t̃_i)  (l)
        self.U_o = nn.Linear(n, 2 * l, bias=False)
        self.V_o = nn.Linear(m, 2 * l, bias=True)
        self.C_o = nn.Linear(2 * n, 2 * l, bias=False)
        self.W_o = nn.Linear(l, cfg.tgt_vocab_size)  # p(y_i | …) ∝ exp(y_iᵀ W_o t_i)
        self.dropout = nn.Dropout(cfg.dropout)

    def initial_state(self, h_bwd_first: torch.Tensor) -> torch.Tensor:
        """s_0 = tanh(W_s ←h_1)   (B, n)."""
        return torch.tanh(self.W_s(h_bwd_first))

    def attend(
        self, s_prev: torch.Tensor, enc: EncoderState, mode: str, alpha: torch.Tensor | None = None
    ) -> Attended:
        """c_i for the given context mode (see module docstring); a given α (N, Tx) replaces the mode's."""
        if mode == "attention":
            return self.attention(s_prev, enc.keys, enc.annotations, enc.mask, alpha)
        if mode == "fixed":
            if alpha is not None:
                raise ValueError("the fixed context has no α to replace")
            return Attended(enc.summary, None, None)  # c_i = c, no alignment exists
        if mode == "mean":
            if alpha is None:
                dtype = enc.annotations.dtype
                alpha = enc.mask.to(dtype) / enc.src_len.unsqueeze(1).to(dtype)  # (N, Tx) uniform
            return Attended(context_of(alpha, enc.annotations), None, alpha)
        raise ValueError(f"unknown context mode {mode!r}")

    def recur(
        self, s_prev: torch.Tensor, wy: torch.Tensor, context: torch.Tensor,
        parts: dict[str, torch.Tensor] | None = None,
    ) -> torch.Tensor:
        """s_i from s_{i-1}, the projected previous word wy = W E y_{i-1} + b (N, 3n), and c_i
        (``parts``: see :func:`gru_update`)."""
        return gru_update(s_prev, wy + self.C(context), self.U_zr, self.U, parts=parts)

    def readout(
        self, s_prev: torch.Tensor, y_emb: torch.Tensor, context: torch.Tensor, extra: torch.Tensor | None = None,
        parts: dict[str, torch.Tensor] | None = None, allowed: torch.Tensor | None = None,
    ) -> torch.Tensor:
        """Output logits (…, K_y) from s_{i-1}, E y_{i-1} and c_i; any leading dims. With candidate lists
        (``allowed`` (N, K_y)), W_o's rows for the batch's lists only, −∞ elsewhere (:mod:`nmt.models.candidates`).

        ``extra`` (…, 2l) is one more input added to t̃_i (deep fusion's gated LM state, :mod:`nmt.decoding.fusion`).
        A given ``parts`` dict receives t̃_i, t_i and the logits (:mod:`nmt.decoding.phases` shows them)."""
        t_tilde = self.U_o(s_prev) + self.V_o(y_emb) + self.C_o(context)  # (…, 2l)
        if extra is not None:
            t_tilde = t_tilde + extra
        t = t_tilde.unflatten(-1, (-1, 2)).amax(-1)  # (…, l)   maxout over pairs
        logits = output_logits(self.W_o, self.dropout(t), allowed)  # (…, K_y)
        if parts is not None:
            parts.update(t_tilde=t_tilde, t=t, logits=logits)
        return logits


class RNNSearch(nn.Module):
    """Encoder, alignment model and decoder; the same code serves RNNsearch and RNNencdec."""

    def __init__(self, cfg: ModelConfig, init: bool = True) -> None:
        """``init=False`` skips the (slow, orthogonal) initialisation, for weights about to be loaded."""
        super().__init__()
        self.cfg = cfg
        self.encoder = Encoder(cfg.src_vocab_size, cfg.emb_dim, cfg.hidden_dim, cfg.dropout, init)
        self.decoder = Decoder(cfg, init)

    @property
    def capabilities(self) -> Capabilities:
        """What it can do (:meth:`capabilities_for` its config)."""
        return self.capabilities_for(self.cfg)

    @staticmethod
    def capabilities_for(cfg: ModelConfig) -> Capabilities:
        """Any context mode (the trained one first); Look, Generate, Update in that order (eqs. 5-6, A.2.2);
        α editable, a deep output a fusion can feed, compilable steps, re-encodable from embeddings."""
        modes = (cfg.context, *(m for m in CONTEXT_MODES if m != cfg.context))
        return Capabilities("rnnsearch", modes, ("look", "generate", "update"), alpha_editable=True,
                            deep_fusion=True, compilable=True, embeddings_input=True)

    # -- inference API: explicit states in, states out ---------------------------------------

    def encode(self, src: torch.Tensor, src_len: torch.Tensor) -> EncoderState:
        """Annotations, keys, fixed summary and s_0 of a source batch (B, Tx)."""
        return self.encode_embeddings(self.encoder.embed(src), src_len)

    def encode_embeddings(self, x: torch.Tensor, src_len: torch.Tensor) -> EncoderState:
        """:meth:`encode` from source embeddings x = E x_j (B, Tx, m) (attribution differentiates by x)."""
        annotations, mask = self.encoder(x, src_len)  # (B, Tx, 2n), (B, Tx)
        n = self.cfg.hidden_dim
        last = (src_len - 1).view(-1, 1, 1).expand(-1, 1, n)
        h_fwd_last = annotations[:, :, :n].gather(1, last).squeeze(1)  # →h_Tx  (B, n)
        h_bwd_first = annotations[:, 0, n:]  # ←h_1   (B, n)
        return EncoderState(
            annotations=annotations,
            keys=self.decoder.attention.keys(annotations),
            mask=mask,
            summary=torch.cat([h_fwd_last, h_bwd_first], dim=-1),
            s0=self.decoder.initial_state(h_bwd_first),
            src_len=src_len,
        )

    def initial_state(self, enc: EncoderState, bos: torch.Tensor) -> DecoderState:
        """The decoder state before the first target word: s_0 and y_0 = ``<s>``."""
        return DecoderState(enc.s0, bos)

    def transition(
        self, enc: EncoderState, s_prev: torch.Tensor, wy: torch.Tensor, mode: str,
        alpha: torch.Tensor | None = None, parts: dict[str, torch.Tensor] | None = None,
    ) -> tuple[Attended, torch.Tensor]:
        """c_i from s_{i-1} (eqs. 5-6, or a given α), then s_i from s_{i-1}, wy = W E y_{i-1} + b and c_i."""
        att = self.decoder.attend(s_prev, enc, mode, alpha)  # c_i   (N, 2n)
        return att, self.decoder.recur(s_prev, wy, att.context, parts)  # s_i   (N, n)

    def log_probs(
        self, s_prev: torch.Tensor, y_emb: torch.Tensor, context: torch.Tensor, extra: torch.Tensor | None = None,
        parts: dict[str, torch.Tensor] | None = None, allowed: torch.Tensor | None = None,
    ) -> torch.Tensor:
        """log p(y_i | y_<i, x) (…, K_y) from s_{i-1}, E y_{i-1} and c_i, in float32 (fp16 weights too);
        over the ``allowed`` words only when a candidate list is given (Jean et al. 2015 §3.2)."""
        logits = self.decoder.readout(s_prev, y_emb, context, extra, parts, allowed).float()  # (…, K_y)
        return torch.log_softmax(logits, dim=-1)

    def step(
        self, enc: EncoderState, state: DecoderState, context: str | None = None, alpha: torch.Tensor | None = None,
        extra: torch.Tensor | None = None, parts: dict[str, torch.Tensor] | None = None, rows: slice | None = None,
    ) -> StepOutput:
        """One target position: c_i, log p(y_i | y_<i, x) and the state s_i for the next step.

        The caller chooses y_i (greedy, beam, forced) and sets it as ``state.y_prev`` next time. A
        given ``alpha`` (N, Tx) replaces the alignment model's α_i· in c_i, so the readout and s_i
        read the edited context (attention surgery); the model's own α changes nothing. ``extra``
        (N, 2l) is added to the deep output t̃_i (deep fusion, :mod:`nmt.decoding.fusion`); the encoder state's
        candidate lists, if any, restrict the softmax (:mod:`nmt.models.candidates`). A given ``parts`` dict
        receives this step's intermediate tensors by name (the GRU's z, r, candidate; the deep output's
        t_tilde, t, logits), for :mod:`nmt.decoding.phases`' Look / Generate / Update view. ``rows`` reads out only
        those rows' log p (N', K_y) (attribution reads each row once, at its own target position).
        """
        mode = context or self.cfg.context
        y_emb = self.decoder.embed(state.y_prev)  # (N, m)
        att, s_next = self.transition(enc, state.s, self.decoder.W(y_emb), mode, alpha, parts)
        r = slice(None) if rows is None else rows
        allowed = None if enc.allowed is None else enc.allowed[r]
        extra = None if extra is None else extra[r]
        log_probs = self.log_probs(state.s[r], y_emb[r], att.context[r], extra, parts, allowed)  # (N', K_y)
        return StepOutput(log_probs, att, DecoderState(s_next, state.y_prev))

    # -- training: teacher forcing ---------------------------------------------------------------

    def teacher_force(
        self, enc: EncoderState, tgt_in: torch.Tensor, context: str | None = None, readout: bool = True
    ) -> Forced:
        """The decoder over the reference continuation ``tgt_in`` = <s> y_1 … y_{Ty-1} (B, Ty).

        Only the recurrence s_{i-1} → c_i → s_i runs step by step (:meth:`transition`, as in
        :meth:`step`); the embeddings, the input projections W E y and the whole deep output are
        batched over all steps (``readout`` False skips the deep output).
        """
        mode = context or self.cfg.context
        dec = self.decoder
        y_emb = dec.dropout(dec.embed(tgt_in))  # (B, Ty, m)
        wy = dec.W(y_emb)  # (B, Ty, 3n)
        s = enc.s0
        prev_states, atts = [], []
        for wy_i in wy.unbind(1):
            prev_states.append(s)
            att, s = self.transition(enc, s, wy_i, mode)
            atts.append(att)
        s_prev, contexts = torch.stack(prev_states, 1), torch.stack([a.context for a in atts], 1)
        alpha = None if atts[0].alpha is None else torch.stack([a.alpha for a in atts], 1)
        energies = None if atts[0].energies is None else torch.stack([a.energies for a in atts], 1)
        logits = dec.readout(s_prev, y_emb, contexts) if readout else s_prev.new_zeros(0)  # (B, Ty, K_y)
        return Forced(s_prev, y_emb, alpha, energies, contexts, logits)

    def forward(
        self, src: torch.Tensor, src_len: torch.Tensor, tgt_in: torch.Tensor, context: str | None = None
    ) -> torch.Tensor:
        """Logits (B, Ty, K_y) of the reference continuation ``tgt_in`` = <s> y_1 … y_{Ty-1}."""
        return self.teacher_force(self.encode(src, src_len), tgt_in, context).logits


def sequence_loss(
    logits: torch.Tensor, tgt_out: torch.Tensor, label_smoothing: float = 0.0
) -> torch.Tensor:
    """Summed token cross-entropy of (B, Ty, K_y) logits against (B, Ty) targets, padding ignored."""
    return F.cross_entropy(
        logits.flatten(0, 1).float(), tgt_out.flatten(), ignore_index=PAD_ID,
        reduction="sum", label_smoothing=label_smoothing,
    )
