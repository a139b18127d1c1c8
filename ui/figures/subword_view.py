"""A subword model's trace seen as words: the heatmap's "Words" view (no Streamlit).

A subword model (:mod:`nmt.text.subword`) reads and writes pieces, so its α heatmap has a column per
source piece and a row per target piece ("Pieces", as the model computed it). "Words" groups them
(:func:`nmt.text.subword.word_spans`): a source word's column is the sum of its pieces' α (the weight the
step gave that word), a target word's row the mean of its pieces' rows (each row stays a
distribution over the source; see :mod:`nmt.text.subword`). Its log p is the sum of its pieces' (the
probability of writing all of them); energies are left out (e_ij of pieces do not add up to a word's).
"""

from __future__ import annotations

import dataclasses

from nmt.decoding.trace import DecodeTrace, StepRecord
from nmt.text import subword
from nmt.text.subword_bpe import SEPARATOR

VIEWS = ("Pieces", "Words")
HELP = ("The model reads and writes subword pieces. Pieces: its α as computed, a column per source piece and a "
        "row per target piece. Words: each source word's column sums its pieces' α; each target word's row "
        "averages its pieces' rows, so every row still adds up to 1.")


def words_trace(trace: DecodeTrace, kind: str, separator: str = SEPARATOR) -> tuple[DecodeTrace, list[tuple[int, int]]]:
    """``trace`` with pieces grouped into words, and the target words' spans of steps ([first, last + 1))
    so that a word row clicked in the heatmap maps back to a step (its last piece)."""
    src_spans = subword.word_spans(trace.src_tokens, kind, separator)
    tgt_spans = subword.word_spans([s.token for s in trace.steps], kind, separator)
    src_words = subword.word_labels(trace.src_tokens, src_spans, kind, separator)
    tgt_words = subword.word_labels([s.token for s in trace.steps], tgt_spans, kind, separator)
    unk = list(trace.src_unk) + [False] * (len(trace.src_tokens) - len(trace.src_unk))
    steps = [_word_step(k, word, trace.steps[a:b], src_spans) for k, (word, (a, b)) in enumerate(
        zip(tgt_words, tgt_spans, strict=True))]
    grouped = dataclasses.replace(trace, src_tokens=src_words, src_unk=[any(unk[a:b]) for a, b in src_spans],
                                  steps=steps, nbest=[], beam_steps=[])
    return grouped, tgt_spans


def words_matrix(src_tokens: list[str], tgt_tokens: list[str], alpha: list[list[float]], kind: str,
                 separator: str = SEPARATOR) -> tuple[list[str], list[str], list[list[float]]]:
    """(source words, target words, α over them) of one hypothesis' α over pieces (rows: target pieces):
    columns summed over a source word's pieces, rows averaged over a target word's."""
    src_spans = subword.word_spans(src_tokens, kind, separator)
    tgt_spans = subword.word_spans(tgt_tokens, kind, separator)
    merged = subword.average_rows(subword.sum_columns(alpha, src_spans), tgt_spans)
    return (subword.word_labels(src_tokens, src_spans, kind, separator),
            subword.word_labels(tgt_tokens, tgt_spans, kind, separator), merged.tolist())


def _word_step(k: int, word: str, pieces: list[StepRecord], src_spans: list[tuple[int, int]]) -> StepRecord:
    """One target word's row: α summed over source words' pieces and averaged over its own pieces."""
    last = pieces[-1]
    alpha = None
    if all(p.alpha is not None for p in pieces):
        rows = subword.sum_columns([p.alpha for p in pieces], src_spans)  # type: ignore[misc]
        alpha = [float(x) for x in subword.average_rows(rows, [(0, len(pieces))])[0]]
    return dataclasses.replace(last, i=k, token=word, logprob=sum(p.logprob for p in pieces),
                               forced=any(p.forced for p in pieces), energies=None, alpha=alpha,
                               position=None, window=None, members=None)


def step_of_row(row: int | None, spans: list[tuple[int, int]]) -> int | None:
    """The step a clicked word row stands for: its last piece's (None stays None)."""
    if row is None or not 0 <= row < len(spans):
        return None
    return spans[row][1] - 1
