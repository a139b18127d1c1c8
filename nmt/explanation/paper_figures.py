"""The paper's own attention weights as numbers, and how close a model's α comes to them.

``paper-figures/bahdanau2015-fig3a-alpha.tsv`` (in a data root: ``data/`` or the built-in ``evalsets/``)
holds the α of Fig. 3(a) of Bahdanau, Cho & Bengio (2015), digitised from the figure's grey levels by
Olah & Carter (Distill 2016, CC-BY 4.0): one row per French word, one column per English word, each
cell ±0.02, rows summing to 0.91–1.00 (see evalsets/README.md).

:func:`compare` pairs the paper's rows with a model's rows for the same sentence (by position where the
French words differ, e.g. the paper's « zone » and our « Espace »), and reports per row whether the two
put their largest weight on the same source word (top-1 agreement) and the Jensen–Shannon divergence
between the rows, each renormalised to sum to 1 (:func:`js_divergence`, in nats, computed with numpy).
"""

from __future__ import annotations

import difflib
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

import numpy as np

FIG3A_FILE = Path("paper-figures") / "bahdanau2015-fig3a-alpha.tsv"
FIG3A_SENTENCE = "The agreement on the European Economic Area was signed in August 1992."
CREDIT = "Olah & Carter, Distill 2016, digitised from Bahdanau et al. 2015, Fig. 3(a)"
END_WORDS = {"<end>", "</s>"}


@dataclass(frozen=True)
class PaperAlpha:
    """An α matrix read from a figure: target words (rows), source words (columns), weights."""

    tgt: list[str]
    src: list[str]
    alpha: np.ndarray  # len(tgt) × len(src)


@dataclass(frozen=True)
class RowMatch:
    """One paper row beside one model row: their words, each row's top source word, and the JS divergence."""

    paper_word: str
    model_word: str
    paper_top: int  # source position with the row's largest weight
    model_top: int
    top_word: str  # the model's source word at ``model_top``
    js: float

    @property
    def agrees(self) -> bool:
        """Whether both rows put their largest weight on the same source word."""
        return self.paper_top == self.model_top


@dataclass(frozen=True)
class Comparison:
    """Every paired row, the share of rows whose top-1 source word agrees, and the mean JS divergence."""

    rows: list[RowMatch]

    @property
    def agreement(self) -> float:
        """Top-1 agreement: the share of paired rows whose largest weight is on the same source word."""
        return sum(r.agrees for r in self.rows) / len(self.rows) if self.rows else float("nan")

    @property
    def mean_js(self) -> float:
        """The mean Jensen–Shannon divergence of the paired rows (nats; 0 same, ln 2 ≈ 0.693 disjoint)."""
        return float(np.mean([r.js for r in self.rows])) if self.rows else float("nan")


def read_alpha_tsv(path: Path) -> PaperAlpha:
    """A figure's α from a TSV: a header of source words after a corner cell, then one row per target word."""
    lines = [ln.rstrip("\n").split("\t") for ln in path.read_text(encoding="utf-8").splitlines() if ln.strip()]
    src = [w.strip() for w in lines[0][1:]]
    tgt = [row[0].strip() for row in lines[1:]]
    alpha = np.array([[float(v) for v in row[1:]] for row in lines[1:]], dtype=np.float64)
    if alpha.shape != (len(tgt), len(src)):
        raise ValueError(f"{path.name}: {alpha.shape} cells for {len(tgt)} rows × {len(src)} columns")
    return PaperAlpha(tgt, src, alpha)


def find_fig3a(roots: Sequence[Path]) -> Path | None:
    """The first data root's Fig. 3(a) file, or None."""
    return next((r / FIG3A_FILE for r in roots if (r / FIG3A_FILE).is_file()), None)


def js_divergence(p: Sequence[float], q: Sequence[float]) -> float:
    """Jensen–Shannon divergence of two weight vectors, each renormalised to sum to 1, in nats:
    ½ KL(p ‖ m) + ½ KL(q ‖ m) with m = (p + q) / 2, and 0 · log 0 = 0."""
    a, b = np.clip(np.asarray(p, dtype=np.float64), 0, None), np.clip(np.asarray(q, dtype=np.float64), 0, None)
    if a.shape != b.shape or a.sum() <= 0 or b.sum() <= 0:
        raise ValueError("two non-zero weight vectors of the same length")
    a, b = a / a.sum(), b / b.sum()
    m = (a + b) / 2

    def kl(x: np.ndarray) -> float:
        nz = x > 0
        return float(np.sum(x[nz] * np.log(x[nz] / m[nz])))

    return 0.5 * kl(a) + 0.5 * kl(b)


def _norm(word: str) -> str:
    """A word as compared across the two: lower case, ’ as ', both end markers alike."""
    w = word.lower().replace("’", "'")
    return "</s>" if w in END_WORDS else w


def row_pairs(paper: Sequence[str], model: Sequence[str]) -> list[tuple[int, int]]:
    """(paper row, model row) pairs: the same words in order, and words that differ paired by position
    inside a stretch of equal length on both sides (« zone » with « Espace »); the rest unpaired."""
    sm = difflib.SequenceMatcher(a=[_norm(w) for w in paper], b=[_norm(w) for w in model], autojunk=False)
    pairs: list[tuple[int, int]] = []
    for op, i1, i2, j1, j2 in sm.get_opcodes():
        if op == "equal" or (op == "replace" and i2 - i1 == j2 - j1):
            pairs.extend(zip(range(i1, i2), range(j1, j2), strict=True))
    return pairs


def compare(paper: PaperAlpha, src: Sequence[str], tgt: Sequence[str], alpha: Sequence[Sequence[float]]
            ) -> Comparison:
    """The paper's rows beside a model's (``tgt`` words, ``alpha`` rows over the ``src`` words), paired by
    :func:`row_pairs`; the source columns must be the same words (end markers alike)."""
    if [_norm(w) for w in src] != [_norm(w) for w in paper.src]:
        raise ValueError(f"different source words: {list(src)} vs {paper.src}")
    rows = []
    for i, k in row_pairs(paper.tgt, tgt):
        p, q = paper.alpha[i], np.asarray(alpha[k], dtype=np.float64)[: len(src)]
        pj, mj = int(np.argmax(p)), int(np.argmax(q))
        rows.append(RowMatch(paper.tgt[i], tgt[k], pj, mj, src[mj], js_divergence(p, q)))
    return Comparison(rows)
