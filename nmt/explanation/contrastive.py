"""Why this word and not that one? A contrastive explanation of one decoder step (Yin & Neubig 2022).

At step i of a translation, the model wrote y_i where it could have written an alternative a. The
quantity explained is the contrast F(X) = log p(y_i | y_<i, X) − log p(a | y_<i, X) (nats; > 0 because
the model preferred y_i), a function of the source embeddings X, computed by the model's own steps
(:func:`nmt.explanation.attribution.target_log_prob` with a contrast target). For each source word j:

* gradient × input Σ_d x_jd ∂F/∂x_jd (Captum ``InputXGradient``);
* integrated gradients from the zero (or ``<unk>``) embedding, whose sum over j equals
  F(X) − F(X') up to the completeness gap; the number of points doubles, as for every attribution
  (:func:`nmt.explanation.attribution.attribute`), until the gap is under :data:`GAP_TOL` nats (or its maximum);
* α_ij of the step, beside them (what the model looked at is not necessarily what decided).

Where the contrast came from inside the step: the deep output reads s_{i-1}, E y_{i-1} and c_i
(App. A.2.2); integrated gradients over those three inputs of the step's own readout (from zero) split
F's logit difference into their shares, so "how much came through the context c_i" is a number, with
its own completeness gap. Positive scores push toward y_i, negative ones toward a.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import torch
from captum.attr import IntegratedGradients

from nmt.decoding.surgery import require_surgery
from nmt.explanation.attribution import IG_GAP_TOL, attribute
from nmt.models.checkpoint import LoadedModel
from nmt.text.vocab import BOS_ID

GAP_TOL = IG_GAP_TOL  # nats: |Σ_j IG_j − (F(X) − F(X'))|, as for every attribution of the app
READOUT_POINTS = 64
SHARES = ("state", "previous word", "context")  # s_{i-1}, E y_{i-1}, c_i


@dataclass
class Contrast:
    """One contrastive explanation of step ``step``: the scores per source token (``</s>`` included)."""

    src_tokens: list[str]
    step: int
    chosen: str
    alternative: str
    delta: float  # F(X) = log p(chosen) − log p(alternative), nats
    logprob_chosen: float
    logprob_alternative: float
    alpha: list[float]
    x_grad: list[float]
    ig: list[float]
    ig_gap: float  # |Σ_j IG_j − (F(X) − F(X'))|
    ig_points: int
    baseline: str = "zero"
    shares: dict[str, float] = field(default_factory=dict)  # logit difference through s_{i-1}, E y_{i-1}, c_i
    shares_gap: float = 0.0

    def to_dict(self) -> dict[str, Any]:
        return {k: getattr(self, k) for k in self.__dataclass_fields__}


def contrast(lm: LoadedModel, src_ids: Sequence[int], prefix_ids: Sequence[int], alternative: int, *,
             src_tokens: Sequence[str] | None = None, baseline: str = "zero") -> Contrast:
    """Explain why the model wrote ``prefix_ids[-1]`` (step i = len(prefix_ids) − 1, after the words before
    it) and not ``alternative``. ``src_ids`` end with ``</s>``. The attributions are
    :func:`nmt.explanation.attribution.attribute`'s with the alternative (its points chosen by the completeness gap)."""
    model = require_surgery(lm)
    step, chosen = len(prefix_ids) - 1, int(prefix_ids[-1])
    if step < 0 or alternative == chosen:
        raise ValueError("a contrast needs a written word and a different alternative")
    tokens = list(src_tokens or [lm.src_vocab.itos[t] for t in src_ids])
    att = attribute(lm, src_ids, prefix_ids, steps=[step], methods=("x_grad", "ig"), baseline=baseline,
                    src_tokens=tokens, alternative=int(alternative))
    dev = lm.device
    with torch.no_grad():  # the step's log p and its readout's inputs (for the shares)
        run = model.teacher_force(model.encode(torch.tensor([list(src_ids)], device=dev),
                                               torch.tensor([len(src_ids)], device=dev)),
                                  torch.tensor([[BOS_ID, *prefix_ids[:-1]]], device=dev))
    lp = run.log_probs[0, step]
    shares, gap = readout_shares(model, run, step, chosen, int(alternative))
    itos = lm.tgt_vocab.itos
    return Contrast(tokens, step, itos[chosen], itos[int(alternative)], float(lp[chosen] - lp[alternative]),
                    float(lp[chosen]), float(lp[alternative]), att.alpha[0].tolist(),
                    att.scores["x_grad"][0].tolist(), att.scores["ig"][0].tolist(), abs(float(att.ig_delta[0])),
                    int(att.ig_points[0]), baseline, shares, gap)


