"""Where two systems differ, word by word: compare-mt's analyses with a paired bootstrap per bucket.

The definitions are compare-mt's (Neubig et al. 2019, https://github.com/neulab/compare-mt, commit b6d8f79):

* **Word matches** (``WordBucketer._calc_trg_matches``): the k-th occurrence of a word in the output
  matches the k-th occurrence of that word in the reference, if there is one. A reference word counts
  in its own bucket; an output word counts in the bucket of the reference word it matches, else in its own.
  Per bucket, precision = matches / output words, recall = matches / reference words and F-measure
  = 2PR / (P + R), 0 when nothing matches (``WordBucketer.calc_statistics``).
* **Frequency buckets** (``FreqWordBucketer``): a word's count in a frequency source, cut at compare-mt's
  default cutoffs 1, 2, 3, 4, 5, 10, 100, 1000 (labels ``<1``, ``1`` … ``[5,10)`` … ``>=1000``).
* **Part of the sentence** (ours, with compare-mt's bucketing rule): the reference word at position i of
  L words is in third ⌊3i / L⌋ (first, middle, last); an unmatched output word by its own position.
* **N-grams** (``ngram_utils.compare_ngrams``, ``stat_utils.extract_salient_features``): per sentence an
  output n-gram (n = 1 … 4) matches while the reference still has an unused copy of it; over the test set
  each n-gram's matches m_A and m_B are scored (m_A + α) / (m_A + m_B + 2α) with α = 1: near 0, B matches
  it where A misses; near 1, the reverse.

The intervals are ours (MT-Telescope's idea, compare-mt resamples each system alone): the same resampled
test sets as sacrebleu's paired bootstrap of the page (:func:`sacrebleu_indices`), and on each the
difference B − A; the 95 % interval is compare-mt's percentile rule (sorted values at 2.5 % and 97.5 %).
No Streamlit, no model: token lists in, numbers out.
"""

from __future__ import annotations

import os
from collections import Counter, defaultdict
from collections.abc import Callable, Iterable, Mapping, Sequence
from typing import Any

import numpy as np

FREQ_CUTOFFS = (1, 2, 3, 4, 5, 10, 100, 1000)  # compare-mt's FreqWordBucketer default
THIRDS = ("first third", "middle third", "last third")
MAX_N = 4
ALPHA = 1.0  # compare-mt's smoothing of the n-gram score
TOP_NGRAMS = 20
EXAMPLES = 3

Tokens = Sequence[str]


def bucket_labels(cutoffs: Sequence[int] = FREQ_CUTOFFS) -> list[str]:
    """compare-mt's bucket names (``Bucketer.set_bucket_cutoffs``): ``<1``, ``1`` … ``[5,10)`` … ``>=1000``."""
    out = []
    for i, x in enumerate(cutoffs):
        if i == 0:
            out.append(f"<{x}")
        elif x - 1 == cutoffs[i - 1]:
            out.append(f"{x - 1}")
        else:
            out.append(f"[{cutoffs[i - 1]},{x})")
    return [*out, f">={cutoffs[-1]}"]


def cutoff_bucket(value: int, cutoffs: Sequence[int] = FREQ_CUTOFFS) -> int:
    """The bucket of a count: the first cutoff above it (``Bucketer.cutoff_into_bucket``)."""
    return next((i for i, v in enumerate(cutoffs) if value < v), len(cutoffs))


def match_positions(ref: Tokens, out: Tokens) -> list[int]:
    """For each output word, the reference position it matches (the k-th copy to the k-th), else −1."""
    where: dict[str, list[int]] = defaultdict(list)
    for i, w in enumerate(ref):
        where[w].append(i)
    seen: Counter[str] = Counter()
    found = []
    for w in out:
        places = where.get(w, [])
        found.append(places[seen[w]] if seen[w] < len(places) else -1)
        seen[w] += 1
    return found


