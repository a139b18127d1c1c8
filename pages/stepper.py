"""Step through decoding: watch RNNsearch write a translation one word at a time.

Laid out for a projector: at 1280×720 the sentence, the controls, the source words shaded by α,
the α heatmap (left, the source side) and the translation so far (right, the target side) show
without scrolling; the numbers of a step, the energies, the bottleneck comparison, the event log
and the exports are tabs below. "Presentation" makes the type larger, collapses the sidebar and
drops the tabs. The bottleneck toggle swaps in the RNNencdec twin (or, advanced, freezes the
RNNsearch weights) and then shows both translations and how far each word's context moves.

This file only lays the page out: :mod:`ui.stepper.controller` owns the session and the callbacks,
:mod:`ui.stepper.decoding` the decoding state, :mod:`ui.stepper.state` every session key, the package's
panels draw their parts and :mod:`ui.figures.stepper` builds every chart and snippet.
"""

from __future__ import annotations

from collections.abc import Sequence

from ui.common import shell

shell.framed()  # a page Streamlit started on its own (a fresh server's first request) runs in the frame

import streamlit as st
from streamlit.delta_generator import DeltaGenerator

from ui.common import checkpoint_files, models, paper_panel, shell, user_models
from ui.figures import stepper as sv
from ui.figures import stepper_html as sh
from ui.figures.common import md
from ui.stepper import controller as ctl
from ui.stepper import decoding as dec
from ui.stepper import ensemble_panel as ens
from ui.stepper import fusion_panel as fusion_ui
from ui.stepper import sampling, state, url
from ui.stepper import views_readout as sr
from ui.stepper.controls import clicker_keys, controls, controls_row, inputs, page_css, settings, watch, watch_line
from ui.stepper.heatmap_panel import alignment, shown_rows, shown_step
from ui.stepper.panels import candidate_panel, table_dialog, topk_panel
from ui.stepper.sidebar import sidebar
from ui.stepper.tabs_panel import secondary, tab_bar


def decoding_view(lm: dec.LoadedModel, choice: models.Choice, text: str, group: models.ModelGroup,
                  row: DeltaGenerator, tabs: Sequence[DeltaGenerator] | None) -> None:
    """Everything below the inputs; runs as a fragment so a step redraws only this part. ``row``: the controls
    row above it, whose buttons this draws; ``tabs``: the tab bar below it (None presenting), whose open tab
    this fills (both drawn by the full run: a Step does not redraw them)."""
    if ctl.pace_changed():
        st.rerun()  # a full run registers (or drops) the play timer, or redraws the page for presentation
    ctl.advance_play()
    trace, done, limit = dec.materialize(lm, choice, text)
    if ctl.stop_at_end(done):
        st.rerun()
    look = ctl.look()
    controls(done, row)
    nonce = dec.nonce(choice, trace)
    latest = len(trace.steps) - 1 if trace.steps else None
    swaps = dec.replacements(trace)
    shown = shown_rows(trace, lm.subword)  # the heatmap's rows (a subword model's in words): decided once a Step
    cur = shown_step(shown[1], nonce, latest)  # a row of the heatmap clicked before this run, else the latest
    step = trace.steps[cur] if cur is not None else None
    swap = swaps.get(cur) if cur is not None else None
    copied = swap.word if swap else None
    if ctl.table_asked() and step is not None:
        table_dialog(trace, step, choice, lm.model.capabilities.gaussian_half_width())
    note = sr.first_word_note(trace, step, copied)
    # the readout and the source words above both columns (one line for 15 words: the heatmap fits a projector)
    st.html(sr.readout_html(trace, step, copied, big=look.present)
            + (sh.note_html(note, look.present) if note else "")
            + sh.source_html(trace, step, paper=look.paper, big=look.present, heading=False))
    left, right = st.columns([1.8, 1], gap="medium")
    notes = (watch_line(), sv.status_markdown(trace, done, limit, choice.label, choice.file_names))
    fused = lm.model.capabilities.arch == "fused" and not look.present
    with left:  # the chart's caption, the watch line and the status: one caption
        alignment(shown, latest, nonce, look, group, text, lm.subword, tuple(n for n in notes if n))
        fusion_slot = st.container() if fused else None  # the LM's top-k beside the TM's (filled below)
        ens.panel(lm, trace, step, look, nonce)  # an ensemble's members beside it (nothing for one model)
    with right:
        detok = sh.detokenised_html(dec.translation_text(lm, trace)) if trace.steps and not look.present else ""
        st.html(sh.translation_html(trace, cur, swaps, big=look.present) + detok  # one element a Step
                + sh.now_writing_html(step, len(trace.steps), ended=dec.ended(trace, done), swap=swap,
                                      big=look.present))
        candidate_panel(trace, look.present)  # the candidate list the top-k below come from
        if look.present:
            watch()  # beside the heatmap: below it, it would push a projector's page into scrolling
        if cur != latest:
            st.button("Follow the latest step", key=state.key(f"follow_{nonce}"), on_click=ctl.on_follow,
                      icon=":material/arrow_downward:")
        if step is not None and not look.present:
            topk_panel(step, state.mode() == "beam", nonce)
            if state.mode() == "sample":
                sampling.panel(step)
    if state.mode() == "sample" and not look.present:
        sampling.translation_table(lm, choice, text)
    if fusion_slot is not None:
        with fusion_slot:
            fusion_ui.panel(lm, trace, cur)
    if not look.present:
        paper_panel.expander(trace, choice.label)  # on the paper's Fig. 3(a) sentence only, full width
    if tabs is not None:  # none presenting
        secondary(tabs, lm, trace, step, choice, group, text, look, nonce)
    url.write_position()