def readout_shares(model: Any, run: Any, step: int, chosen: int, alternative: int) -> tuple[dict[str, float], float]:
    """The logit difference z(chosen) − z(alternative) of step ``step``'s readout split by integrated
    gradients (from zero) over its three inputs s_{i-1}, E y_{i-1} and c_i; and the completeness gap."""
    inputs = tuple(t[:, step].detach() for t in (run.s_prev, run.y_emb, run.context))  # (1, n), (1, m), (1, 2n)

    def diff(s: torch.Tensor, y: torch.Tensor, c: torch.Tensor) -> torch.Tensor:
        logits = model.decoder.readout(s, y, c)  # the model's own deep output and softmax layer
        return logits[:, chosen] - logits[:, alternative]

    ig = IntegratedGradients(diff)
    attrs, delta = ig.attribute(inputs, baselines=tuple(torch.zeros_like(t) for t in inputs),
                                n_steps=READOUT_POINTS, return_convergence_delta=True)
    return ({name: float(a.sum()) for name, a in zip(SHARES, attrs, strict=True)},
            abs(float(delta.sum())))


def baseline_part(c: Contrast) -> float:
    """The part of the contrast already there with the all-zero (baseline) source: F(X') = F(X) − Σ_j IG_j
    (to within the completeness gap). No source word carries it: integrated gradients share out only
    F(X) − F(X')."""
    return c.delta - float(sum(c.ig[: len(c.src_tokens)]))


def _strong(c: Contrast, top: int) -> tuple[float, list[int], np.ndarray]:
    """The preferred direction (+1: the written word), the source words that pushed most toward it (an IG
    score over a quarter of the contrast, at most ``top``), and the scores in that direction."""
    sign = 1.0 if c.delta >= 0 else -1.0
    scores = sign * np.asarray(c.ig[: len(c.src_tokens)])
    order = [int(j) for j in np.argsort(-scores, kind="stable")]
    return sign, [j for j in order[:top] if scores[j] > 0.25 * max(abs(c.delta), 1e-9)], scores


def within_gap(c: Contrast) -> bool:
    """Whether the contrast is no larger than what no source word carries (the baseline's part and IG's
    own completeness gap): then no source word is the reason."""
    return abs(c.delta) <= abs(baseline_part(c)) + c.ig_gap


def verdict(c: Contrast, top: int = 2) -> str:
    """One line with the numbers: the words that pushed most toward the preferred word (the written one, or
    the alternative where a forced word was less likely), the part no source word carries (the contrast
    with an all-zero source), or only the ranking when no word stands out (none with an IG score over a
    quarter of the contrast); no word is named when the contrast is within that part (:func:`within_gap`)."""
    sign, strong, scores = _strong(c, top)
    win, lose = (c.chosen, c.alternative) if sign > 0 else (c.alternative, c.chosen)
    head = f"« {win} » over « {lose} » by {abs(c.delta):.2f} nats"
    if sign < 0:
        head = f"The model preferred « {win} » to the forced « {lose} » by {abs(c.delta):.2f} nats"
    base = sign * baseline_part(c)
    if within_gap(c):
        return (f"{head}: no source word is the reason; {base:+.2f} nats of it are there with an all-zero source "
                f"(which no source word carries) and integrated gradients miss {c.ig_gap:.3f}.")
    tail = (f"; {base:+.2f} of the {abs(c.delta):.2f} nats are there with an all-zero source (no source word "
            "carries them)")
    if not strong:
        return head + ": no single source word carries it (the scores are spread)" + tail + "."
    words = " and ".join(f"“{c.src_tokens[j]}” ({sign * scores[j]:+.2f})" for j in strong)
    through = c.shares.get("context", 0.0) / max(sum(abs(v) for v in c.shares.values()), 1e-9)
    return f"{head}, mostly because of {words}{tail}; {abs(through):.0%} of the readout's difference came through c_i."


def plain_verdict(c: Contrast) -> str:
    """The verdict in one sentence a student can repeat (no nats, no symbols): the English word(s) that
    made the difference, or that the English words are not the reason."""
    sign, strong, _ = _strong(c, 2)
    win, lose = (c.chosen, c.alternative) if sign > 0 else (c.alternative, c.chosen)
    choice = f"The model prefers « {win} » to « {lose} »"
    base = sign * baseline_part(c)
    if within_gap(c) or base >= 0.5 * abs(c.delta):
        return (f"{choice} mostly for a reason that is not any English word: it leans that way even when it is "
                "given no English sentence at all.")
    if not strong:
        return f"{choice}, and no single English word makes the difference: many words push a little."
    words = " and ".join(f"“{c.src_tokens[j]}”" for j in strong)
    return f"{choice} mostly because of the English word{'s' if len(strong) > 1 else ''} {words}."
