"""The shown step's α / e table as one HTML snippet: per source word j, x_j, how it was read, e_ij, α_ij (a bar
and its value) and a ★ on the most-weighted word; for local attention whether j is in the window and the
Gaussian factor.

Drawn with the step's Σα / entropy / most-weight boxes (:func:`ui.figures.stepper_html.stats_html`) as one
element a Step, not a ``st.dataframe`` (an Arrow table, its column settings copied each time) beside an HTML
snippet (issue 52); the numbers are :func:`ui.figures.stepper.source_columns`' own, written to three decimals
as the table's columns were, and every one is text a reader can select and copy (the exports have all digits).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from ui.figures.common import esc
from ui.figures.stepper_charts import BLUES

# column of source_columns → (header, hover help, cell kind)
COLUMNS: dict[str, tuple[str, str, str]] = {
    "j": ("j", "", "int"),
    "source word": ("source word x_j", "", "text"),
    "read as": ("read as", "Words outside the vocabulary are read as <unk>", "text"),
    "e_ij": ("energy e_ij", "e_ij = the score before the softmax", "num"),
    "α_ij": ("weight α_ij", "softmax of the row's energies: the share of c_i that x_j's annotation gives", "bar"),
    "most": ("max", "the source word with the most weight", "text"),
    "in window": ("in window", "inside local attention's window [p_t − D, p_t + D]", "text"),
    "Gaussian": ("Gaussian", "exp(−(j − p_t)² / 2σ²), σ = D/2: local-p's factor on α", "num"),
}
# one style sheet in the snippet, not a style on each cell: the table is a tenth of the bytes it would be
STYLE = ("<style>.sp-table{border-collapse:collapse}.sp-table td,.sp-table th{padding:3px 10px;"
         "border-bottom:1px solid rgba(128,128,128,.25)}.sp-table th{text-align:left;font-weight:600}"
         ".sp-table .n{text-align:right;font-variant-numeric:tabular-nums}.sp-table .a{min-width:9rem}"
         ".sp-bar{display:flex;align-items:center;gap:8px}.sp-bar>div{flex:1;height:10px;border-radius:5px;"
         f"background:rgba(128,128,128,.2)}}.sp-bar>div>div{{height:10px;border-radius:5px;background:{BLUES[-3]}}}"
         "</style>")


def cell(kind: str, value: Any) -> str:
    """One table cell: a number to three decimals (— for none), a bar of α with its value, or text."""
    if kind == "bar":
        w = 100 * min(1.0, max(0.0, float(value)))
        return (f'<td class="a"><div class="sp-bar"><div><div style="width:{w:.1f}%"></div></div>'
                f'<span class="n">{float(value):.3f}</span></div></td>')
    if kind == "num":
        return f'<td class="n">{"—" if value is None else f"{float(value):.3f}"}</td>'
    if kind == "int":
        return f'<td class="n">{int(value)}</td>'
    return f"<td>{esc(str(value))}</td>"


def source_table_html(cols: Mapping[str, Sequence[Any]], big: bool = False) -> str:
    """The table of :func:`ui.figures.stepper.source_columns` (its columns in its order); ``big``: a
    projector's size (presentation mode's table dialog)."""
    names = [c for c in cols if c in COLUMNS]
    head = "".join(f'<th title="{esc(COLUMNS[c][1])}">{esc(COLUMNS[c][0])}</th>' for c in names)
    rows = "".join("<tr>" + "".join(cell(COLUMNS[c][2], cols[c][r]) for c in names) + "</tr>"
                   for r in range(len(cols[names[0]]) if names else 0))
    return (f'{STYLE}<div data-testid="step-table" style="overflow-x:auto;margin:2px 0 8px">'
            f'<table class="sp-table" style="font-size:{"1.2rem" if big else "0.95rem"}">'
            f"<thead><tr>{head}</tr></thead><tbody>{rows}</tbody></table></div>")
