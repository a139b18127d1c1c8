"""Dictionary replacement of <unk> (Jean et al. 2015 §2.3, Luong et al. 2015) on hand-made traces (issue 20)."""

from __future__ import annotations

from nmt.trace import DecodeTrace, StepRecord
from nmt.unk_replace import COPIED, DICTIONARY, OutputWord, most_attended, replace_in_trace, replace_unknowns
from nmt.vocab import EOS, UNK

SRC = ["the", "Zorblax", "ate", "cheese", EOS]
TABLE = {"cheese": "fromage", "ate": "mangé", "the": "le"}


def _step(i: int, token: str, alpha: list[float] | None) -> StepRecord:
    return StepRecord(i=i, token=token, token_id=0, logprob=-0.1, forced=False, energies=None, alpha=alpha,
                      topk=[], state_norm=1.0, context_norm=1.0)


def test_dictionary_hit_copy_fallback_and_never_eos() -> None:
    trace = DecodeTrace(source="the Zorblax ate cheese", src_tokens=SRC, src_unk=[False, True, False, False, False],
                        method="greedy", context="attention")
    trace.steps = [
        _step(0, "le", [0.7, 0.1, 0.1, 0.05, 0.05]),
        _step(1, UNK, [0.1, 0.6, 0.1, 0.1, 0.1]),  # "Zorblax": not in the table → copied
        _step(2, "a", [0.1, 0.1, 0.5, 0.2, 0.1]),
        _step(3, UNK, [0.05, 0.05, 0.1, 0.3, 0.5]),  # </s> has most; the best real word is "cheese"
        _step(4, UNK, [0.1, 0.1, 0.35, 0.05, 0.4]),  # </s> again; then "ate" → "mangé"
        _step(5, EOS, [0.0, 0.0, 0.0, 0.0, 1.0]),
    ]
    assert replace_in_trace(trace, TABLE) == [
        OutputWord("le"), OutputWord("Zorblax", COPIED), OutputWord("a"), OutputWord("fromage", DICTIONARY),
        OutputWord("mangé", DICTIONARY)]


def test_unk_without_attention_stays_and_output_stops_at_eos() -> None:
    out = replace_unknowns([UNK, "x", EOS, UNK], [None, None, None, [1.0, 0, 0, 0, 0]], SRC, TABLE)
    assert out == [OutputWord(UNK), OutputWord("x")]


def test_most_attended_skips_only_eos() -> None:
    assert most_attended([0.2, 0.1, 0.3, 0.1, 0.9], SRC) == 2
    assert most_attended([0.2, 0.2, 0.1, 0.1, 0.4], SRC) == 0  # a tie goes to the first position
    assert most_attended([1.0], [EOS]) is None
