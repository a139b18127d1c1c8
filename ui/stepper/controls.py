"""The stepper's inputs and controls: title, preset, sentence and bottleneck toggle above; Reset, Back, Step,
Play, Run to end, the speed and presentation mode in one row; a presenter's clicker keys.

The row is the page's full run's (:func:`controls_row`): the decoding fragment draws the buttons in it each
Step (:func:`controls`), the full run the speed and the presentation switch after them (:func:`settings`), which
a Step leaves as they are (issue 52: fewer elements a Step)."""

from __future__ import annotations

import streamlit as st
from streamlit.delta_generator import DeltaGenerator

from ui.common import models, user_models
from ui.common.presets import BY_NAME, listed, watch_for
from ui.figures import stepper_html as sh
from ui.figures import stepper_state as vs
from ui.figures.common import md
from ui.stepper import controller as ctl
from ui.stepper import state, url

SPEEDS = (2.0, 1.0, 0.5, 0.25)
SPEED_WIDTH = {False: 190, True: 265}  # px of the Play speed slider (presentation: its label beside it)
INTRO = ("RNNsearch (Bahdanau, Cho & Bengio, 2015) translates one word at a time. Before each word the decoder "
         "scores every source word (energies e_ij), turns the scores into weights α_ij and reads their weighted "
         "sum, the context c_i. Step through it and watch where it looks.")
CSS_KEYS = ("w_speed", "btn_esc")  # keys ui.figures.stepper_html.page_css styles
# (.st-key-w_speed …), written there without the page's prefix


def page_css(present: bool) -> str:
    """The page's style (:func:`ui.figures.stepper_html.page_css`), its rules for the speed slider and
    presentation mode's hidden Esc button on their own (prefixed) keys."""
    css = sh.page_css(present)
    for name in CSS_KEYS:
        css = css.replace(f".st-key-{name}", f".st-key-{state.key(name)}")
    return css


def freeze_help(twin: bool, frozen_ok: bool) -> str:
    """What the bottleneck toggle does for this pair: its RNNencdec twin, its own weights frozen, or nothing."""
    return ("Off: RNNsearch computes a fresh context c_i = Σ_j α_ij h_j for every target word. "
            + ("On: the RNNencdec twin, whose every target word reads one fixed summary c = [→h_Tx; ←h_1]."
               if twin else "On: this pair has no RNNencdec twin of its own, so its RNNsearch weights "
               "read one fixed summary c = [→h_Tx; ←h_1] at every word, as they were never trained to."
               if frozen_ok else "Not for this model: it attends after its recurrent step (Luong et al. "
               "2015) and has no fixed-context mode to freeze c_t to."))


def inputs(group: models.ModelGroup) -> None:
    """Title, presentation switch, preset picker, sentence box and the bottleneck toggle (named for what
    it shows with ``group``: its RNNencdec twin, or, without one, its own weights frozen)."""
    st.title("Step through decoding", help=INTRO)
    c = st.container(key="inputs").columns([1.5, 4, 1.9], vertical_alignment="bottom")  # wraps when narrow
    c[0].selectbox("Preset", [ctl.CUSTOM, *listed({g.name for g in user_models.all_groups()})],
                   key=state.key("w_preset"), persist_state="session", on_change=ctl.on_preset)
    c[1].text_area(models.source_label(group.search or group.encdec), key=state.key("text"), **url.BOUND,
                   height=68, max_chars=vs.MAX_TEXT_CHARS, on_change=ctl.on_text,
                   placeholder="Type a sentence, e.g. A black dog is running on the grass.")
    with c[2]:
        twin = group.encdec is not None
        frozen_ok = twin or group.search is None or "fixed" in models.capabilities(group.search).context_modes
        st.toggle("Freeze c_i (RNNencdec)" if twin else "Freeze c_i (untrained ablation)", **ctl.bound("freeze"),
                  disabled=not frozen_ok, help=freeze_help(twin, frozen_ok))
        with st.popover("Advanced", icon=":material/tune:"):
            st.checkbox("Apply the freeze to the RNNsearch weights themselves (untrained ablation)",
                        **ctl.bound("ablation"),
                        help="Instead of the RNNencdec trained with a fixed c, decode the RNNsearch model with "
                             "c_i frozen to the summary c. It was never trained that way, so its output shows "
                             "what attention was doing for it.")


