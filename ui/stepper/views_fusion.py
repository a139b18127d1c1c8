"""Views of language-model fusion in the stepper: the LM's top-k beside the TM's, and the gate g_i.

Pure builders (data in, HTML / charts out) over the :class:`nmt.decoding.fusion.FusionStep` records that
:func:`nmt.decoding.fusion.explain` reads off the fused model's own steps; nothing here touches a model.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Any

import altair as alt

from nmt.decoding.fusion import FusionStep
from ui.figures.common import esc, readable

MODE_LABELS = {"none": "the translation model alone", "shallow": "score = log p_TM + β log p_LM",
               "deep": "a gate g_i lets the LM's state into the deep output"}
GATE_COLOUR = "#7b3294"
SHALLOW_NOTE = ("Gülçehre et al. (2015) rank words by the score as is; the candidates' percentages beside it are "
                "the score renormalised over the vocabulary, p_fused ∝ p_TM · p_LM^β, so they are probabilities "
                "(summing to 1) and rank the words as the score does; with β = 0 they are the translation model's p.")


def topk_rows(step: FusionStep) -> list[dict[str, Any]]:
    """One row per rank: the TM's word and p_TM, the LM's word and p_LM, and the fused word and
    score, each side's written word marked."""
    rows = []
    for r, (tm, lm, fu) in enumerate(zip(step.tm_top, step.lm_top, step.fused_top, strict=True), start=1):
        rows.append({"rank": r, "tm_word": tm[0], "p_tm": tm[1], "lm_word": lm[0], "p_lm": lm[1],
                     "fused_word": fu[0], "score": fu[1],
                     "written": {side for side, w in (("tm", tm[0]), ("lm", lm[0]), ("fused", fu[0]))
                                 if w == step.token}})
    return rows


def _cell(word: str, value: str, written: bool) -> str:
    style = "padding:1px 6px;white-space:nowrap;"
    if written:
        style += "background:rgba(255,189,69,.55);font-weight:600;border-radius:4px;"
    return f'<td style="{style}">{esc(word)}</td><td style="padding:1px 6px;text-align:right">{value}</td>'


def topk_html(step: FusionStep, mode: str, beta: float) -> str:
    """The step's candidates of the TM, the LM and the fusion side by side (written word shaded), with
    the written word's log p_TM, log p_LM, score and (deep fusion) gate g_i below."""
    fused_head = "p fused" if mode == "deep" else "score"
    head = ('<tr style="font-weight:600"><td colspan="2" style="padding:1px 6px">Translation model (p)</td>'
            '<td colspan="2" style="padding:1px 6px">Language model (p)</td>'
            f'<td colspan="2" style="padding:1px 6px">Fused ({fused_head})</td></tr>')
    body = []
    for row in topk_rows(step):
        fused_value = f"{math.exp(row['score']):.1%}" if mode == "deep" else f"{row['score']:.2f}"
        body.append("<tr>" + _cell(row["tm_word"], f"{row['p_tm']:.1%}", "tm" in row["written"])
                    + _cell(row["lm_word"], f"{row['p_lm']:.1%}", "lm" in row["written"])
                    + _cell(row["fused_word"], fused_value, "fused" in row["written"]) + "</tr>")
    return (f'<div data-testid="fusion-topk" style="font-size:.95rem">'
            f'<div style="font-weight:600;margin:4px 0">Fusion at i = {step.i}: “{esc(step.token)}” written</div>'
            f'<table style="border-collapse:collapse">{head}{"".join(body)}</table>'
            f'<div style="margin-top:4px">{esc(written_line(step, mode, beta))}</div></div>')


def written_line(step: FusionStep, mode: str, beta: float) -> str:
    """The written word's numbers in one line (the equation of the fusion mode, filled in)."""
    tm, lm = step.tm_logprob, step.lm_logprob
    if mode == "deep":
        gate = "—" if step.gate is None else f"{step.gate:.3f}"
        return (f"g_{step.i} = {gate}; log p_fused = {step.score:.3f} "
                f"(the TM alone: {tm:.3f}; the LM alone: {lm:.3f})")
    return f"score = log p_TM + β log p_LM = {tm:.3f} + {beta:g} × ({lm:.3f}) = {step.score:.3f}"


def gate_series(steps: Sequence[FusionStep]) -> list[dict[str, Any]]:
    """g_i per step (deep fusion), with the written word; empty for shallow fusion."""
    return [{"i": s.i, "word": s.token, "g": s.gate} for s in steps if s.gate is not None and math.isfinite(s.gate)]


def gate_chart(steps: Sequence[FusionStep], shown: int | None = None) -> alt.Chart | None:
    """g_i over the target words (0 = the TM alone, 1 = the LM's full state), the shown step ringed."""
    data = gate_series(steps)
    if not data:
        return None
    base = alt.Chart(alt.Data(values=data)).encode(
        x=alt.X("i:O", title="target word i"),
        y=alt.Y("g:Q", title="gate g_i", scale=alt.Scale(domain=[0, 1])),
        tooltip=[alt.Tooltip("i:O"), alt.Tooltip("word:N"), alt.Tooltip("g:Q", format=".3f")])
    chart = base.mark_line(color=GATE_COLOUR, point=True)
    if shown is not None:
        ring = alt.Chart(alt.Data(values=[d for d in data if d["i"] == shown])).mark_point(
            size=220, color="#e4572e", filled=False, strokeWidth=2).encode(x="i:O", y="g:Q")
        chart = chart + ring
    return readable(chart.properties(height=150))


def lm_caption(meta: dict[str, Any]) -> str:
    """Where the LM comes from: its data, held-out perplexity and the Tatoeba credit (what the
    checkpoint's meta records; missing entries are left out)."""
    scores = meta.get("scores") or {}
    ppl = next(iter(scores.values()), {}).get("perplexity") if isinstance(scores, dict) and scores else None
    data = meta.get("train_data") or {}
    seen, n = meta.get("train_tokens"), data.get("sentences")
    head = "Language model: a GRU over this model's target vocabulary"
    if data.get("dir"):
        head += ", trained " + (f"for {seen:,} tokens " if isinstance(seen, int) else "")
        head += f"on {data['dir']}/{data.get('split', '?')}" + (f" ({n:,} sentences)" if isinstance(n, int) else "")
    parts = [head] + ([f"held-out perplexity {ppl:g}"] if isinstance(ppl, (int, float)) else [])
    credit = meta.get("credit")
    return "; ".join(parts) + "." + (f" {credit}" if credit else "")
