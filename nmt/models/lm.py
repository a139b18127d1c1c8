"""A recurrent language model on the target side, for fusion with a translation model.

Gülçehre et al. (2015), "On Using Monolingual Corpora in Neural Machine Translation", §3: a GRU
language model trained on target-language text alone. Here it reads the translation model's own
target vocabulary (same ids), so its log p_LM(y_i | y_<i) lines up word by word with the
translation model's log p_TM(y_i | y_<i, x) (:mod:`nmt.decoding.fusion`).

    h_i = GRU(E y_i, h_{i-1}),  h_{-1} = 0,  y_0 = <s>
    log p_LM(y_{i+1} | y_≤i) = log softmax(E (P h_i) + b)      (tied input/output embedding E)

Shapes: K_y words, m = emb_dim, n = hidden_dim, N decoder rows. The output matrix is the input
embedding E (K_y, m) itself ("tied", Press & Wolf 2017) after a projection P (n → m), which keeps
the checkpoint small. Like the translation models, the module holds weights only: one sentence's
recurrent state is an :class:`LMState`, passed in and returned. :meth:`GRULanguageModel.step` and
:meth:`GRULanguageModel.teacher_force` run the same ``nn.GRU`` (one step vs a whole sequence).
"""

from __future__ import annotations

from dataclasses import asdict, dataclass, fields
from typing import Any

import torch
from torch import nn

from nmt.text.vocab import PAD_ID

ARCH = "gru-lm"


@dataclass
class LMConfig:
    """Sizes of one language model (``arch`` tells its checkpoint from a translation model's)."""

    vocab_size: int
    emb_dim: int = 256  # m
    hidden_dim: int = 512  # n
    dropout: float = 0.0
    arch: str = ARCH

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)

    @classmethod
    def from_dict(cls, d: dict[str, Any]) -> LMConfig:
        names = {f.name for f in fields(cls)}
        return cls(**{k: v for k, v in d.items() if k in names})


@dataclass
class LMState:
    """The language model's state before step i: h_{i-2} (N, n) (the GRU's state after y_<i-1) and
    the last word y_{i-1} (N,) that the step reads next."""

    h: torch.Tensor
    y_prev: torch.Tensor

    def select(self, rows: torch.Tensor) -> LMState:
        return LMState(self.h.index_select(0, rows), self.y_prev.index_select(0, rows))


@dataclass
class LMStep:
    """One step's log p_LM(y_i | y_<i) (N, K_y), the GRU state s_i^LM = h_{i-1} (N, n) that predicts
    y_i (deep fusion's controller reads it), and the next :class:`LMState` (its y_prev unset)."""

    log_probs: torch.Tensor
    hidden: torch.Tensor
    state: LMState


class GRULanguageModel(nn.Module):
    """Embedding E, one GRU layer, projection P and the tied output layer E (P h) + b."""

    def __init__(self, cfg: LMConfig) -> None:
        super().__init__()
        self.cfg = cfg
        self.embed = nn.Embedding(cfg.vocab_size, cfg.emb_dim, padding_idx=PAD_ID)  # E (K_y, m)
        nn.init.normal_(self.embed.weight, std=cfg.emb_dim**-0.5)
        self.gru = nn.GRU(cfg.emb_dim, cfg.hidden_dim, batch_first=True)
        self.proj = nn.Linear(cfg.hidden_dim, cfg.emb_dim)  # P: n → m
        self.out_bias = nn.Parameter(torch.zeros(cfg.vocab_size))  # b (K_y)
        self.dropout = nn.Dropout(cfg.dropout)

    def logits(self, h: torch.Tensor, rows: torch.Tensor | None = None) -> torch.Tensor:
        """E (P h) + b (…, K_y) from GRU states h (…, n); with ``rows``, over those words only (…, |rows|)
        (training's exact softmax over the words a text holds, :func:`nmt.training.lm_training.restricted_loss`)."""
        if rows is None:
            return self.dropout(self.proj(h)) @ self.embed.weight.T + self.out_bias
        return self.dropout(self.proj(h)) @ self.embed.weight[rows].T + self.out_bias[rows]

    def initial_state(self, bos: torch.Tensor) -> LMState:
        """h_{-1} = 0 and y_0 = ``<s>`` for each of the N rows of ``bos`` (N,)."""
        return LMState(bos.new_zeros((bos.shape[0], self.cfg.hidden_dim), dtype=self.embed.weight.dtype), bos)

    def step(self, state: LMState) -> LMStep:
        """Read y_{i-1}: h_{i-1} = GRU(E y_{i-1}, h_{i-2}), then log p_LM(y_i | y_<i) (N, K_y)."""
        x = self.embed(state.y_prev).unsqueeze(1)  # (N, 1, m)
        _, h = self.gru(x, state.h.unsqueeze(0).contiguous())  # (1, N, n)
        h = h.squeeze(0)
        log_probs = torch.log_softmax(self.logits(h).float(), dim=-1)
        return LMStep(log_probs, h, LMState(h, state.y_prev))

    def teacher_force(self, tgt_in: torch.Tensor, rows: torch.Tensor | None = None
                      ) -> tuple[torch.Tensor, torch.Tensor]:
        """GRU states (B, T, n) and logits (B, T, K_y) over ``tgt_in`` = <s> y_1 … y_{T-1} (B, T); with
        ``rows``, the logits of those words only (B, T, |rows|)."""
        hs, _ = self.gru(self.dropout(self.embed(tgt_in)))  # (B, T, n)
        return hs, self.logits(hs, rows)


def lm_loss(model: GRULanguageModel, tgt_in: torch.Tensor, tgt_out: torch.Tensor) -> torch.Tensor:
    """Summed cross-entropy of the next word over a padded batch (padding ignored)."""
    _, logits = model.teacher_force(tgt_in)
    return nn.functional.cross_entropy(logits.flatten(0, 1).float(), tgt_out.flatten(), ignore_index=PAD_ID,
                                       reduction="sum")


def is_lm_checkpoint(ckpt: dict[str, Any]) -> bool:
    """Whether a checkpoint dict holds a language model (not a translation model)."""
    return isinstance(ckpt.get("config"), dict) and ckpt["config"].get("arch") == ARCH
