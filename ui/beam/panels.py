"""The beam search explorer's panels (Streamlit layout only): beam's best beside greedy decoding and where they
part (:func:`summary`), then one function per tab: the search tree, the beam after one step, the n-best list with
each hypothesis' α, and the ranking under each length normalisation.

The tables and charts are :mod:`ui.beam.views`; the controls are bound to URL query parameters (``bx_*``) and
what they remember lives in :mod:`ui.beam.state`.
"""

from __future__ import annotations

import streamlit as st

from nmt.decoding.toolkit import SearchRules
from nmt.decoding.trace import DecodeTrace
from ui.beam import state
from ui.beam.views import (
    Divergence,
    beam_all_frame,
    beam_nodes,
    beam_step_frame,
    beam_tree_chart,
    nbest_alpha_chart,
    nbest_cells,
    nbest_frame,
    rerank_chart,
    rerank_frame,
    winners,
)
from ui.common import widgets as W
from ui.figures import subword_view
from ui.figures.common import FONT_MAIN, NORM_LABELS, csv_text, md
from ui.figures.unknown import Detokenize, Shown, nbest_trace, shown

LAYOUTS = {"tree": "branches grouped, best child on top", "rank": "each step's hypotheses by rank"}
BIND = W.BIND


def translation(text: Shown) -> None:
    """A translation in dark text in a box (legible on a projector, unlike a grey quote), each replaced
    ``<unk>`` marked (:mod:`ui.figures.unknown`)."""
    with st.container(border=True):
        st.markdown(text.markdown or "(empty)")


def summary(trace: DecodeTrace, greedy: DecodeTrace, div: Divergence, detok: Detokenize) -> None:
    """Beam's best next to the greedy output, and where the two part."""
    left, right = st.columns(2)
    best, own = shown(trace, detok), shown(greedy, detok)
    with left:
        st.markdown(f"**Beam search (k = {trace.beam_size}), best hypothesis**")
        translation(best)
        st.caption(f"log p = {trace.logprob:.3f} · {len(trace.steps)} words with </s> · "
                   f"score {trace.nbest[0].score:.3f}" if trace.nbest else "no finished hypothesis")
    with right:
        st.markdown("**Greedy decoding**")
        translation(own)
        st.caption(f"log p = {greedy.logprob:.3f} · {len(greedy.steps)} words with </s>")
    if best.note or own.note:
        st.caption(best.note or own.note)
    if div.step is None:
        st.success("Greedy decoding and the beam's best hypothesis agree on every word.")
    else:
        g = "(nothing: it had ended)" if div.greedy_word is None else f"“{md(div.greedy_word)}”"
        b = "(nothing: it had ended)" if div.beam_word is None else f"“{md(div.beam_word)}”"
        msg = (f"Greedy and beam search part at **step {div.step}** (after {div.step} common words): "
               f"greedy writes {g}, the beam's best writes {b}.")
        if div.greedy_pruned_at is not None:
            msg += f" The greedy path was pruned from the beam at step {div.greedy_pruned_at}."
        better = trace.logprob - greedy.logprob
        msg += (f" The beam's best is {better:.3f} nats more likely than the greedy output." if better > 0 else
                f" The greedy output is {-better:.3f} nats more likely: the beam's winner was chosen by its "
                "normalised score, not its raw log p.")
        st.warning(msg)
    if trace.truncated:
        st.info("The sentence was longer than the model reads; it was cut.")


def tree_tab(trace: DecodeTrace, greedy: DecodeTrace, div: Divergence, stem: str) -> None:
    """The search tree with its downloads."""
    c1, c2 = st.columns([1, 2])
    show_pruned = c1.toggle("Show pruned expansions", value=True, key="bx_pruned", bind=BIND)
    layout = c2.radio("Layout", list(LAYOUTS), horizontal=True, key="bx_layout", bind=BIND,
                      help=" · ".join(f"{k}: {v}" for k, v in LAYOUTS.items()))
    nodes = beam_nodes(trace, greedy, layout=layout or "tree", show_pruned=show_pruned)
    chart = beam_tree_chart(nodes, div.step)
    if chart is None:
        st.info("The search has no steps to draw.")
        return
    st.caption("Nodes are partial hypotheses (hover for their words and scores), edges are expansions. "
               "Gold diamonds end the n-best hypotheses (the largest is the best), green squares other "
               "finished ones, grey crosses pruned expansions; the dashed red path is the greedy output.")
    W.show_chart(chart, fit=True, size=FONT_MAIN)
    W.downloads([*W.chart_downloads(chart, f"beam-tree-{stem}"),
                 W.Download("Nodes CSV", csv_text(nodes), f"beam-tree-{stem}.csv", "text/csv"),
                 W.Download("Trace JSON", trace.to_json(indent=1), f"beam-{stem}.json", "application/json")],
                key="bx_dl_tree")


