"""Attention-based warnings: source words a translation never read, or read again and again.

Tu et al. (2016) keep a coverage vector, the attention each source word received so far, because an
attention model can leave words untranslated (under-translation) or translate them twice
(over-translation). Here the coverage is read from a finished decode trace: for source word j,
C_j = Σ_i α_ij over the target steps (``</s>`` included, as the model attended then too). A real
source word (not ``</s>``) is flagged **unread** when C_j < :data:`UNREAD` (less than a fifth of one
target word's attention in all) and **re-read** when C_j > :data:`REREAD` (three target words' worth).
Whether the flags say anything about quality is measured, not assumed: :func:`flags_vs_quality` gives the
Spearman correlation (scipy) between a sentence's flag count and its sentence chrF over a split.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

UNREAD = 0.2
REREAD = 3.0


@dataclass(frozen=True)
class Coverage:
    """C_j per source token (``</s>`` last) and the flagged real words' positions."""

    received: tuple[float, ...]
    unread: tuple[int, ...]
    reread: tuple[int, ...]

    @property
    def flags(self) -> int:
        return len(self.unread) + len(self.reread)


def coverage(alpha: Sequence[Sequence[float]], n_src: int, unread: float = UNREAD, reread: float = REREAD
             ) -> Coverage | None:
    """The coverage of one translation's α rows (target steps × source tokens, ``</s>`` the last of
    ``n_src`` tokens); None without α (a fixed context) or without steps."""
    rows = [list(r)[:n_src] for r in alpha if r is not None]
    if not rows or n_src < 2:
        return None
    c = np.asarray(rows, dtype=np.float64).sum(0)  # (Tx,) C_j = Σ_i α_ij
    real = range(n_src - 1)  # </s> is never flagged: it is where a finished sentence looks
    return Coverage(tuple(float(v) for v in c), tuple(j for j in real if c[j] < unread),
                    tuple(j for j in real if c[j] > reread))


def flags_vs_quality(flags: Sequence[int], chrf: Sequence[float]) -> dict[str, Any]:
    """How a sentence's flag count goes with its sentence chrF over a split: Spearman ρ and its p-value
    (scipy), and the mean chrF of sentences with and without flags (NaN where a group is empty)."""
    from scipy.stats import spearmanr  # here, not at the top: the corpus pages' tables need no scipy

    f, q = np.asarray(flags, dtype=np.float64), np.asarray(chrf, dtype=np.float64)
    res = spearmanr(f, q) if len(f) > 2 and f.std() > 0 and q.std() > 0 else None
    flagged = q[f > 0]
    clean = q[f == 0]
    return {"n": len(f), "flagged": int((f > 0).sum()),
            "spearman_rho": None if res is None else round(float(res.statistic), 4),
            "p_value": None if res is None else float(res.pvalue),
            "chrf_flagged": round(float(flagged.mean()), 2) if flagged.size else float("nan"),
            "chrf_clean": round(float(clean.mean()), 2) if clean.size else float("nan")}
