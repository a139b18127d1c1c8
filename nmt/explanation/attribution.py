"""Attribution of each target word's log p over the source words, and its agreement with α.

For target position i of a fixed target y (the model's own output or a reference, force-decoded),
F_i(X) = log p(y_i | y_<i, X) is a function of the source embeddings X = (E x_1 … E x_Tx) (the
encoder re-run from X: :meth:`RNNSearch.encode_embeddings`, which :meth:`RNNSearch.encode` calls). Every
number comes from the model's own step (its attention, recurrence and readout); nothing here
recomputes one. Methods,
one score per source token j (``</s>`` included):

* ``saliency``: ‖∂F_i/∂x_j‖₂ (Captum ``Saliency``; Simonyan et al. 2014);
* ``x_grad``: Σ_d x_jd ∂F_i/∂x_jd (Captum ``InputXGradient``);
* ``ig``: integrated gradients, Σ_d (x_jd − x'_jd) ∫₀¹ ∂F_i/∂x_jd(x' + a(x − x')) da (Captum
  ``IntegratedGradients``, Gauss–Legendre; Sundararajan et al. 2017), baseline x' = zero or ``<unk>``
  embeddings; completeness Σ_j IG_ij = F_i(x) − F_i(x') up to Captum's convergence delta ``ig_delta``.
  The number of points is chosen by that gap (``ig_steps=None``, the default): every step starts at
  :data:`IG_START` points and is redone at twice as many while |ig_delta| > :data:`IG_GAP_TOL` nats,
  up to :data:`IG_MAX` (``ig_points`` records each step's count). 20 points on the shipped Multi30k
  model left a mean gap of 0.15 nats (1.43 at most); a fixed ``ig_steps=N`` is still accepted;
* ``loo_embed``: F_i(x) − F_i(x with x_j := baseline vector) (leave one out);
* ``loo_alpha``: log p(y_i) − log p'(y_i) where only step i's α has h_j masked out
  (α' = softmax of the energies over k ≠ j, eq. 6; the prefix states stay the model's own).

Positive scores mean "supports y_i" (saliency is a magnitude). Agreement with α_i per step:
Kendall τ-b (scipy), top-1 agreement (same argmax) and JSD(α_i, |a_i| / Σ|a_i|) in nats.
Padding positions (j ≥ source length) are carried through and score 0.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import torch
from captum.attr import IntegratedGradients, Saliency
from scipy.stats import kendalltau

from nmt.decoding.search import MAX_SOURCE_TOKENS, forced, greedy
from nmt.decoding.surgery import require_surgery
from nmt.decoding.trace import DecodeTrace
from nmt.models.checkpoint import LoadedModel
from nmt.models.rnnsearch import DecoderState, Forced, RNNSearch, context_of
from nmt.text.vocab import BOS_ID, UNK_ID

METHODS: tuple[str, ...] = ("saliency", "x_grad", "ig", "loo_embed", "loo_alpha")
# Gradient methods run on chunks of target steps of at most this many units, a unit being one source
# position of one decoder step of one Captum row: Σ (step + 1) · Tx · ig_steps. Autograd keeps about
# 3 KB a unit (measured, Europarl RNNsearch-50 on the CPU), so a chunk holds about 1 GB. newstest2014
# sentence 250, which that model translates into 120 words from 55 tokens, needed 26 GB in one batch
# (the corpus CLI was killed) and peaks at +1.9 GB in chunks. Short sentences stay one chunk.
GRAD_UNITS = 300_000
READOUT_ELEMS = 8_000_000  # leave-one-out reads out (1 + Tx) variants × steps × K_y logits: ≤ 32 MB at a time
BASELINES = ("zero", "unk")
IG_GAP_TOL = 0.05  # nats: the completeness gap |Σ_j IG_ij − (F_i(x) − F_i(x'))| each step is refined to
IG_START, IG_MAX = 50, 400  # adaptive IG: first and largest number of points (doubled in between)
MEASURES = ("kendall_tau", "top1", "jsd")


def target_log_prob(
    model: RNNSearch, x: torch.Tensor, src_len: torch.Tensor, tgt_in: torch.Tensor, tgt_out: torch.Tensor,
    steps: torch.Tensor, alt_out: torch.Tensor | None = None,
) -> torch.Tensor:
    """F(x) (B,): row b's log p(tgt_out[b, steps[b]] | tgt_in[b, ≤ steps[b]], x_b), the Captum forward;
    with ``alt_out`` (B, Ty), the contrast log p(tgt_out) − log p(alt_out) at that step (why this word
    and not that one, :mod:`nmt.explanation.contrastive`).

    Every step is the model's own :meth:`~nmt.models.rnnsearch.RNNSearch.step`, in the context mode it was trained
    in. Rows are decoded in order of their step, longest first, read out only at their own step
    (``step(rows=…)``) and leave the batch then, so a batch of one row per target position costs about
    half a full teacher-forced pass per row."""
    order = torch.argsort(steps, descending=True, stable=True)
    st = steps[order]
    enc = model.encode_embeddings(x[order], src_len[order])
    y_in, tgt = tgt_in[order], tgt_out[order]  # (B, Ty)
    alt = None if alt_out is None else alt_out[order]
    state = model.initial_state(enc, y_in[:, 0])
    outs: list[torch.Tensor] = []
    for t in range(int(st[0]) + 1):
        n = int((st >= t).sum())  # rows still decoding: a prefix, as st is sorted descending
        if n < y_in.shape[0]:  # slice the previous slice: backward pads less than from full size
            enc, y_in, tgt = enc.head(n), y_in[:n], tgt[:n]
            alt = None if alt is None else alt[:n]
            state = DecoderState(state.s[:n], state.y_prev[:n])
        done = int((st[:n] > t).sum())  # rows [done, n) are read out at this step
        out = model.step(enc, DecoderState(state.s, y_in[:, t]), rows=slice(done, n))  # the model's step i
        if done < n:
            f = out.log_probs.gather(-1, tgt[done:, t : t + 1]).squeeze(-1)  # log p(y_i)
            if alt is not None:
                f = f - out.log_probs.gather(-1, alt[done:, t : t + 1]).squeeze(-1)  # − log p(alternative)
            outs.append(f)
        state = out.state
    sorted_out = torch.cat(outs[::-1])  # rows in `order`
    return sorted_out[torch.argsort(order)]


@dataclass
class Attributions:
    """α and every method's scores (steps × Tx) for one sentence and target; plain data."""

    src_tokens: list[str]
    tgt_tokens: list[str]  # the whole target (``</s>`` included)
    steps: list[int]  # the target positions explained (rows of every matrix)
    src_len: int  # real source tokens incl. </s>; later columns are padding
    alpha: np.ndarray  # (K, Tx)
    scores: dict[str, np.ndarray] = field(default_factory=dict)  # method → (K, Tx)
    logprob: np.ndarray = field(default_factory=lambda: np.zeros(0))  # (K,) log p(y_i)
    ig_delta: np.ndarray = field(default_factory=lambda: np.zeros(0))  # (K,) completeness gap
    ig_steps: int | None = None  # a fixed number of IG points, or None: chosen per step by the gap
    ig_points: np.ndarray = field(default_factory=lambda: np.zeros(0, dtype=np.int64))  # (K,) points used

    def ig_gap(self) -> dict[str, float]:
        """The completeness gap |ig_delta| over the explained steps (nats): mean, max, and the largest
        number of IG points used; NaN without IG."""
        d = np.abs(np.asarray(self.ig_delta, dtype=np.float64))
        if not d.size:
            return {"mean": math.nan, "max": math.nan, "points": math.nan}
        return {"mean": float(d.mean()), "max": float(d.max()), "points": float(np.max(self.ig_points, initial=0))}
    baseline: str = "zero"

    def agreement(self) -> dict[str, dict[str, list[float]]]:
        """method → measure → one value per explained step (over real source tokens)."""
        n = self.src_len
        return {m: {k: [agreement(self.alpha[r, :n], s[r, :n])[k] for r in range(len(self.steps))] for k in MEASURES}
                for m, s in self.scores.items()}

    def to_dict(self) -> dict[str, Any]:
        return {"src_tokens": self.src_tokens, "tgt_tokens": self.tgt_tokens, "steps": self.steps,
                "src_len": self.src_len, "alpha": self.alpha.tolist(),
                "scores": {m: s.tolist() for m, s in self.scores.items()}, "logprob": self.logprob.tolist(),
                "ig_delta": self.ig_delta.tolist(), "ig_steps": self.ig_steps,
                "ig_points": np.asarray(self.ig_points).tolist(), "baseline": self.baseline}


