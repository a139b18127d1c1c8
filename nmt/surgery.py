"""Attention surgery: decode with an edited α at chosen steps and see what the model writes instead.

RNNsearch attends before it writes (Bahdanau et al. 2015, App. A.2.2): at step i the alignment
model turns s_{i-1} into energies e_ij and weights α_ij (eq. 6), the context is
c_i = Σ_j α_ij h_j (eq. 5), the deep output reads (s_{i-1}, E y_{i-1}, c_i) into p(y_i) and the GRU
reads (s_{i-1}, W E y_{i-1}, c_i) into s_i. :func:`step_with_alpha` runs that step with any α in
place of the model's own, with the decoder's own submodules, so it reproduces
:meth:`nmt.model.RNNSearch.step` bit for bit when α is the model's.

:func:`decode_with_surgery` replays a decoding with :class:`Edit` s at chosen steps (zero one
source word and renormalise, one-hot, uniform, shuffled, copied from another step, explicit α or
energies) and optionally freezes α from a step on; the rest of the translation, its log p and the
new α rows come back in a :class:`SurgeryResult` whose trace records which steps were edited.
:data:`PRESETS` are ready-made surgeries whose claims the tests check on the shipped model.
The permutation and adversarial-α tests built on these pieces live in :mod:`nmt.faithfulness`.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import torch

from nmt.checkpoint import LoadedModel
from nmt.decoding import (  # the trace-recording helpers
    MAX_SOURCE_TOKENS,
    InputError,
    Source,
    Stepper,
    _encode,
    _finish,
    _new_trace,
    _StepView,
    max_target_len,
    prepare_source,
)
from nmt.model import Attended, DecoderState, EncoderState, RNNSearch, StepOutput
from nmt.trace import DecodeTrace
from nmt.vocab import BOS_ID, EOS_ID, UNK_ID

EDIT_KINDS = ("own", "zero", "onehot", "uniform", "shuffle", "copy", "alpha", "energies")


def require_rnnsearch(lm: LoadedModel, context: str | None = None) -> RNNSearch:
    """The model, if it is an RNNsearch decoding with attention; else a one-line InputError."""
    model = lm.model
    if not isinstance(model, RNNSearch) or (context or model.cfg.context) != "attention":
        raise InputError("attention surgery needs an RNNsearch checkpoint decoding with attention (α exists)")
    return model


# ----------------------------------------------------------------------------------------------
# One step with a given α
# ----------------------------------------------------------------------------------------------


def context_of(alpha: torch.Tensor, annotations: torch.Tensor) -> torch.Tensor:
    """c_i = Σ_j α_ij h_j (eq. 5) for α (N, Tx) and annotations (N, Tx, 2n), as the model computes it."""
    return torch.bmm(alpha.unsqueeze(1), annotations).squeeze(1)


def step_with_alpha(
    model: RNNSearch, enc: EncoderState, state: DecoderState, alpha: torch.Tensor,
    energies: torch.Tensor | None = None,
) -> StepOutput:
    """One decoder step whose context uses ``alpha`` (N, Tx) instead of the alignment model's.

    Mirrors :meth:`RNNSearch.step`: readout(s_{i-1}, E y_{i-1}, c_i) → log p(y_i) and
    recur(s_{i-1}, W E y_{i-1}, c_i) → s_i, with c_i = Σ_j α_ij h_j (eq. 5). ``energies`` are only
    recorded (default: the alignment model's own e_ij).
    """
    dec = model.decoder
    y_emb = dec.embed(state.y_prev)  # (N, m)
    if energies is None:
        energies = dec.attend(state.s, enc, "attention").energies
    context = context_of(alpha, enc.annotations)  # (N, 2n)
    logits = dec.readout(state.s, y_emb, context)  # (N, K_y)
    s_next = dec.recur(state.s, dec.W(y_emb), context)  # (N, n)
    return StepOutput(torch.log_softmax(logits.float(), dim=-1), Attended(context, energies, alpha),
                      DecoderState(s_next, state.y_prev))


def readout_log_probs(
    model: RNNSearch, annotations: torch.Tensor, s_prev: torch.Tensor, y_emb: torch.Tensor, alpha: torch.Tensor
) -> torch.Tensor:
    """log p(· | s_{i-1}, y_{i-1}, c_i) (N, K_y) for rows of α (N, Tx) over one sentence's h (Tx, 2n)."""
    context = alpha @ annotations  # (N, 2n)   eq. (5)
    return torch.log_softmax(model.decoder.readout(s_prev, y_emb, context).float(), dim=-1)


@dataclass
class Forced:
    """A teacher-forced pass over one target: everything step i reads, for i = 0 … Ty − 1.

    s_prev (B, Ty, n) = s_{i-1};  y_emb (B, Ty, m) = E y_{i-1};  alpha, energies (B, Ty, Tx);
    context (B, Ty, 2n) = c_i;  log_probs (B, Ty, K_y) = log p(· | y_<i, x) (empty without readout).
    """

    s_prev: torch.Tensor
    y_emb: torch.Tensor
    alpha: torch.Tensor
    energies: torch.Tensor
    context: torch.Tensor
    log_probs: torch.Tensor


def teacher_forced(model: RNNSearch, enc: EncoderState, tgt_in: torch.Tensor, readout: bool = True) -> Forced:
    """Run the decoder over ``tgt_in`` (B, Ty) = <s> y_1 … y_{Ty−1}, as :meth:`RNNSearch.forward` does."""
    dec = model.decoder
    y_emb = dec.embed(tgt_in)  # (B, Ty, m)
    wy = dec.W(y_emb)  # (B, Ty, 3n)
    s = enc.s0
    states, alphas, energies, contexts = [], [], [], []
    for wy_i in wy.unbind(1):
        att = dec.attend(s, enc, "attention")  # eq. (6) from s_{i-1}
        states.append(s)
        alphas.append(att.alpha)
        energies.append(att.energies)
        contexts.append(att.context)
        s = dec.recur(s, wy_i, att.context)
    s_prev, context = torch.stack(states, 1), torch.stack(contexts, 1)
    log_probs = (torch.log_softmax(dec.readout(s_prev, y_emb, context).float(), dim=-1)
                 if readout else s_prev.new_zeros(0))
    return Forced(s_prev, y_emb, torch.stack(alphas, 1), torch.stack(energies, 1), context, log_probs)


# ----------------------------------------------------------------------------------------------
# Edits
# ----------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class Edit:
    """One change to α at one step (applied in order when a step has several).

    own: the model's α, unchanged (a control: must change nothing); zero: α_j = 0, renormalised
    (a word already at 0 leaves α untouched); onehot: all weight on j; uniform: 1/Tx on every
    source token; shuffle: α permuted over the source tokens (``seed``); copy: α of step ``step``
    of the unedited decoding; alpha / energies: explicit values over the Tx source tokens (α is
    renormalised; energies go through the softmax of eq. 6).
    """

    kind: str
    j: int | None = None
    step: int | None = None
    seed: int = 0
    values: tuple[float, ...] | None = None

    def __post_init__(self) -> None:
        if self.kind not in EDIT_KINDS:
            raise InputError(f"unknown α edit {self.kind!r}; expected one of {EDIT_KINDS}")
        if self.kind in ("zero", "onehot") and self.j is None:
            raise InputError(f"the {self.kind} edit needs a source position j")
        if self.kind == "copy" and self.step is None:
            raise InputError("the copy edit needs the step to copy α from")
        if self.kind in ("alpha", "energies") and self.values is None:
            raise InputError(f"the {self.kind} edit needs values over the source tokens")

    def describe(self, src_tokens: Sequence[str]) -> str:
        """A short human-readable description, e.g. ``zero 'dog' (j=2)``."""
        word = f"{src_tokens[self.j]!r} (j={self.j})" if self.j is not None and self.j < len(src_tokens) else ""
        return {"own": "the model's own α", "zero": f"zero {word}, renormalised", "onehot": f"one-hot on {word}",
                "uniform": "uniform α", "shuffle": f"shuffled α (seed {self.seed})",
                "copy": f"α copied from step {self.step}", "alpha": "explicit α",
                "energies": "explicit energies"}[self.kind]


def apply_edit(
    edit: Edit, alpha: torch.Tensor, energies: torch.Tensor, original_alpha: Sequence[Sequence[float]] = ()
) -> tuple[torch.Tensor, torch.Tensor]:
    """The edited (α, energies) of one step; α, energies are (1, Tx) over real source tokens."""
    Tx = alpha.shape[-1]
    if edit.j is not None and not 0 <= edit.j < Tx:
        raise InputError(f"source position {edit.j} is outside the sentence (0 … {Tx - 1})")
    if edit.kind == "own":
        return alpha, energies
    if edit.kind == "zero":
        if float(alpha[0, edit.j]) == 0.0:
            return alpha, energies  # nothing to remove: α is left exactly as it was
        out = alpha.clone()
        out[0, edit.j] = 0.0
        total = out.sum(-1, keepdim=True)
        if float(total) <= 0.0:
            raise InputError("zeroing that word leaves no attention weight to renormalise")
        return out / total, energies
    if edit.kind == "onehot":
        out = torch.zeros_like(alpha)
        out[0, edit.j] = 1.0
        return out, energies
    if edit.kind == "uniform":
        return torch.full_like(alpha, 1.0 / Tx), energies
    if edit.kind == "shuffle":
        perm = torch.randperm(Tx, generator=torch.Generator().manual_seed(edit.seed)).to(alpha.device)
        return alpha[:, perm], energies[:, perm]
    if edit.kind == "copy":
        if not 0 <= edit.step < len(original_alpha):  # type: ignore[operator]
            raise InputError(f"step {edit.step} does not exist in the unedited decoding ({len(original_alpha)} steps)")
        return torch.tensor([original_alpha[edit.step]], dtype=alpha.dtype, device=alpha.device), energies
    values = torch.tensor([edit.values], dtype=alpha.dtype, device=alpha.device)
    if values.shape != alpha.shape:
        raise InputError(f"{edit.kind} needs {Tx} values (one per source token incl. </s>), got {values.shape[-1]}")
    if edit.kind == "energies":
        return torch.softmax(values, dim=-1), values  # eq. (6)
    if bool((values < 0).any()) or float(values.sum()) <= 0:
        raise InputError("an explicit α must be non-negative with a positive sum")
    return values / values.sum(), energies


# ----------------------------------------------------------------------------------------------
# The edited decoding loop
# ----------------------------------------------------------------------------------------------


@dataclass
class SurgeryResult:
    """A decoding with edited α, the same decoding unedited, and what was changed where."""

    trace: DecodeTrace  # method "surgery": the steps with the edited α rows, their log p, the rest
    original: DecodeTrace  # the same prefix / target decoded with the model's own α throughout
    edited_steps: list[int] = field(default_factory=list)
    edits: dict[int, str] = field(default_factory=dict)  # step → what was done there
    original_alpha: dict[int, list[float]] = field(default_factory=dict)  # step → the model's α before the edit

    @property
    def first_change(self) -> int | None:
        """The first step whose output word differs from the unedited decoding (None if none)."""
        a, b = self.trace.target_tokens, self.original.target_tokens
        for i, (x, y) in enumerate(zip(a, b)):
            if x != y:
                return i
        return None if len(a) == len(b) else min(len(a), len(b))

    def to_dict(self) -> dict[str, Any]:
        return {"trace": self.trace.to_dict(), "original": self.original.to_dict(),
                "edited_steps": self.edited_steps, "edits": self.edits, "original_alpha": self.original_alpha}


EditSpec = Mapping[int, Edit | Sequence[Edit]]


def _decode(
    lm: LoadedModel, source: Source, edits: EditSpec, freeze_from: int | None, prefix: Sequence[int],
    prefix_forced: Sequence[bool], target: Sequence[int] | None, topk: int, unk_replace: bool,
    original_alpha: Sequence[Sequence[float]] = (),
) -> tuple[DecodeTrace, list[int], dict[int, str], dict[int, list[float]]]:
    """Decode one sentence, editing α where asked; returns the trace and the edit record."""
    model = lm.model
    trace = _new_trace(lm, source, "surgery" if edits or freeze_from is not None else "step", "attention")
    limit = len(target) if target is not None else max_target_len(len(source.ids))
    edited: list[int] = []
    described: dict[int, str] = {}
    before: dict[int, list[float]] = {}
    frozen: torch.Tensor | None = None
    with torch.no_grad():
        enc = _encode(lm, [source])
        state = model.initial_state(enc, torch.full((1,), BOS_ID, dtype=torch.long, device=lm.device))
        for i in range(limit):
            step_edits = edits.get(i, ())
            step_edits = [step_edits] if isinstance(step_edits, Edit) else list(step_edits)
            if frozen is None and not step_edits:
                out = model.step(enc, state, "attention")  # untouched step: the model's own code
            else:
                att = model.decoder.attend(state.s, enc, "attention")
                alpha, energies = att.alpha, att.energies
                notes = []
                if frozen is not None:
                    alpha, notes = frozen, [f"α frozen from step {freeze_from}"]
                for e in step_edits:
                    alpha, energies = apply_edit(e, alpha, energies, original_alpha)
                    notes.append(e.describe(trace.src_tokens))
                edited.append(i)
                described[i] = "; ".join(notes)
                before[i] = att.alpha[0].tolist()
                out = step_with_alpha(model, enc, state, alpha, energies)
            if freeze_from == i:
                frozen = out.attended.alpha
            if target is not None:
                token_id, forced_ = target[i], True
            elif i < len(prefix):
                token_id, forced_ = prefix[i], prefix_forced[i]
            else:
                token_id, forced_ = int(out.log_probs[0].argmax()), False
            trace.steps.append(_StepView(out, state.s, topk).record(lm, 0, i, token_id, forced_, len(source.ids)))
            state = DecoderState(out.state.s, torch.tensor([token_id], device=lm.device))
            if token_id == EOS_ID and target is None:
                break
    return _finish(lm, trace, unk_replace), edited, described, before


def _surgery(
    lm: LoadedModel, source: Source, edits: EditSpec | None, freeze_from: int | None, prefix: Sequence[int],
    prefix_forced: Sequence[bool] | None, target: Sequence[int] | None, topk: int, unk_replace: bool,
) -> SurgeryResult:
    edits = dict(edits or {})
    flags = list(prefix_forced) if prefix_forced is not None else [True] * len(prefix)
    original, *_ = _decode(lm, source, {}, None, prefix, flags, target, topk, unk_replace)
    orig_alpha = [s.alpha or [] for s in original.steps]
    trace, edited, described, before = _decode(lm, source, edits, freeze_from, prefix, flags, target, topk,
                                               unk_replace, orig_alpha)
    trace.method = "surgery"
    original.method = "forced" if target is not None else "step"
    return SurgeryResult(trace, original, edited, described, before)


def _ids(lm: LoadedModel, words: Sequence[int | str]) -> list[int]:
    return [w if isinstance(w, int) else lm.tgt_vocab.stoi.get(w, UNK_ID) for w in words]


def decode_with_surgery(
    lm: LoadedModel, text: str, edits: EditSpec | None = None, *, freeze_from: int | None = None,
    prefix: Sequence[int | str] = (), target: Sequence[int | str] | None = None, topk: int = 5,
    unk_replace: bool = False, pretokenized: bool = False, max_src_tokens: int = MAX_SOURCE_TOKENS,
) -> SurgeryResult:
    """Decode ``text`` greedily (after a forced ``prefix``), or force ``target`` (a token list, no
    ``</s>`` needed), with α edited at the steps in ``edits`` and, from ``freeze_from`` on, α held
    at that step's (possibly edited) α. Steps are 0-based target positions."""
    require_rnnsearch(lm)
    source = prepare_source(lm, text, max_src_tokens, pretokenized)
    tgt = None
    if target is not None:
        tgt = _ids(lm, target)
        if not tgt or tgt[-1] != EOS_ID:
            tgt.append(EOS_ID)
    return _surgery(lm, source, edits, freeze_from, _ids(lm, prefix), None, tgt, topk, unk_replace)


def surgery_at_stepper(
    stepper: Stepper, edit: Edit | Sequence[Edit] | None = None, *, freeze: bool = False, topk: int | None = None,
) -> SurgeryResult:
    """Edit α at the stepper's next step (and, with ``freeze``, hold it there) and decode on greedily.

    The stepper is not changed; its steps so far are replayed as they were (forced where forced)."""
    require_rnnsearch(stepper.lm, stepper.context)
    i = stepper.position
    if stepper.done:
        raise InputError("Decoding has already ended; go back to edit a step.")
    prefix = [s.token_id for s in stepper.trace.steps]
    flags = [s.forced for s in stepper.trace.steps]
    edits = {i: edit} if edit is not None else {}
    return _surgery(stepper.lm, stepper.source, edits, i if freeze else None, prefix, flags, None,
                    topk or stepper.topk, stepper.unk_replace)


# ----------------------------------------------------------------------------------------------
# Ready-made surgeries (tests check their claims on the shipped Multi30k en→fr RNNsearch)
# ----------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class SurgeryPreset:
    """A sentence, the surgery to make at ``step`` (0-based), and what happens.

    ``expect`` is the word written at ``at`` (default: ``step``) after the surgery; ``unchanged``
    claims that the whole translation stays the same; ``disagree`` lists (attribution method, source
    word) pairs: at ``step`` that method ranks that word first, while α's largest weight is elsewhere
    (a preset about explanation rather than surgery has no ``edits``)."""

    name: str
    text: str
    step: int
    edits: tuple[Edit, ...]
    watch: str
    freeze: bool = False
    expect: str | None = None
    unchanged: bool = False
    at: int | None = None
    disagree: tuple[tuple[str, str], ...] = ()

    def run(self, lm: LoadedModel) -> SurgeryResult:
        return decode_with_surgery(lm, self.text, {self.step: self.edits} if self.edits else None,
                                   freeze_from=self.step if self.freeze else None)


PRESETS: tuple[SurgeryPreset, ...] = (
    SurgeryPreset("Point α elsewhere", "A little girl is eating an apple.", 5, (Edit("onehot", j=2),),
                  "α one-hot on 'girl' where the model wrote 'pomme': it writes 'fille' instead.", expect="fille"),
    SurgeryPreset("Zero the aligned word, keep the word", "Two dogs are running in the snow.", 1,
                  (Edit("zero", j=1),), "'chiens' survives without 'dogs' in α: the neighbours' annotations "
                  "(a bidirectional encoder) still carry it.", unchanged=True),
    SurgeryPreset("Zero the aligned word, lose the word", "A little girl is eating an apple.", 5,
                  (Edit("zero", j=6),), "Without 'apple' in α the model guesses another object.",
                  expect="cigarette"),
    SurgeryPreset("Uniform α on a function word", "Two dogs are running in the snow.", 3, (Edit("uniform"),),
                  "'dans' needs no alignment: the target-side context alone writes it.", unchanged=True),
    SurgeryPreset("Freeze α", "Two dogs are running in the snow.", 1, (), "α held on 'dogs' from 'chiens' "
                  "on: the next word is 'chiens' again.", freeze=True, expect="chiens", at=2),
    SurgeryPreset("α and gradients disagree", "A man in a blue shirt is riding a bike.", 5, (),
                  "Writing 'fait', α looks most at 'riding', but gradient × input ranks 'bike' first and "
                  "integrated gradients 'a': what the model reads is not what moves its output most.",
                  disagree=(("x_grad", "bike"), ("ig", "a"))),
)