def bucket_counts(ref: Tokens, outs: Sequence[Tokens], bucket: Callable[[int, str, int], int],
                  n_buckets: int) -> np.ndarray:
    """One sentence's counts, shape (1 + 2·systems, buckets): reference words, then each system's output
    words and matches. ``bucket(i, w, n)``: the bucket of word ``w`` at position ``i`` of a sentence of ``n``
    words, asked for every reference word and every unmatched output word."""
    counts = np.zeros((1 + 2 * len(outs), n_buckets), dtype=np.int64)
    rb = [bucket(i, w, len(ref)) for i, w in enumerate(ref)]
    for b in rb:
        counts[0, b] += 1
    for s, out in enumerate(outs):
        for j, (w, m) in enumerate(zip(out, match_positions(ref, out), strict=True)):
            b = rb[m] if m >= 0 else bucket(j, w, len(out))
            counts[1 + 2 * s, b] += 1
            counts[2 + 2 * s, b] += m >= 0
    return counts


def third(i: int, _w: str, n: int) -> int:
    """The part of the sentence position ``i`` of ``n`` words is in: 0, 1, 2 for ⌊3i / n⌋."""
    return 3 * i // n


def f_measure(matches: np.ndarray, out_words: np.ndarray, ref_words: np.ndarray) -> np.ndarray:
    """compare-mt's F-measure, elementwise: 2PR / (P + R) = 2m / (o + r), 0 where m = 0."""
    m, o, r = (np.asarray(x, dtype=np.float64) for x in (matches, out_words, ref_words))
    with np.errstate(invalid="ignore", divide="ignore"):
        return np.where(m > 0, 2 * m / (o + r), 0.0)


def sacrebleu_indices(n: int, resamples: int) -> np.ndarray:
    """The resampled test sets of sacrebleu's paired bootstrap (``sacrebleu.significance._paired_bs_test``):
    its seed (``SACREBLEU_SEED``, default 12345; 0 or ``none`` unseeded, as ``PairedTest`` passes it) and
    its draw, shape (resamples, n)."""
    env = os.environ.get("SACREBLEU_SEED", "12345")
    seed = None if env.lower() == "none" else int(env)
    rng = np.random.default_rng(seed if seed else None)
    return rng.choice(n, size=(resamples, n), replace=True)


def resample_weights(indices: np.ndarray, n: int) -> np.ndarray:
    """How often each sentence is drawn in each resample, shape (resamples, n): sums over a resample are
    ``weights @ per_sentence``."""
    w = np.zeros((indices.shape[0], n), dtype=np.float64)
    np.add.at(w, (np.repeat(np.arange(indices.shape[0]), indices.shape[1]), indices.ravel()), 1.0)
    return w


def interval(values: np.ndarray) -> list[float]:
    """compare-mt's 95 % percentile interval (``calc_bucket_details``): sorted values at 2.5 % and 97.5 %."""
    x = np.sort(np.asarray(values, dtype=np.float64))
    return [float(x[int(len(x) * 0.025)]), float(x[int(len(x) * 0.975)])]


def bucket_table(per_sentence: np.ndarray, labels: Sequence[str], weights: np.ndarray) -> list[dict[str, Any]]:
    """Rows per bucket of two systems' counts (``per_sentence``: (sentences, 5, buckets) from
    :func:`bucket_counts`): words, matches, P, R, F of A and B, F(B) − F(A) and its paired-bootstrap interval."""
    total = per_sentence.sum(axis=0)
    boot = np.einsum("rn,nkb->rkb", weights, per_sentence)  # every resample's counts at once
    rows = []
    for b, label in enumerate(labels):
        ref = int(total[0, b])
        row: dict[str, Any] = {"bucket": label, "ref_words": ref}
        for name, s in (("a", 1), ("b", 3)):
            o, m = int(total[s, b]), int(total[s + 1, b])
            row[name] = {"out_words": o, "matches": m, "precision": round(m / o, 4) if o else 0.0,
                         "recall": round(m / ref, 4) if ref else 0.0,
                         "f": round(float(f_measure(m, o, ref)), 4)}
        row["delta_f"] = round(row["b"]["f"] - row["a"]["f"], 4)
        diffs = (f_measure(boot[:, 4, b], boot[:, 3, b], boot[:, 0, b])
                 - f_measure(boot[:, 2, b], boot[:, 1, b], boot[:, 0, b]))
        row["delta_ci95"] = [round(x, 4) for x in interval(diffs)]
        rows.append(row)
    return rows


