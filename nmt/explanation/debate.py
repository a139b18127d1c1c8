"""The attention-as-explanation debate's two tests, made for translation (Jain & Wallace 2019;
Wiegreffe & Pinter 2019), on one sentence.

The permutation test (:func:`permutation_test`) shuffles α at each target step and records the
total variation distance of p(y_i | …) and whether the argmax word flips; the adversarial test
(:func:`adversarial_alpha`) finds, per step, the α farthest from the model's (JSD) that keeps the
output word and p(y_i) within ε. Both re-run the model's own output layer
(:meth:`nmt.models.rnnsearch.RNNSearch.log_probs`) on a teacher-forced pass (:func:`debate_tests`). The JSD
is in nats (natural log), so it lies in [0, ln 2]. :mod:`nmt.explanation.faithfulness` runs them on a corpus.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass

import torch

from nmt.decoding.surgery import require_surgery
from nmt.models.checkpoint import LoadedModel
from nmt.models.rnnsearch import Forced, RNNSearch, context_of
from nmt.text.vocab import BOS_ID

LN2 = math.log(2.0)  # the largest JSD, in nats


def jsd(p: torch.Tensor, q: torch.Tensor) -> torch.Tensor:
    """Jensen–Shannon divergence over the last dim, natural log (nats, in [0, ln 2]).

    JSD(P, Q) = ½ KL(P ‖ M) + ½ KL(Q ‖ M), M = (P + Q) / 2; 0 · log 0 = 0."""
    m = 0.5 * (p + q)
    kl = torch.xlogy(p, p) - torch.xlogy(p, m) + torch.xlogy(q, q) - torch.xlogy(q, m)
    return 0.5 * kl.sum(-1)


def project_simplex(v: torch.Tensor) -> torch.Tensor:
    """Euclidean projection of each row of ``v`` (…, K) onto the probability simplex.

    The sort-based algorithm (Held et al. 1974; Duchi et al. 2008): u = v sorted descending,
    ρ = max{k : u_k − (Σ_{r≤k} u_r − 1) / k > 0}, θ = (Σ_{r≤ρ} u_r − 1) / ρ, w = max(v − θ, 0)."""
    u, _ = torch.sort(v, dim=-1, descending=True)
    css = u.cumsum(-1) - 1.0
    k = torch.arange(1, v.shape[-1] + 1, device=v.device, dtype=v.dtype)
    rho = ((u - css / k) > 0).sum(-1, keepdim=True).clamp_min(1)  # ≥ 1 (k = 1 always passes)
    theta = css.gather(-1, rho - 1) / rho.to(v.dtype)
    return (v - theta).clamp_min(0.0)


@dataclass
class PermutationResult:
    """Per step i and permutation k: total variation distance of p(· | …) and whether argmax changed."""

    tvd: torch.Tensor  # (Ty, N)
    flipped: torch.Tensor  # (Ty, N) bool
    perms: torch.Tensor  # (Ty, N, Tx): α'_ij = α_i,perms[i, k, j]

    @property
    def flip_rate(self) -> float:
        return float(self.flipped.float().mean()) if self.flipped.numel() else float("nan")

    def median_tvd(self) -> torch.Tensor:
        """Median TVD per step (Ty,)."""
        return self.tvd.median(dim=-1).values


def permutation_test(
    model: RNNSearch, annotations: torch.Tensor, run: Forced, n: int = 20, seed: int = 0,
) -> PermutationResult:
    """Shuffle α_i over the Tx source tokens ``n`` times at each step of a forced pass ``run``
    (batch of 1) and compare p(· | s_{i-1}, y_{i-1}, c'_i) with the model's (its own α)."""
    gen = torch.Generator().manual_seed(seed)
    alpha, Ty, Tx = run.alpha[0], run.alpha.shape[1], run.alpha.shape[2]
    perms = torch.stack([torch.randperm(Tx, generator=gen) for _ in range(Ty * n)]).to(alpha.device)
    shuffled = alpha.repeat_interleave(n, 0).gather(1, perms)  # (Ty·n, Tx)
    with torch.no_grad():
        lp = model.log_probs(run.s_prev[0].repeat_interleave(n, 0), run.y_emb[0].repeat_interleave(n, 0),
                             context_of(shuffled, annotations)).view(Ty, n, -1)
    p, p0 = lp.exp(), run.log_probs[0].exp().unsqueeze(1)  # (Ty, n, V), (Ty, 1, V)
    tvd = 0.5 * (p - p0).abs().sum(-1)  # TVD(p, p') = ½ Σ_y |p(y) − p'(y)|
    return PermutationResult(tvd, lp.argmax(-1) != run.log_probs[0].argmax(-1, keepdim=True), perms.view(Ty, n, Tx))


@dataclass
class AdversarialResult:
    """The most different α found per step that keeps the output word and p(y_i) within ε."""

    alpha: torch.Tensor  # (Ty, Tx) on the simplex; the model's α where nothing better was found
    jsd: torch.Tensor  # (Ty,) JSD(α', α) in nats
    prob: torch.Tensor  # (Ty,) p'(y_i) under α'
    prob_model: torch.Tensor  # (Ty,) p(y_i) under the model's α


def adversarial_alpha(
    model: RNNSearch, annotations: torch.Tensor, run: Forced, targets: torch.Tensor, eps: float = 0.01,
    iters: int = 30, lr: float = 0.05, penalty: float = 50.0,
) -> AdversarialResult:
    """Projected gradient ascent on JSD(α', α) − penalty · violation, α' on the simplex.

    Constraints per step (argmax word y* of the model's p, chosen word y_i = ``targets``):
    |p'(y_i) − p(y_i)| ≤ ε and argmax p' = y*. The violation is relu(|Δp| − ε)² + relu(margin)²
    with margin = max_{w≠y*} log p'(w) − log p'(y*) + 10⁻³. The JSD gradient vanishes at α' = α,
    so the ascent runs from four starts per step at once: α moved half-way and a fifth of the way
    to the one-hot on its least-attended token, half-way to uniform, and half-way to the one-hot
    on its second most attended token. Every iterate is checked exactly, and the feasible one with
    the largest JSD is kept (α itself, JSD 0, when none is found).
    """
    alpha0, Ty, Tx = run.alpha[0].detach(), run.alpha.shape[1], run.alpha.shape[2]
    lp0 = run.log_probs[0].detach()
    p_y0 = lp0.gather(-1, targets.view(-1, 1)).squeeze(-1).exp()  # (Ty,)
    one_hot = torch.nn.functional.one_hot
    least = one_hot(alpha0.argmin(-1), Tx).to(alpha0.dtype)
    second = one_hot(alpha0.topk(min(2, Tx), -1).indices[:, -1], Tx).to(alpha0.dtype)
    starts = [0.5 * alpha0 + 0.5 * least, 0.8 * alpha0 + 0.2 * least, 0.5 * alpha0 + 0.5 / Tx,
              0.5 * alpha0 + 0.5 * second]
    R = len(starts)
    a = torch.stack(starts, 1).view(Ty * R, Tx).requires_grad_(True)  # row i·R + r
    ref, p_ref = alpha0.repeat_interleave(R, 0), p_y0.repeat_interleave(R, 0)
    tgt, y_star = targets.repeat_interleave(R, 0), lp0.argmax(-1).repeat_interleave(R, 0)
    s_prev, y_emb = run.s_prev[0].detach().repeat_interleave(R, 0), run.y_emb[0].detach().repeat_interleave(R, 0)
    best, best_jsd, best_p = ref.clone(), torch.zeros(Ty * R, device=ref.device), p_ref.clone()
    rows = torch.arange(Ty * R, device=ref.device)
    for _ in range(iters + 1):
        lp = model.log_probs(s_prev, y_emb, context_of(a, annotations.detach()))  # (Ty·R, V)
        p_y, top = lp[rows, tgt].exp(), lp[rows, y_star]
        rival = lp.scatter(-1, y_star.view(-1, 1), float("-inf")).amax(-1)
        d = jsd(a, ref)
        with torch.no_grad():  # exact feasibility of the current iterate
            ok = ((p_y - p_ref).abs() <= eps) & (rival < top) & (d > best_jsd)
            best[ok], best_jsd[ok], best_p[ok] = a[ok].detach(), d[ok].detach(), p_y[ok].detach()
        violation = torch.relu((p_y - p_ref).abs() - eps) ** 2 + torch.relu(rival - top + 1e-3) ** 2
        smooth = jsd(a.clamp_min(1e-12), ref)  # a finite gradient where α'_j = 0 (∂ p log p / ∂p → −∞)
        (grad,) = torch.autograd.grad((smooth - penalty * violation).sum(), a)
        with torch.no_grad():
            a = project_simplex(a + lr * grad).requires_grad_(True)  # ascent step, then back onto the simplex
    pick = best_jsd.view(Ty, R).argmax(-1) + torch.arange(Ty, device=ref.device) * R  # best start per step
    return AdversarialResult(best[pick], best_jsd[pick], best_p[pick], p_y0)


def debate_tests(
    lm: LoadedModel, src_tokens: Sequence[str], target_ids: Sequence[int], *, n_perm: int = 20, seed: int = 0,
    eps: float = 0.01, adv_iters: int = 30,
) -> tuple[PermutationResult, AdversarialResult, torch.Tensor]:
    """The permutation test and the adversarial α at every step of one translation, teacher-forced on
    ``target_ids`` (ending in ``</s>``) from ``src_tokens`` (ending in ``</s>``); also the model's own α
    (Ty, Tx), which both tests start from."""
    model = require_surgery(lm)
    dev = lm.device
    src = torch.tensor([lm.src_vocab.encode(list(src_tokens[:-1]))], device=dev)
    ids = list(target_ids)
    with torch.no_grad():
        enc = model.encode(src, torch.tensor([src.shape[1]], device=dev))
        run = model.teacher_force(enc, torch.tensor([[BOS_ID, *ids[:-1]]], device=dev))
        perm = permutation_test(model, enc.annotations[0], run, n=n_perm, seed=seed)
    adv = adversarial_alpha(model, enc.annotations[0], run, torch.tensor(ids, device=dev), eps=eps, iters=adv_iters)
    return perm, adv, run.alpha[0]
