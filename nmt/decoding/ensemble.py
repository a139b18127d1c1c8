"""Ensembles: checkpoints that share vocabularies decode together, one step at a time.

An :class:`Ensemble` is a model with the inference API every decoder calls (``encode``,
``initial_state``, ``step(enc, state, context, alpha)``), so greedy, beam, forced decoding and the
:class:`~nmt.decoding.search.Stepper` decode it with their own loops, unchanged. Each step runs every
member's own step (:meth:`nmt.models.rnnsearch.RNNSearch.step`, :meth:`nmt.models.luong.LuongNMT.step`) on the
word the ensemble wrote and combines them. With M members and per-member p_m:

    log p_ens(y_i | y_<i, x) = (1/M) Σ_m log p_m(y_i | y_<i, x) − log Z_i,
    Z_i = Σ_k Π_m p_m(k | y_<i, x)^(1/M)                                   (N, K_y)

the members' log p averaged per step and renormalised: p_ens is the *normalised geometric mean* of
the members' p (a product of experts), so it is a probability distribution over the vocabulary and
every p the app shows for an ensemble sums to 1. Luong et al. (2015) and Jean et al. (2015) do not
write their ensembles' rule out; the decoders of Bahdanau's group (dl4mt, then Nematus, whose beam
search ranks "according to the sum of the models' log probabilities") combine members log-linearly,
as here up to Z_i, rather than by the mean of their p. The unnormalised mean sums to ≤ 1 (AM–GM),
far below 1 where the members disagree, so it is renormalised here. Within one step Z_i is shared
by every word: the ranking of one step, and so greedy decoding, is that of the plain mean; a beam's
scores gain −Σ_i log Z_i ≥ 0 along each hypothesis, which may change the beam's choice across steps.
The log p of one model is the model's (Z_i = 1), so an ensemble of one model, or of a model with
itself, decodes as the model does (to float rounding).

What the ensemble's trace records, decided here once:

* α_ij: the mean of the members' α rows, over the members that have α (an RNNencdec member, with
  its fixed summary, has none; an ensemble of such members only records α = None). Each member's
  own α row and its log p of the written word are kept per step in ``StepRecord.members``.
* e_ij: None. Members score with different functions (Bahdanau's v_aᵀ tanh(…), Luong's h_tᵀW_a h̄_s),
  so their energies are not on one scale and are not averaged.
* c_i: the members' contexts side by side [c^1; …; c^M], so ‖c_i‖² = Σ_m ‖c^m_i‖²; the state norm
  is read the same way from [s^1; …; s^M].

Each member decodes in the context mode it was trained with (an RNNencdec member reads its fixed
summary); the ensemble itself has the one mode "attention". A given α (surgery) replaces every
member's α at that step. Members must share source and target vocabularies, languages and
truecasers, else :class:`EnsembleError` says which differs in one line.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import asdict, dataclass, field
from functools import cached_property
from pathlib import Path
from typing import Any

import torch
from torch import nn

from nmt.decoding.trace import MemberStep
from nmt.models import checkpoint
from nmt.models.checkpoint import CheckpointError, LoadedModel
from nmt.models.contract import Capabilities
from nmt.models.rnnsearch import Attended, DecoderState, StepOutput


class EnsembleError(CheckpointError):
    """Members that cannot decode together; one plain line, shown as is wherever a checkpoint error is
    (the command-line tools' ``error: …``, the pages' one-line message)."""


@dataclass
class EnsembleConfig:
    """The config an ensemble answers ``lm.config`` with: its one context mode and its members'."""

    members: list[dict[str, Any]]  # each member's own config dict
    names: list[str]  # each member's file name (or label)
    context: str = "attention"
    arch: str = "ensemble"

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)


