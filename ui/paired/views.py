"""Builders of the page "Is A really better than B?": a paired comparison of two models in words and tables.

They read the dict of :func:`nmt.tools.paired.compare` (sacrebleu's paired bootstrap resampling, Koehn 2004)
and never compute a score themselves: a one-line verdict per metric, the overall table (score, 95 %
interval, p), the table per source-length bucket and the sentences with the largest |ΔchrF|. No
Streamlit here.

The p-value's floor: sacrebleu counts resampled differences strictly above the observed one and adds
one, so its smallest p is 1 / (resamples + 1); a p at that floor is written "p ≤ floor", never as an
exact value. Two systems with the same output get that floor too, so :func:`verdict` says plainly that
the outputs are identical instead of calling them different.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import pandas as pd

from ui.figures.alignment import selected_row

ALPHA = 0.05  # the significance level the verdict names
METRICS = ("BLEU", "chrF")
MIN_SENTENCES = 10  # fewer sentence pairs than this: no paired test is offered


def p_floor(resamples: int) -> float:
    """sacrebleu's smallest p-value with ``resamples`` resamples: 1 / (resamples + 1)."""
    return 1.0 / (resamples + 1)


def at_floor(p: float, resamples: int) -> bool:
    """Whether ``p`` (as :mod:`nmt.tools.paired` rounds it, to 4 decimals) is sacrebleu's smallest."""
    return p <= round(p_floor(resamples), 4) + 1e-9


def p_text(p: float | None, resamples: int) -> str:
    """``p = 0.023``, or ``p ≤ 0.001`` at sacrebleu's floor (1/1001 shown as its upper bound 0.001);
    an em dash for the baseline (no p)."""
    if p is None:
        return "—"
    if at_floor(p, resamples):
        return f"p ≤ {p_floor(resamples):.2g}"
    return f"p = {p:.3f}"


def _signed(x: float) -> str:
    """A difference with its sign, a true minus for a negative one: ``+5.85``, ``−1.20``."""
    return f"+{x:.2f}" if x >= 0 else f"−{-x:.2f}"


def verdict(result: Mapping[str, Any], a: str, b: str, metric: str = "BLEU", alpha: float = ALPHA) -> str:
    """One line in plain words: whether ``b`` differs from the baseline ``a`` in ``metric``, by how much,
    with sacrebleu's p and the number of paired resamples, and whether that is unlikely to be chance.
    "Better" and "worse" are said only below ``alpha``; above it, only that B scores higher or lower."""
    b_name = result["systems"][0]
    n = int(result["resamples"])
    if result["identical_outputs"].get(b_name):
        return (f"{b} and {a} wrote the same translation of every sentence: there is no difference to test "
                f"(sacrebleu would still print its smallest p, {p_floor(n):.2g}; it means nothing here).")
    scores = result["overall"][metric]
    delta = scores[b_name]["score"] - scores[result["baseline"]]["score"]
    p = scores[b_name]["p_value"]
    how = f"{_signed(delta)} {metric}, {p_text(p, n)} ({n:,} paired resamples)"
    significant = p is not None and p < alpha
    if delta == 0:
        head = f"{b} and {a} have the same {metric} ({how})"
    elif significant:  # "better" only where the test carries it
        head = f"{b} is {'better' if delta > 0 else 'worse'} than {a} by {how}"
    else:
        head = f"{b} scores {'higher' if delta > 0 else 'lower'} than {a} by {how}"
    if significant:
        return f"{head}: unlikely to be chance."
    return f"{head}: not distinguishable from chance at p < {alpha:g}."


def overall_frame(result: Mapping[str, Any], labels: Mapping[str, str]) -> pd.DataFrame:
    """One row per model (the baseline first): each metric's score, bootstrap mean, 95 % interval (±)
    and p against the baseline. ``labels`` names the systems as the page shows them (A …, B …)."""
    n = int(result["resamples"])
    rows = []
    for name in (result["baseline"], *result["systems"]):
        row: dict[str, Any] = {"model": labels.get(name, name)}
        for m in METRICS:
            r = result["overall"][m][name]
            row |= {m: r["score"], f"{m} mean": r["mean"], f"{m} 95% CI ±": r["ci95"],
                    f"{m} p vs A": p_text(r["p_value"], n)}
        rows.append(row)
    return pd.DataFrame(rows)


def length_frame(result: Mapping[str, Any]) -> pd.DataFrame:
    """One row per source-length bucket: its sentences, each metric for A and B, B − A and p; a bucket
    with fewer than ``min_bucket`` sentences is listed untested (scores empty, p "not tested")."""
    a, b = result["baseline"], result["systems"][0]
    n = int(result["resamples"])
    rows = []
    for bucket in result["by_length"]:
        row: dict[str, Any] = {"source words": f"{bucket['lo']}–{bucket['hi'] - 1}", "sentences": bucket["n"]}
        for m in METRICS:
            if m in bucket:
                sa, sb = bucket[m][a]["score"], bucket[m][b]["score"]
                row |= {f"{m} A": sa, f"{m} B": sb, f"Δ{m}": round(sb - sa, 2),
                        f"{m} p": p_text(bucket[m][b]["p_value"], n)}
            else:
                row |= {f"{m} A": None, f"{m} B": None, f"Δ{m}": None,
                        f"{m} p": f"not tested (< {result.get('min_bucket', '?')} sentences)"}
        rows.append(row)
    return pd.DataFrame(rows)


