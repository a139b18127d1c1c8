"""Another toolkit's search rules, carried by an imported model's checkpoint and honoured when it decodes.

An importer (:mod:`nmt.tools.importers`) records in ``meta["search_rules"]`` how the toolkit that trained
the model searches: its length limit, the steps before which it never ends, the tokens it never writes,
and its beam (length penalty, how a search ends and how it ranks what it found). :class:`SearchRules`
reads that record; :func:`nmt.decoding.search.greedy`, the stepper and :func:`nmt.decoding.beam.beam_search`
(``python -m nmt translate``, the beam explorer, every page) follow it by default for that model, so an imported
model writes what its toolkit writes; ``toolkit_rules=False`` (``--app-rules``) uses this app's rules instead.

The two beams (:func:`nmt.decoding.beam._toolkit_search`) are ports of the toolkits' own loops for one sentence,
cited by file and function:

* JoeyNMT 2.3 (joeynmt/search.py ``beam_search``): the k best continuations of all k rows, finished
  rows included (a row that wrote ``</s>`` goes on being expanded); a row counts as finished from the step
  its candidate writes ``</s>`` and, as JoeyNMT's ``is_finished`` is not reordered with the beam, its slot
  stays finished; a hypothesis is kept when it ends with its only ``</s>`` (or reaches the limit); the
  search ends when every slot is finished, and the best kept score wins (GNMT penalty when α > 0).
* OpenNMT-py 3.5.1 (onmt/translate/beam_search.py ``BeamSearchBase.advance`` / ``update_finished``): the
  k best continuations of the live rows, scored cumulative log p / length penalty (``avg``: (t + 1)^α with
  t the length with ``<s>``, α = 1 by default; onmt/translate/penalties.py ``length_average``); a row that
  writes ``</s>`` is kept as a hypothesis with that score and dropped; the search ends when the best row
  writes ``</s>`` (or at the limit), and the best kept score wins.
"""

from __future__ import annotations

import math
from dataclasses import asdict, dataclass
from typing import Any

import torch

from nmt.models.checkpoint import LoadedModel
from nmt.text.vocab import EOS_ID

BEAMS = ("joeynmt", "opennmt-py")
PENALTIES = ("none", "gnmt", "avg")


@dataclass(frozen=True)
class SearchRules:
    """How a toolkit searches, as data (an imported checkpoint's ``meta["search_rules"]``).

    Length limit: int(min(``cap``, ``ratio`` · S + ``plus``)) steps, ``</s>`` included, S = the source's ids
    with ``</s>`` (``src_eos`` true) or without it."""

    toolkit: str
    ratio: float
    plus: float
    cap: int | None
    src_eos: bool
    min_len: int  # steps before which </s> is never written (JoeyNMT: 1, it never ends at step 0)
    never_write: tuple[str, ...]  # tokens the toolkit never writes (JoeyNMT: <s>, <pad>)
    beam: str  # whose beam loop: one of BEAMS
    length_penalty: str  # one of PENALTIES: how the beam divides a hypothesis' log p
    alpha: float  # the penalty's α (JoeyNMT's default -1: none; OpenNMT-py's avg: 1)
    source: str  # where in the toolkit these rules are (file and function)

    def max_len(self, n_src: int) -> int:
        """The limit for a source of ``n_src`` ids including this app's ``</s>``."""
        s = n_src if self.src_eos else n_src - 1
        limit = self.ratio * s + self.plus
        return int(limit if self.cap is None else min(self.cap, limit))

    def to_meta(self) -> dict[str, Any]:
        """The record an importer stores."""
        return {**asdict(self), "never_write": list(self.never_write)}

    @classmethod
    def from_meta(cls, d: dict[str, Any]) -> SearchRules:
        """The rules of a stored record (``ValueError`` for one this app cannot follow)."""
        rules = cls(**{**d, "never_write": tuple(d["never_write"])})
        if rules.beam not in BEAMS or rules.length_penalty not in PENALTIES:
            raise ValueError(f"search rules of an unknown beam {rules.beam!r} or penalty {rules.length_penalty!r}")
        return rules

    def note(self) -> str:
        """One line saying which rules decode this model (the CLI and pages show it)."""
        cap = "" if self.cap is None else f", at most {self.cap}"
        s = "source ids with </s>" if self.src_eos else "source words"
        return (f"decoding as {self.toolkit} does: at most int({self.ratio:g} × {s} + {self.plus:g}{cap}) tokens"
                + (", never </s> first" if self.min_len else "")
                + (f", never {' or '.join(self.never_write)}" if self.never_write else "")
                + f"; beam: {self.toolkit}'s, length penalty {self.length_penalty}"
                + (f" (α {self.alpha:g})" if self.length_penalty != "none" else ""))


def rules_of(lm: LoadedModel) -> SearchRules | None:
    """The search rules an imported model's checkpoint records; None for this app's own models."""
    record = (lm.meta or {}).get("search_rules")
    return SearchRules.from_meta(record) if isinstance(record, dict) else None


def masked(lm: LoadedModel, rules: SearchRules, log_probs: torch.Tensor, step: int) -> torch.Tensor:
    """``log_probs`` (rows × vocabulary) with what the toolkit never writes at ``step`` set to -inf."""
    out = log_probs.clone()
    banned = [lm.tgt_vocab.stoi[w] for w in rules.never_write if w in lm.tgt_vocab.stoi]
    if banned:
        out[:, banned] = -math.inf
    if step < rules.min_len:
        out[:, EOS_ID] = -math.inf
    return out


def penalty(rules: SearchRules, length: int) -> float:
    """The divisor of a cumulative log p: JoeyNMT's GNMT ((5 + t) / 6)^α when α > 0, OpenNMT-py's avg t^α."""
    if rules.length_penalty == "gnmt" and rules.alpha > 0:
        return ((5.0 + length) / 6.0) ** rules.alpha
    if rules.length_penalty == "avg":
        return float(length) ** rules.alpha
    return 1.0
