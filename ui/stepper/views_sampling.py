"""Builders of the stepper's Sample mode: a sampled step's distributions and the translations beside it.

They read a :class:`nmt.decoding.trace.SampleRecord` (what :func:`nmt.decoding.sampling.draw` kept) and
never compute a probability: the p of each word under the model and after each transform, the drawn
word marked, and the one line that says where it fell. No Streamlit here.
"""

from __future__ import annotations

from collections.abc import Sequence

import pandas as pd

from nmt.decoding.trace import SampleRecord

DRAWN = "◀ drawn"


def stage_frame(rec: SampleRecord, token: str) -> pd.DataFrame:
    """One row per word the record kept (by decreasing final p): its p under each stage, the drawn one marked."""
    rows = [{"word": w, **{name: p for name, p in zip(rec.stages, ps, strict=True)},
             "": DRAWN if w == token else ""} for w, ps in rec.rows]
    return pd.DataFrame(rows, columns=["word", *rec.stages, ""])


def drawn_line(rec: SampleRecord, token: str) -> str:
    """The drawn word's p under the model's own distribution and under the transformed one, and u."""
    ps = dict(rec.rows)[token]
    rule = " · ".join(rec.stages[1:])
    return (f"Sampled “{token}”: p = {ps[0]:.3f} under the model's distribution, p = {ps[-1]:.3f} after "
            f"{rule} ({rec.kept} word{'s' if rec.kept != 1 else ''} left to draw from; u = {rec.u:.3f}, "
            f"seed {rec.seed}, this step's draw).")


def translations_frame(rows: Sequence[tuple[str, str]]) -> pd.DataFrame:
    """The translation table: (decoding, translation) rows, greedy and beam first, then each sample."""
    return pd.DataFrame([{"decoding": d, "translation": t} for d, t in rows], columns=["decoding", "translation"])
