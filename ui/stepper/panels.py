"""The stepper's secondary panels: this step's α / e table (HTML), the top-k candidates and the exports."""

from __future__ import annotations

from typing import Any
from urllib.parse import urlencode

import streamlit as st

from nmt.decoding.trace import DecodeTrace, StepRecord
from ui.common import models
from ui.figures import stepper as sv
from ui.figures import stepper_charts as sc
from ui.figures import stepper_html as sh
from ui.figures import stepper_state as vs
from ui.figures import subword_view
from ui.figures.common import md
from ui.figures.stepper_table import source_table_html
from ui.stepper import controller as ctl
from ui.stepper import state, url


def context_panel(trace: DecodeTrace, step: StepRecord, choice: models.Choice, half_width: int | None,
                  big: bool = False) -> None:
    """What c_i was at the shown step: the α / e table, or the fixed/mean explanation (``big``: a projector's)."""
    note = sv.context_note(trace.context, step, choice.kind == "ablation")
    if note:
        st.info(note)
    if step.alpha is None:
        return
    if step.window is not None:
        st.caption("Local attention (Luong et al. 2015) reads only the words in the window [p_t − D, p_t + D]"
                   + (", weighted by a Gaussian around p_t (σ = D/2)." if half_width else "."))
    cols = sv.source_columns(trace, step, half_width) or {}
    # the table, then Σα, entropy and most weight: one element a Step (ui.figures.stepper_table)
    st.html(source_table_html(cols, big) + sh.stats_html(sv.step_stats(trace, step)))


@st.dialog("This step's energies and weights", width="large")
def table_dialog(trace: DecodeTrace, step: StepRecord, choice: models.Choice, half_width: int | None) -> None:
    """The α / e table of the shown step over the page (presentation mode's one key away: T); ``half_width``:
    a local-p model's D (its capabilities' ``gaussian_half_width``), else None."""
    st.markdown(f"**i = {step.i}: writing « {md(step.token)} »**")
    context_panel(trace, step, choice, half_width, big=True)


def pill_label(word: str) -> str:
    """A candidate's pill: the word as Markdown, after one space. Streamlit looks for an emoji at the start of
    each option's first word, and for a word with a letter outside ASCII (« été ») that search takes ~1 ms
    of every Step; a label whose first word is empty skips it and shows the same (Markdown drops the space)."""
    return " " + md(word)


def topk_panel(step: StepRecord, beam: bool, nonce: str) -> None:
    """The shown step's candidates: every word beside its probability bar (the written one marked) in one
    snippet, and (greedy, sampling) the others as one row of pills, a click on one forcing it."""
    rows = sv.topk_rows(step)
    outside = None if step.token in [w for w, _ in step.topk] else (
        f"Written: {step.token} (p = {step.prob:.3f}), outside the top-{len(step.topk)}.")
    st.html(sh.topk_header_html(len(step.topk), step.i, not beam) + sh.topk_html(rows, outside))  # one element
    others = [r["word"] for r in rows if not r["written"]]
    if others and not beam:
        st.pills(f"Force instead at i = {step.i}", others, key=state.key(f"force_{nonce}"), format_func=pill_label,
                 on_change=ctl.on_pick, args=(step.i, nonce))  # a new widget (no pill picked) for each prefix
        # no help icon: the header says what a click does, and the pills stay the only buttons of the widget


