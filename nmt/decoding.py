"""One decoding core: greedy, beam and forced decoding, and token-by-token stepping.

Every entry point returns :class:`nmt.trace.DecodeTrace` objects built by the same per-step
recorder, so a view can switch between them freely. Decoding is batched over sentences (and over
beams), with finished sentences dropped from the batch as they end.

Bad input never crashes: an empty sentence raises :class:`InputError` with a clear message, and a
source longer than ``max_src_tokens`` (default :data:`MAX_SOURCE_TOKENS`) is truncated, with
``trace.truncated`` set, so callers can show a notice.
"""

from __future__ import annotations

import copy
import dataclasses
import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field

import torch

from nmt.checkpoint import LoadedModel
from nmt.data import pad_ids
from nmt.model import DecoderState, EncoderState, StepOutput
from nmt.trace import BeamStep, DecodeTrace, Hypothesis, NBestEntry, StepRecord
from nmt.vocab import BOS_ID, EOS, EOS_ID, UNK_ID

MAX_SOURCE_TOKENS = 100
LENGTH_NORMS = ("none", "length", "gnmt")


class InputError(ValueError):
    """A user-facing problem with the input sentence (message fit to show as is)."""


@dataclass
class Source:
    """A tokenised source sentence as the encoder sees it."""

    text: str
    tokens: list[str]  # without </s>
    ids: list[int]  # with </s>
    unk: list[bool]  # per token of tokens + </s>
    truncated: bool


def prepare_source(
    lm: LoadedModel, text: str, max_src_tokens: int = MAX_SOURCE_TOKENS, pretokenized: bool = False
) -> Source:
    """Tokenise and look up a raw sentence; ``pretokenized`` splits on spaces only (keeps indices)."""
    if not isinstance(text, str) or not text.strip():
        raise InputError("The source sentence is empty: type a sentence to translate.")
    tokens = text.split() if pretokenized else lm.src_tok.tokenize(text)
    if not tokens:
        raise InputError("The source sentence has no words after tokenisation.")
    truncated = len(tokens) > max_src_tokens
    tokens = tokens[:max_src_tokens]
    ids = lm.src_vocab.encode(tokens)
    return Source(text, tokens, ids, [i == UNK_ID for i in ids], truncated)


def max_target_len(src_len: int) -> int:
    """Longest output allowed for a source of ``src_len`` tokens."""
    return min(2 * src_len + 10, 250)


def length_penalty(length: int, kind: str, gnmt_alpha: float = 0.6) -> float:
    """Divisor of a hypothesis' log-probability: 1, its length (Jean et al. 2015) or GNMT's lp."""
    if kind == "none":
        return 1.0
    if kind == "length":
        return float(max(length, 1))
    if kind == "gnmt":
        return ((5.0 + length) / 6.0) ** gnmt_alpha
    raise ValueError(f"length_norm must be one of {LENGTH_NORMS}")


def _encode(lm: LoadedModel, sources: Sequence[Source]) -> EncoderState:
    src, src_len = pad_ids([s.ids for s in sources])
    return lm.model.encode(src.to(lm.device), src_len.to(lm.device))


def _new_trace(lm: LoadedModel, src: Source, method: str, context: str) -> DecodeTrace:
    return DecodeTrace(
        source=src.text, src_tokens=[*src.tokens, EOS], src_unk=src.unk, method=method,
        context=context, truncated=src.truncated,
    )


