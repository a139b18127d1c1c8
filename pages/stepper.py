"""Step through decoding: watch RNNsearch write a translation one word at a time.

Laid out for a projector: at 1280×720 the sentence, the controls, the source words shaded by α,
the α heatmap (left, the source side) and the translation so far (right, the target side) show
without scrolling; the numbers of a step, the energies, the bottleneck comparison, the event log
and the exports are tabs below. "Presentation" makes the type larger, collapses the sidebar and
drops the tabs. The bottleneck toggle swaps in the RNNencdec twin (or, advanced, freezes the
RNNsearch weights) and then shows both translations and how far each word's context moves.

This file only lays the page out: :mod:`ui.stepper.controller` owns the session, the callbacks
and the decoding state, and :mod:`ui.figures.stepper` builds every chart and snippet.
"""

from __future__ import annotations

from ui.common import shell

shell.framed()  # a page Streamlit started on its own (a fresh server's first request) runs in the frame

import time

import streamlit as st

from nmt.decoding.search import InputError
from nmt.decoding.trace import DecodeTrace, StepRecord
from nmt.models.checkpoint import LoadedModel
from nmt.text.corpora import shown
from ui.common import checkpoint_files, models, paper_panel, search_rules, shell, twins, user_models
from ui.common.presets import BY_NAME, listed, watch_for
from ui.figures import stepper as sv
from ui.figures import stepper_charts as sc
from ui.figures import stepper_html as sh
from ui.figures import stepper_state as vs
from ui.figures import subword_view
from ui.figures.common import NORM_LABELS, md
from ui.stepper import controller as ctl
from ui.stepper import ensemble_panel as ens
from ui.stepper import fusion_panel as fusion_ui
from ui.stepper import sampling, url
from ui.stepper import views_readout as sr
from ui.stepper.panels import (
    candidate_controls,
    candidate_panel,
    context_panel,
    energies_panel,
    export_section,
    log_panel,
    table_dialog,
    topk_panel,
    words_view,
)
from ui.stepper.phases_panel import phases_panel

SPEEDS = (2.0, 1.0, 0.5, 0.25)
NORMS = ("length", *(n for n in NORM_LABELS if n != "length"))  # the default first, as for the model
MODE_LABELS = {"greedy": "step it, force words", "beam": "beam search: its best hypothesis",
               "sample": "draw each word: temperature, top-k, top-p"}
TABS = ("This step's numbers", "Look · Generate · Update", "Why this word?", "Energies e_ij", "Bottleneck",
        "Event log", "Share and export")
HEATMAP_BOX = {False: 340, True: 400}  # px (normal, presentation): a taller heatmap scrolls inside its box
# (not in presentation mode: there every row stays in view of the page, issue 21)
SPEED_WIDTH = {False: 190, True: 265}  # px of the Play speed slider (presentation: its label beside it)
WIDE_MARGIN = 90  # px below a wide, short heatmap's rows: its labels, legend and a horizontal scrollbar
INTRO = ("RNNsearch (Bahdanau, Cho & Bengio, 2015) translates one word at a time. Before each word the decoder "
         "scores every source word (energies e_ij), turns the scores into weights α_ij and reads their weighted "
         "sum, the context c_i. Step through it and watch where it looks.")

ss = st.session_state