def attribute(
    lm: LoadedModel, src_ids: Sequence[int], tgt_ids: Sequence[int], *, steps: Sequence[int] | None = None,
    methods: Sequence[str] = METHODS, ig_steps: int | None = None, baseline: str = "zero", src_len: int | None = None,
    src_tokens: Sequence[str] | None = None, grad_units: int = GRAD_UNITS, alternative: int | None = None,
) -> Attributions:
    """Scores of every method for target positions ``steps`` (default all) of ``tgt_ids``; with
    ``alternative`` (a target word's id), the gradient methods explain the contrast log p(y_i) −
    log p(alternative) instead (:mod:`nmt.explanation.contrastive`), and the leave-one-out methods do not apply.

    ``src_ids`` end with ``</s>`` and may carry padding after ``src_len`` real tokens; ``tgt_ids``
    is y_1 … y_Ty as decoded (the model reads <s> y_1 … y_{Ty−1}). One batch row per explained
    step, so each Captum call explains many steps at once (rows never mix), in chunks of at most
    ``grad_units`` (:data:`GRAD_UNITS`). ``ig_steps`` None chooses IG's points per step by the
    completeness gap (:func:`_refine_ig`); an int fixes them."""
    model = require_surgery(lm)
    if baseline not in BASELINES:
        raise ValueError(f"baseline must be one of {BASELINES}")
    unknown = set(methods) - set(METHODS)
    if unknown:
        raise ValueError(f"unknown attribution methods {sorted(unknown)}; expected {METHODS}")
    if alternative is not None and {"loo_embed", "loo_alpha"} & set(methods):
        raise ValueError("a contrast with an alternative word is explained by the gradient methods only")
    dev = lm.device
    steps = list(range(len(tgt_ids))) if steps is None else list(steps)
    if not steps or not all(0 <= i < len(tgt_ids) for i in steps):
        raise ValueError(f"steps must be target positions in 0 … {len(tgt_ids) - 1}, got {steps}")
    K, Tx, n_src = len(steps), len(src_ids), src_len or len(src_ids)
    src = torch.tensor([list(src_ids)], device=dev)
    lens = torch.full((K,), n_src, device=dev)
    tgt_out = torch.tensor([list(tgt_ids)], device=dev).expand(K, -1)
    tgt_in = torch.tensor([[BOS_ID, *tgt_ids[:-1]]], device=dev).expand(K, -1)
    step_t = torch.tensor(steps, device=dev)
    with torch.no_grad():
        x = model.encoder.embed(src)  # (1, Tx, m)
        real = (torch.arange(Tx, device=dev) < n_src).view(1, Tx, 1)
        unk = model.encoder.embed(torch.tensor([UNK_ID], device=dev))
        fill = unk if baseline == "unk" else torch.zeros_like(unk)
        x_base = torch.where(real, fill.view(1, 1, -1), x)  # padding keeps its own (zero) embedding
        enc = model.encode_embeddings(x, lens[:1])
        run = model.teacher_force(enc, tgt_in[:1])
    lp = run.log_probs[0, step_t, tgt_out[0, step_t]]

    out = Attributions(list(src_tokens or []), [lm.tgt_vocab.itos[t] for t in tgt_ids], steps, n_src,
                       run.alpha[0, step_t].cpu().numpy(), logprob=lp.cpu().numpy(), ig_steps=ig_steps,
                       baseline=baseline)
    alt_out = None if alternative is None else torch.full_like(tgt_out, int(alternative))
    batch = (x, x_base, lens, tgt_in, tgt_out, step_t, alt_out)
    first = IG_START if ig_steps is None else ig_steps
    out.scores.update(_gradient_rows(model, batch, steps, Tx, methods, first, grad_units))
    if "ig" in methods:
        out.ig_delta = out.scores.pop("ig_delta")
        out.ig_points = np.full(K, first, dtype=np.int64)
        if ig_steps is None:
            _refine_ig(model, batch, steps, Tx, out, grad_units)
    with torch.no_grad():
        if "loo_embed" in methods:
            out.scores["loo_embed"] = _loo_embed(model, x, x_base, n_src, tgt_in[:1], tgt_out[0], step_t).cpu().numpy()
        if "loo_alpha" in methods:
            out.scores["loo_alpha"] = _loo_alpha(model, run, enc.annotations[0], tgt_out[0], step_t,
                                                 n_src).cpu().numpy()
    out.scores = {m: out.scores[m] for m in METHODS if m in methods}
    return out


