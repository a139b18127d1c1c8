"""Builders of the "Is attention an explanation?" page: α beside attributions, surgery, the debate's tests.

Everything here takes numbers the page computed with :mod:`nmt.explanation.attribution`, :mod:`nmt.decoding.surgery` and
:mod:`nmt.explanation.debate` (per-step attribution rows, token lists, the permutation and adversarial
results as plain lists) and returns data frames, Altair charts and sentences. Nothing here runs a
model, and there is no Streamlit: every function is unit-tested on hand-made numbers.

Scales: each method's scores live on their own scale (α sums to 1, saliency is a gradient norm,
leave-one-out a difference of log-probabilities in nats), so for bars and heatmaps every row is
divided by its largest absolute value over the real source words (:func:`scale_row`): the longest
bar is ±1 in every row, and the rows compare *which* words matter and in which direction, not how
much. The agreement numbers are the library's own (:func:`nmt.explanation.attribution.agreement`) on the raw
scores.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from typing import Any

import altair as alt
import numpy as np
import pandas as pd

from nmt.decoding.trace import Replacement
from nmt.explanation.attribution import IG_GAP_TOL, IG_MAX, METHODS, Attributions, agreement
from ui.figures.common import FONT, label_expr, md
from ui.figures.heatmaps import _cell_steps, alpha_chart
from ui.figures.unknown import mark_suffix

ALPHA = "alpha"
METHOD_LABELS: dict[str, str] = {
    ALPHA: "α (attention)",
    "saliency": "saliency ‖∇‖",
    "x_grad": "gradient × input",
    "ig": "integrated gradients",
    "loo_embed": "leave-one-out, embedding",
    "loo_alpha": "leave-one-out, α",
}
"""α and every method of :data:`nmt.explanation.attribution.METHODS`, in that order, in words."""
METHOD_SHORT: dict[str, str] = {ALPHA: "α", "saliency": "saliency", "x_grad": "grad × input", "ig": "IG",
                                "loo_embed": "LOO embed.", "loo_alpha": "LOO in α"}
"""The same, short enough for a chart's row labels."""
assert tuple(METHOD_LABELS)[1:] == METHODS == tuple(METHOD_SHORT)[1:], \
    "one label per nmt.explanation.attribution.METHODS"

METHOD_HELP: dict[str, str] = {
    ALPHA: "the model's own attention weights α_ij at this step (they sum to 1)",
    "saliency": "‖∂ log p(y_i) / ∂x_j‖: how sharply log p reacts to the word's embedding (always ≥ 0)",
    "x_grad": "Σ_d x_jd ∂ log p(y_i)/∂x_jd: the gradient times the embedding (signed)",
    "ig": "integrated gradients from a zero embedding: how much each word adds to log p (signed); the path "
          f"integral takes as many points as it needs for the scores to add up to the change of log p within "
          f"{IG_GAP_TOL} nats (the completeness gap)",
    "loo_embed": "log p(y_i) minus log p(y_i) with the word's embedding zeroed and the sentence re-encoded (nats)",
    "loo_alpha": "log p(y_i) minus log p(y_i) with only this step's α renormalised without the word (nats)",
}
SUPPORTS, AGAINST = "supports the word", "speaks against it"
SIGN_COLOURS = {SUPPORTS: "#1f77b4", AGAINST: "#e4572e"}
SCALE_NOTE = ("Each row is divided by its largest absolute value over the source words, so its longest bar is "
              "±1: the rows compare which words matter, and in which direction, not how much (α sums to 1, "
              "saliency is a gradient norm, leave-one-out is a change of log p in nats). Hover a bar for the "
              "raw value. Blue bars support the written word, orange ones speak against it.")



# ----------------------------------------------------------------------------------------------
# Per-step rows of attributions (what the page caches) and their assembly
# ----------------------------------------------------------------------------------------------


def split_rows(att: Attributions) -> list[dict[str, Any]]:
    """One plain dict per explained step of ``att`` (α, every method's scores, log p, IG gap), in its order."""
    out = []
    for r, _ in enumerate(att.steps):
        out.append({"alpha": [float(x) for x in att.alpha[r]],
                    "scores": {m: [float(x) for x in s[r]] for m, s in att.scores.items()},
                    "logprob": float(att.logprob[r]) if len(att.logprob) > r else math.nan,
                    "ig_delta": float(att.ig_delta[r]) if len(att.ig_delta) > r else math.nan,
                    "ig_points": int(att.ig_points[r]) if len(att.ig_points) > r else 0})
    return out