@dataclass
class EnsembleEncoderState:
    """Every member's encoder state for one batch of sentences, in member order."""

    members: tuple[Any, ...]

    def select(self, rows: torch.Tensor) -> EnsembleEncoderState:
        """Rows ``rows`` of every member's batch (sentences expanded into beams, finished ones dropped)."""
        return EnsembleEncoderState(tuple(e.select(rows) for e in self.members))

    def restrict(self, allowed: torch.Tensor | None) -> EnsembleEncoderState:
        """Every member restricted to each sentence's candidate words ``allowed`` (B, K_y): each member's
        p is renormalised over the list before the average (:mod:`nmt.models.candidates`)."""
        return EnsembleEncoderState(tuple(e.restrict(allowed) for e in self.members))

    def head(self, n: int) -> EnsembleEncoderState:
        """The first ``n`` rows of every member's batch."""
        return EnsembleEncoderState(tuple(e.head(n) for e in self.members))


@dataclass
class EnsembleState:
    """The members' recurrent states, carried in ``DecoderState.s`` (as :class:`nmt.models.luong.LuongState` is).

    The decoders call ``s.norm(dim=-1)`` and ``s.index_select(0, rows)``; the norm is that of the
    members' states side by side, sqrt(Σ_m ‖s^m‖²) (N,)."""

    members: tuple[Any, ...]  # a tensor s_{i-1} (N, n) or a LuongState per member

    def norm(self, dim: int = -1) -> torch.Tensor:
        return torch.stack([s.norm(dim=dim).float() for s in self.members]).square().sum(0).sqrt()

    def index_select(self, dim: int, rows: torch.Tensor) -> EnsembleState:
        if dim != 0:
            raise ValueError("an EnsembleState is selected along its batch dimension (0) only")
        return EnsembleState(tuple(s.index_select(0, rows) for s in self.members))


@dataclass
class EnsembleAttended(Attended):
    """The ensemble's step context (see the module docstring: mean α, no energies, [c^1; …; c^M])
    plus every member's own: ``member_attended`` (M) and ``member_log_probs`` (M, N, K_y)."""

    member_attended: tuple[Attended, ...] = ()
    member_log_probs: torch.Tensor | None = None
    itos: Sequence[str] = field(default_factory=list)

    @cached_property
    def _host(self) -> tuple[list[list[list[float]] | None], list[list[int]], list[list[float]]]:
        """Host copies, made once per step: each member's α rows, its top word and that word's p."""
        alphas = [None if a.alpha is None else a.alpha.tolist() for a in self.member_attended]
        top_lp, top_id = self.member_log_probs.max(-1)  # (M, N)
        return alphas, top_id.tolist(), top_lp.exp().tolist()

    def member_steps(self, row: int, token_id: int, n_src: int) -> list[MemberStep]:
        """Each member at batch row ``row``: its log p of ``token_id``, its α row (``n_src`` words) and
        the word it would have written alone."""
        alphas, top_id, top_p = self._host
        lps = self.member_log_probs[:, row, token_id].tolist()
        return [MemberStep(logprob=lps[m], alpha=None if alphas[m] is None else alphas[m][row][:n_src],
                           top=(self.itos[top_id[m][row]], top_p[m][row]))
                for m in range(len(self.member_attended))]


