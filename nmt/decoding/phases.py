"""One decoder step in three phases, Look / Generate / Update, read from the model's own step.

The MILA WMT'15 system description (Jean et al. 2015, Table 1) names the three things an RNNsearch
decoder does per target word: **Look** (the alignment model scores every annotation h_j from
s_{i-1}: e_ij, α_ij = softmax_j e_ij, c_i = Σ_j α_ij h_j; Bahdanau et al. eqs. 5-6), **Generate**
(the deep output t̃_i = U_o s_{i-1} + V_o E y_{i-1} + C_o c_i, its maxout t_i and the softmax over the
vocabulary; App. A.2.2) and **Update** (the GRU s_i = f(s_{i-1}, y_{i-1}, c_i); eq. 4 and A.2.2).
Luong et al.'s decoder runs them in another order: the recurrent step first (Update: h_t from
h_{t-1}, E y_{t-1} and, with input feeding, h̃_{t-1}), then Look (score(h_t, h̄_s), a_t, c_t; eqs. 7-8)
and Generate (h̃_t = tanh(W_c [c_t; h_t]), softmax(W_s h̃_t); eqs. 5-6).

Nothing here computes a step: :func:`explain` calls the model's own ``step`` (the one every decoder
calls) on the state a :class:`~nmt.decoding.search.Stepper` recorded for step i, with a ``parts`` dict that
the step fills with its intermediate tensors (the GRU gates, t̃_i, t_i, the logits). The result is
plain data (lists of floats), so views and tests read it without torch. Its ``trace_gap`` says how
far the re-run is from what the trace recorded for that step (0 for the stepper's own steps).
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass, field

import torch

from nmt.decoding.search import Stepper
from nmt.decoding.trace import DecodeTrace, StepRecord
from nmt.models.checkpoint import LoadedModel
from nmt.models.contract import capabilities
from nmt.text.vocab import EOS


@dataclass
class Candidate:
    """One next-word candidate: its logit (before the softmax), log p and p (p as the trace computes it)."""

    word: str
    token_id: int
    logit: float
    logprob: float
    p: float


@dataclass
class Look:
    """Where the step looked: e_i· and α_i· over the source (None for a fixed c), and c_i."""

    energies: list[float] | None
    alpha: list[float] | None
    context: list[float]  # c_i (2n for RNNsearch, n for Luong)
    position: float | None = None  # local attention's p_t
    window: list[int] | None = None


@dataclass
class Generate:
    """What the step wrote: the deep output before/after maxout (RNNsearch) or h̃_t (Luong), and the softmax."""

    pre: list[float] | None  # t̃_i (2l); None for Luong
    hidden: list[float]  # t_i = maxout(t̃_i) (l), or h̃_t (n) for Luong
    topk: list[Candidate]
    written: Candidate  # the word the trace wrote at this step (perhaps outside the top-k)


@dataclass
class Update:
    """How the state moved: previous and new state (top layer), and the gates a GRU exposes."""

    prev: list[float]  # s_{i-1} / h_{t-1}
    new: list[float]  # s_i / h_t
    z: list[float] | None = None  # GRU update gate z_i (RNNsearch)
    r: list[float] | None = None  # GRU reset gate r_i
    candidate: list[float] | None = None  # s̃_i, the GRU's proposal
    feed: list[float] | None = None  # h̃_{t-1} read with input feeding (Luong)
    memory_prev: list[float] | None = None  # LSTM memory cell before and after (Luong, LSTM cells)
    memory: list[float] | None = None


@dataclass
class StepPhases:
    """One target step split into Look / Generate / Update, in the model's order (``order``)."""

    i: int
    arch: str  # rnnsearch | luong
    context: str  # attention | fixed | mean
    variant: dict[str, object]  # Luong: score, attention, input_feeding, cell, layers; empty for RNNsearch
    look: Look
    generate: Generate
    update: Update
    shapes: dict[str, list[int]] = field(default_factory=dict)  # tensor name → shape, read from the tensors
    trace_gap: float = 0.0  # largest |difference| from the trace's α, top-k p and written log p
    order: tuple[str, ...] = field(kw_only=True)  # the phases in the model's order (Capabilities.phases)


def _row(t: torch.Tensor | None) -> list[float] | None:
    return None if t is None else t[0].detach().double().tolist()


def _shape(t: torch.Tensor) -> list[int]:
    return list(t.shape[1:])  # the batch row dropped


def _candidates(lm: LoadedModel, logits: torch.Tensor, log_probs: torch.Tensor, k: int, written: int
                ) -> tuple[list[Candidate], Candidate]:
    itos = lm.tgt_vocab.itos
    lp, lg = log_probs[0], logits[0].double()

    def cand(t: int) -> Candidate:
        return Candidate(itos[t], t, float(lg[t]), float(lp[t]), float(lp[t].exp()))

    return [cand(int(t)) for t in lp.topk(k).indices], cand(written)


def trace_gap(ph: StepPhases, rec: StepRecord) -> float:
    """The largest absolute difference between the phases and the trace's record of the same step."""
    gaps = [abs(ph.generate.written.logprob - rec.logprob)]
    if (ph.look.alpha is None) != (rec.alpha is None):
        return math.inf
    if rec.alpha is not None:
        gaps += [abs(a - b) for a, b in zip(ph.look.alpha, rec.alpha, strict=True)]
    for c, (w, p) in zip(ph.generate.topk, rec.topk, strict=False):
        gaps.append(abs(c.p - p) if c.word == w else math.inf)
    return max(gaps)