def main() -> None:
    """The stepper page."""
    ctl.start_run()
    st.html(page_css(state.present()))
    directory = models.checkpoint_dir()
    groups = user_models.all_groups()
    if not groups:
        st.title("Step through decoding")
        st.error(f"No checkpoints found in {md(dec.folder_shown(directory))}.")
        st.markdown(sv.no_checkpoints_markdown(models.ENV_VAR))
        for line in checkpoint_files.notes(directory):  # a folder of bad files only: why each was left out
            st.caption(md(line))
        return
    group = sidebar(groups)
    clicker_keys()
    inputs(group)
    if dec.typed_note():
        st.caption(md(dec.typed_note()))
    choice = ens.resolve(group, dec.chosen(group))
    if choice.notice:
        st.warning(md(choice.notice + dec.stand_in_note(group, choice)))
    lm = ens.load_lm(choice)  # a damaged or foreign file: one line; a file with no digest: a warning
    if lm is None:
        url.write_position()
        return
    lm = fusion_ui.sidebar(lm, choice.ckpt)  # the TM, or fused with a language model (when one fits)
    text = state.text()
    src_trace, problem = dec.source_trace(lm, choice, text)
    if src_trace is None:
        st.warning(md(problem or ""), icon=":material/edit:")
        st.caption("Pick a preset or type an English sentence above.")
        return
    if src_trace.truncated:
        st.warning(f"The sentence is long: only its first {dec.MAX_SRC_TOKENS} tokens are translated "
                   f"(it has {len(lm.src_tok.tokenize(text))}).")
    # the controls row and the tab bar are the full run's, the fragment fills them: a Step does not redraw them
    row, slot = controls_row(), st.container()
    tabs = None if state.present() else tab_bar()
    with slot:  # guarded: the fragment's own reruns (each Step, the play timer) run outside the page's boundary
        st.fragment(run_every=ctl.play_timer())(shell.guarded("Step through decoding", decoding_view))(
            lm, choice, text, group, row, tabs)
    settings(row)  # after the fragment's buttons


main()
url.sync_once()
