"""Sampling the next word: temperature, top-k and top-p (nucleus) over the model's own step, reproducibly.

The model's step gives log p(y_i | y_<i, x) (the same :meth:`step` greedy and beam search call); a
:class:`SamplingRule` transforms that distribution in a fixed order, each stage renormalised:

1. **temperature** T: p_T(w) ∝ p(w)^(1/T) (softmax of log p / T): T < 1 sharpens, T > 1 flattens;
2. **top-k**: only the k most probable words under p_T keep their mass (k = 0: off);
3. **top-p** (Holtzman et al. 2020): the smallest set of most probable words whose mass reaches p
   (p = 1: off).

The word is then drawn by inverse CDF: a uniform u from a ``torch.Generator`` seeded from (seed, step)
alone (numpy's ``SeedSequence``), and the words in order of decreasing final p (ties: vocabulary order);
the drawn word is the first whose cumulative p exceeds u. So stepping back and forward again, or replaying
a shared link, draws the very same word, and the draw can be checked by hand.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import torch

from nmt.decoding.trace import SampleRecord

SHOWN = 8  # words of each stage kept in the record (the most probable at the end), beside the drawn one


@dataclass(frozen=True)
class SamplingRule:
    """How to sample: temperature T > 0, top-k (0: off), top-p in (0, 1] (1: off) and the seed."""

    temperature: float = 1.0
    top_k: int = 0
    top_p: float = 1.0
    seed: int = 0

    def stage_names(self) -> list[str]:
        """The names of the distributions :func:`stages` returns, the model's own first."""
        return ["model", f"T = {self.temperature:g}", f"top-k {self.top_k}" if self.top_k else "top-k off",
                f"top-p {self.top_p:g}" if self.top_p < 1 else "top-p off"]


def _renormalise(p: torch.Tensor, keep: torch.Tensor) -> torch.Tensor:
    q = torch.where(keep, p, torch.zeros_like(p))
    return q / q.sum()


def stages(log_probs: torch.Tensor, rule: SamplingRule) -> list[torch.Tensor]:
    """The step's distribution (``log_probs``: (V,)) before and after each transform, float64 on the CPU:
    the model's, after temperature, after top-k, after top-p."""
    lp = log_probs.detach().to("cpu", torch.float64)
    raw = lp.exp()
    scaled = torch.softmax(lp / rule.temperature, dim=-1)
    if 0 < rule.top_k < scaled.numel():
        keep = torch.zeros_like(scaled, dtype=torch.bool)
        keep[torch.topk(scaled, rule.top_k).indices] = True
        topk = _renormalise(scaled, keep)
    else:
        topk = scaled
    if rule.top_p < 1:
        order = torch.argsort(topk, descending=True, stable=True)
        before = torch.cumsum(topk[order], 0) - topk[order]  # mass of the words ranked above each
        keep = torch.zeros_like(topk, dtype=torch.bool)
        keep[order[before < rule.top_p]] = True  # the smallest prefix whose mass reaches p
        nucleus = _renormalise(topk, keep & (topk > 0))
    else:
        nucleus = topk
    return [raw, scaled, topk, nucleus]


def uniform(rule: SamplingRule, step: int) -> float:
    """The uniform u of step ``step``: a ``torch.Generator`` seeded from (seed, step) alone."""
    seed = int(np.random.SeedSequence([int(rule.seed), int(step)]).generate_state(1)[0])
    return float(torch.rand(1, generator=torch.Generator().manual_seed(seed), dtype=torch.float64))


def inverse_cdf(p: torch.Tensor, u: float) -> int:
    """The word whose slice of [0, 1) holds ``u``, the words laid out by decreasing p (ties: vocabulary order)."""
    order = torch.argsort(p, descending=True, stable=True)
    cum = torch.cumsum(p[order], 0)
    k = int(torch.searchsorted(cum, torch.tensor([u], dtype=cum.dtype), right=True)[0])
    nonzero = int((p > 0).sum())
    return int(order[min(k, nonzero - 1)])  # u ≥ the last sum (rounding): the last word with mass


def draw(log_probs: torch.Tensor, rule: SamplingRule, step: int, itos: list[str]) -> tuple[int, SampleRecord]:
    """Sample the word of step ``step`` from the model's ``log_probs`` (V,) under ``rule``; the record keeps
    each stage's p of the most probable words and of the drawn one."""
    dists = stages(log_probs, rule)
    u = uniform(rule, step)
    token = inverse_cdf(dists[-1], u)
    top = torch.argsort(dists[-1], descending=True, stable=True)[:SHOWN].tolist()
    ids = top if token in top else [*top, token]
    rows = [(itos[i], [round(float(d[i]), 6) for d in dists]) for i in ids]
    return token, SampleRecord(temperature=rule.temperature, top_k=rule.top_k, top_p=rule.top_p, seed=rule.seed,
                               u=u, stages=rule.stage_names(), rows=rows, kept=int((dists[-1] > 0).sum()))
