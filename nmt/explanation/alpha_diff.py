"""Where two models look differently: α_B − α_A over the same source and target words.

Both models read the same source tokens and are forced along the same target words (the reference), so
their α matrices have the same rows and columns. Per target row: whether both put their largest weight
on the same source word (top-1 agreement) and the Jensen–Shannon divergence of the two rows (nats,
:func:`nmt.explanation.paper_figures.js_divergence`; 0 same, ln 2 disjoint), as the lesson's Fig. 3(a)
comparison measures a model against the paper. Over a test set, :func:`by_source_word` sums how much
attention each source word receives (the column sums of α) under each model: the words the two attend to
differently.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from nmt.explanation.paper_figures import js_divergence


@dataclass(frozen=True)
class AlphaDiff:
    """α_B − α_A of one sentence, per-row top-1 agreement and JSD, over shared source and target words."""

    src: list[str]
    tgt: list[str]
    diff: np.ndarray  # len(tgt) × len(src): α_B − α_A
    agree: list[bool]
    jsd: list[float]

    @property
    def agreement(self) -> float:
        """The share of target rows whose largest weight is on the same source word in both."""
        return sum(self.agree) / len(self.agree) if self.agree else float("nan")

    @property
    def mean_jsd(self) -> float:
        """The mean JSD of the rows (nats)."""
        return float(np.mean(self.jsd)) if self.jsd else float("nan")


def compare(src: Sequence[str], tgt: Sequence[str], alpha_a: np.ndarray, alpha_b: np.ndarray) -> AlphaDiff:
    """Two models' α for the same ``src`` (columns) and ``tgt`` (rows) words, compared row by row."""
    a, b = np.asarray(alpha_a, dtype=np.float64), np.asarray(alpha_b, dtype=np.float64)
    if a.shape != b.shape or a.shape != (len(tgt), len(src)):
        raise ValueError(f"α of shapes {a.shape} and {b.shape} for {len(tgt)} target × {len(src)} source words")
    agree = [int(np.argmax(ra)) == int(np.argmax(rb)) for ra, rb in zip(a, b, strict=True)]
    return AlphaDiff(list(src), list(tgt), b - a, agree, [js_divergence(ra, rb) for ra, rb in zip(a, b, strict=True)])


def by_source_word(diffs: Iterable[tuple[AlphaDiff, np.ndarray]], top: int = 20) -> list[dict[str, Any]]:
    """Per source word over a test set (``diffs``: each sentence's :class:`AlphaDiff` and α_A): occurrences,
    the attention it receives from A and from B (its α column summed over the target words, averaged over its
    occurrences) and B − A; the ``top`` words with the largest |B − A| first."""
    seen: dict[str, list[float]] = defaultdict(lambda: [0, 0.0, 0.0])
    for d, alpha_a in diffs:
        got_a = np.asarray(alpha_a, dtype=np.float64).sum(axis=0)
        got_b = got_a + d.diff.sum(axis=0)
        for j, w in enumerate(d.src):
            s = seen[w]
            s[0] += 1
            s[1] += float(got_a[j])
            s[2] += float(got_b[j])
    rows = [{"word": w, "occurrences": int(n), "a": round(ga / n, 4), "b": round(gb / n, 4),
             "delta": round((gb - ga) / n, 4)} for w, (n, ga, gb) in seen.items()]
    rows.sort(key=lambda r: (-abs(r["delta"]), r["word"]))
    return rows[:top]
