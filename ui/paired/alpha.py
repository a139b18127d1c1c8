"""The paired page's α difference: for the picked sentence, both models forced along its reference over the
same source tokens, α_B − α_A as a diverging heatmap with per-row top-1 agreement and JSD; over all compared
sentences (on a button), which source words receive more attention from one model than from the other.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import streamlit as st

from nmt.decoding.search import InputError
from nmt.decoding.trace import DecodeTrace
from nmt.explanation import alpha_diff
from ui.common import models
from ui.common import widgets as W
from ui.figures.common import md
from ui.paired import views_alpha_diff as vd


def _forced(c: models.CheckpointInfo, sources: Sequence[str], refs: Sequence[str], label: str | None = None,
            heavy_job: bool = False) -> list[DecodeTrace]:
    """The model's traces forced along ``refs`` (cached chunk by chunk)."""
    return W.decode(W.job_for(c, "forced"), list(sources), list(refs), label=label, heavy_job=heavy_job)


def _why_not(ta: DecodeTrace, tb: DecodeTrace) -> str | None:
    """Why two forced traces cannot be subtracted, in one line, or None."""
    if not (ta.has_alignment and tb.has_alignment):
        return "One of the two reads one fixed c, not α: there is no difference of α to draw."
    if ta.src_tokens != tb.src_tokens:
        return "A and B split the source into different tokens: their α have different columns."
    if [s.token for s in ta.steps] != [s.token for s in tb.steps]:
        return "A and B read the reference as different target tokens (their vocabularies differ)."
    return None


def pair(ta: DecodeTrace, tb: DecodeTrace) -> alpha_diff.AlphaDiff:
    """The two traces' α compared (both forced along the same words)."""
    return alpha_diff.compare(ta.src_tokens, [s.token for s in ta.steps], ta.alpha_matrix(), tb.alpha_matrix())


def sentence(a: models.CheckpointInfo, b: models.CheckpointInfo, source: str, reference: str) -> None:
    """α_B − α_A of one sentence, forced along its reference, with the per-row table."""
    st.markdown("**Where they look differently: α_B − α_A along the reference**")
    try:
        ta, tb = (_forced(c, [source], [reference])[0] for c in (a, b))
    except InputError as err:
        W.input_error(err)
        return
    if why := _why_not(ta, tb):
        st.caption(md(why))
        return
    d = pair(ta, tb)
    st.caption(md(vd.summary_line(d)))
    W.show_chart(vd.diff_chart(d, "α_B − α_A"), key="pr_alpha_diff")
    top_a, top_b = np.argmax(ta.alpha_matrix(), axis=1), np.argmax(tb.alpha_matrix(), axis=1)
    st.dataframe(vd.row_frame(d, top_a.tolist(), top_b.tolist()), hide_index=True, key="pr_alpha_rows")


def test_set(a: models.CheckpointInfo, b: models.CheckpointInfo, sources: Sequence[str], refs: Sequence[str]) -> None:
    """On a button: every compared sentence forced along its reference by both; the source words whose
    attention differs most, and the mean agreement figures. Nothing when one of the two has no α."""
    if not all(models.description(c).has_alpha for c in (a, b)):
        return
    st.subheader("Where the two look differently, over all compared sentences")
    if not W.run_button(f"Compare α over all {len(sources)} sentences", "pr_alpha_go",
                        "|".join(map(str, (a.path, a.mtime, b.path, b.mtime, len(sources), hash(tuple(sources))))),
                        help="Forced decoding of every reference by both models (cached)."):
        return
    try:
        ta = _forced(a, sources, refs, label="A: reading the references", heavy_job=True)
        tb = _forced(b, sources, refs, label="B: reading the references", heavy_job=True)
    except InputError as err:
        W.input_error(err)
        return
    pairs = [(x, y) for x, y in zip(ta, tb, strict=True) if _why_not(x, y) is None]
    if not pairs:
        st.caption("No sentence has α from both models over the same tokens.")
        return
    diffs = [(pair(x, y), x.alpha_matrix()) for x, y in pairs]
    agree = float(np.mean([d.agreement for d, _ in diffs]))
    jsd = float(np.mean([d.mean_jsd for d, _ in diffs]))
    st.caption(f"{len(diffs)} of {len(sources)} sentences compared: mean top-1 agreement {agree:.0%}, mean JSD "
               f"{jsd:.3f} nats. Attention a source word receives: its α column summed over the target words, "
               "averaged over its occurrences; the largest differences first.")
    st.dataframe(vd.word_frame(alpha_diff.by_source_word(diffs)), hide_index=True, key="pr_alpha_words")
