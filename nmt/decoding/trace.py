"""The decode trace: everything a view needs to show about one decoded sentence.

Greedy, beam and forced decoding and the token-by-token stepper all produce a
:class:`DecodeTrace`. Per target step i it holds the energies e_ij and weights α_ij (None when c_i
is a fixed summary: no alignment exists then), the chosen token, whether it was forced, the top-k
next-token probabilities, ‖s_{i-1}‖ and ‖c_i‖; beam search adds, per step, every live hypothesis
with its cumulative and normalised score and its parent, the pruned expansions and the finished
ones, and the n-best list with each hypothesis' own α. Pages read traces; they never touch the model.
"""

from __future__ import annotations

import json
import math
from collections.abc import Mapping
from dataclasses import asdict, dataclass, field
from typing import Any, NamedTuple

import numpy as np

from nmt.models.candidates import CandidateList
from nmt.text.vocab import EOS, UNK


@dataclass
class Hypothesis:
    """One partial or finished beam hypothesis at one step."""

    id: int  # unique within the trace
    parent: int  # id of the hypothesis it extends; -1 for the empty start
    step: int  # target position i (0-based) of its last token
    token: str
    tokens: list[str]
    logprob: float  # cumulative log p(y_≤i | x)
    score: float  # normalised score used for ranking finished hypotheses
    finished: bool = False
    status: str = "live"  # live | pruned | finished


@dataclass
class BeamStep:
    """The beam after step i: live hypotheses, expansions pruned, hypotheses finished."""

    live: list[Hypothesis] = field(default_factory=list)
    pruned: list[Hypothesis] = field(default_factory=list)
    finished: list[Hypothesis] = field(default_factory=list)


@dataclass
class MemberStep:
    """One member of an ensemble at one step (:mod:`nmt.decoding.ensemble`): its log p of the word the
    ensemble wrote, its own α row (None without attention) and the word it would have written alone."""

    logprob: float
    alpha: list[float] | None
    top: tuple[str, float]  # (its argmax word, that word's p)

    @property
    def prob(self) -> float:
        return math.exp(self.logprob)


@dataclass
class SampleRecord:
    """How a sampled step chose its word (:func:`nmt.decoding.sampling.draw`): the rule, the uniform u,
    and the p of the most probable words (and the drawn one) under each stage of ``stages``."""

    temperature: float
    top_k: int
    top_p: float
    seed: int
    u: float
    stages: list[str]  # "model", then each transform
    rows: list[tuple[str, list[float]]]  # word and its p at each stage, by decreasing final p
    kept: int  # words with p > 0 after the last transform


@dataclass
class StepRecord:
    """What the decoder did at target position i."""

    i: int
    token: str
    token_id: int
    logprob: float  # log p(y_i | y_<i, x) of the chosen token
    forced: bool
    energies: list[float] | None  # e_ij over source positions; None for a fixed context
    alpha: list[float] | None  # α_ij; None for a fixed context
    topk: list[tuple[str, float]]  # next-word candidates with probabilities
    state_norm: float  # ‖s_{i-1}‖, the state this prediction is read from
    context_norm: float  # ‖c_i‖
    position: float | None = None  # local attention's p_t (0-based source position); None otherwise
    window: list[int] | None = None  # first and last source position in [p_t − D, p_t + D] ∩ the sentence
    members: list[MemberStep] | None = None  # an ensemble's members, in order; None for one model
    sample: SampleRecord | None = None  # how the word was sampled (nmt.decoding.sampling); None otherwise

    @property
    def prob(self) -> float:
        return math.exp(self.logprob)

    def entropy(self) -> float | None:
        """Entropy of α_i· in nats (None when no alignment exists)."""
        if self.alpha is None:
            return None
        a = np.asarray(self.alpha, dtype=np.float64)
        a = a[a > 0]
        return float(-(a * np.log(a)).sum())


@dataclass
class NBestEntry:
    """One finished hypothesis of a beam search, with its own alignment."""

    tokens: list[str]
    translation: str
    logprob: float
    score: float
    alpha: list[list[float]] | None


DICTIONARY, COPIED = "dictionary", "copied"  # how an <unk> was replaced


class Replacement(NamedTuple):
    """An ``<unk>`` replaced: the source position and word it attends to most, the word written
    instead and how it was found (``"dictionary"`` or ``"copied"``)."""

    j: int
    source: str
    word: str
    label: str