def assemble(
    src_tokens: Sequence[str], tgt_tokens: Sequence[str], steps: Sequence[int], rows: Sequence[Mapping[str, Any]],
    *, ig_steps: int | None = None, baseline: str = "zero",
) -> Attributions:
    """:class:`nmt.explanation.attribution.Attributions` from rows of :func:`split_rows` (one per step of ``steps``)."""
    if len(rows) != len(steps):
        raise ValueError(f"{len(rows)} rows for {len(steps)} steps")
    n = len(src_tokens)
    methods = [m for m in METHODS if rows and m in rows[0]["scores"]]
    return Attributions(
        list(src_tokens), list(tgt_tokens), list(steps), n,
        np.array([r["alpha"] for r in rows], dtype=np.float64).reshape(len(rows), n),
        {m: np.array([r["scores"][m] for r in rows], dtype=np.float64).reshape(len(rows), n) for m in methods},
        logprob=np.array([r["logprob"] for r in rows], dtype=np.float64),
        ig_delta=np.array([r["ig_delta"] for r in rows], dtype=np.float64), ig_steps=ig_steps, baseline=baseline,
        ig_points=np.array([r.get("ig_points", 0) for r in rows], dtype=np.int64))


def ig_gap_note(att: Attributions) -> str:
    """One sentence beside the IG numbers: the points used and the completeness gap
    |Σ_j IG_ij − (log p(y_i) − log p'(y_i))| of the explained step (or mean and largest over several),
    with a warning when a gap stays above the tolerance (at the largest number of points)."""
    d = np.abs(np.asarray(att.ig_delta, dtype=np.float64))
    if not d.size or not np.isfinite(d).all():
        return ""
    pts = np.asarray(att.ig_points)
    points = (f"{int(pts.max())}" if pts.size and pts.min() == pts.max() else
              f"{int(pts.min())}–{int(pts.max())}") if pts.size else "?"
    gap = (f"completeness gap {d[0]:.3f} nats" if d.size == 1 else
           f"completeness gap {d.mean():.3f} nats on average, {d.max():.3f} at most")
    note = (f"Integrated gradients at {points} points from a {att.baseline} baseline: the scores add up to the "
            f"change of log p up to a {gap} (points are raised until it is below {IG_GAP_TOL}).")
    if (d > IG_GAP_TOL).any():
        note += (f" Some gap stays above {IG_GAP_TOL} nats even at {IG_MAX} points: read those IG scores with "
                 "care.")
    return note


def scale_row(values: Sequence[float] | np.ndarray) -> np.ndarray:
    """``values`` divided by their largest absolute value (so the largest is ±1); all zeros stay zeros."""
    v = np.asarray(values, dtype=np.float64)
    peak = float(np.max(np.abs(v))) if v.size else 0.0
    return v / peak if peak > 0 and math.isfinite(peak) else np.zeros_like(v)


def rows_of(att: Attributions, r: int) -> dict[str, np.ndarray]:
    """α and each method's raw scores of explained row ``r``, over the real source words."""
    n = att.src_len
    return {ALPHA: np.asarray(att.alpha[r, :n], dtype=np.float64),
            **{m: np.asarray(s[r, :n], dtype=np.float64) for m, s in att.scores.items()}}


# ----------------------------------------------------------------------------------------------
# One target word: bars, the attribution table and the agreement table
# ----------------------------------------------------------------------------------------------


def bars_frame(att: Attributions, r: int) -> pd.DataFrame:
    """Long-format bars of explained row ``r``: one row per (method, source word) with the raw and scaled value.

    ``rank`` is 1 for the word the method ranks first (largest signed score, as top-1 agreement reads it)."""
    out = []
    for m, raw in rows_of(att, r).items():
        scaled = scale_row(raw)
        order = np.argsort(-raw, kind="stable")
        rank = np.empty(len(raw), dtype=int)
        rank[order] = np.arange(1, len(raw) + 1)
        for j, (x, s) in enumerate(zip(raw, scaled)):
            out.append({"method": METHOD_LABELS[m], "short": METHOD_SHORT[m], "key": m, "j": j,
                        "source": att.src_tokens[j], "raw": float(x),
                        "scaled": float(s), "rank": int(rank[j]), "sign": AGAINST if s < 0 else SUPPORTS})
    return pd.DataFrame(out, columns=["method", "short", "key", "j", "source", "raw", "scaled", "rank", "sign"])