def export_section(trace: DecodeTrace, look: sc.Look, group: models.ModelGroup) -> None:
    """Downloads (built only when clicked) and the shareable link of this view."""
    base = f"rnnsearch-{trace.context}-{len(trace.steps)}w"
    has = trace.has_alignment
    c = st.columns(4)

    def heat() -> dict[str, Any]:
        return sc.heatmap(trace, look=look, fit=False) or {}

    c[0].download_button("Heatmap PNG", data=(lambda: sc.spec_png(heat())) if has else b"",
                         file_name=f"{base}.png", mime="image/png", disabled=not has, key=state.key("dl_png"),
                         icon=":material/image:", on_click="ignore")
    c[1].download_button("Heatmap SVG", data=(lambda: sc.spec_svg(heat())) if has else "",
                         file_name=f"{base}.svg", mime="image/svg+xml", disabled=not has, key=state.key("dl_svg"),
                         icon=":material/draw:", on_click="ignore")
    c[2].download_button("Trace JSON", data=lambda: sv.trace_json(trace), file_name=f"{base}.json",
                         mime="application/json", key=state.key("dl_json"), icon=":material/data_object:",
                         on_click="ignore")
    c[3].download_button("Trace CSV", data=lambda: sv.trace_csv(trace), file_name=f"{base}.csv", mime="text/csv",
                         key=state.key("dl_csv"), icon=":material/table:", on_click="ignore")
    query = urlencode(url.link_query(url.current_view(group.name)), doseq=True)
    st.caption("Link to this view (sentence, model, mode, settings, forced words and step):")
    st.code(f"{(st.context.url or '').split('?')[0]}?{query}", language=None, wrap_lines=True)


def candidate_controls() -> None:
    """The sidebar's candidate-list switch and, when on, its K (Jean et al. 2015 §3.2)."""
    st.toggle("Candidate list", **ctl.bound("cand"),
              help="Decode over this sentence's own short list of target words, as Jean et al. (2015, §3.2) "
                   "did to make a very large vocabulary affordable: the K most frequent words plus the 10 "
                   "likeliest dictionary translations of each source word. Every other word gets p = 0.")
    if state.get("cand"):
        st.select_slider("K most frequent words", vs.CANDIDATE_KS, **ctl.bound("cand_k"),
                         format_func=lambda k: f"{k:,}",
                         help="The candidate list's share of the vocabulary taken by frequency alone; "
                              "with K = 0 only the dictionary's translations of the sentence's words remain.")


def candidate_panel(trace: DecodeTrace, big: bool) -> None:
    """The sentence's candidate list: its size and make-up, and (not on a projector) the words each
    source word brought in; nothing when the whole vocabulary is used."""
    line = sv.candidates_markdown(trace, short=big)
    if line is None:
        return
    if big:
        st.markdown(line)
        return
    st.caption(line + " Words marked *via* are in it only through a source word.")
    rows = sv.candidate_rows(trace)
    if rows:
        with st.expander("The words each source word brought into the list (besides the most frequent)"):
            st.dataframe(rows, hide_index=True, width="stretch")


def energies_panel(trace: DecodeTrace, choice: models.Choice, look: sc.Look, nonce: str) -> None:
    """The energies e_ij of every step so far, captioned with the model's own score (:mod:`nmt.models.equations`),
    or why there are none."""
    chart = sc.heatmap(trace, "energy", latest=len(trace.steps) - 1, look=look)
    if chart is not None:
        st.vega_lite_chart(spec=chart, key=state.key(f"energy_{nonce}"), width="stretch")
        st.caption(choice.description.look.energies)
    else:
        st.info(sv.no_energies_note(trace, choice.description.look))


def log_panel() -> None:
    """This session's event log, newest first."""
    log = list(reversed(state.get("log")))
    st.dataframe(log, hide_index=True, width="stretch", height=min(38 + 35 * len(log), 320), column_config={
        "#": st.column_config.NumberColumn(width=45), "who": st.column_config.TextColumn(width=60),
        "step": st.column_config.NumberColumn("words", width=60, help="target words written by then"),
        "what": st.column_config.TextColumn(width=900)})


def words_view(look: sc.Look) -> bool:
    """The "Pieces / Words" switch above a subword model's heatmap (not in presentation mode, where the
    session's choice stays); True for words."""
    if not look.present:
        state.setdefault("w_pieces", subword_view.VIEWS[0])  # seeded from the URL at the session's start
        st.segmented_control("Heatmap of", subword_view.VIEWS, key=state.key("w_pieces"), persist_state="session",
                             help=subword_view.HELP)
    return words_chosen()


def words_chosen() -> bool:
    """Whether the session shows a subword model's heatmap in words (the switch of :func:`words_view`)."""
    return state.get("w_pieces") == subword_view.VIEWS[1]