@dataclass
class DecodeTrace:
    """A decoded (or force-decoded) sentence and the model's internals at every step."""

    source: str
    src_tokens: list[str]  # Moses tokens + "</s>", as the encoder saw them
    src_unk: list[bool]  # True where the word is outside the source vocabulary
    method: str  # greedy | beam | forced | step
    context: str  # attention | fixed | mean
    steps: list[StepRecord] = field(default_factory=list)
    translation: str = ""
    truncated: bool = False
    nbest: list[NBestEntry] = field(default_factory=list)
    beam_size: int = 1
    length_norm: str = "none"
    beam_steps: list[BeamStep] = field(default_factory=list)  # beam search: the beam after each step
    finished: bool = False
    # the model's dictionary (nmt.text.lexicon) for this sentence: each source token's best translation
    dictionary: dict[str, str] = field(default_factory=dict)
    # the candidate list it decoded with (Jean et al. 2015 §3.2, nmt.models.candidates); None: every word
    candidates: CandidateList | None = None

    # -- derived views ---------------------------------------------------------------------

    @property
    def target_tokens(self) -> list[str]:
        """Chosen target tokens, ``</s>`` included when decoding ended."""
        return [s.token for s in self.steps]

    @property
    def logprob(self) -> float:
        return float(sum(s.logprob for s in self.steps))

    @property
    def has_alignment(self) -> bool:
        """Whether there are α rows to draw: the one "has α" rule, read from the recorded steps.

        Decoding records α for attention (the model's, or an edited one) and for the mean context's
        uniform α, never for a fixed summary c; a step's own ``alpha is None`` says the same per step.
        """
        return any(s.alpha is not None for s in self.steps)

    @property
    def picture(self) -> str:
        """What a view draws for the rows of this trace, decided here once for every view:

        - ``"alpha"``: each row is the step's own α_i· over the source (attention; the mean context's
          uniform α too);
        - ``"summary"``: every step read the one fixed summary c = [→h_Tx; ←h_1] (RNNencdec, or the
          frozen ablation). There is no α; the rows are drawn as one identical flat band over the whole
          source, labelled as the summary, never as weights;
        - ``"empty"``: nothing decoded yet.
        """
        if not self.steps:
            return "empty"
        return "alpha" if self.has_alignment else "summary"

    def unk_copies(self) -> dict[int, tuple[int, str]]:
        """Unknown-word replacement (Jean et al. 2015): for each step that wrote ``<unk>``, the source
        position and word with the single largest α_ij, never the final ``</s>``. None where α points
        at no one word: no α (fixed summary) or a tie for the largest (the mean context's uniform α)."""
        real = len(self.src_tokens) - 1 if self.src_tokens and self.src_tokens[-1] == EOS else len(self.src_tokens)
        out: dict[int, tuple[int, str]] = {}
        for s in self.steps:
            if s.token != UNK or s.alpha is None or real <= 0:
                continue
            a = s.alpha[:real]
            best = max(a)
            if a.count(best) == 1:
                j = a.index(best)
                out[s.i] = (j, self.src_tokens[j])
        return out

    def unk_replacements(self) -> dict[int, Replacement]:
        """What each ``<unk>`` becomes (Jean et al. 2015 §2.3; Luong et al. 2015): the dictionary's
        translation of the source word with the largest α_ij (:meth:`unk_copies`), labelled
        ``"dictionary"``, or, where the dictionary lacks that word (names, numbers), the word itself,
        labelled ``"copied"``."""
        out: dict[int, Replacement] = {}
        for i, (j, src) in self.unk_copies().items():
            known = src in self.dictionary
            out[i] = Replacement(j, src, self.dictionary[src] if known else src, DICTIONARY if known else COPIED)
        return out

    def came_in_via(self, i: int) -> list[str]:
        """The source words whose dictionary translations brought the word of step ``i`` into the
        candidate list; empty when it is one of the K most frequent (or there is no list)."""
        if self.candidates is None or not 0 <= i < len(self.steps):
            return []
        return list(self.candidates.via.get(self.steps[i].token, []))

    def output_words(self, swaps: Mapping[int, Replacement] | None = None) -> list[str]:
        """The words written, before ``</s>``, each replaced ``<unk>`` as ``swaps`` (from
        :meth:`unk_replacements`) says; ``None``: every ``<unk>`` as written."""
        swaps = swaps or {}
        words = []
        for s in self.steps:
            if s.token == EOS:
                break
            words.append(swaps[s.i].word if s.i in swaps else s.token)
        return words

    def _matrix(self, attr: str) -> np.ndarray:
        out = np.full((len(self.steps), len(self.src_tokens)), np.nan)
        for r, s in enumerate(self.steps):
            v = getattr(s, attr)
            if v is not None:
                out[r, : len(v)] = v
        return out

    def alpha_matrix(self) -> np.ndarray:
        """α as a (target steps × source tokens) array; NaN rows where c_i is fixed."""
        return self._matrix("alpha")

    def energy_matrix(self) -> np.ndarray:
        """e as a (target steps × source tokens) array; NaN rows where c_i is fixed."""
        return self._matrix("energies")

    def cells(self) -> list[dict[str, Any]]:
        """Long-format rows (one per target step × source token) for tables, charts and CSV."""
        rows = []
        for s in self.steps:
            for j, w in enumerate(self.src_tokens):
                rows.append({
                    "i": s.i, "target": s.token, "forced": s.forced, "j": j, "source": w,
                    "alpha": None if s.alpha is None else s.alpha[j],
                    "energy": None if s.energies is None else s.energies[j],
                })
        return rows

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)

    def to_json(self, indent: int | None = None) -> str:
        return json.dumps(self.to_dict(), ensure_ascii=False, indent=indent)

    @classmethod
    def from_dict(cls, d: dict[str, Any]) -> DecodeTrace:
        def hyp_list(xs: list[dict[str, Any]]) -> list[Hypothesis]:
            return [Hypothesis(**h) for h in xs]

        def members(ms: list[dict[str, Any]] | None) -> list[MemberStep] | None:
            return None if ms is None else [MemberStep(**{**m, "top": tuple(m["top"])}) for m in ms]

        steps = [StepRecord(**{**s, "topk": [tuple(t) for t in s["topk"]], "members": members(s.get("members"))})
                 for s in d.get("steps", [])]
        beam_steps = [BeamStep(hyp_list(b["live"]), hyp_list(b["pruned"]), hyp_list(b["finished"]))
                      for b in d.get("beam_steps", [])]
        nbest = [NBestEntry(**n) for n in d.get("nbest", [])]
        cands = d.get("candidates")
        return cls(**{**d, "steps": steps, "beam_steps": beam_steps, "nbest": nbest,
                      "candidates": None if cands is None else CandidateList(**cands)})