def supported(model: object) -> bool:
    """Whether :func:`explain` can split this model's step: its capabilities name its phases (one
    RNNsearch / RNNencdec or Luong model; not an ensemble's or a fusion's two-model step)."""
    return capabilities(model).phases is not None


Parts = tuple[dict[str, object], Generate, Update, dict[str, list[int]]]


def _rnnsearch_parts(model: object, stepper: Stepper, state: object, out: object, parts: dict[str, torch.Tensor],
                     topk: list[Candidate], written: Candidate) -> Parts:
    """RNNsearch's Generate (deep output t̃_i, maxout t_i) and Update (the GRU's gates), and their shapes."""
    gen = Generate(_row(parts["t_tilde"]), _row(parts["t"]), topk, written)
    upd = Update(_row(state.s), _row(out.state.s), _row(parts["z"]), _row(parts["r"]), _row(parts["candidate"]))
    shapes = {"memory": list(stepper.enc.annotations.shape[1:]), "state": _shape(state.s),
              "y_emb": [model.cfg.emb_dim], "t_tilde": _shape(parts["t_tilde"]), "t": _shape(parts["t"])}
    return {}, gen, upd, shapes


def _luong_parts(model: object, stepper: Stepper, state: object, out: object, parts: dict[str, torch.Tensor],
                 topk: list[Candidate], written: Candidate) -> Parts:
    """Luong's variant, Generate (h̃_t) and Update (the top layer's h_t, the fed-back h̃_(t-1), the memory
    cell), and their shapes."""
    cfg = model.cfg
    variant = {"score": cfg.score, "attention": cfg.attention, "input_feeding": cfg.input_feeding,
               "cell": cfg.cell, "layers": cfg.layers, "window": cfg.window}
    prev, new = state.s, out.state.s
    gen = Generate(None, _row(new.feed), topk, written)
    upd = Update(_row(prev.top), _row(new.top), feed=_row(prev.feed) if cfg.input_feeding else None,
                 memory_prev=None if prev.c is None else _row(prev.c[:, -1]),
                 memory=None if new.c is None else _row(new.c[:, -1]))
    shapes = {"memory": list(stepper.enc.memory.shape[1:]), "state": _shape(new.top),
              "y_emb": [cfg.emb_dim], "h_tilde": _shape(new.feed)}
    return variant, gen, upd, shapes


PARTS = {"rnnsearch": _rnnsearch_parts, "luong": _luong_parts}
"""Each kind's (``nmt.models.registry.KINDS``) Generate and Update read from its step's parts
(tests/test_registry.py checks that every kind has one)."""


@torch.no_grad()
def explain(stepper: Stepper, i: int, record: StepRecord | None = None) -> StepPhases:
    """Step i (already taken, 0 ≤ i < position) of ``stepper`` again, through the model's own step,
    with its intermediate tensors: the phases of that step and how far they are from its record
    (``record``: another trace's record of the same step, e.g. the beam search's, instead)."""
    lm, rec = stepper.lm, record or stepper.trace.steps[i]
    model = lm.model
    caps = capabilities(model)
    if caps.phases is None:
        raise TypeError(f"no Look / Generate / Update view for {type(model).__name__}")
    state = stepper.state_before(i)
    parts: dict[str, torch.Tensor] = {}
    out = model.step(stepper.enc, state, stepper.context, parts=parts)
    att = out.attended
    topk, written = _candidates(lm, parts["logits"], out.log_probs, max(len(rec.topk), 1), rec.token_id)
    look = Look(_row(att.energies), _row(att.alpha), _row(att.context),
                None if att.position is None else float(att.position[0]),
                None if att.window is None else att.window[0].tolist())
    shapes = {"context": _shape(att.context), "logits": _shape(parts["logits"])}
    if att.alpha is not None:
        shapes["alpha"] = _shape(att.alpha)
    variant, gen, upd, more = PARTS[caps.arch](model, stepper, state, out, parts, topk, written)
    shapes |= more
    ph = StepPhases(i, caps.arch, stepper.context, variant, look, gen, upd, shapes, order=caps.phases)
    ph.trace_gap = trace_gap(ph, rec)
    return ph


def replay(lm: LoadedModel, trace: DecodeTrace, upto: int, start: Stepper | None = None, topk: int = 5) -> Stepper:
    """A stepper forced along the first ``upto`` words of ``trace`` (e.g. a beam search's best
    hypothesis), on the trace's own source tokens, so :func:`explain` can open any of those steps.

    ``start``, a stepper from an earlier call, is continued from the words it shares with ``trace``
    (re-synced with :meth:`~nmt.decoding.search.Stepper.fork`) instead of decoding them again."""
    src = trace.src_tokens[:-1] if trace.src_tokens and trace.src_tokens[-1] == EOS else trace.src_tokens
    ids = [rec.token_id for rec in trace.steps[:upto]]
    spec = None if trace.candidates is None else trace.candidates.spec  # the trace's own candidate list
    if (start is None or start.lm is not lm or start.context != trace.context
            or start.trace.src_tokens != trace.src_tokens or start.trace.candidates != trace.candidates):
        start = Stepper(lm, " ".join(src), context=trace.context, topk=topk, max_src_tokens=max(len(src), 1),
                        pretokenized=True, candidates=spec)
    done = [rec.token_id for rec in start.trace.steps]
    common = next((k for k, (a, b) in enumerate(zip(done, ids, strict=False)) if a != b), min(len(done), len(ids)))
    stepper = start if common == len(done) else start.fork(common)
    for token_id in ids[common:]:
        stepper.step(force=token_id)
    return stepper


def norm(v: Sequence[float] | None) -> float | None:
    """‖v‖ (None for None)."""
    return None if v is None else math.sqrt(sum(x * x for x in v))
