"""Attention surgery: decode with an edited α at chosen steps and see what the model writes instead.

RNNsearch attends before it writes (Bahdanau et al. 2015, App. A.2.2): at step i the alignment
model turns s_{i-1} into energies e_ij and weights α_ij (eq. 6), the context is
c_i = Σ_j α_ij h_j (eq. 5), the deep output reads (s_{i-1}, E y_{i-1}, c_i) into p(y_i) and the GRU
reads (s_{i-1}, W E y_{i-1}, c_i) into s_i. The model's own step runs that with any α in place of
its own (:meth:`nmt.models.rnnsearch.RNNSearch.step` with ``alpha``); nothing here computes a step.

:func:`decode_with_surgery` replays a decoding with :class:`Edit` s at chosen steps (zero one
source word and renormalise, one-hot, uniform, shuffled, copied from another step, explicit α or
energies) and optionally freezes α from a step on: a loop over a :class:`nmt.decoding.search.Stepper`
that peeks at the model's α, edits it and steps with the edit. The rest of the translation, its
log p and the new α rows come back in a :class:`SurgeryResult` whose trace records which steps were
edited. :data:`PRESETS` are ready-made surgeries whose claims the tests check on the shipped model.
The permutation and adversarial-α tests built on these pieces live in :mod:`nmt.explanation.debate`.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import torch

from nmt.decoding.search import MAX_SOURCE_TOKENS, InputError, Stepper
from nmt.decoding.trace import DecodeTrace
from nmt.models.checkpoint import LoadedModel
from nmt.models.contract import capabilities
from nmt.models.rnnsearch import RNNSearch
from nmt.text.vocab import EOS_ID, UNK_ID

EDIT_KINDS = ("own", "zero", "onehot", "uniform", "shuffle", "copy", "alpha", "energies")


def require_surgery(lm: LoadedModel, context: str | None = None) -> RNNSearch:
    """The model, if its α can be edited in ``context`` (its capabilities say so: an RNNsearch decoding with
    attention); else a one-line InputError. Attribution and the debate tests ask the same."""
    model = lm.model
    if not capabilities(model).editable(context):
        raise InputError("attention surgery needs an RNNsearch checkpoint decoding with attention (α exists)")
    return model


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


@dataclass
class _Plan:
    """What a surgery decoding does at each step: the edits, the freeze, and which words it writes."""

    edits: dict[int, Edit | Sequence[Edit]]
    freeze_from: int | None
    prefix: list[int]  # forced first
    target: list[int] | None  # the whole target, forced (ends with </s>), or None: greedy after the prefix

    def edits_at(self, i: int) -> list[Edit]:
        e = self.edits.get(i, ())
        return [e] if isinstance(e, Edit) else list(e)

    def word(self, i: int) -> int | None:
        """The word to force at step i (None: the model's argmax)."""
        if self.target is not None:
            return self.target[i]
        return self.prefix[i] if i < len(self.prefix) else None

    def first_edit(self) -> int | None:
        steps = [*self.edits, *([] if self.freeze_from is None else [self.freeze_from])]
        return min(steps) if steps else None


@dataclass
class _Edits:
    """The record of one edited decoding: steps edited, what was done there, the model's α before."""

    steps: list[int] = field(default_factory=list)
    described: dict[int, str] = field(default_factory=dict)
    before: dict[int, list[float]] = field(default_factory=dict)


def _decode(stepper: Stepper, plan: _Plan, original_alpha: Sequence[Sequence[float]] = ()) -> _Edits:
    """Step ``stepper`` to the end of the plan, editing α where asked; returns the edit record."""
    record = _Edits()
    frozen: torch.Tensor | None = None
    while not stepper.done:
        i = stepper.position
        step_edits = plan.edits_at(i)
        alpha = energies = None
        if frozen is not None or step_edits or plan.freeze_from == i:
            own = stepper.peek().attended  # the model's own α and e at step i
            alpha, energies = own.alpha, own.energies
            notes = []
            if frozen is not None:
                alpha, notes = frozen, [f"α frozen from step {plan.freeze_from}"]
            for e in step_edits:
                alpha, energies = apply_edit(e, alpha, energies, original_alpha)
                notes.append(e.describe(stepper.trace.src_tokens))
            if notes:
                record.steps.append(i)
                record.described[i] = "; ".join(notes)
                record.before[i] = own.alpha[0].tolist()
        stepper.step(plan.word(i), alpha=alpha, energies=energies)  # the model's own step
        if plan.freeze_from == i:
            frozen = alpha
    return record


def _surgery(base: Stepper, plan: _Plan) -> SurgeryResult:
    """The unedited decoding of ``plan`` from ``base`` and the edited one, re-synced to it up to the first edit."""
    at, first = base.position, plan.first_edit()
    original = base.fork()
    _decode(original, dataclasses.replace(plan, edits={}, freeze_from=None))
    edited = original.fork(original.position if first is None else max(at, first))  # the shared prefix
    record = _decode(edited, plan, [s.alpha or [] for s in original.trace.steps])
    trace = edited.trace
    trace.method = "surgery"
    original.trace.method = "forced" if plan.target is not None else "step"
    return SurgeryResult(trace, original.trace, record.steps, record.described, record.before)


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
    require_surgery(lm)
    stepper = Stepper(lm, text, context="attention", topk=topk, max_src_tokens=max_src_tokens,
                      unk_replace=unk_replace, pretokenized=pretokenized)
    tgt = None
    if target is not None:
        tgt = _ids(lm, target)
        if not tgt or tgt[-1] != EOS_ID:
            tgt.append(EOS_ID)
        stepper.max_len = len(tgt)
    return _surgery(stepper, _Plan(dict(edits or {}), freeze_from, _ids(lm, prefix), tgt))


def surgery_at_stepper(
    stepper: Stepper, edit: Edit | Sequence[Edit] | None = None, *, freeze: bool = False, topk: int | None = None,
) -> SurgeryResult:
    """Edit α at the stepper's next step (and, with ``freeze``, hold it there) and decode on greedily.

    The stepper is not changed: the surgery runs on forks re-synced to its steps so far (``topk``
    applies to the new steps)."""
    require_surgery(stepper.lm, stepper.context)
    i = stepper.position
    if stepper.done:
        raise InputError("Decoding has already ended; go back to edit a step.")
    base = stepper.fork()
    base.topk = topk or stepper.topk
    edits = {i: edit} if edit is not None else {}
    return _surgery(base, _Plan(edits, i if freeze else None, [], None))


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