def step_tab(trace: DecodeTrace, stem: str, rules: SearchRules | None) -> None:
    """The beam after one step: live, finished and pruned hypotheses."""
    n = len(trace.beam_steps)
    if n == 0:
        st.info("No beam steps were recorded.")
        return
    state.step_set(n - 1)  # a shorter search than the one the slider was set on
    step = st.slider("Step i", 0, n - 1, key="bx_step", bind=BIND) if n > 1 else 0
    step = min(int(step), n - 1)
    b = trace.beam_steps[step]
    how = ("the search scores 2k candidates per step and keeps the k most likely" if rules is None else
           f"{rules.toolkit}'s beam keeps the k most likely continuations; the k next ones are shown as pruned")
    st.markdown(f"After step **{step}**: **{len(b.live)}** live, **{len(b.finished)}** finished, "
                f"**{len(b.pruned)}** expansions pruned ({md(how)}).")
    df = beam_step_frame(trace, step)
    st.dataframe(df, hide_index=True, key="bx_step_table", column_config={
        "log p": st.column_config.NumberColumn("log p (cumulative)", format="%.3f"),
        "score": st.column_config.NumberColumn("normalised score", format="%.3f")})
    W.downloads([W.Download("This step CSV", csv_text(df), f"beam-step{step}-{stem}.csv", "text/csv"),
                 W.Download("All steps CSV", csv_text(beam_all_frame(trace)),
                            f"beam-steps-{stem}.csv", "text/csv")], key="bx_dl_step")


def nbest_tab(trace: DecodeTrace, stem: str, detok: Detokenize, pieces: str | None = None) -> None:
    """The n-best list and the α heatmap of a chosen hypothesis (its ``<unk>`` replaced in the line above it);
    ``pieces``: a subword model's kind, which adds the Pieces / Words switch."""
    df = nbest_frame(trace)
    hyps = [shown(nbest_trace(trace, r), detok) for r in range(1, len(trace.nbest) + 1)]
    if any(h.swaps for h in hyps):  # the text with <unk> replaced beside the raw one (the CSV keeps both)
        df.insert(2, "translation, <unk> replaced", [h.text for h in hyps])
    st.dataframe(df, hide_index=True, key="bx_nbest_table", column_config={
        "log p": st.column_config.NumberColumn(format="%.3f"),
        "score": st.column_config.NumberColumn("normalised score", format="%.3f")})
    if df.empty:
        st.info("No hypothesis finished.")
        return
    ranks = list(range(1, len(trace.nbest) + 1))
    rank = st.radio("Show the α of the hypothesis ranked", ranks, key="bx_hyp", bind=BIND, horizontal=True)
    rank = int(rank) if rank in ranks else 1
    st.markdown(f"**{rank}.** {hyps[rank - 1].markdown or '(empty)'}")
    words = pieces if pieces and st.segmented_control(
        "Heatmap of", subword_view.VIEWS, key="bx_pieces", default=subword_view.VIEWS[0], bind=BIND,
        help=subword_view.HELP) == subword_view.VIEWS[1] else None
    chart = nbest_alpha_chart(trace, rank, words)
    if not trace.has_alignment:
        st.info("This model reads one fixed summary c for every word: there is no α to show.")
    if chart is not None:
        W.show_chart(chart, size=FONT_MAIN)
    W.downloads([*W.chart_downloads(chart, f"beam-alpha{rank}-{stem}"),
                 W.Download("α CSV", csv_text(nbest_cells(trace, rank)),
                            f"beam-alpha{rank}-{stem}.csv", "text/csv"),
                 W.Download("N-best CSV", csv_text(df), f"nbest-{stem}.csv", "text/csv")],
                key="bx_dl_nbest")


def norm_tab(trace: DecodeTrace, alpha: float, stem: str, detok: Detokenize, rules: SearchRules | None) -> None:
    """Every finished hypothesis ranked with and without length normalisation, written as ``detok`` writes
    a translation (a subword model's pieces joined into words)."""
    df = rerank_frame(trace, alpha, detok)
    if df.empty:
        st.info("No hypothesis finished.")
        return
    st.markdown("The search keeps its live hypotheses by raw log-probability whatever the setting, so the "
                "finished hypotheses are the same; the normalisation decides which of them wins. Raw log p "
                "adds a negative number per word and so prefers short outputs; dividing by the length "
                f"(Jean et al. 2015) or GNMT's penalty (α = {alpha:.1f}) removes that bias.")
    if rules is not None:
        st.markdown(f"The beam itself ranked them as {md(rules.toolkit)} does ({md(rules.length_penalty)} penalty); "
                    "the table re-ranks the same hypotheses under this app's three normalisations.")
    for n, hyp in winners(df).items():
        st.markdown(f"- **{md(NORM_LABELS[n])}** picks “{md(hyp)}”")
    chart = rerank_chart(df)
    if chart is not None:
        W.show_chart(chart, size=FONT_MAIN)
    st.dataframe(df, hide_index=True, key="bx_rerank_table",
                 column_config={c: st.column_config.NumberColumn(format="%.3f")
                                for c in df.columns if c.startswith("score") or c == "log p"})
    W.downloads([*W.chart_downloads(chart, f"beam-ranking-{stem}"),
                 W.Download("Ranking CSV", csv_text(df), f"beam-ranking-{stem}.csv", "text/csv")],
                key="bx_dl_norm")