class _StepView:
    """Host-side copies of one batched step, so records are cut from lists, not tensors."""

    def __init__(self, out: StepOutput, s_prev: torch.Tensor, topk: int) -> None:
        top_lp, top_id = out.log_probs.topk(topk, dim=-1)
        self.log_probs = out.log_probs
        self.top_p = top_lp.exp().tolist()
        self.top_id = top_id.tolist()
        att = out.attended
        self.alpha = None if att.alpha is None else att.alpha.tolist()
        self.energies = None if att.energies is None else att.energies.tolist()
        self.state_norm = s_prev.norm(dim=-1).tolist()
        self.context_norm = att.context.norm(dim=-1).tolist()
        position, window = getattr(att, "position", None), getattr(att, "window", None)  # local attention
        self.position = None if position is None else position.tolist()
        self.window = None if window is None else window.tolist()
        self.members = getattr(att, "member_steps", None)  # an ensemble's members (nmt.ensemble)

    def record(self, lm: LoadedModel, row: int, i: int, token_id: int, forced: bool, n_src: int) -> StepRecord:
        itos = lm.tgt_vocab.itos
        return StepRecord(
            i=i, token=itos[token_id], token_id=token_id,
            logprob=float(self.log_probs[row, token_id]), forced=forced,
            energies=None if self.energies is None else self.energies[row][:n_src],
            alpha=None if self.alpha is None else self.alpha[row][:n_src],
            topk=[(itos[t], p) for t, p in zip(self.top_id[row], self.top_p[row], strict=True)],
            state_norm=self.state_norm[row], context_norm=self.context_norm[row],
            position=None if self.position is None else self.position[row],
            window=None if self.window is None else self.window[row],
            members=None if self.members is None else self.members(row, token_id, n_src),
        )


def _finish(lm: LoadedModel, trace: DecodeTrace, unk_replace: bool) -> DecodeTrace:
    """Fill the output tokens and the detokenised translation of a trace."""
    trace.finished = bool(trace.steps) and trace.steps[-1].token_id == EOS_ID
    copies = trace.unk_copies() if unk_replace else {}  # Jean et al. (2015), the trace's own rule
    words = []
    for s in trace.steps:
        if s.token_id == EOS_ID:
            break
        words.append(copies[s.i][1] if s.i in copies else s.token)
    trace.translation = lm.tgt_tok.detokenize(words)
    return trace


def _in_length_order(n: int, lengths: Sequence[int], batch_size: int) -> list[list[int]]:
    order = sorted(range(n), key=lambda i: -lengths[i])
    return [order[k : k + batch_size] for k in range(0, n, batch_size)]


# ----------------------------------------------------------------------------------------------
# Greedy and forced decoding share one batched loop
# ----------------------------------------------------------------------------------------------

Chooser = Callable[[int, torch.Tensor, list[int]], tuple[list[int], bool]]


def _run_batch(
    lm: LoadedModel, sources: Sequence[Source], traces: Sequence[DecodeTrace], context: str,
    choose: Chooser, limits: list[int], topk: int,
) -> None:
    """Decode a batch, appending a StepRecord per step to each trace until it ends."""
    enc = _encode(lm, sources)
    n = len(sources)
    state = lm.model.initial_state(enc, torch.full((n,), BOS_ID, dtype=torch.long, device=lm.device))
    rows = list(range(n))  # rows[r] = sentence index of batch row r
    i = 0
    while rows:
        out = lm.model.step(enc, state, context)
        chosen, forced = choose(i, out.log_probs, rows)
        view = _StepView(out, state.s, topk)
        keep = []
        for r, b in enumerate(rows):
            traces[b].steps.append(view.record(lm, r, i, chosen[r], forced, len(sources[b].ids)))
            if chosen[r] != EOS_ID and i + 1 < limits[b]:
                keep.append(r)
        i += 1
        y = torch.tensor(chosen, dtype=torch.long, device=lm.device)
        state = DecoderState(out.state.s, y)
        if len(keep) < len(rows):
            sel = torch.tensor(keep, dtype=torch.long, device=lm.device)
            enc, state = enc.select(sel), state.select(sel)
            rows = [rows[r] for r in keep]