def sidebar(groups: list[models.ModelGroup]) -> models.ModelGroup:
    """Model picker, decoding mode and display settings; returns the chosen model group."""
    default = models.default_group(groups)
    # the default first: a bound control leaves its first option out of the URL
    names = [g.name for g in sorted(groups, key=lambda g: g is not default)]
    if ss.get("model") not in names:
        if ss.get("model"):
            st.sidebar.warning(f"Model “{md(ss['model'])}” is not in the checkpoint folder; showing the default.")
        ss["model"] = names[0]
    labels, rows = ctl.catalogue(groups)
    with st.sidebar:
        st.header("Model")
        st.selectbox("Checkpoint pair", names, key="model", **url.BOUND, on_change=ctl.on_setting, args=("model",),
                     format_func=user_models.labeller(groups),
                     help="RNNsearch and RNNencdec checkpoints paired by name in the checkpoint folder, then "
                          f"“{user_models.LABEL}”, the folder of your own models.")
        st.caption(md(labels[ss["model"]]))
        st.caption(md(models.origin({g.name: g for g in groups}[ss["model"]].members[0])), help=user_models.ORIGIN_HELP)
        note = models.search_note({g.name: g for g in groups}[ss["model"]].members[0])
        if note:  # an imported model steps by its toolkit's rules (nmt.decoding.toolkit), or by this app's
            st.caption(md(note) if not ss.get("app_rules") else "Decodes by this app's search rules.")
            st.toggle("This app's search rules", key="app_rules", **url.BOUND, on_change=ctl.on_setting,
                      args=("app_rules",), help="Decode this imported model by this app's length limit and beam "
                      "instead of its toolkit's (python -m nmt translate --app-rules does the same).")
        credit = twins.credit({g.name: g for g in groups}[ss["model"]])  # Tatoeba's CC-BY asks for it
        if credit:
            st.caption(md(credit))
        ens.toggle({g.name: g for g in groups}[ss["model"]])
        with st.expander("Checkpoints in the folder"):
            st.dataframe(rows, hide_index=True)
            st.caption(f"Folder: {md(shown(models.checkpoint_dir()))}")
            for line in checkpoint_files.notes(models.checkpoint_dir()):  # each file left out, once
                st.caption(md(line))
        user_models.folder_expander()
        st.header("Decoding")
        st.radio("Mode", list(MODE_LABELS), key="mode", **url.BOUND, captions=list(MODE_LABELS.values()),
                 on_change=ctl.on_setting, args=("mode",),
                 help="Greedy decoding can be stepped and forced; beam search runs once and the step "
                      "controls walk through its best hypothesis; sampling draws each word from the model's "
                      "distribution after temperature, top-k and top-p, reproducibly from its seed.")
        if ss["mode"] == "beam":
            st.slider("Beam size k", *vs.BEAM_RANGE, key="beam", **url.BOUND, on_change=ctl.on_setting, args=("beam",))
            toolkit = None if ss.get("app_rules") else search_rules.rules(
                {g.name: g for g in groups}[ss["model"]].members[0])  # an imported model: its toolkit's beam
            st.selectbox("Length normalisation", NORMS, key="norm", **url.BOUND, on_change=ctl.on_setting,
                         args=("norm",), disabled=toolkit is not None)
            st.caption(NORM_LABELS[ss["norm"]] if toolkit is None else search_rules.ranked_as(toolkit))
        if ss["mode"] == "sample":
            sampling.controls()
        candidate_controls()
        st.header("Display")
        st.toggle("Paper-style heatmap", key="paper", **url.BOUND, on_change=ctl.on_setting, args=("paper",),
                  help="Greyscale as in Fig. 3 of the paper: α = 0 black, α = 1 white.")
        st.toggle("Replace unknown words", key="unk", **url.BOUND, on_change=ctl.on_setting, args=("unk",),
                  help="When the model writes <unk>, look at the source word it attends to most (largest α_ij, "
                       "never </s>): show the model's dictionary translation of it, marked “dictionary”, or, "
                       "where the dictionary lacks it (names, numbers) or the model has none, the word itself, "
                       "marked “copied” (Jean et al., 2015).")
    return {g.name: g for g in groups}[ss["model"]]