def _gradient_rows(
    model: RNNSearch, batch: tuple[torch.Tensor, ...], steps: Sequence[int], tx: int, methods: Sequence[str],
    points: int, grad_units: int,
) -> dict[str, np.ndarray]:
    """Gradient methods (and ``ig_delta``) for target positions ``steps`` at ``points`` IG points, in
    chunks (:func:`step_chunks`); ``batch`` = (x, x', lengths, target in, target out, all steps, and the
    alternative's ids or None)."""
    x, x_base, lens, tgt_in, tgt_out, _, alt_out = batch
    step_t = torch.tensor(list(steps), device=x.device)
    grads: dict[str, list[np.ndarray]] = {}
    if not {"saliency", "x_grad", "ig"} & set(methods):
        return {}
    for part in step_chunks(steps, tx, points if "ig" in methods else 1, grad_units):
        k = len(part)
        args = (lens[:k], tgt_in[:k], tgt_out[:k], step_t[part], *(() if alt_out is None else (alt_out[:k],)))
        rows_per_batch = max(k, grad_units // ((max(steps[r] for r in part) + 1) * tx))  # Captum's rows at once
        for name, rows in _gradients(model, x, x_base, args, methods, points, rows_per_batch).items():
            grads.setdefault(name, []).append(rows)
    return {name: np.concatenate(rows) for name, rows in grads.items()}


def _refine_ig(
    model: RNNSearch, batch: tuple[torch.Tensor, ...], steps: Sequence[int], tx: int, out: Attributions,
    grad_units: int,
) -> None:
    """Redo IG, at twice the points each time, for the steps whose |ig_delta| > :data:`IG_GAP_TOL`,
    until none is or :data:`IG_MAX` points are reached (``out`` updated in place)."""
    points = int(out.ig_points.max(initial=IG_START))
    while points < IG_MAX:
        bad = np.flatnonzero(np.abs(out.ig_delta) > IG_GAP_TOL)
        if not bad.size:
            return
        points = min(2 * points, IG_MAX)
        redo = _gradient_rows(model, batch, [steps[r] for r in bad], tx, ["ig"], points, grad_units)
        out.scores["ig"][bad], out.ig_delta[bad], out.ig_points[bad] = redo["ig"], redo["ig_delta"], points


def step_chunks(steps: Sequence[int], tx: int, points: int, units: int = GRAD_UNITS) -> list[list[int]]:
    """Consecutive groups of row indices into ``steps`` whose Σ (step + 1) · ``tx`` · ``points`` stays
    within ``units`` (a single step over the limit is a group of its own)."""
    chunks: list[list[int]] = []
    cost = 0
    for r, i in enumerate(steps):
        c = (i + 1) * tx * points
        if not chunks or cost + c > units:
            chunks.append([])
            cost = 0
        chunks[-1].append(r)
        cost += c
    return chunks


def _gradients(
    model: RNNSearch, x: torch.Tensor, x_base: torch.Tensor, args: tuple[torch.Tensor, ...], methods: Sequence[str],
    ig_steps: int, rows_per_batch: int | None = None,
) -> dict[str, np.ndarray]:
    """Saliency, gradient × input and IG (with its completeness gap ``ig_delta``) of one chunk of steps;
    ``args`` = (lengths, target in, target out, steps), one row per step. IG's points go through the model
    ``rows_per_batch`` rows at a time (Captum's ``internal_batch_size``; None: all at once), which bounds
    its memory however many points a step needs."""
    k = len(args[-1])

    def f(inp: torch.Tensor, *rest: torch.Tensor) -> torch.Tensor:
        return target_log_prob(model, inp, *rest)

    xs = x.expand(k, -1, -1).contiguous().requires_grad_(True)
    out: dict[str, np.ndarray] = {}
    if "saliency" in methods or "x_grad" in methods:
        # One gradient serves both: Captum's InputXGradient is x ⊙ Saliency(abs=False) (tests check it).
        g = Saliency(f).attribute(xs, additional_forward_args=args, abs=False).detach()
        out["saliency"] = g.norm(dim=-1).cpu().numpy()  # ‖∂F/∂x_j‖₂ over the embedding dimension
        out["x_grad"] = (xs.detach() * g).sum(-1).cpu().numpy()  # Σ_d x_jd ∂F/∂x_jd
    if "ig" in methods:
        g, delta = IntegratedGradients(f).attribute(
            xs, baselines=x_base.expand(k, -1, -1).contiguous(), additional_forward_args=args, n_steps=ig_steps,
            internal_batch_size=rows_per_batch if rows_per_batch and rows_per_batch < k * ig_steps else None,
            return_convergence_delta=True)
        out["ig"] = g.sum(-1).detach().cpu().numpy()
        out["ig_delta"] = delta.detach().cpu().numpy()
    return out


def _loo_embed(
    model: RNNSearch, x: torch.Tensor, x_base: torch.Tensor, n_src: int, tgt_in: torch.Tensor,
    tgt_out: torch.Tensor, steps: torch.Tensor,
) -> torch.Tensor:
    """Δ log p (K, Tx): row 0 of the batch is x itself, row 1 + j has x_j replaced by x'_j."""
    Tx = x.shape[1]
    eye = torch.eye(Tx, dtype=torch.bool, device=x.device).unsqueeze(-1)  # (Tx, Tx, 1)
    variants = torch.cat([x, torch.where(eye, x_base, x)])  # (1 + Tx, Tx, m)
    lens = torch.full((Tx + 1,), n_src, device=x.device)
    last = int(steps.max()) + 1
    run = model.teacher_force(model.encode_embeddings(variants, lens), tgt_in[:, :last].expand(Tx + 1, -1),
                              readout=False)
    parts = []
    for sl in torch.split(steps, _readout_steps(model, Tx + 1)):  # a few steps at a time: bounded memory
        lp = model.log_probs(run.s_prev[:, sl], run.y_emb[:, sl], run.context[:, sl])  # (1 + Tx, k, K_y)
        parts.append(lp.gather(-1, tgt_out[sl].view(1, -1, 1).expand(Tx + 1, -1, 1)).squeeze(-1))  # (1 + Tx, k)
    lp = torch.cat(parts, dim=1)  # (1 + Tx, K)
    return (lp[0:1] - lp[1:]).T  # (K, Tx)


def _readout_steps(model: RNNSearch, rows: int) -> int:
    """How many target steps of ``rows`` variants to read out at once (:data:`READOUT_ELEMS`)."""
    return max(1, READOUT_ELEMS // (rows * model.decoder.W_o.out_features))


def _loo_alpha(
    model: RNNSearch, run: Forced, annotations: torch.Tensor, tgt_out: torch.Tensor, steps: torch.Tensor, n_src: int,
) -> torch.Tensor:
    """Δ log p (K, Tx) when h_j is masked out of step i's α only (softmax over k ≠ j, eq. 6)."""
    per = _readout_steps(model, run.energies.shape[-1] + 1)
    if len(steps) > per:  # a few steps at a time: bounded memory
        return torch.cat([_loo_alpha(model, run, annotations, tgt_out, sl, n_src) for sl in torch.split(steps, per)])
    e = run.energies[0, steps]  # (K, Tx)
    K, Tx = e.shape
    keep = torch.arange(Tx, device=e.device) < n_src  # the model's own mask
    masks = torch.cat([keep.view(1, Tx), keep & ~torch.eye(Tx, dtype=torch.bool, device=e.device)])  # (1+Tx, Tx)
    alpha = model.decoder.attention.weights(e.unsqueeze(1), masks)  # (K, 1+Tx, Tx)   the model's eq. (6)
    alpha = alpha.nan_to_num(0.0)  # a one-token source has nothing left to attend to
    s = run.s_prev[0, steps].unsqueeze(1).expand(-1, Tx + 1, -1)  # s_{i-1}
    y = run.y_emb[0, steps].unsqueeze(1).expand(-1, Tx + 1, -1)  # E y_{i-1}
    c = context_of(alpha, annotations)  # (K, 1+Tx, 2n)   c'_i = Σ_k α'_ik h_k, eq. (5)
    lp = model.log_probs(s, y, c)
    lp = lp.gather(-1, tgt_out[steps].view(K, 1, 1).expand(-1, Tx + 1, 1)).squeeze(-1)  # (K, 1+Tx)
    return lp[:, :1] - lp[:, 1:]  # row 0 is the model's own α


# ----------------------------------------------------------------------------------------------
# Convenience entry points
# ----------------------------------------------------------------------------------------------


def explain_trace(lm: LoadedModel, trace: DecodeTrace, **kw: Any) -> Attributions:
    """Attributions for every step of a decode trace (greedy, forced, stepper or surgery)."""
    src_ids = lm.src_vocab.encode(trace.src_tokens[:-1])
    return attribute(lm, src_ids, [s.token_id for s in trace.steps], src_tokens=trace.src_tokens, **kw)


def explain(
    lm: LoadedModel, source: str, reference: str | None = None, *, pretokenized: bool = False,
    max_src_tokens: int = MAX_SOURCE_TOKENS, **kw: Any,
) -> tuple[DecodeTrace, Attributions]:
    """Decode ``source`` greedily, or force-decode ``reference`` (so a reference can be explained),
    and attribute every target word."""
    require_surgery(lm)
    if reference is None:
        trace = greedy(lm, [source], topk=1, max_src_tokens=max_src_tokens)[0]
    else:
        trace = forced(lm, [source], [reference], topk=1, pretokenized=pretokenized,
                       max_src_tokens=max_src_tokens)[0]
    return trace, explain_trace(lm, trace, **kw)


# ----------------------------------------------------------------------------------------------
# Agreement between α and an attribution
# ----------------------------------------------------------------------------------------------


def kendall_tau(a: Sequence[float] | np.ndarray, b: Sequence[float] | np.ndarray) -> float:
    """Kendall's τ-b (ties corrected; scipy); NaN when either vector is constant."""
    a, b = np.asarray(a, dtype=np.float64), np.asarray(b, dtype=np.float64)
    if len(a) < 2 or np.ptp(a) == 0 or np.ptp(b) == 0:
        return math.nan
    return float(kendalltau(a, b).statistic)


def top1(a: Sequence[float] | np.ndarray, b: Sequence[float] | np.ndarray) -> float:
    """1.0 when both vectors have the same argmax (first one on ties), else 0.0."""
    return float(int(np.argmax(a)) == int(np.argmax(b)))


def js_divergence(p: Sequence[float] | np.ndarray, q: Sequence[float] | np.ndarray) -> float:
    """JSD(P, Q) in nats (natural log; ∈ [0, ln 2]) of two non-negative vectors, each normalised."""
    p, q = np.asarray(p, dtype=np.float64), np.asarray(q, dtype=np.float64)
    if p.sum() <= 0 or q.sum() <= 0:
        return math.nan
    p, q = p / p.sum(), q / q.sum()
    m = 0.5 * (p + q)

    def kl(a: np.ndarray) -> float:
        nz = a > 0
        return float((a[nz] * np.log(a[nz] / m[nz])).sum())

    return max(0.0, 0.5 * kl(p) + 0.5 * kl(q))


def agreement(alpha: Sequence[float] | np.ndarray, scores: Sequence[float] | np.ndarray) -> dict[str, float]:
    """Kendall τ-b and top-1 agreement of α with the signed scores; JSD of α with |scores| normalised."""
    s = np.asarray(scores, dtype=np.float64)
    return {"kendall_tau": kendall_tau(alpha, s), "top1": top1(alpha, s), "jsd": js_divergence(alpha, np.abs(s))}