@torch.no_grad()
def greedy(
    lm: LoadedModel, sentences: Sequence[str], *, context: str | None = None, topk: int = 5,
    unk_replace: bool = False, batch_size: int = 64, max_src_tokens: int = MAX_SOURCE_TOKENS,
) -> list[DecodeTrace]:
    """Greedy decoding: y_i = argmax p(y | y_<i, x) until ``</s>``."""
    mode = context or lm.config.context
    sources = [prepare_source(lm, s, max_src_tokens) for s in sentences]
    traces = [_new_trace(lm, s, "greedy", mode) for s in sources]

    def argmax(i: int, log_probs: torch.Tensor, rows: list[int]) -> tuple[list[int], bool]:
        return log_probs.argmax(-1).tolist(), False

    for idx in _in_length_order(len(sources), [len(s.ids) for s in sources], batch_size):
        _run_batch(lm, [sources[b] for b in idx], [traces[b] for b in idx], mode, argmax,
                   [max_target_len(len(sources[b].ids)) for b in idx], topk)
    return [_finish(lm, t, unk_replace) for t in traces]


@torch.no_grad()
def forced(
    lm: LoadedModel, sentences: Sequence[str], references: Sequence[str], *, context: str | None = None,
    topk: int = 5, batch_size: int = 64, pretokenized: bool = False,
    max_src_tokens: int = MAX_SOURCE_TOKENS,
) -> list[DecodeTrace]:
    """Forced decoding (teacher forcing) of reference translations, recording α for each word.

    With ``pretokenized`` both sides are split on spaces only, so token indices match external
    files such as gold alignments. The trace ends with the model's step for ``</s>``.
    """
    if len(sentences) != len(references):
        raise InputError(f"{len(sentences)} sources but {len(references)} references")
    mode = context or lm.config.context
    sources = [prepare_source(lm, s, max_src_tokens, pretokenized) for s in sentences]
    refs = []
    for r in references:
        toks = r.split() if pretokenized else lm.tgt_tok.tokenize(r)
        refs.append(lm.tgt_vocab.encode(toks))  # ends with </s>
    traces = [_new_trace(lm, s, "forced", mode) for s in sources]

    for idx in _in_length_order(len(sources), [len(s.ids) for s in sources], batch_size):
        batch_refs = [refs[b] for b in idx]

        def take_ref(
            i: int, log_probs: torch.Tensor, rows: list[int], refs_: list = batch_refs
        ) -> tuple[list[int], bool]:
            return [refs_[r][i] for r in rows], True

        _run_batch(lm, [sources[b] for b in idx], [traces[b] for b in idx], mode, take_ref,
                   [len(r) for r in batch_refs], topk)
    return [_finish(lm, t, unk_replace=False) for t in traces]


# ----------------------------------------------------------------------------------------------
# Stepping: one token at a time, from an explicit state, with optional forced tokens
# ----------------------------------------------------------------------------------------------