def inputs(group: models.ModelGroup) -> None:
    """Title, presentation switch, preset picker, sentence box and the bottleneck toggle (named for what
    it shows with ``group``: its RNNencdec twin, or, without one, its own weights frozen)."""
    st.title("Step through decoding", help=INTRO)
    c = st.container(key="inputs").columns([1.5, 4, 1.9], vertical_alignment="bottom")  # wraps when narrow
    c[0].selectbox("Preset", [ctl.CUSTOM, *listed({g.name for g in user_models.all_groups()})], key="w_preset",
                   persist_state="session",
                   on_change=ctl.on_preset)
    c[1].text_area(models.source_label(group.search or group.encdec), key="text", **url.BOUND, height=68,
                   max_chars=vs.MAX_TEXT_CHARS,
                   on_change=ctl.on_text, placeholder="Type a sentence, e.g. A black dog is running on the grass.")
    with c[2]:
        twin = group.encdec is not None
        frozen_ok = twin or group.search is None or "fixed" in models.capabilities(group.search).context_modes
        st.toggle("Freeze c_i (RNNencdec)" if twin else "Freeze c_i (untrained ablation)", key="freeze",
                  **url.BOUND, on_change=ctl.on_setting, args=("freeze",), disabled=not frozen_ok,
                  help="Off: RNNsearch computes a fresh context c_i = Σ_j α_ij h_j for every target word. "
                       + ("On: the RNNencdec twin, whose every target word reads one fixed summary c = [→h_Tx; ←h_1]."
                          if twin else "On: this pair has no RNNencdec twin of its own, so its RNNsearch weights "
                          "read one fixed summary c = [→h_Tx; ←h_1] at every word, as they were never trained to."
                          if frozen_ok else "Not for this model: it attends after its recurrent step (Luong et al. "
                          "2015) and has no fixed-context mode to freeze c_t to."))
        with st.popover("Advanced", icon=":material/tune:"):
            st.checkbox("Apply the freeze to the RNNsearch weights themselves (untrained ablation)",
                        key="ablation", **url.BOUND, on_change=ctl.on_setting, args=("ablation",),
                        help="Instead of the RNNencdec trained with a fixed c, decode the RNNsearch model with "
                             "c_i frozen to the summary c. It was never trained that way, so its output shows "
                             "what attention was doing for it.")


def watch() -> None:
    """The preset's one line on what to watch, for the toggle as it is now."""
    preset = BY_NAME.get(ss["w_preset"])
    if preset is not None:
        (st.markdown if ss["present"] else st.caption)(f"**Watch:** {md(watch_for(preset, bool(ss['freeze'])))}")


def controls(done: bool) -> None:
    """Reset, back, step, play/pause, run to end, and the play speed: one row that wraps."""
    at_start, playing = ss["pos"] == 0, bool(ss.get("playing"))
    with st.container(horizontal=True, vertical_alignment="center", gap="small"):
        st.button("Reset", key="btn_reset", icon=":material/first_page:", on_click=ctl.on_reset,
                  disabled=at_start and not ss["plan"])
        st.button("Back", key="btn_back", icon=":material/chevron_left:", on_click=ctl.on_back, disabled=at_start,
                  shortcut="Left", help="Key: ← or PageUp")  # a clicker: ← / PageUp, → / PageDown (clicker_keys)
        st.button("Step", key="btn_step", icon=":material/chevron_right:", on_click=ctl.on_step, disabled=done,
                  type="primary", shortcut="Right", help="Key: → or PageDown")
        st.button("Pause" if playing else "Play", key="btn_play",
                  icon=":material/pause:" if playing else ":material/play_arrow:", on_click=ctl.on_play,
                  disabled=done and not playing, shortcut="P", help="Key: P")
        st.button("Run to end", key="btn_run", icon=":material/last_page:", on_click=ctl.on_run, disabled=done)
        # labelled above the slider; in presentation mode beside it (sh.page_css), so the row stays as
        # low as the buttons and 12 words fit 720 px (issue 21: every control labelled)
        st.select_slider("Play speed", SPEEDS, key="w_speed", persist_state="session",
                         format_func=lambda s: f"{s:g} s / word", width=SPEED_WIDTH[bool(ss["present"])],
                         help="Seconds between words while Play runs.")
        if ss["present"]:  # the numbers tab is gone: its table is one key (T) or click away, over the page
            st.button("Table (T)", key="btn_table", shortcut="T", icon=":material/table:", on_click=ctl.on_table,
                      help="This step's energies e_ij and weights α_ij")
        st.toggle("Presentation", key="present", **url.BOUND, on_change=ctl.on_setting, args=("present",),
                  help="For a projector: larger type, the sidebar collapsed, no secondary panels (Esc leaves it).")
    clicker_keys(at_start, done)


