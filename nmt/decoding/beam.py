"""Beam search, batched over sentences and beams, with length normalisation and an n-best list.

Every hypothesis' steps are recorded by :mod:`nmt.decoding.recorder` from the model's own step, so the best
hypothesis' trace reads like a greedy one; ``record_beam`` also keeps every step's live, pruned and
finished hypotheses (:class:`nmt.decoding.trace.BeamStep`) for the beam explorer.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass, field

import torch

from nmt.decoding.recorder import StepView, encode_sources, finish_trace, in_length_order, new_trace
from nmt.decoding.source import MAX_SOURCE_TOKENS, InputError, Source, max_target_len, prepare_source
from nmt.decoding.toolkit import SearchRules, masked, penalty, rules_of
from nmt.decoding.trace import BeamStep, DecodeTrace, Hypothesis, NBestEntry, StepRecord
from nmt.models.candidates import CandidateSpec
from nmt.models.checkpoint import LoadedModel
from nmt.models.rnnsearch import DecoderState
from nmt.text.vocab import BOS_ID, EOS_ID

LENGTH_NORMS = ("none", "length", "gnmt")


def length_penalty(length: int, kind: str, gnmt_alpha: float = 0.6) -> float:
    """Divisor of a hypothesis' log-probability: 1, its length (Jean et al. 2015) or GNMT's lp."""
    if kind == "none":
        return 1.0
    if kind == "length":
        return float(max(length, 1))
    if kind == "gnmt":
        return ((5.0 + length) / 6.0) ** gnmt_alpha
    raise ValueError(f"length_norm must be one of {LENGTH_NORMS}")


@dataclass
class _Slot:
    """Book-keeping of one live hypothesis of one sentence."""

    hyp_id: int
    tokens: list[int]
    records: list[StepRecord]
    logprob: float


@torch.no_grad()
def beam_search(
    lm: LoadedModel, sentences: Sequence[str], *, beam: int = 5, n_best: int = 1,
    length_norm: str = "length", gnmt_alpha: float = 0.6, context: str | None = None, topk: int = 5,
    record_beam: bool = True, unk_replace: bool = False, batch_size: int = 32,
    max_src_tokens: int = MAX_SOURCE_TOKENS, candidates: CandidateSpec | None = None, toolkit_rules: bool = True,
) -> list[DecodeTrace]:
    """Beam search with length normalisation; each trace gets the best hypothesis' steps, the
    n-best list with per-hypothesis α, and (``record_beam``) every step's live, pruned and
    finished hypotheses with cumulative and normalised scores and parents. ``candidates``: each
    sentence writes only words of its candidate list (:mod:`nmt.models.candidates`).

    A sentence stops when ``beam`` hypotheses have finished or at the length limit (where the
    live ones are finished as they are). Live hypotheses are ranked by log-probability, finished
    ones by the normalised score. An imported model searches by its toolkit's rules instead, unless
    ``toolkit_rules`` is False (:func:`_toolkit_search`: its length limit, tokens never written, minimum length,
    its beam's ending, ranking and length penalty; ``length_norm`` and ``gnmt_alpha`` are then not used).
    """
    if beam < 1:
        raise InputError("beam size must be at least 1")
    if length_norm not in LENGTH_NORMS:
        raise InputError(f"length_norm must be one of {LENGTH_NORMS}")
    n_best = max(1, min(n_best, beam))
    mode = context or lm.config.context
    sources = [prepare_source(lm, s, max_src_tokens, candidates=candidates) for s in sentences]
    traces = [new_trace(lm, s, "beam", mode) for s in sources]
    for t in traces:
        t.beam_size, t.length_norm = beam, length_norm
    how = _Beam(lm, mode, beam, n_best, length_norm, gnmt_alpha, topk, record_beam, unk_replace,
                rules_of(lm) if toolkit_rules else None)
    if how.rules is not None:  # the toolkit's own beam, one sentence at a time as the toolkits were run
        for src, t in zip(sources, traces, strict=True):
            t.length_norm = f"{how.rules.toolkit}: {how.rules.length_penalty}"
            _toolkit_search(how, how.rules, src, t)
        return traces
    for idx in in_length_order(len(sources), [len(s.ids) for s in sources], batch_size):
        _beam_batch(how, [sources[b] for b in idx], [traces[b] for b in idx])
    return traces


@dataclass
class _Beam:
    """How a beam search runs: the model and context, k, the n-best size and the recording options."""

    lm: LoadedModel
    mode: str
    k: int
    n_best: int
    length_norm: str
    gnmt_alpha: float
    topk: int
    record_beam: bool
    unk_replace: bool
    rules: SearchRules | None = None  # an imported model's toolkit rules (limit, banned tokens, minimum length)

    def norm(self, logprob: float, length: int) -> float:
        """The score a finished hypothesis is ranked by."""
        return logprob / length_penalty(length, self.length_norm, self.gnmt_alpha)


@dataclass
class _Search:
    """One sentence's search: its trace, live slots (None where empty), finished hypotheses, next id."""

    trace: DecodeTrace
    n_src: int
    limit: int
    slots: list[_Slot | None]
    finished: list[tuple[float, _Slot]] = field(default_factory=list)
    next_id: int = 1


def _expand(
    how: _Beam, search: _Search, view: StepView, row0: int, i: int, ranked: tuple[list[float], list[int]], V: int,
) -> tuple[list[_Slot], list[int]]:
    """Take a sentence's 2k best expansions (``ranked``: scores and flat parent·V + token indices, best
    first) at step i: up to k live ones, finished ones (</s> among the first k), the rest pruned; the
    new live slots and their parents' positions (``row0`` is the sentence's first row in ``view``)."""
    itos, k = how.lm.tgt_vocab.itos, how.k
    step_rec = BeamStep() if how.record_beam else None
    new_live: list[_Slot] = []
    parents: list[int] = []
    for rank, (score, flat) in enumerate(zip(*ranked, strict=True)):
        if math.isinf(score):
            continue
        parent, tok = divmod(flat, V)
        p_slot = search.slots[parent]
        assert p_slot is not None  # empty slots score −∞
        accepted = len(new_live) < k and (tok != EOS_ID or rank < k)
        length = len(p_slot.tokens) + 1
        status = "pruned"
        if accepted:
            rec = view.record(how.lm, row0 + parent, i, tok, False, search.n_src)
            slot = _Slot(search.next_id, [*p_slot.tokens, tok], [*p_slot.records, rec], score)
            if tok == EOS_ID:
                search.finished.append((how.norm(score, length), slot))
                status = "finished"
            else:
                new_live.append(slot)
                parents.append(parent)
                status = "live"
        if step_rec is not None:
            h = Hypothesis(search.next_id, p_slot.hyp_id, i, itos[tok], [itos[t] for t in [*p_slot.tokens, tok]],
                           score, how.norm(score, length), status == "finished", status)
            getattr(step_rec, status).append(h)
        search.next_id += 1
    if step_rec is not None:
        search.trace.beam_steps.append(step_rec)
    return new_live, parents


def _beam_batch(how: _Beam, sources: Sequence[Source], traces: Sequence[DecodeTrace]) -> None:
    """Beam search over a batch laid out as k rows per searching sentence.

    Row a·k + j holds slot j of the a-th searching sentence. Empty slots carry a cumulative score of
    −∞, so all their expansions rank last; the k rows of a sentence share its encoder rows, which
    are only re-selected when a sentence finishes.
    """
    lm, k = how.lm, how.k
    dev = lm.device
    B = len(sources)
    enc = encode_sources(lm, sources).select(torch.arange(B, device=dev).repeat_interleave(k))  # (B·k, …)
    state = lm.model.initial_state(enc, torch.full((B * k,), BOS_ID, dtype=torch.long, device=dev))
    # The search starts from one empty hypothesis (id 0) per sentence.
    limit = how.rules.max_len if how.rules else max_target_len
    searches = [_Search(t, len(s.ids), limit(len(s.ids)), [_Slot(0, [], [], 0.0)] + [None] * (k - 1))
                for s, t in zip(sources, traces, strict=True)]
    cum = torch.full((B, k), -math.inf, device=dev)
    cum[:, 0] = 0.0
    active = list(range(B))  # sentence of each block of k rows
    i = 0
    while active:
        out = lm.model.step(enc, state, how.mode)  # (A·k, K_y)
        view = StepView(out, state.s, how.topk)
        V = out.log_probs.shape[-1]
        lp = out.log_probs if how.rules is None else masked(lm, how.rules, out.log_probs, i)
        cand = (cum.unsqueeze(-1) + lp.view(len(active), k, V)).view(len(active), k * V)
        top_v, top_i = cand.topk(min(2 * k, k * V), dim=-1)  # (A, 2k): one call for the batch
        kept: list[int] = []  # positions a (in `active`) of sentences still searching
        sel: list[int] = []  # for each kept sentence, the k rows its new slots extend
        tokens: list[int] = []
        new_cum: list[float] = []
        for a, (b, vals, idxs) in enumerate(zip(active, top_v.tolist(), top_i.tolist(), strict=True)):
            search = searches[b]
            new_live, parents = _expand(how, search, view, a * k, i, (vals, idxs), V)
            at_limit = i + 1 >= search.limit
            if len(search.finished) >= k or at_limit or not new_live:
                if at_limit or len(search.finished) < how.n_best:
                    search.finished.extend((how.norm(s.logprob, len(s.tokens)), s) for s in new_live)
                _conclude(lm, search.trace, search.finished, how.n_best, how.unk_replace)
                continue
            pad = k - len(new_live)
            search.slots = [*new_live, *([None] * pad)]
            kept.append(a)
            sel += [a * k + p for p in parents] + [a * k] * pad
            tokens += [s.tokens[-1] for s in new_live] + [EOS_ID] * pad
            new_cum += [s.logprob for s in new_live] + [-math.inf] * pad
        i += 1
        if not kept:
            break
        if len(kept) < len(active):
            enc = enc.select(torch.tensor([a * k + j for a in kept for j in range(k)], device=dev))
            active = [active[a] for a in kept]
        state = DecoderState(out.state.s.index_select(0, torch.tensor(sel, device=dev)),
                             torch.tensor(tokens, dtype=torch.long, device=dev))
        cum = torch.tensor(new_cum, device=dev).view(len(active), k)


def _conclude(
    lm: LoadedModel, trace: DecodeTrace, finished: list[tuple[float, _Slot]], n_best: int, unk_replace: bool
) -> None:
    """Rank finished hypotheses and write the best one's steps and the n-best list into the trace."""
    ranked = sorted(finished, key=lambda x: -x[0])
    for score, slot in ranked[:n_best]:
        tmp = DecodeTrace(trace.source, trace.src_tokens, trace.src_unk, "beam", trace.context, slot.records,
                          dictionary=trace.dictionary)
        finish_trace(lm, tmp, unk_replace)
        alpha = None if not tmp.has_alignment else [r.alpha for r in slot.records]
        trace.nbest.append(NBestEntry([r.token for r in slot.records], tmp.translation, slot.logprob, score, alpha))
    if ranked:
        trace.steps = list(ranked[0][1].records)
    finish_trace(lm, trace, unk_replace)


@torch.no_grad()
def _toolkit_search(how: _Beam, rules: SearchRules, src: Source, trace: DecodeTrace) -> None:
    """The toolkit's own beam of ``how.k`` on one sentence (the loops :mod:`nmt.decoding.toolkit` cites), recorded
    as this app's beam is: every step's live, finished and pruned hypotheses (pruned: the k next-best
    continuations, shown only), the n-best by the toolkit's score and the best one's steps.

    Each step takes the k best continuations (cumulative log p / the toolkit's penalty, the same for every row of
    a step). JoeyNMT: every row goes on, finished ones too; a slot once finished stays finished, a hypothesis is
    kept when it ends with its only ``</s>`` (or at the limit) and the search ends when every slot has finished.
    OpenNMT-py: a row that writes ``</s>`` is kept with its score and leaves the beam; the search ends when the
    best row writes ``</s>`` (or at the limit). The best kept score wins (the first kept of equal scores)."""
    lm, k, dev, joey = how.lm, how.k, how.lm.device, rules.beam == "joeynmt"
    enc = encode_sources(lm, [src]).select(torch.zeros(k, dtype=torch.long, device=dev))
    state = lm.model.initial_state(enc, torch.full((k,), BOS_ID, dtype=torch.long, device=dev))
    cum = torch.tensor([0.0] + [-math.inf] * (k - 1), device=dev)
    rows, done_slot, kept = [_Slot(0, [], [], 0.0)] * k, [False] * k, []
    limit, itos, next_id = rules.max_len(len(src.ids)), lm.tgt_vocab.itos, 1
    for step in range(limit):
        out = lm.model.step(enc, state, how.mode)
        view = StepView(out, state.s, how.topk)
        lp = masked(lm, rules, out.log_probs.float(), step) + cum.unsqueeze(1)
        V, pen = lp.shape[1], penalty(rules, step + 1 if joey else step + 2)  # OpenNMT-py counts <s>
        scores, flat = (lp / pen).reshape(-1).topk(k)
        parents, toks, cum = (flat // V).tolist(), (flat % V).tolist(), scores * pen
        new = []
        for r, t, c in zip(parents, toks, cum.tolist(), strict=True):
            rec = view.record(lm, r, step, t, False, len(src.ids))
            new.append(_Slot(next_id, [*rows[r].tokens, t], [*rows[r].records, rec], c))
            next_id += 1
        last = step + 1 == limit
        if joey:  # joeynmt/search.py beam_search: is_finished kept by slot, not reordered with the beam
            done_slot = [f or t == EOS_ID or s == -math.inf or last for f, t, s in zip(done_slot, toks,
                                                                                     scores.tolist(), strict=True)]
            ends = [f and ((new[j].tokens.count(EOS_ID) == 0 and last) or (new[j].tokens.count(EOS_ID) == 1 and
                                                                          toks[j] == EOS_ID))
                    for j, f in enumerate(done_slot)]
            stop = all(done_slot)
        else:  # onmt/translate/beam_search.py update_finished
            ends = [t == EOS_ID or last for t in toks]
            cum = cum.masked_fill(torch.tensor(ends, device=dev), -65504.0)
            stop = ends[0]
        kept += [(scores[j].item(), new[j]) for j in range(k) if ends[j]]
        if how.record_beam:
            _record_toolkit_step(trace, new, parents, rows, scores.tolist(), ends, itos)
            _record_pruned(trace, lp / pen, flat.tolist(), rows, step, itos, k)
        rows = new
        if stop:
            break
        state = DecoderState(out.state.s.index_select(0, torch.tensor(parents, dtype=torch.long, device=dev)),
                             torch.tensor(toks, dtype=torch.long, device=dev))
    _conclude(lm, trace, kept, how.n_best, how.unk_replace)


def _record_toolkit_step(trace: DecodeTrace, new: list[_Slot], parents: list[int], rows: list[_Slot],
                         scores: list[float], ends: list[bool], itos: list[str]) -> None:
    """The toolkit beam's step as a :class:`BeamStep`: each row's hypothesis, finished where it was kept."""
    step_rec = BeamStep()
    for j, slot in enumerate(new):
        if math.isinf(scores[j]):
            continue
        status = "finished" if ends[j] else "live"
        getattr(step_rec, status).append(Hypothesis(slot.hyp_id, rows[parents[j]].hyp_id, len(slot.tokens) - 1,
                                                    itos[slot.tokens[-1]], [itos[t] for t in slot.tokens],
                                                    slot.logprob, scores[j], ends[j], status))
    trace.beam_steps.append(step_rec)


def _record_pruned(trace: DecodeTrace, scored: torch.Tensor, chosen: list[int], rows: list[_Slot], step: int,
                   itos: list[str], k: int) -> None:
    """The k next-best continuations the toolkit's beam left out at this step (shown as pruned)."""
    V = scored.shape[1]
    vals, idx = scored.reshape(-1).topk(min(2 * k, scored.numel()))
    for v, f in zip(vals.tolist(), idx.tolist(), strict=True):
        if f in chosen or math.isinf(v):
            continue
        parent, tok = divmod(f, V)
        tokens = [itos[t] for t in [*rows[parent].tokens, tok]]
        trace.beam_steps[-1].pruned.append(Hypothesis(-1, rows[parent].hyp_id, step, itos[tok], tokens, v, v,
                                                      False, "pruned"))
