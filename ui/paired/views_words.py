"""Builders of the page "Is A really better than B?"'s word analyses: compare-mt's tables as data frames.

They read ``result["words"]`` of :func:`nmt.tools.paired.compare` (:mod:`nmt.text.word_analysis`) and never
count a word themselves: one row per frequency bucket or third of the sentence (F-measure of A and B,
B − A and its paired-bootstrap interval), one row per n-gram B matches and A misses or the reverse. No
Streamlit here.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import pandas as pd

NGRAM_SIDES = {"b_not_a": "B matches, A misses", "a_not_b": "A matches, B misses"}


def _interval(ci: Sequence[float]) -> str:
    """A 95 % interval as ``[lo, hi]``, a true minus for negatives."""
    return "[" + ", ".join(f"{x:+.3f}".replace("-", "−") for x in ci) + "]"


def _ours(result: Mapping[str, Any]) -> Mapping[str, Any]:
    """The word analyses of B (the first compared system) against the baseline."""
    return result["words"]["by_system"][result["systems"][0]]


def bucket_frame(result: Mapping[str, Any], table: str) -> pd.DataFrame:
    """``table`` ("by_frequency" or "by_position") as rows: the bucket, reference words, F of A and B, B − A,
    its 95 % interval, and each system's output words and matches."""
    head = "frequency" if table == "by_frequency" else "part of the sentence"
    rows = [{head: r["bucket"], "reference words": r["ref_words"], "F A": r["a"]["f"], "F B": r["b"]["f"],
             "ΔF (B − A)": r["delta_f"], "95% interval": _interval(r["delta_ci95"]),
             "A words": r["a"]["out_words"], "A matched": r["a"]["matches"], "B words": r["b"]["out_words"],
             "B matched": r["b"]["matches"]} for r in _ours(result)[table]]
    return pd.DataFrame(rows)


def ngram_frame(result: Mapping[str, Any], side: str, lines: Sequence[int] | None = None) -> pd.DataFrame:
    """The n-grams of ``side`` ("b_not_a" or "a_not_b"), most one-sided first: matches of A and B, compare-mt's
    score, B − A with its 95 % interval, and the test-set lines (1-based) of its examples."""
    def line(k: int) -> int:
        return lines[k] if lines is not None else k + 1

    rows = [{"n-gram": r["ngram"], "n": r["n"], "A matched": r["a"], "B matched": r["b"], "score": r["score"],
             "Δ (B − A)": r["delta"], "95% interval": _interval(r["delta_ci95"]),
             "example lines": ", ".join(str(line(k)) for k in r["examples"])} for r in _ours(result)["ngrams"][side]]
    return pd.DataFrame(rows, columns=["n-gram", "n", "A matched", "B matched", "score", "Δ (B − A)", "95% interval",
                                       "example lines"])


def ngram_examples(result: Mapping[str, Any], side: str, row: int) -> list[dict[str, Any]]:
    """The example sentences of the ``row``-th n-gram of ``side`` (k, reference, A's and B's translation)."""
    rows = _ours(result)["ngrams"][side]
    return list(rows[row].get("example_text", [])) if 0 <= row < len(rows) else []


def source_line(result: Mapping[str, Any]) -> str:
    """Where the frequencies came from and how the intervals were drawn, in one caption."""
    w = result["words"]
    return (f"Word frequencies: {w['frequency_source']}. Buckets and n-grams as compare-mt defines them (Neubig "
            f"et al. 2019); each 95% interval of B − A from the same {result['resamples']:,} resampled test sets "
            "as sacrebleu's paired bootstrap above (compare-mt's percentile rule).")