class Stepper:
    """Decode one sentence a token at a time; any step may be forced or given its α; ``back`` undoes exactly.

    The stepper holds this sentence's states (the model holds none), so each user session keeps
    its own stepper while all share one model. Attention surgery is a loop over a stepper:
    :meth:`peek` shows the model's own next step, ``step(alpha=α')`` writes the next word with an
    edited α (:meth:`nmt.model.RNNSearch.step`), and :meth:`fork` re-syncs a second stepper to the
    first ``at`` steps of this one, from where it can go another way.
    """

    def __init__(
        self, lm: LoadedModel, text: str, *, context: str | None = None, topk: int = 5,
        max_src_tokens: int = MAX_SOURCE_TOKENS, unk_replace: bool = False, pretokenized: bool = False,
    ) -> None:
        self.lm = lm
        self.context = context or lm.config.context
        self.topk = topk
        self.unk_replace = unk_replace
        self.source = prepare_source(lm, text, max_src_tokens, pretokenized)
        self.trace = _new_trace(lm, self.source, "step", self.context)
        self.max_len = max_target_len(len(self.source.ids))
        with torch.no_grad():
            self.enc = _encode(lm, [self.source])
            bos = torch.full((1,), BOS_ID, dtype=torch.long, device=lm.device)
            self._states: list[DecoderState] = [lm.model.initial_state(self.enc, bos)]

    @property
    def done(self) -> bool:
        steps = self.trace.steps
        return bool(steps) and (steps[-1].token_id == EOS_ID or len(steps) >= self.max_len)

    @property
    def position(self) -> int:
        return len(self.trace.steps)

    def state_before(self, i: int) -> DecoderState:
        """The decoder state step i read (s_{i-1} and y_{i-1}), for 0 ≤ i ≤ :attr:`position`."""
        return self._states[i]

    @torch.no_grad()
    def peek(self, alpha: torch.Tensor | None = None) -> StepOutput:
        """The model's next step (with ``alpha`` (1, Tx) in place of its own α), without taking it."""
        return self.lm.model.step(self.enc, self._states[-1], self.context, alpha)

    @torch.no_grad()
    def step(
        self, force: str | int | None = None, *, alpha: torch.Tensor | None = None,
        energies: torch.Tensor | None = None,
    ) -> StepRecord:
        """Produce the next word: the argmax, or ``force`` (a word or an id) if given.

        ``alpha`` (1, Tx) replaces the model's α at this step (c_i, p(y_i) and s_i read it; later
        steps use the model's own again); ``energies`` (1, Tx) are recorded instead of the model's.
        """
        if self.done:
            raise InputError("Decoding has already ended; go back or reset to continue.")
        state = self._states[-1]
        out = self.peek(alpha)
        if energies is not None:
            out = dataclasses.replace(out, attended=dataclasses.replace(out.attended, energies=energies))
        if force is None:
            token_id, forced_ = int(out.log_probs[0].argmax()), False
        else:
            token_id = force if isinstance(force, int) else self.lm.tgt_vocab.stoi.get(force, UNK_ID)
            if not 0 <= token_id < len(self.lm.tgt_vocab):
                raise InputError(f"token id {token_id} is outside the target vocabulary")
            forced_ = True
        rec = _StepView(out, state.s, self.topk).record(
            self.lm, 0, self.position, token_id, forced_, len(self.source.ids))
        self.trace.steps.append(rec)
        self._states.append(DecoderState(out.state.s, torch.tensor([token_id], device=self.lm.device)))
        _finish(self.lm, self.trace, self.unk_replace)
        return rec

    def back(self) -> None:
        """Undo the last step (no-op at the start)."""
        if self.trace.steps:
            self.trace.steps.pop()
            self._states.pop()
            _finish(self.lm, self.trace, self.unk_replace)

    def fork(self, at: int | None = None) -> Stepper:
        """A second stepper re-synced to this one's first ``at`` steps (default: all), sharing the
        encoder state; stepping either leaves the other alone."""
        at = self.position if at is None else max(0, min(at, self.position))
        twin = copy.copy(self)
        twin.trace = dataclasses.replace(self.trace, steps=[copy.copy(r) for r in self.trace.steps[:at]])
        twin._states = list(self._states[: at + 1])
        _finish(self.lm, twin.trace, self.unk_replace)
        return twin

    def run(self) -> DecodeTrace:
        """Step greedily to the end."""
        while not self.done:
            self.step()
        return self.trace