def bars_chart(frame: pd.DataFrame, src: Sequence[str], max_width: int = 280) -> alt.FacetChart | None:
    """Bars over the source words, one row per method (α first), each scaled to ±1 (see :data:`SCALE_NOTE`).

    The rows carry no value axis (each has its own scale, ±1 at its longest bar); a grey rule marks 0."""
    if frame.empty:
        return None
    step = int(max(12, min(40, max_width // max(len(src), 1))))
    order = [METHOD_SHORT[k] for k in METHOD_SHORT if k in set(frame["key"])]
    base = alt.Chart().encode(
        x=alt.X("j:O", title=None, scale=alt.Scale(domain=list(range(len(src)))),
                axis=alt.Axis(labelExpr=label_expr(src), labelAngle=-45 if step >= 30 else -90, labelOverlap=False,
                              labelLimit=120)),
        tooltip=[alt.Tooltip("method:N"), alt.Tooltip("source:N", title="source word"), alt.Tooltip("j:O"),
                 alt.Tooltip("raw:Q", title="raw score", format=".4f"),
                 alt.Tooltip("scaled:Q", title="scaled (÷ max |row|)", format=".3f"),
                 alt.Tooltip("rank:O", title="rank in this row")])
    bars = base.mark_bar().encode(
        y=alt.Y("scaled:Q", title=None, scale=alt.Scale(domain=[-1, 1]),  # (axis=None breaks a row facet)
                axis=alt.Axis(labels=False, ticks=False, domain=False, grid=False)),
        color=alt.Color("sign:N", scale=alt.Scale(domain=list(SIGN_COLOURS), range=list(SIGN_COLOURS.values())),
                        legend=alt.Legend(title=None, orient="top")))
    zero = alt.Chart().mark_rule(color="#888888", strokeWidth=1).encode(y=alt.datum(0))
    return alt.layer(zero, bars, data=frame).properties(width=alt.Step(step), height=46).facet(
        row=alt.Row("short:N", sort=order, title=None,
                    header=alt.Header(labelAngle=0, labelAlign="left", labelOrient="left", labelFontSize=FONT,
                                      labelLimit=110))
    ).properties(spacing=4)


def attribution_frame(att: Attributions, r: int) -> pd.DataFrame:
    """One row per source word of explained row ``r``: α and every method's raw and scaled scores (the CSV)."""
    data: dict[str, Any] = {"j": list(range(att.src_len)), "source": att.src_tokens[: att.src_len]}
    rows = rows_of(att, r)
    for m, raw in rows.items():
        data[m] = raw
    for m, raw in rows.items():
        data[f"{m} scaled"] = scale_row(raw)
    return pd.DataFrame(data)


def _top_word(att: Attributions, values: np.ndarray) -> str:
    return att.src_tokens[int(np.argmax(values))] if len(values) else ""


def agreement_frame(att: Attributions, r: int) -> pd.DataFrame:
    """Per method, its agreement with α at explained row ``r`` (:func:`nmt.explanation.attribution.agreement`).

    Columns: method, top word (the method's), τ (Kendall τ-b), top-1 (1 when it ranks α's top word
    first) and JSD(α, |scores| normalised) in nats."""
    rows = rows_of(att, r)
    alpha = rows[ALPHA]
    out = [{"method": METHOD_LABELS[ALPHA], "top word": _top_word(att, alpha), "τ": 1.0, "top-1": 1.0, "JSD": 0.0}]
    for m in att.scores:
        a = agreement(alpha, rows[m])
        out.append({"method": METHOD_LABELS[m], "top word": _top_word(att, rows[m]), "τ": a["kendall_tau"],
                    "top-1": a["top1"], "JSD": a["jsd"]})
    return pd.DataFrame(out, columns=["method", "top word", "τ", "top-1", "JSD"])


def sentence_agreement_frame(att: Attributions) -> pd.DataFrame:
    """Per method, the mean agreement with α over every explained step (NaN τ of constant rows left out)."""
    out = []
    for m, measures in att.agreement().items():
        row: dict[str, Any] = {"method": METHOD_LABELS[m]}
        for k, name in (("kendall_tau", "mean Kendall τ"), ("top1", "top-1 rate"), ("jsd", "mean JSD (nats)")):
            vals = [v for v in measures[k] if not math.isnan(v)]
            row[name] = float(np.mean(vals)) if vals else math.nan
        out.append(row)
    return pd.DataFrame(out, columns=["method", "mean Kendall τ", "top-1 rate", "mean JSD (nats)"])


def agreement_reading(frame: pd.DataFrame, word: str, alpha_word: str, forced: bool = False) -> str:
    """One plain sentence about which methods point where α points (rows of :func:`agreement_frame`);
    ``forced``: the word is the user's (force-decoded), not necessarily one the model would write."""
    others = frame.iloc[1:]
    same = [str(m) for m, t in zip(others["method"], others["top-1"]) if t == 1.0]
    n = len(others)
    if not n:
        return ""
    head = (f"For your word “{md(word)}”" if forced else f"Writing “{md(word)}”") + \
        f", α looks most at “{md(alpha_word)}”. "
    if len(same) == n:
        return head + f"All {n} attribution methods agree that this word matters most."
    if not same:
        return head + f"None of the {n} attribution methods ranks it first: here α and the gradients disagree."
    verb = "ranks" if len(same) == 1 else "rank"
    return head + f"{len(same)} of {n} methods {verb} it first too ({md('; '.join(same))})."


def target_strip(tokens: Sequence[str], step: int, swaps: Mapping[int, Replacement] | None = None) -> str:
    """The translation as Markdown, the word at ``step`` highlighted (every word escaped with :func:`md`);
    a replaced ``<unk>`` (``swaps``, from :func:`ui.figures.unknown.replacements`) is shown as its
    replacement, marked "from the dictionary" or "copied"."""
    swaps = swaps or {}
    parts = []
    for i, t in enumerate(tokens):
        swap = swaps.get(i)
        w = md(t if swap is None else swap.word)
        w = f":blue-background[**{w}**]" if i == step else w
        parts.append(w if swap is None else w + mark_suffix(swap))
    return " ".join(parts)


# ----------------------------------------------------------------------------------------------
# The whole sentence: one matrix (target × source) per method
# ----------------------------------------------------------------------------------------------


def matrix_frame(att: Attributions, method: str) -> pd.DataFrame:
    """Long-format cells of one method over every explained step, each row scaled to ±1 (α: raw)."""
    mat = att.alpha if method == ALPHA else att.scores[method]
    out = []
    n = att.src_len
    for r, i in enumerate(att.steps):
        raw = np.asarray(mat[r, :n], dtype=np.float64)
        scaled = raw if method == ALPHA else scale_row(raw)
        for j in range(n):
            out.append({"i": i, "j": j, "target": att.tgt_tokens[i], "source": att.src_tokens[j],
                        "raw": float(raw[j]), "value": float(scaled[j])})
    return pd.DataFrame(out, columns=["i", "j", "target", "source", "raw", "value"])


def row_labels(tokens: Sequence[str], mark: int | None) -> list[str]:
    """Target-axis labels, the chosen step's marked ``▶ word``."""
    return [f"▶ {t}" if i == mark else t for i, t in enumerate(tokens)]


def matrix_chart(att: Attributions, method: str, mark: int | None = None, max_width: int = 380) -> alt.Chart | None:
    """The target × source heatmap of one method (α: the shared α heatmap; others: diverging, ±1 per row)."""
    if not att.steps:
        return None
    src = att.src_tokens[: att.src_len]
    tgt = row_labels([att.tgt_tokens[i] for i in att.steps], att.steps.index(mark) if mark in att.steps else None)
    if method == ALPHA:
        return alpha_chart(src, tgt, [list(r) for r in att.alpha[:, : att.src_len]], title=METHOD_LABELS[ALPHA],
                           max_width=max_width, legend="bottom")
    cells = matrix_frame(att, method)
    cells["row"] = [att.steps.index(i) for i in cells["i"]]
    x_step, y_step = _cell_steps(len(src), len(tgt), max_width)
    return alt.Chart(cells).mark_rect().encode(
        x=alt.X("j:O", title="source word j", scale=alt.Scale(domain=list(range(len(src)))),
                axis=alt.Axis(orient="top", labelAngle=-50 if x_step >= 20 else -90, labelExpr=label_expr(src),
                              labelOverlap=False, labelLimit=120)),
        y=alt.Y("row:O", title="target word i", scale=alt.Scale(domain=list(range(len(tgt)))),
                axis=alt.Axis(labelExpr=label_expr(tgt), labelOverlap=False, labelLimit=120)),
        color=alt.Color("value:Q", scale=alt.Scale(scheme="redblue", domain=[-1, 1]),
                        legend=alt.Legend(title="÷ max |row|", orient="bottom", direction="horizontal",
                                          gradientLength=110)),
        tooltip=[alt.Tooltip("target:N", title="target word"), alt.Tooltip("i:O", title="i"),
                 alt.Tooltip("source:N", title="source word"), alt.Tooltip("j:O", title="j"),
                 alt.Tooltip("raw:Q", title="raw score", format=".4f"),
                 alt.Tooltip("value:Q", title="scaled", format=".3f")],
    ).properties(width=alt.Step(x_step), height=alt.Step(y_step), title=METHOD_LABELS[method])


def matrix_cells_frame(att: Attributions) -> pd.DataFrame:
    """Every method's raw scores (and α) per (target i, source j) cell of the sentence: the matrices' CSV."""
    n = att.src_len
    out = []
    for r, i in enumerate(att.steps):
        for j in range(n):
            row = {"i": i, "target": att.tgt_tokens[i], "j": j, "source": att.src_tokens[j],
                   ALPHA: float(att.alpha[r, j])}
            row.update({m: float(s[r, j]) for m, s in att.scores.items()})
            out.append(row)
    return pd.DataFrame(out, columns=["i", "target", "j", "source", ALPHA, *att.scores])