def ngrams(tokens: Tokens, max_n: int = MAX_N) -> list[tuple[str, ...]]:
    """Every n-gram of a sentence, n = 1 … ``max_n`` (``ngram_utils.iterate_sent_ngrams``'s order)."""
    return [tuple(tokens[i:i + n]) for n in range(1, max_n + 1) for i in range(len(tokens) - n + 1)]


def ngram_matches(ref: Tokens, out: Tokens, max_n: int = MAX_N) -> Counter[tuple[str, ...]]:
    """Matched n-grams of one output (``compare_ngrams``'s ``match``): clipped by the reference's counts."""
    left = Counter(ngrams(ref, max_n))
    got: Counter[tuple[str, ...]] = Counter()
    for g in ngrams(out, max_n):
        if left[g] > 0:
            got[g] += 1
            left[g] -= 1
    return got


def ngram_table(refs: Sequence[Tokens], a: Sequence[Tokens], b: Sequence[Tokens], weights: np.ndarray,
                top: int = TOP_NGRAMS, max_n: int = MAX_N, alpha: float = ALPHA) -> dict[str, list[dict[str, Any]]]:
    """The n-grams B matches and A misses (``b_not_a``, lowest compare-mt score first) and the reverse
    (``a_not_b``), ``top`` of each: counts, score, the sentences where the one matches it more often
    (0-based, up to :data:`EXAMPLES`) and the paired-bootstrap interval of m_B − m_A."""
    per = [(ngram_matches(r, x, max_n), ngram_matches(r, y, max_n)) for r, x, y in zip(refs, a, b, strict=True)]
    ma: Counter[tuple[str, ...]] = sum((p[0] for p in per), Counter())
    mb: Counter[tuple[str, ...]] = sum((p[1] for p in per), Counter())
    score = {g: (ma[g] + alpha) / (ma[g] + mb[g] + 2 * alpha) for g in set(ma) | set(mb)}
    # most one-sided first; ties: more matches by the side that wins, then by the words
    for_b = sorted((g for g in score if score[g] < 0.5), key=lambda g: (score[g], -mb[g], g))[:top]
    for_a = sorted((g for g in score if score[g] > 0.5), key=lambda g: (-score[g], -ma[g], g))[:top]
    out: dict[str, list[dict[str, Any]]] = {}
    for key, grams, more in (("b_not_a", for_b, 1), ("a_not_b", for_a, 0)):
        rows = []
        for g in grams:
            diff = np.array([p[1][g] - p[0][g] for p in per], dtype=np.float64)
            examples = [k for k, d in enumerate(diff) if (d > 0 if more else d < 0)][:EXAMPLES]
            rows.append({"ngram": " ".join(g), "n": len(g), "a": ma[g], "b": mb[g], "score": round(score[g], 4),
                         "delta": mb[g] - ma[g], "delta_ci95": interval(weights @ diff), "examples": examples})
        out[key] = rows
    return out


def word_counts(sentences: Iterable[Tokens]) -> Counter[str]:
    """Each word's count in a tokenised corpus (``FreqWordBucketer``'s counts from a corpus)."""
    c: Counter[str] = Counter()
    for s in sentences:
        c.update(s)
    return c


def analyse(refs: Sequence[Tokens], a: Sequence[Tokens], b: Sequence[Tokens], freq: Mapping[str, int],
            indices: np.ndarray) -> dict[str, Any]:
    """Both bucket tables and the n-gram table of B against the baseline A on tokenised sentences;
    ``freq``: the words' counts in the frequency source; ``indices``: the resampled test sets."""
    weights = resample_weights(indices, len(refs))
    labels = bucket_labels()
    def by_count(_i: int, w: str, _n: int) -> int:
        return cutoff_bucket(freq.get(w, 0))

    by_freq = np.stack([bucket_counts(r, (x, y), by_count, len(labels)) for r, x, y in zip(refs, a, b, strict=True)])
    by_third = np.stack([bucket_counts(r, (x, y), third, 3) for r, x, y in zip(refs, a, b, strict=True)])
    return {"by_frequency": bucket_table(by_freq, labels, weights),
            "by_position": bucket_table(by_third, THIRDS, weights),
            "ngrams": ngram_table(refs, a, b, weights)}
