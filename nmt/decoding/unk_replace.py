"""Unknown words replaced from a dictionary (Jean et al. 2015 §2.3; Luong et al. 2015, "rare word").

The rule is the trace's own, :meth:`nmt.decoding.trace.DecodeTrace.unk_replacements`: for every ``<unk>`` the
decoder wrote at step i, take the source word with the single largest α_ij over the real source words
(never the final ``</s>``). The output word is that word's dictionary translation (:mod:`nmt.text.lexicon`,
best p(t | s)), labelled ``"dictionary"``; a word the dictionary lacks (names, numbers) is copied as it
is, labelled ``"copied"``. Without α (a fixed context) or with a tie for the largest α (the mean
context's uniform α) an ``<unk>`` stays as it is. A model's dictionary is carried by each of its traces
(``trace.dictionary``, filled from ``LoadedModel.dictionary``); :func:`with_dictionary` gives a trace
another one.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping
from dataclasses import dataclass

from nmt.decoding.trace import COPIED, DICTIONARY, DecodeTrace

__all__ = ["COPIED", "DICTIONARY", "OutputWord", "replace_in_trace", "with_dictionary"]


@dataclass(frozen=True)
class OutputWord:
    """One output word after replacement, and how it was obtained (``None``: the model's own)."""

    word: str
    label: str | None = None


def with_dictionary(trace: DecodeTrace, table: Mapping[str, str]) -> DecodeTrace:
    """A copy of ``trace`` whose dictionary is ``table``'s entries for its source words."""
    return dataclasses.replace(trace, dictionary={w: table[w] for w in trace.src_tokens if w in table})


def replace_in_trace(trace: DecodeTrace, table: Mapping[str, str] | None = None) -> list[OutputWord]:
    """The output words of a trace (``</s>`` and after dropped) with each ``<unk>`` replaced, from
    ``table`` when given, else from the trace's own dictionary."""
    if table is not None:
        trace = with_dictionary(trace, table)
    swaps = trace.unk_replacements()
    words = trace.output_words(swaps)
    return [OutputWord(w, swaps[s.i].label if s.i in swaps else None) for s, w in zip(trace.steps, words)]