def watch_line() -> str | None:
    """The preset's one line on what to watch, for the toggle as it is now (Markdown); None off a preset."""
    preset = BY_NAME.get(state.get("w_preset"))
    return None if preset is None else f"**Watch:** {md(watch_for(preset, bool(state.get('freeze'))))}"


def watch() -> None:
    """The watch line on its own, large: presentation mode's (elsewhere it joins the heatmap's caption)."""
    line = watch_line()
    if line is not None:
        st.markdown(line)


def controls_row() -> DeltaGenerator:
    """The row of controls, made by the page's full run above the decoding fragment: the fragment writes its
    buttons in (:func:`controls`), the full run then adds the speed and presentation mode (:func:`settings`)."""
    return st.container(horizontal=True, vertical_alignment="center", gap="small")


def controls(done: bool, row: DeltaGenerator) -> None:
    """Reset, back, step, play/pause and run to end, at the start of ``row`` (:func:`controls_row`): drawn
    each Step, for whether each may be pressed now (a clicker's PageDown / PageUp click Step / Back:
    :func:`clicker_keys`)."""
    at_start, playing = state.pos() == 0, state.playing()
    with row:
        st.button("Reset", key=state.key("btn_reset"), icon=":material/first_page:", on_click=ctl.on_reset,
                  disabled=at_start and not state.plan())
        st.button("Back", key=state.key("btn_back"), icon=":material/chevron_left:", on_click=ctl.on_back,
                  disabled=at_start, shortcut="Left",
                  help="Key: ← or PageUp")  # a clicker: PageUp / PageDown click Back / Step (clicker_keys)
        st.button("Step", key=state.key("btn_step"), icon=":material/chevron_right:", on_click=ctl.on_step,
                  disabled=done, type="primary", shortcut="Right", help="Key: → or PageDown")
        st.button("Pause" if playing else "Play", key=state.key("btn_play"),
                  icon=":material/pause:" if playing else ":material/play_arrow:", on_click=ctl.on_play,
                  disabled=done and not playing, shortcut="P", help="Key: P")
        st.button("Run to end", key=state.key("btn_run"), icon=":material/last_page:", on_click=ctl.on_run,
                  disabled=done)


def settings(row: DeltaGenerator) -> None:
    """The play speed, presentation mode's table key and the presentation switch, after the buttons in ``row``:
    drawn by the full run only (a change of any reruns the whole page), not on each Step."""
    with row:
        # labelled above the slider; in presentation mode beside it (page_css), so the row stays as
        # low as the buttons and 12 words fit 720 px (issue 21: every control labelled)
        st.select_slider("Play speed", SPEEDS, key=state.key("w_speed"), persist_state="session",
                         format_func=lambda s: f"{s:g} s / word", width=SPEED_WIDTH[state.present()],
                         help="Seconds between words while Play runs.")
        if state.present():  # the numbers tab is gone: its table is one key (T) or click away, over the page
            st.button("Table (T)", key=state.key("btn_table"), shortcut="T", icon=":material/table:",
                      on_click=ctl.on_table, help="This step's energies e_ij and weights α_ij")
        st.toggle("Presentation", **ctl.bound("present"),
                  help="For a projector: larger type, the sidebar collapsed, no secondary panels (Esc leaves it).")
        if state.present():  # hidden (page_css): its key only
            st.button("Leave presentation", key=state.key("btn_esc"), shortcut="Esc", on_click=leave_presentation)


def leave_presentation() -> None:
    """Esc: presentation mode off, as if its toggle were clicked."""
    state.put("present", False)
    ctl.on_setting("present")


def clicker_keys() -> None:
    """A presenter's clicker sends PageDown / PageUp (Step / Back): the page's script clicks those buttons
    (:func:`ui.figures.stepper_html.clicker_js`), drawn once per full run in the sidebar (a script element takes
    a row's gap in the main column; the sidebar's content is on the page even when it is collapsed)."""
    st.sidebar.html(sh.clicker_js(state.key("btn_step"), state.key("btn_back")), unsafe_allow_javascript=True)
