"""Unknown words replaced from a dictionary (Jean et al. 2015 §2.3; Luong et al. 2015, "rare word").

For every ``<unk>`` the decoder emits at step i, take the source word it attends to most,
j* = argmax_j α_ij over the real source words (never the final ``</s>``). The output word is that
word's dictionary translation (:mod:`nmt.lexicon`, best p(t | s)), labelled ``"dictionary"``; a
word the dictionary lacks (names, numbers) is copied as it is, labelled ``"copied"``. Other words
keep their label ``None``. Without α (a fixed-context model) an ``<unk>`` stays as it is.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from nmt.checkpoint import LoadedModel
from nmt.trace import DecodeTrace
from nmt.vocab import EOS, UNK

DICTIONARY, COPIED = "dictionary", "copied"


@dataclass(frozen=True)
class OutputWord:
    """One output word after replacement, and how it was obtained (``None``: the model's own)."""

    word: str
    label: str | None = None


def most_attended(alpha: Sequence[float], src_tokens: Sequence[str]) -> int | None:
    """argmax_j α_ij over source positions that are real words (``</s>`` excluded); ties: first."""
    real = [j for j, w in enumerate(src_tokens[: len(alpha)]) if w != EOS]
    return max(real, key=lambda j: alpha[j]) if real else None


def replace_unknowns(tokens: Sequence[str], alphas: Sequence[Sequence[float] | None], src_tokens: Sequence[str],
                     table: Mapping[str, str]) -> list[OutputWord]:
    """Output words of one translation (``</s>`` and after dropped) with each ``<unk>`` replaced.

    ``tokens[i]`` is the word emitted at step i and ``alphas[i]`` its α_i· over ``src_tokens``;
    ``table`` maps a source word to its best translation."""
    out: list[OutputWord] = []
    for token, alpha in zip(tokens, alphas, strict=True):
        if token == EOS:
            break
        j = most_attended(alpha, src_tokens) if token == UNK and alpha is not None else None
        if j is None:
            out.append(OutputWord(token))
        elif src_tokens[j] in table:
            out.append(OutputWord(table[src_tokens[j]], DICTIONARY))
        else:
            out.append(OutputWord(src_tokens[j], COPIED))
    return out


def replace_in_trace(trace: DecodeTrace, table: Mapping[str, str]) -> list[OutputWord]:
    """:func:`replace_unknowns` on a decode trace's steps."""
    return replace_unknowns([s.token for s in trace.steps], [s.alpha for s in trace.steps], trace.src_tokens, table)


def translation_with_dictionary(lm: LoadedModel, trace: DecodeTrace, table: Mapping[str, str]) -> str:
    """The detokenised translation of a trace with its ``<unk>`` replaced from ``table``."""
    return lm.tgt_tok.detokenize([w.word for w in replace_in_trace(trace, table)])
