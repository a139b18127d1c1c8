"""Builders of the bottleneck page: one row per model, sentences by length, and the length sweep.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import altair as alt
import numpy as np
import pandas as pd

from nmt.decoding.trace import DecodeTrace
from nmt.models.kinds import colour_of_name
from nmt.text.metrics import bleu_by_length, sentence_scores
from ui.figures.common import EOS


def comparison_row(name: str, own: DecodeTrace, forced_: DecodeTrace | None, ref: str | None) -> dict[str, Any]:
    """One model's column summary: translation, its log p, the reference's log p and sentence BLEU."""
    row: dict[str, Any] = {"model": name, "context": own.context, "translation": own.translation,
                           "words": len([s for s in own.steps if s.token != EOS]), "log p (own)": own.logprob,
                           "log p (reference)": None, "log p / word (reference)": None, "BLEU": None, "chrF": None}
    if forced_ is not None:
        row["log p (reference)"] = forced_.logprob
        row["log p / word (reference)"] = forced_.logprob / max(1, len(forced_.steps))
    if ref:
        sc = sentence_scores(own.translation, ref)
        row["BLEU"], row["chrF"] = sc["bleu"], sc["chrf"]
    return row


def lengths_of(sources: Sequence[str]) -> list[int]:
    """Source lengths in whitespace-separated words."""
    return [len(s.split()) for s in sources]


def pick_by_length(sources: Sequence[str], length: int) -> list[int]:
    """Indices of sentences with exactly ``length`` words (or, if none, the nearest length present)."""
    lens = lengths_of(sources)
    if not lens:
        return []
    present = sorted(set(lens))
    best = min(present, key=lambda n: (abs(n - length), n))
    return [k for k, n in enumerate(lens) if n == best]


def sweep_sample(sources: Sequence[str], width: int = 5, per_bucket: int = 8, max_len: int = 80) -> list[int]:
    """Up to ``per_bucket`` sentence indices from each ``width``-word source-length bucket (in order)."""
    taken: dict[int, list[int]] = {}
    for k, n in enumerate(lengths_of(sources)):
        if 0 < n <= max_len:
            b = taken.setdefault(n // width, [])
            if len(b) < per_bucket:
                b.append(k)
    return sorted(k for b in taken.values() for k in b)


def sweep_frame(lengths: Sequence[int], hyps: Mapping[str, Sequence[str]], refs: Sequence[str],
                ref_logp: Mapping[str, Sequence[float | None]] | None = None, width: int = 5) -> pd.DataFrame:
    """Corpus BLEU (sacrebleu) of each model per source-length bucket, and mean reference log p/word."""
    rows = []
    for name, h in hyps.items():
        for b in bleu_by_length(lengths, h, refs, width=width):
            row = {"model": name, "length": f"{b['lo']}–{b['hi'] - 1}", "lo": b["lo"], "n": b["n"], "BLEU": b["score"]}
            if ref_logp is not None and name in ref_logp:
                vals = [ref_logp[name][k] for k, n in enumerate(lengths) if b["lo"] <= n < b["hi"]
                        and ref_logp[name][k] is not None]
                row["ref log p / word"] = float(np.mean(vals)) if vals else None
            rows.append(row)
    return pd.DataFrame(rows)


def _model_scale(names: Sequence[str], colours: Mapping[str, str] | None) -> alt.Scale | Any:
    """Each model's own colour (:func:`nmt.models.kinds.model_colour`, carried in ``colours`` by name),
    else the name's colour (:func:`nmt.models.kinds.colour_of_name`)."""
    names = list(dict.fromkeys(names))
    return alt.Scale(domain=names, range=[(colours or {}).get(n) or colour_of_name(n) for n in names])


def sweep_chart(df: pd.DataFrame, value: str = "BLEU", colours: Mapping[str, str] | None = None) -> alt.Chart | None:
    """BLEU (or reference log p per word) against source length, one line per model in its colour."""
    if df.empty or value not in df.columns:
        return None
    return alt.Chart(df.dropna(subset=[value])).mark_line(point=True).encode(
        x=alt.X("lo:Q", title="source length (words, bucket start)"),
        y=alt.Y(f"{value}:Q", title=value),
        color=alt.Color("model:N", title=None, legend=alt.Legend(orient="bottom"),
                        scale=_model_scale(df["model"], colours)),
        tooltip=["model:N", "length:N", "n:Q", alt.Tooltip(f"{value}:Q", format=".2f")],
    ).properties(height=260, title=f"{value} by source length")


def logp_chart(rows: Sequence[Mapping[str, Any]], colours: Mapping[str, str] | None = None) -> alt.Chart | None:
    """Bar chart of the reference's log-probability under each model (closer to 0 = more likely),
    each bar in its model's colour."""
    df = pd.DataFrame([r for r in rows if r.get("log p (reference)") is not None])
    if df.empty:
        return None
    return alt.Chart(df).mark_bar().encode(
        x=alt.X("log p (reference):Q", title="log p(reference | source)"),
        y=alt.Y("model:N", title=None, sort=None),
        color=alt.Color("model:N", legend=None, scale=_model_scale(df["model"], colours)),
        tooltip=["model:N", alt.Tooltip("log p (reference):Q", format=".3f"),
                 alt.Tooltip("log p / word (reference):Q", format=".3f")],
    ).properties(height=alt.Step(28), title="How likely each model finds the reference")