SENTENCE_COLUMNS = ("line", "ΔchrF", "chrF A", "chrF B", "source", "A wrote", "B wrote", "reference")


def sentence_frame(result: Mapping[str, Any], lines: Sequence[int] | None = None) -> pd.DataFrame:
    """The sentences with the largest |chrF(B) − chrF(A)|, largest first. ``lines``: each compared
    sentence's line in the split (1-based), when empty lines were left out; else ``k + 1``."""
    rows = [{"line": (lines[r["k"]] if lines is not None else r["k"] + 1), "ΔchrF": r["delta_chrf"],
             "chrF A": r["chrf_a"], "chrF B": r["chrf_b"], "source": r["source"], "A wrote": r["a"],
             "B wrote": r["b"], "reference": r["reference"]}
            for r in result["largest_differences"][result["systems"][0]]]
    return pd.DataFrame(rows, columns=list(SENTENCE_COLUMNS))


def picked_line(selection: Any, lines: Sequence[int]) -> int | None:
    """The line of the row clicked in the sentence table (``st.dataframe``'s selection state, object or
    mapping form), or ``None`` when no row (or one outside ``lines``) is selected."""
    row = selected_row(selection)
    return int(lines[row]) if row is not None and 0 <= row < len(lines) else None


def pair_problem(langs_a: str, langs_b: str, same_file: bool) -> str | None:
    """Why two checkpoints cannot be compared, in one line, or ``None``."""
    if same_file:
        return "A and B are the same checkpoint: pick two different models."
    if langs_a != langs_b:
        return (f"A translates {langs_a} and B {langs_b}: a paired test needs two models of the same language "
                "pair, translating the same sentences.")
    return None


def size_problem(n: int, label: str, minimum: int = MIN_SENTENCES) -> str | None:
    """The one line shown when a split has too few sentence pairs to resample, or ``None``."""
    if n >= minimum:
        return None
    return (f"{label} has {n} usable sentence pair{'s' if n != 1 else ''}; a paired test needs at least "
            f"{minimum}. Pick a larger split.")


# ----------------------------------------------------------------------------------------------
# The whole-split run: its chunks, its estimated time and what a stopped run says
# ----------------------------------------------------------------------------------------------

MEASURE_LINES = 8  # the split's first lines, translated to measure the cost before a long run starts
CHUNK_LINES = 16  # lines translated per chunk after those (one stop point and one progress step each)


def chunk_bounds(n: int, first: int = MEASURE_LINES, size: int = CHUNK_LINES) -> list[tuple[int, int]]:
    """The run's chunks of ``n`` lines as ``(start, end)``: the measured first ``first`` lines, then
    ``size`` at a time (so the measurement's translations are the run's first chunk, not done twice)."""
    bounds = [(0, min(first, n))] if n > 0 else []
    bounds += [(k, min(k + size, n)) for k in range(first, n, size)]
    return bounds


def duration_text(seconds: float) -> str:
    """A duration in plain words, rounded as an estimate is: ``under 10 s``, ``about 40 s``, ``about 3 min``,
    ``about 1 h 50 min``."""
    if seconds < 10:
        return "under 10 s"
    if seconds < 90:
        return f"about {round(seconds / 10) * 10} s"
    minutes = round(seconds / 60)
    if minutes < 60:
        return f"about {minutes} min"
    hours, rest = divmod(minutes, 60)
    return f"about {hours} h" + (f" {rest} min" if rest else "")


def estimated_seconds(words: int, measured: Sequence[tuple[int, float]]) -> float:
    """Seconds to translate ``words`` source words with every model, from each model's measured
    ``(source words, seconds)`` on the split's first lines (cost grows with the words, not the lines)."""
    return sum(words * seconds / max(1, done) for done, seconds in measured)


def estimate_text(sentences: int, words: int, measured: Sequence[tuple[int, float]]) -> str:
    """What the page says before a long run starts: its estimated time and what it is made of."""
    per = " and ".join(f"{1000 * s / max(1, w):.1f} ms" for w, s in measured)
    return (f"Estimated time: {duration_text(estimated_seconds(words, measured))} for {sentences:,} sentences "
            f"({words:,} source words) × {len(measured)} models, measured on this server now: {per} a source word "
            f"on the first {MEASURE_LINES} lines. **Stop** keeps what is done; Run again continues from there.")


def time_left(words_done: int, seconds: float, words_left: int) -> float | None:
    """Seconds left at the rate of this run so far (``None`` before anything was computed)."""
    return None if words_done <= 0 or seconds <= 0 else words_left * seconds / words_done


def stopped_text(done: int, total: int, minimum: int = MIN_SENTENCES) -> str:
    """What a stopped run says: how far it got, and that Run continues (what is done is kept)."""
    if done < minimum:
        return (f"Stopped after {done:,} of {total:,} sentences: a paired test needs at least {minimum}. "
                "Press Run to continue; the sentences done are kept.")
    return (f"Stopped after {done:,} of {total:,} sentences: the comparison below covers those {done:,}. "
            "Press Run to continue from there; the sentences done are kept.")
