"""The paper's own α of Fig. 3(a) beside a model's, as a Streamlit panel: on the stepper's *Reordered
phrase* preset (the paper's sentence) and in the Lesson's reordering stop. Reads the paper's numbers from
the first data root that has them (``data/`` or the built-in ``evalsets/``); draws with :mod:`ui.figures.paper`.
"""

from __future__ import annotations

import streamlit as st

from nmt.decoding.trace import DecodeTrace
from nmt.explanation import paper_figures as F
from nmt.text import corpora
from ui.figures import paper as V
from ui.figures.common import FONT_MAIN, md, readable


@st.cache_data(show_spinner=False, max_entries=2)
def _read(path: str, mtime: float) -> F.PaperAlpha:
    """The paper's α from its TSV (cached by path and modification time)."""
    from pathlib import Path

    return F.read_alpha_tsv(Path(path))


def paper_alpha() -> F.PaperAlpha | None:
    """Fig. 3(a)'s α from the first data root that has it, or None."""
    path = F.find_fig3a([r.path for r in corpora.configured_roots()])
    return None if path is None else _read(str(path), path.stat().st_mtime)


def applies(trace: DecodeTrace) -> bool:
    """Whether the paper's α can stand beside this trace: the paper's sentence, decoded with α."""
    return trace.source.strip() == F.FIG3A_SENTENCE and trace.has_alignment and bool(trace.steps)


def show(trace: DecodeTrace, label: str) -> None:
    """Both heatmaps, the one-line verdict and the per-row table (inside the caller's container)."""
    paper = paper_alpha()
    cmp = None if paper is None else V.comparison_of(paper, trace)
    if paper is None or cmp is None or not cmp.rows:
        st.caption("The paper's numbers for Fig. 3(a) are not in any data folder.")
        return
    st.markdown(md(V.summary(cmp)))
    st.altair_chart(readable(V.beside_chart(paper, trace, label), FONT_MAIN), width="content")
    st.dataframe(V.rows_table(paper, cmp), hide_index=True)


def expander(trace: DecodeTrace, label: str) -> None:
    """The stepper's panel, closed until opened; nothing for another sentence."""
    if applies(trace):
        with st.expander("The paper's own α (Fig. 3(a)) beside ours", icon=":material/compare:"):
            show(trace, label)


@st.dialog("The paper saw this too: Fig. 3(a)", width="large")
def dialog(trace: DecodeTrace, label: str) -> None:
    """The panel over the page (the Lesson's reordering stop, where a projector has no room to spare)."""
    show(trace, label)