def leave_presentation() -> None:
    """Esc: presentation mode off, as if its toggle were clicked."""
    ss["present"] = False
    ctl.on_setting("present")


def clicker_keys(at_start: bool, done: bool) -> None:
    """A presenter's clicker sends PageDown / PageUp (Step / Back) and Esc (leave presentation): hidden
    buttons (``sh.page_css`` hides their container) whose shortcuts still work."""
    with st.container(key="stepper_clicker"):
        st.button("PageDown", key="btn_pgdn", shortcut="PageDown", on_click=ctl.on_step, disabled=done)
        st.button("PageUp", key="btn_pgup", shortcut="PageUp", on_click=ctl.on_back, disabled=at_start)
        if ss["present"]:
            st.button("Leave presentation", key="btn_esc", shortcut="Esc", on_click=leave_presentation)


def bottleneck_panel(group: models.ModelGroup, text: str, upto: int | None, look: sc.Look, key: str,
                     compact: bool = False) -> None:
    """Both sides of the toggle on this sentence (and a twinless pair's stand-in): their translations and,
    unless ``compact`` (a projector), how far c_i moves."""
    pair = ctl.bottleneck_pair(group, text)
    if pair is None:
        st.caption("This model group has no twin on the other side of the toggle to compare with.")
        return
    series, colours, fixed = pair
    (la, wa, _), (lb, wb, _), *more = series
    st.html(sh.compare_html(la, wa, lb, wb, big=look.present, colours=colours, more=[(m[0], m[1]) for m in more]))
    if any("<unk>" in words for (_, words, _), frozen in zip(series, fixed, strict=True) if frozen):
        st.caption("A model reading one fixed c attends to no source word, so its <unk> cannot be replaced "
                   "from the dictionary: it stays as written.")
    if compact:
        return
    st.altair_chart(sc.drift_chart(series, look, upto, colours), width="stretch", height=210, key=f"drift_{key}")
    st.caption(("Boxed words appear in one of the first two translations only, or, in the third, are missing "
                "from the first. " if more else "Boxed words appear in one translation only. ")
               + "The chart, in the same colours: how far each word's context c_i is from the first word's c_0. "
               "RNNsearch reads a new mix of the source for every word; the fixed summary c is one vector, so "
               "its line stays at 0 by construction.")


def alignment(trace: DecodeTrace, latest: int | None, nonce: str, look: sc.Look, group: models.ModelGroup,
              text: str, pieces: str | None = None) -> int | None:
    """The rows as the trace decided (the α heatmap, or the frozen summary band); returns the step clicked.
    ``pieces``: a subword model's kind, whose heatmap may show words (:mod:`ui.figures.subword_view`)."""
    spans = None
    if pieces and trace.picture == "alpha" and words_view(look):
        trace, spans = subword_view.words_trace(trace, pieces)
        latest = len(trace.steps) - 1 if trace.steps else None
    # the room left under the source words: less for each extra line of them
    box = max(200, HEATMAP_BOX[look.present] - (sh.chip_lines(trace.src_tokens, look.present) - 1)
              * sh.CHIP_ROW[look.present][3])
    height = sc.heatmap_height(trace, look)
    tall = height > box and not look.present  # on a projector no row hides in a scrolling box: the page scrolls
    wide = len(trace.src_tokens) > sc.FIT_MAX_SOURCE  # its columns keep their width: it scrolls sideways
    chart = sr.rows_chart(trace, latest=latest, look=look, labels_below=tall)
    if chart is None:
        st.caption("The α heatmap grows one row per step: press Step.")
        return None
    # A fixed height makes a scrolling box: needed when the chart is taller than the box, and also
    # when it is wider than the column (else its last source words are cut off, unreachable).
    fixed = box if tall else (height + WIDE_MARGIN if wide else "content")
    with st.container(height=fixed, border=False, autoscroll=True):
        ev = st.vega_lite_chart(*sc.arrow_rows(chart), key=f"alpha_{nonce}", on_select="rerun",  # cells as Arrow
                                width="content" if wide else "stretch")
    if not look.present:
        unit = "pieces" if pieces and spans is None else "words"  # a subword model's heatmap of pieces
        st.caption(f"Rows: target {unit} (* = forced); columns: source {unit}; " + (
            "darker = more attention." if trace.picture == "alpha" else
            "every row is the same band: each word reads the one summary c, so there is no α to draw.")
            + " Click a row to look at that step, double-click to clear.")
        if trace.picture == "summary":
            st.markdown("**What the one summary costs on this sentence:**")
            bottleneck_panel(group, text, latest, look, nonce)
    elif trace.picture == "summary" and ctl.stand_in_note(group, ctl.frozen_choice(group)):
        bottleneck_panel(group, text, latest, look, nonce, compact=True)  # what the warning and Watch line promise
    return sc.selected_step(ev) if spans is None else subword_view.step_of_row(sc.selected_step(ev), spans)


