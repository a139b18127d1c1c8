"""The stepper's readout line, the note on the first word, and the frozen picture (issue 21).

- :func:`readout` / :func:`readout_html`: one large line above the heatmap saying what the shown
  step wrote and read: ``writing « Elle » · weights sum 1.00 · reads 'She' 31 % · spread 1.73 nats``
  (the spread is the entropy of α_i· in nats), or, with a fixed context, that it read the same
  summary c as every other word.
- :func:`first_word_note`: why the first word's weights need not sit on the diagonal.
- :func:`rows_chart`: the chart of the rows, chosen by the trace's one decision
  (:attr:`nmt.decoding.trace.DecodeTrace.picture`): the α heatmap, or, when every step read the one
  summary c, :func:`summary_band`, the same flat band drawn in every row ("the flat blur").

Plain builders: a trace in, a string or a Vega-Lite spec out; user text is escaped with ``esc``.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from nmt.decoding.trace import DecodeTrace, StepRecord
from nmt.models.kinds import FIXED_COLOUR
from ui.figures.common import esc, label_expr, source_labels, target_labels
from ui.figures.stepper import step_stats
from ui.figures.stepper_charts import (
    LATEST,
    PICKED,
    SELECT_PARAM,
    SLANT_MAX_SOURCE,
    Look,
    heatmap,
    row_font,
    row_height,
)

PLAIN = Look()  # the default look: not presenting, blue, light theme
SUMMARY_TITLE = "Every word reads the same summary c = [→h_Tx; ←h_1]: no weights α"
FIRST_WORD_NOTE = (
    "Why is the first word not on the diagonal? Its weights are scored from the decoder's starting state, "
    "which is made from the backward encoder's summary of the whole sentence, and α_i is computed before "
    "word i is chosen: the model looks first, then picks « {word} »."
)


@dataclass(frozen=True)
class Readout:
    """What the shown step wrote and read, as numbers (``None`` where the step has no α)."""

    word: str  # the word written (or the source word copied for <unk>)
    total: float | None  # Σ_j α_ij
    reads: str | None  # the source word with the largest α_ij
    weight: float | None  # that α_ij
    spread: float | None  # entropy of α_i· in nats
    summary: bool  # True: the step read the one fixed summary c (no α)

    def text(self) -> str:
        """The line as plain text, e.g. "writing « Elle » · weights sum 1.00 · reads 'She' 31 % · spread 1.73 nats"."""
        head = f"writing « {self.word} »"
        if self.summary:
            return f"{head} · reads the same summary c as every word · no weights α"
        return (f"{head} · weights sum {self.total:.2f} · reads '{self.reads}' {round(100 * self.weight)} % · "
                f"spread {self.spread:.2f} nats")


def readout(trace: DecodeTrace, step: StepRecord, copied: str | None = None) -> Readout:
    """The readout of ``step``: its word (``copied`` in place of ``<unk>``) and the numbers of its α row."""
    stats = step_stats(trace, step)
    return Readout(copied or step.token, stats["sum"], stats["word"], stats["weight"], stats["entropy"],
                   summary=step.alpha is None)


def readout_html(trace: DecodeTrace, step: StepRecord | None, copied: str | None = None, big: bool = False) -> str:
    """The readout line, large (``big``: presentation size), with a tooltip saying what each number is."""
    size = "1.55rem" if big else "1.3rem"
    style = f"font-size:{size};font-weight:600;line-height:1.3;margin:0 0 4px"
    if step is None:
        return (f'<div data-testid="stepper-readout" style="{style}">Press Step: the first word\'s weights '
                "appear here.</div>")
    tip = ("weights sum: Σ_j α_ij (always 1: a softmax); reads: the source word with the largest α_ij; "
           "spread: the entropy of α_i in nats (0 = all weight on one word, ln T_x = spread evenly)")
    return (f'<div data-testid="stepper-readout" style="{style}" title="{esc(tip)}">'
            f"{esc(readout(trace, step, copied).text())}</div>")


def first_word_note(trace: DecodeTrace, step: StepRecord | None, copied: str | None = None) -> str | None:
    """One sentence on why the first row's largest α is not on the first source word; None elsewhere."""
    if step is None or step.i != 0 or step.alpha is None or not step.alpha:
        return None
    if max(range(len(step.alpha)), key=step.alpha.__getitem__) == 0:
        return None
    return FIRST_WORD_NOTE.format(word=copied or step.token)


def summary_band(trace: DecodeTrace, *, latest: int | None = None, param: str = SELECT_PARAM,
                 look: Look = PLAIN) -> dict[str, Any] | None:
    """The frozen picture: one flat band per target word over every source word, the same in every row
    (each word reads the one summary c), in the fixed context's colour, laid out like the α heatmap
    (same rows, same source columns) so the toggle swaps one picture for the other in place.
    Clicking a row selects its step, as on the heatmap. ``None`` before the first step."""
    if not trace.steps:
        return None
    n_src, n_tgt = len(trace.src_tokens), len(trace.steps)
    f, ink = look.font, look.ink
    values = [{"i": s.i, "j": j, "target": s.token, "source": w, "reads": "the summary c"}
              for s in trace.steps for j, w in enumerate(trace.src_tokens)]
    axis = {"labelFontSize": f, "titleFontSize": f, "labelColor": ink, "titleColor": ink, "labelOverlap": False,
            "labelLimit": 120, "title": None, "ticks": False, "domain": False, "labelFlush": False}
    stroke: list[dict[str, Any]] = [{"param": param, "empty": False, "value": PICKED}]
    if latest is not None:
        stroke.append({"test": f"datum.i == {int(latest)}", "value": LATEST})
    return {
        "$schema": "https://vega.github.io/schema/vega-lite/v6.json",
        "title": {"text": SUMMARY_TITLE, "fontSize": f, "color": ink, "fontWeight": "normal", "anchor": "start"},
        "data": {"values": values},
        "mark": {"type": "rect", "color": FIXED_COLOUR, "opacity": 0.45},
        "params": [{"name": param, "select": {"type": "point", "fields": ["i"], "on": "click", "clear": "dblclick"}}],
        "encoding": {
            "x": {"field": "j", "type": "ordinal", "sort": "ascending", "scale": {"paddingInner": 0},
                  "axis": {"orient": "bottom", "labelAngle": -90 if n_src > SLANT_MAX_SOURCE else -40,
                           "labelExpr": label_expr(source_labels(trace)), **axis}},
            "y": {"field": "i", "type": "ordinal", "sort": "ascending", "scale": {"paddingInner": 0.15},
                  "axis": {**axis, "labelExpr": label_expr(target_labels(trace)),
                           "labelFontSize": row_font(n_tgt, look)}},
            "stroke": {"condition": stroke, "value": None},
            "strokeWidth": {"value": 3 if look.present else 2},
            "tooltip": [{"field": "target", "title": "target word"}, {"field": "reads", "title": "reads"}],
        },
        "width": "container",
        "height": {"step": row_height(n_tgt, look)},
    }


def rows_chart(trace: DecodeTrace, *, latest: int | None = None, look: Look = PLAIN,
               labels_below: bool = False) -> dict[str, Any] | None:
    """The chart of the stepper's rows as the trace decided (:attr:`DecodeTrace.picture`): the α
    heatmap, the summary band, or ``None`` before the first step."""
    if trace.picture == "summary":
        return summary_band(trace, latest=latest, look=look)
    if trace.picture == "alpha":
        return heatmap(trace, "alpha", latest=latest, look=look, labels_below=labels_below)
    return None