# ----------------------------------------------------------------------------------------------
# Beam search, batched over sentences and beams
# ----------------------------------------------------------------------------------------------


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
    max_src_tokens: int = MAX_SOURCE_TOKENS,
) -> list[DecodeTrace]:
    """Beam search with length normalisation; each trace gets the best hypothesis' steps, the
    n-best list with per-hypothesis α, and (``record_beam``) every step's live, pruned and
    finished hypotheses with cumulative and normalised scores and parents.

    A sentence stops when ``beam`` hypotheses have finished or at the length limit (where the
    live ones are finished as they are). Live hypotheses are ranked by log-probability, finished
    ones by the normalised score.
    """
    if beam < 1:
        raise InputError("beam size must be at least 1")
    if length_norm not in LENGTH_NORMS:
        raise InputError(f"length_norm must be one of {LENGTH_NORMS}")
    n_best = max(1, min(n_best, beam))
    mode = context or lm.config.context
    sources = [prepare_source(lm, s, max_src_tokens) for s in sentences]
    traces = [_new_trace(lm, s, "beam", mode) for s in sources]
    for t in traces:
        t.beam_size, t.length_norm = beam, length_norm
    how = _Beam(lm, mode, beam, n_best, length_norm, gnmt_alpha, topk, record_beam, unk_replace)
    for idx in _in_length_order(len(sources), [len(s.ids) for s in sources], batch_size):
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
    how: _Beam, search: _Search, view: _StepView, row0: int, i: int, ranked: tuple[list[float], list[int]], V: int,
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
    enc = _encode(lm, sources).select(torch.arange(B, device=dev).repeat_interleave(k))  # (B·k, …)
    state = lm.model.initial_state(enc, torch.full((B * k,), BOS_ID, dtype=torch.long, device=dev))
    # The search starts from one empty hypothesis (id 0) per sentence.
    searches = [_Search(t, len(s.ids), max_target_len(len(s.ids)), [_Slot(0, [], [], 0.0)] + [None] * (k - 1))
                for s, t in zip(sources, traces, strict=True)]
    cum = torch.full((B, k), -math.inf, device=dev)
    cum[:, 0] = 0.0
    active = list(range(B))  # sentence of each block of k rows
    i = 0
    while active:
        out = lm.model.step(enc, state, how.mode)  # (A·k, K_y)
        view = _StepView(out, state.s, how.topk)
        V = out.log_probs.shape[-1]
        cand = (cum.unsqueeze(-1) + out.log_probs.view(len(active), k, V)).view(len(active), k * V)
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
        tmp = DecodeTrace(trace.source, trace.src_tokens, trace.src_unk, "beam", trace.context, slot.records)
        _finish(lm, tmp, unk_replace)
        alpha = None if not tmp.has_alignment else [r.alpha for r in slot.records]
        trace.nbest.append(NBestEntry([r.token for r in slot.records], tmp.translation, slot.logprob, score, alpha))
    if ranked:
        trace.steps = list(ranked[0][1].records)
    _finish(lm, trace, unk_replace)


def translate(
    lm: LoadedModel, sentences: Sequence[str], *, beam: int = 1, unk_replace: bool = False,
    context: str | None = None, batch_size: int = 64, length_norm: str = "length",
) -> list[str]:
    """Detokenised translations (greedy for ``beam`` 1); empty input lines give empty outputs."""
    traces = translate_traces(lm, sentences, beam=beam, unk_replace=unk_replace, context=context,
                              batch_size=batch_size, length_norm=length_norm)
    return ["" if t is None else t.translation for t in traces]


def translate_traces(
    lm: LoadedModel, sentences: Sequence[str], *, beam: int = 1, unk_replace: bool = False,
    context: str | None = None, batch_size: int = 64, length_norm: str = "length",
    max_src_tokens: int = MAX_SOURCE_TOKENS,
) -> list[DecodeTrace | None]:
    """Lean traces (top-1 only, no beam record) of :func:`translate`; None for empty lines."""
    idx = [i for i, s in enumerate(sentences) if s.strip()]
    todo = [sentences[i] for i in idx]
    if beam <= 1:
        traces = greedy(lm, todo, context=context, unk_replace=unk_replace, batch_size=batch_size, topk=1,
                        max_src_tokens=max_src_tokens)
    else:
        traces = beam_search(lm, todo, beam=beam, context=context, unk_replace=unk_replace, topk=1,
                             record_beam=False, batch_size=max(1, batch_size // 2), length_norm=length_norm,
                             max_src_tokens=max_src_tokens)
    out: list[DecodeTrace | None] = [None] * len(sentences)
    for i, t in zip(idx, traces, strict=True):
        out[i] = t
    return out