def secondary(lm: LoadedModel, trace: DecodeTrace, step: StepRecord | None, choice: models.Choice,
              group: models.ModelGroup, text: str, look: sc.Look, nonce: str) -> None:
    """The tabs under the stepper; only the open one is built. ``lm`` is the session's model (one
    checkpoint, an ensemble or a fusion): every tab asks it, none loads another."""
    tabs = st.tabs(list(TABS), key="w_tab", on_change="rerun")
    if tabs[0].open:
        with tabs[0]:
            if step is not None:
                context_panel(trace, step, choice, lm.model.capabilities.gaussian_half_width())
            else:
                st.caption("Nothing decoded yet.")
    if tabs[1].open:
        with tabs[1]:
            phases_panel(lm, trace, None if step is None else step.i)
    if tabs[2].open:
        with tabs[2]:
            from ui.common import contrast_panel  # here: it needs scipy (attribution), the rest of the stepper does not

            contrast_panel.panel(lm, trace, step, trace.context, "sp_")
    if tabs[3].open:
        with tabs[3]:
            energies_panel(trace, choice, look, nonce)
    if tabs[4].open:
        with tabs[4]:
            if trace.picture != "summary":
                bottleneck_panel(group, text, len(trace.steps) - 1 if trace.steps else None, look, "tab" + nonce)
            else:
                st.caption("Shown above, under the summary band.")
    if tabs[5].open:
        with tabs[5]:
            log_panel()
    if tabs[6].open:
        with tabs[6]:
            export_section(trace, look, group)


