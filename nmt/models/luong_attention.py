"""Luong, Pham & Manning (2015) attention, eqs. (7)-(11): scores, global or local weights and the context.

Notation as in :mod:`nmt.models.luong` (the model that owns this module): h_t = top decoder state, h̄_s =
source states, S = source length, D = window half-width, n = hidden units, N / T = rows / steps.

    score(h_t, h̄_s)                            eq. (8): dot h_tᵀh̄_s | general h_tᵀW_a h̄_s |
                                                concat v_aᵀ tanh(W_a[h_t; h̄_s]); eq. (9) location W_a h_t
    a_t(s) = softmax_s score(h_t, h̄_s)          eq. (7); local attention: s ∈ [p_t − D, p_t + D] only,
                                                p_t = t (local-m) or eq. (10) (local-p), then × eq. (11)
    c_t = Σ_s a_t(s) h̄_s

Positions are 0-based (local-m: p_t = min(t, S − 1); local-p: p_t = (S − 1) · sigmoid(…)); the
energies are the scores before softmax, window and Gaussian, and local-p's α is not renormalised
after the Gaussian (eq. 11).
"""

from __future__ import annotations

from dataclasses import dataclass

import torch
import torch.nn.functional as F
from torch import nn

from nmt.models.rnnsearch import Attended


@dataclass
class LuongAttended(Attended):
    """A Luong step's attention: local attention fills p_t and the window; both None for global attention."""


# ----------------------------------------------------------------------------------------------
# Attention: eqs. (7)-(11)
# ----------------------------------------------------------------------------------------------


class LuongAttention(nn.Module):
    """Scores, weights a_t(s) and context c_t for decoder states h_t; global or local."""

    def __init__(self, n: int, score: str, attention: str, window: int, max_positions: int,
                 bias: bool = False) -> None:
        """``bias``: the concat score's W_a[h_t; h̄_s] + b_a (OpenNMT-py's ``mlp``); the paper's has none."""
        super().__init__()
        self.n, self.score, self.attention, self.D = n, score, attention, window
        if score == "general":
            self.W_a = nn.Linear(n, n, bias=False)  # h_tᵀ W_a h̄_s
        elif score == "concat":
            self.W_a = nn.Linear(2 * n, n, bias=bias)  # W_a [h_t; h̄_s] (+ b_a)
            self.v_a = nn.Linear(n, 1, bias=False)
        elif score == "location":
            self.W_a = nn.Linear(n, max_positions, bias=False)  # one row per source position
        if attention == "local-p":
            self.W_p = nn.Linear(n, n, bias=False)  # eq. (10)
            self.v_p = nn.Linear(n, 1, bias=False)

    def keys(self, memory: torch.Tensor) -> torch.Tensor | None:
        """The part of the score that depends on h̄_s only (B, S, n), computed once per sentence."""
        if self.score == "general":
            return self.W_a(memory)  # W_a h̄_s
        if self.score == "concat":
            return F.linear(memory, self.W_a.weight[:, self.n:])  # W_a's h̄ columns · h̄_s
        return None

    def forward(
        self, h: torch.Tensor, memory: torch.Tensor, keys: torch.Tensor | None, mask: torch.Tensor,
        t: torch.Tensor, alpha: torch.Tensor | None = None,
    ) -> LuongAttended:
        """Attention of decoder states h (N, T, n) at target positions t (N, T) over memory (N, S, n).

        Every field keeps the T axis: context (N, T, n), energies and α (N, T, S), p_t (N, T),
        window (N, T, 2). A given ``alpha`` (N, T, S) replaces the final a_t(s) in c_t (surgery).
        """
        S = memory.shape[1]
        if self.score == "dot":
            e = h @ memory.transpose(1, 2)  # (N, T, S)   h_tᵀ h̄_s
        elif self.score == "general":
            e = h @ keys.transpose(1, 2)  # (N, T, S)   h_tᵀ (W_a h̄_s)
        elif self.score == "concat":
            q = F.linear(h, self.W_a.weight[:, : self.n], self.W_a.bias)  # (N, T, n)   W_a's h columns · h_t (+ b_a)
            e = self.v_a(torch.tanh(q.unsqueeze(2) + keys.unsqueeze(1))).squeeze(-1)  # (N, T, S)
        else:
            if S > self.W_a.out_features:
                raise ValueError(f"the location score covers {self.W_a.out_features} source positions, not {S}")
            e = self.W_a(h)[..., :S]  # (N, T, S)   eq. (9), before its softmax
        valid = mask.unsqueeze(1)  # (N, 1, S)
        position = window = dist = None
        if self.attention != "global":
            last = (mask.sum(-1, keepdim=True) - 1).float()  # (N, 1)   S − 1 per sentence
            if self.attention == "local-m":
                position = torch.minimum(t.float(), last)  # (N, T)   p_t = t
            else:
                gate = self.v_p(torch.tanh(self.W_p(h))).squeeze(-1).float()  # (N, T)
                position = last * torch.sigmoid(gate)  # (N, T)   eq. (10)
            dist = torch.arange(S, device=h.device).float() - position.unsqueeze(-1)  # (N, T, S)   s − p_t
            valid = valid & (dist.abs() <= self.D)  # s ∈ [p_t − D, p_t + D]
            window = torch.stack([(position - self.D).ceil().clamp(min=0),
                                  torch.minimum((position + self.D).floor(), last)], -1).long()  # (N, T, 2)
        if alpha is None:
            alpha = torch.softmax(e.masked_fill(~valid, float("-inf")), dim=-1)  # (N, T, S)   eq. (7)
            if self.attention == "local-p":
                sigma = self.D / 2
                alpha = alpha * torch.exp(-dist.square() / (2 * sigma**2))  # (N, T, S)   eq. (11)
        context = alpha @ memory  # (N, T, n)   c_t = Σ_s a_t(s) h̄_s
        return LuongAttended(context, e.masked_fill(~mask.unsqueeze(1), 0.0), alpha, position, window)