class Ensemble(nn.Module):
    """Members decoding as one model: each runs its own step; their log p are averaged and renormalised."""

    def __init__(self, members: Sequence[nn.Module], names: Sequence[str], itos: Sequence[str]) -> None:
        super().__init__()
        if not members:
            raise EnsembleError("an ensemble needs at least one member")
        self.members = nn.ModuleList(members)
        self.itos = list(itos)
        self.cfg = EnsembleConfig([m.cfg.to_dict() for m in members], list(names))

    @property
    def capabilities(self) -> Capabilities:
        """Attention only (each member reads its own trained mode); no single step to split into phases,
        no surgery (an α would replace every member's), no deep-fusion input."""
        return Capabilities("ensemble", ("attention",))

    def encode(self, src: torch.Tensor, src_len: torch.Tensor) -> EnsembleEncoderState:
        """Every member's encoder state of a source batch (B, Tx)."""
        return EnsembleEncoderState(tuple(m.encode(src, src_len) for m in self.members))

    def initial_state(self, enc: EnsembleEncoderState, bos: torch.Tensor) -> DecoderState:
        """Every member's state before the first target word; y_0 = ``<s>`` is shared."""
        states = [m.initial_state(e, bos).s for m, e in zip(self.members, enc.members, strict=True)]
        return DecoderState(EnsembleState(tuple(states)), bos)

    def step(
        self, enc: EnsembleEncoderState, state: DecoderState, context: str | None = None,
        alpha: torch.Tensor | None = None,
    ) -> StepOutput:
        """One target position: every member's step on the shared y_{i-1}, log p averaged.

        ``context`` may only be the ensemble's own "attention" (each member reads its trained mode);
        a given ``alpha`` (N, Tx) replaces every member's α at this step."""
        if context not in (None, "attention"):
            raise ValueError(f"an ensemble decodes each member in its own context mode, not {context!r}")
        outs = [m.step(e, DecoderState(s, state.y_prev), m.cfg.context, alpha)
                for m, e, s in zip(self.members, enc.members, state.s.members, strict=True)]
        lp = torch.stack([o.log_probs.float() for o in outs])  # (M, N, K_y)
        alphas = [o.attended.alpha.float() for o in outs if o.attended.alpha is not None]
        att = EnsembleAttended(
            context=torch.cat([o.attended.context.float() for o in outs], -1),  # (N, Σ_m d_m)
            energies=None,
            alpha=torch.stack(alphas).mean(0) if alphas else None,  # (N, Tx)
            member_attended=tuple(o.attended for o in outs), member_log_probs=lp, itos=self.itos,
        )
        nxt = DecoderState(EnsembleState(tuple(o.state.s for o in outs)), state.y_prev)
        return StepOutput(lp.mean(0).log_softmax(-1), att, nxt)  # (N, K_y)   (1/M) Σ_m log p_m − log Z_i


def _tokenizer_key(lm: LoadedModel, side: str) -> tuple[str, Any]:
    tok = lm.src_tok if side == "src" else lm.tgt_tok
    tc = getattr(tok, "truecaser", None)
    return tok.lang, None if tc is None else tc.to_dict()


def check_compatible(lms: Sequence[LoadedModel], names: Sequence[str]) -> None:
    """Raise :class:`EnsembleError` unless every member shares the first one's languages, truecasers
    and source and target vocabularies (word for word, in order)."""
    first = lms[0]
    for lm, name in zip(lms[1:], names[1:], strict=True):
        for side, what in (("src", "source"), ("tgt", "target")):
            if _tokenizer_key(lm, side)[0] != _tokenizer_key(first, side)[0]:
                raise EnsembleError(f"{name} translates {lm.src_tok.lang}→{lm.tgt_tok.lang}, but {names[0]} "
                                    f"{first.src_tok.lang}→{first.tgt_tok.lang}: members must share a language pair")
            if getattr(lm, f"{side}_vocab").itos != getattr(first, f"{side}_vocab").itos:
                raise EnsembleError(f"{name} and {names[0]} have different {what} vocabularies: an ensemble "
                                    "averages p over one vocabulary, so its members must share it")
            if _tokenizer_key(lm, side) != _tokenizer_key(first, side):
                raise EnsembleError(f"{name} and {names[0]} truecase the {what} side differently")


def ensemble_of(lms: Sequence[LoadedModel], names: Sequence[str] | None = None) -> LoadedModel:
    """One decodable model of loaded members (vocabularies, tokenisers, dictionary and device of the first)."""
    if not lms:
        raise EnsembleError("an ensemble needs at least one member")
    names = list(names) if names is not None else [Path(lm.path).name or f"model {k + 1}" for k, lm in enumerate(lms)]
    check_compatible(lms, names)
    first = lms[0]
    model = Ensemble([lm.model for lm in lms], names, first.tgt_vocab.itos)
    return LoadedModel(model=model, src_vocab=first.src_vocab, tgt_vocab=first.tgt_vocab, src_tok=first.src_tok,
                       tgt_tok=first.tgt_tok, meta={"members": names}, path=" + ".join(names),
                       verified=all(lm.verified for lm in lms), dictionary=first.dictionary,
                       dictionary_file=first.dictionary_file, translations=first.translations)


def load_ensemble(paths: Sequence[str | Path], device: str | torch.device = "cpu") -> LoadedModel:
    """Load checkpoint files (:func:`nmt.models.checkpoint.load`) and join them into one ensemble."""
    return ensemble_of([checkpoint.load(p, device) for p in paths], [Path(p).name for p in paths])
