"""Builders of the alignment browser: filtering pairs, the sentence table, gold links and AER.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from typing import Any

import pandas as pd

from nmt.align import Links, alignment_error, argmax_links
from nmt.metrics import sentence_scores
from nmt.trace import DecodeTrace
from ui.views.heatmaps import alpha_stats


def filter_pairs(pairs: Sequence[tuple[str, str]], length: tuple[int, int] = (0, 10**6), query: str = "") -> list[int]:
    """Indices of pairs whose source has ``length[0]``–``length[1]`` words and that contain ``query``.

    Words are whitespace-separated; the search is case-insensitive over both sides."""
    lo, hi = length
    q = query.strip().lower()
    return [k for k, (s, r) in enumerate(pairs)
            if lo <= len(s.split()) <= hi and (not q or q in s.lower() or q in r.lower())]


def selected_row(state: Any) -> int | None:
    """The first selected row position of an ``st.dataframe`` selection (object or mapping form)."""
    sel = state.get("selection") if isinstance(state, Mapping) else getattr(state, "selection", None)
    rows = sel.get("rows") if isinstance(sel, Mapping) else getattr(sel, "rows", None)
    if not rows:
        return None
    try:
        return int(rows[0])
    except (TypeError, ValueError):
        return None


def browser_row(idx: int, src: str, ref: str, own: DecodeTrace, forced_: DecodeTrace | None,
                hyp_for_scoring: str | None = None, ref_for_scoring: str | None = None) -> dict[str, Any]:
    """One row of the sentence table: lengths, the translation, sentence BLEU/chrF and α statistics.

    ``hyp_for_scoring``/``ref_for_scoring`` override what is scored (e.g. tokenised lowercase text
    for pre-tokenised gold sets); by default the detokenised translation against the reference.
    """
    scores = sentence_scores(hyp_for_scoring if hyp_for_scoring is not None else own.translation,
                             ref_for_scoring if ref_for_scoring is not None else ref)
    stats = alpha_stats(own)
    return {
        "#": idx, "source": src, "reference": ref, "translation": own.translation,
        "src words": len(own.src_tokens) - 1, "ref words": len(ref.split()),
        "BLEU": scores["bleu"], "chrF": scores["chrf"],
        "α entropy": stats["entropy"], "max α": stats["max_alpha"],
        "ref log p": forced_.logprob if forced_ is not None else None,
    }


BROWSER_COLUMNS = ["#", "source", "reference", "translation", "src words", "ref words", "BLEU", "chrF",
                   "α entropy", "max α", "ref log p"]


def browser_frame(rows: Iterable[Mapping[str, Any]]) -> pd.DataFrame:
    """The sentence table from :func:`browser_row` rows (plus an ``AER`` column when present)."""
    rows = list(rows)
    cols = BROWSER_COLUMNS + (["AER"] if any("AER" in r for r in rows) else [])
    return pd.DataFrame(rows, columns=cols)


def sentence_aer(trace: DecodeTrace, sure: Links, possible: Links) -> float | None:
    """AER of one sentence's argmax-α links; ``None`` without α or without gold links."""
    if not trace.has_alignment or not (sure or possible):
        return None
    return float(alignment_error([argmax_links(trace)], [sure], [possible])["aer"])


def corpus_aer(traces: Sequence[DecodeTrace], sure: Sequence[Links], possible: Sequence[Links]) -> dict[str, Any]:
    """AER, precision and recall of argmax-α links over a whole gold set (Och & Ney 2003)."""
    if any(not t.has_alignment for t in traces):
        raise ValueError("a fixed-context model has no α, so it has no alignment to score")
    res = alignment_error([argmax_links(t) for t in traces], sure, possible)
    return {**res, "sentences": len(traces)}


def links_csv(traces: Sequence[DecodeTrace], indices: Sequence[int]) -> str:
    """Predicted argmax-α links per sentence in the gold files' ``j-i`` format, as CSV."""
    rows = [{"#": k, "links": " ".join(f"{j}-{i}" for j, i in sorted(argmax_links(t)))}
            for k, t in zip(indices, traces)]
    return pd.DataFrame(rows, columns=["#", "links"]).to_csv(index=False)