def decoding_view(lm: LoadedModel, choice: models.Choice, text: str, group: models.ModelGroup) -> None:
    """Everything below the inputs; runs as a fragment so a step redraws only this part."""
    want = ss["w_speed"] if ss.get("playing") else None
    if want != ss.get("_timer") or ss["present"] != ss.get("_present_drawn"):
        ss["_play_clock"] = None  # a new pace starts from here
        st.rerun()  # a full run registers (or drops) the play timer, or redraws the page for presentation
    if ss.get("playing"):
        now = time.monotonic()
        clock = ss.get("_play_clock") or (ss["pos"], now)
        ss["_play_clock"] = clock
        ss["pos"] = vs.play_position(ss["pos"], clock, now, float(ss["w_speed"]))
    beam = ss["mode"] == "beam"
    trace, done, limit = ctl.materialize(lm, choice, text)
    if ss.get("playing") and done:
        ss["playing"] = False
        ctl.log_event("model", "reached the end; playback stopped")
        url.write_position()
        st.rerun()
    look = ctl.look()
    controls(done)
    nonce = ctl.nonce(choice, trace)
    latest = len(trace.steps) - 1 if trace.steps else None
    swaps = ctl.replacements(trace)
    line = st.container()  # the readout line and the source words, full width above both columns (one line of
    # words for a 15-word sentence, so the heatmap below fits a projector): filled once the step is known
    left, right = st.columns([1.8, 1], gap="medium")
    with left:
        clicked = alignment(trace, latest, nonce, look, group, text, lm.subword)
        if not look.present:
            watch()
            st.caption(sv.status_markdown(trace, done, limit, choice.label, choice.file_names))
        fusion_slot = st.container()  # the LM's top-k beside the TM's, when fused (filled below)
    cur = clicked if clicked is not None and 0 <= clicked < len(trace.steps) else latest
    step = trace.steps[cur] if cur is not None else None
    swap = swaps.get(cur) if cur is not None else None
    copied = swap.word if swap else None
    if ss.pop("_show_table", False) and step is not None:
        table_dialog(trace, step, choice, lm.model.capabilities.gaussian_half_width())
    note = sr.first_word_note(trace, step, copied)
    line.html(sr.readout_html(trace, step, copied, big=look.present)
              + (sh.note_html(note, look.present) if note else "")
              + sh.source_html(trace, step, paper=look.paper, big=look.present, heading=False))
    with left:
        ens.panel(lm, trace, step, look, nonce)  # an ensemble's members beside it (nothing for one model)
    with right:
        st.html(sh.translation_html(trace, cur, swaps, big=look.present))
        if trace.steps and not look.present:
            st.caption(f"Detokenised: {md(ctl.translation_text(lm, trace)) or '—'}")
        candidate_panel(trace, look.present)
        st.html(sh.now_writing_html(step, len(trace.steps), ended=ctl.ended(trace, done),
                                    swap=swap, big=look.present))
        if look.present:
            watch()  # beside the heatmap: below it, it would push a projector's page into scrolling
        if cur != latest:
            st.button("Follow the latest step", key=f"follow_{nonce}", on_click=ctl.on_follow,
                      icon=":material/arrow_downward:")
        if step is not None and not look.present:
            topk_panel(step, beam, nonce)
            if ss["mode"] == "sample":
                sampling.panel(step)
    if ss["mode"] == "sample" and not look.present:
        sampling.translation_table(lm, choice, text)
    if not look.present:
        with fusion_slot:
            fusion_ui.panel(lm, trace, cur)
        paper_panel.expander(trace, choice.label)  # on the paper's Fig. 3(a) sentence only, full width
        secondary(lm, trace, step, choice, group, text, look, nonce)
    url.write_position()


def main() -> None:
    """The stepper page."""
    ctl.init_session()
    url.restate_controls()
    ss["_present_drawn"] = ss["present"]
    st.html(sh.page_css(ss["present"]))
    directory = models.checkpoint_dir()
    groups = user_models.all_groups()
    if not groups:
        st.title("Step through decoding")
        st.error(f"No checkpoints found in {md(shown(directory))}.")
        st.markdown(sv.no_checkpoints_markdown(models.ENV_VAR))
        for line in checkpoint_files.notes(directory):  # a folder of bad files only: why each was left out
            st.caption(md(line))
        return
    group = sidebar(groups)
    inputs(group)
    if ctl.typed_note():
        st.caption(md(ctl.typed_note()))
    choice = ens.resolve(group, models.resolve(group, ss["freeze"], ss["ablation"]))
    if choice.notice:
        st.warning(md(choice.notice + ctl.stand_in_note(group, choice)))
    lm = ens.load_lm(choice)  # a damaged or foreign file: one line; a file with no digest: a warning
    if lm is None:
        url.write_position()
        return
    lm = fusion_ui.sidebar(lm, choice.ckpt)  # the TM, or fused with a language model (when one fits)
    text = ss["text"]
    try:
        if ss["mode"] == "beam":
            src_trace = ctl.get_beam(lm, choice, text, ss["beam"], ss["norm"])[0]
        else:
            src_trace = ctl.get_stepper(lm, choice, text)[0].trace
    except InputError as e:
        st.warning(md(str(e)), icon=":material/edit:")
        st.caption("Pick a preset or type an English sentence above.")
        ss["pos"] = 0
        url.write_position()
        return
    if src_trace.truncated:
        st.warning(f"The sentence is long: only its first {ctl.MAX_SRC_TOKENS} tokens are translated "
                   f"(it has {len(lm.src_tok.tokenize(text))}).")
    ss["_timer"] = ss["w_speed"] if ss.get("playing") else None
    # guarded: the fragment's own reruns (each Step, the play timer) run outside the page's boundary
    st.fragment(run_every=ss["_timer"])(shell.guarded("Step through decoding", decoding_view))(lm, choice, text, group)


main()
url.sync_once()
