"""Step through decoding: watch RNNsearch write a translation one word at a time.

For every target word the page shows what the decoder read: the energies e_ij and weights α_ij
over the source words (their sum, entropy and the most-weighted word), the top-k next words (click
one to force it), the α heatmap so far, and an event log. The bottleneck toggle swaps in the
RNNencdec twin, whose every word reads one fixed summary c, or (advanced) freezes the RNNsearch
weights themselves. The view lives in the URL, and the trace and heatmap can be downloaded.

The page only reads traces from :mod:`nmt.decoding`; each session keeps its own
:class:`~nmt.decoding.Stepper` in ``st.session_state`` while the model is shared by all.
"""

from __future__ import annotations

from typing import Any
from urllib.parse import urlencode

import streamlit as st

from nmt.checkpoint import CheckpointError, LoadedModel
from nmt.corpora import shown
from nmt.decoding import InputError
from nmt.trace import DecodeTrace, StepRecord
from ui import models, shell
from ui import stepper_controller as ctl
from ui.presets import BY_NAME
from ui.views import stepper_state as vs
from ui.views.common import chart_png, chart_svg, esc, md
from ui.views.stepper import (
    context_norm_chart,
    heatmap,
    now_writing_html,
    selected_step,
    source_html,
    source_table,
    step_stats,
    trace_csv,
    trace_json,
    translation_html,
)

SPEEDS = (2.0, 1.0, 0.5, 0.25)
ALIGN_TABS = ("α_ij heatmap", "Energies e_ij", "‖c_i‖ per step")
MODE_LABELS = {"greedy": "Greedy (step, force words)", "beam": "Beam search (best hypothesis)"}
NORM_LABELS = {"length": "divide by length", "none": "none", "gnmt": "GNMT length penalty"}

ss = st.session_state

# Inputs
# ----------------------------------------------------------------------------------------------


def no_checkpoints(directory: Any) -> None:
    """The message shown when the checkpoint folder holds no model."""
    st.error(f"No checkpoints found in {md(shown(directory))}.")
    st.markdown(
        "Train a model and copy it there, for example:\n\n"
        "```bash\n"
        "python train.py --config configs/m30k-en-fr-rnnsearch.toml --data data/multi30k\n"
        "python train.py --config configs/m30k-en-fr-rnnencdec.toml --data data/multi30k\n"
        "cp runs/m30k-en-fr-rnnsearch/best.pt checkpoints/m30k-en-fr-rnnsearch.pt\n"
        "cp runs/m30k-en-fr-rnnencdec/best.pt checkpoints/m30k-en-fr-rnnencdec.pt\n"
        "```\n\n"
        f"or point the environment variable `{models.ENV_VAR}` at a folder of `.pt` checkpoints. "
        "An RNNsearch and an RNNencdec are paired by name: `<name>-rnnsearch.pt` / `<name>-rnnencdec.pt`."
    )


def sidebar(groups: list[models.ModelGroup]) -> models.ModelGroup:
    """Model picker and decoding mode; returns the chosen model group."""
    names = [g.name for g in groups]
    if ss.get("w_model") not in names:
        if ss.get("w_model"):
            st.sidebar.warning(f"Model “{md(ss['w_model'])}” is not in the checkpoint folder; "
                               "showing the default.")
        default = models.default_group(groups)
        ss["w_model"] = default.name if default else names[0]
    by_name = {g.name: g for g in groups}
    with st.sidebar:
        st.header("Model")
        st.selectbox("Checkpoint pair", names, key="w_model",
                     format_func=lambda n: models.group_label(by_name[n]),
                     on_change=ctl.on_setting, args=("model",),
                     help="RNNsearch and RNNencdec checkpoints paired by name in the checkpoint folder.")
        with st.expander("Checkpoints in the folder"):
            rows = [models.describe(c) for g in groups for c in g.members]
            st.dataframe(rows, hide_index=True)
            st.caption(f"Folder: {md(shown(models.checkpoint_dir()))}")
        st.header("Decoding")
        st.radio("Mode", list(MODE_LABELS), key="w_mode", format_func=MODE_LABELS.__getitem__,
                 on_change=ctl.on_setting, args=("mode",),
                 help="Greedy decoding can be stepped and forced; beam search shows its best "
                      "hypothesis, which the step controls walk through.")
        if ss["w_mode"] == "beam":
            st.slider("Beam size k", *vs.BEAM_RANGE, key="w_beam", on_change=ctl.on_setting, args=("beam",))
            st.selectbox("Length normalisation", list(NORM_LABELS), key="w_norm",
                         format_func=NORM_LABELS.__getitem__, on_change=ctl.on_setting, args=("norm",))
    return by_name[ss["w_model"]]


def inputs() -> None:
    """Preset picker, sentence box and the bottleneck toggle."""
    left, right = st.columns([2, 5])
    with left:
        st.selectbox("Preset", [ctl.CUSTOM, *BY_NAME], key="w_preset", on_change=ctl.on_preset)
        preset = BY_NAME.get(ss["w_preset"])
        if preset is not None:
            st.caption(f"**Watch:** {md(preset.watch)}")
    with right:
        st.text_area("Source sentence (English)", key="w_text", height=90, max_chars=vs.MAX_TEXT_CHARS,
                     on_change=ctl.on_text, placeholder="Type a sentence, e.g. A black dog is running on the grass.")
    t1, t2 = st.columns([2, 5])
    with t1:
        st.toggle("Freeze c_i (RNNencdec setting)", key="w_freeze", on_change=ctl.on_setting, args=("freeze",),
                  help="Off: RNNsearch computes a fresh context c_i = Σ_j α_ij h_j for every target word. "
                       "On: every target word reads the same fixed summary c = [→h_Tx; ←h_1].")
    with t2, st.expander("Advanced: what freezing means"):
        st.checkbox("Apply the freeze to the RNNsearch weights themselves (untrained ablation)",
                    key="w_ablation", on_change=ctl.on_setting, args=("ablation",),
                    help="Instead of the RNNencdec trained with a fixed c, decode the RNNsearch model "
                         "with c_i frozen to the summary c. It was never trained that way, so its "
                         "output shows what attention was doing for it.")




def controls(done: bool, beam: bool) -> None:
    """Reset, back, step, play/pause, run to end, and the play speed."""
    c = st.columns([1, 1, 1, 1, 1.3, 2.2], vertical_alignment="bottom")
    at_start = ss["pos"] == 0
    c[0].button("Reset", key="btn_reset", icon=":material/first_page:", on_click=ctl.on_reset,
                disabled=at_start and not ss["plan"], width="stretch")
    c[1].button("Back", key="btn_back", icon=":material/chevron_left:", on_click=ctl.on_back, disabled=at_start,
                width="stretch")
    c[2].button("Step", key="btn_step", icon=":material/chevron_right:", on_click=ctl.on_step, disabled=done,
                type="primary", width="stretch")
    playing = bool(ss.get("playing"))
    c[3].button("Pause" if playing else "Play", key="btn_play",
                icon=":material/pause:" if playing else ":material/play_arrow:", on_click=ctl.on_play,
                disabled=done and not playing, width="stretch")
    c[4].button("Run to end", key="btn_run", icon=":material/last_page:", on_click=ctl.on_run, disabled=done,
                width="stretch")
    c[5].select_slider("Play speed", SPEEDS, key="w_speed", format_func=lambda s: f"{s:g} s / word")
    if beam:
        st.caption("Beam mode: the controls walk through the beam's best hypothesis, word by word.")


def status_line(trace: DecodeTrace, done: bool, limit: int, choice: models.Choice) -> None:
    """Where decoding stands, with which model and which kind of context."""
    n = len(trace.steps)
    if trace.method == "beam":
        end = f"of the beam's best hypothesis ({limit} words)"
    else:
        end = "finished (</s>)" if trace.finished else ("stopped at the length limit" if done else f"at most {limit}")
    st.caption(f"**{n}** target word{'s' if n != 1 else ''} written, {md(end)} · "
               f"{md(choice.label)} · checkpoint {md(choice.ckpt.name)}")


def alignment_tabs(trace: DecodeTrace, latest: int | None, nonce: str) -> tuple[int | None, Any]:
    """The α / energy heatmaps and the ‖c_i‖ chart; returns the step clicked and the α chart.

    Tabs are lazy: only the open tab's chart is built and sent (a chart costs tens of ms per step).
    The α chart object is always built, for the downloads."""
    tabs = st.tabs(list(ALIGN_TABS), key="w_align_tab", on_change="rerun")
    clicked: int | None = None
    alpha_chart = heatmap(trace, "alpha", latest=latest)
    with tabs[0]:
        if not tabs[0].open:
            pass
        elif alpha_chart is not None:
            ev = st.altair_chart(alpha_chart, key=f"alpha_{nonce}", on_select="rerun", width="content")
            clicked = selected_step(ev)
            st.caption("Rows: target words (* = forced); columns: source words. Hover a cell for "
                       "(i, j, α, e); click a cell to look at that step; double-click to clear.")
        elif trace.steps and not trace.has_alignment:
            st.info("**No alignment to draw.** Every target word reads the same fixed summary vector "
                    "c = [→h_Tx; ←h_1], so there is no α_ij. What there is to see: the context's norm "
                    "‖c_i‖ stays flat from word to word, while the decoder state s_(i-1) moves on.")
            flat = context_norm_chart(trace)
            if flat is not None:
                st.altair_chart(flat, width="stretch", key=f"flat_{nonce}")
        else:
            st.caption("The heatmap grows one row per step: press Step.")
    with tabs[1]:
        energy_chart = heatmap(trace, "energy", latest=latest) if tabs[1].open else None
        if not tabs[1].open:
            pass
        elif energy_chart is not None:
            ev = st.altair_chart(energy_chart, key=f"energy_{nonce}", on_select="rerun", width="content")
            clicked = clicked if clicked is not None else selected_step(ev)
            st.caption("e_ij = v_aᵀ tanh(W_a s_(i-1) + U_a h_j): the alignment model's score before the "
                       "softmax that turns each row into α_i·.")
        elif trace.steps:
            st.info("No energies: " + ("c_i is a fixed summary, so no alignment model runs."
                                       if not trace.has_alignment else
                                       "the mean context uses uniform weights, with no alignment model."))
        else:
            st.caption("Nothing decoded yet.")
    with tabs[2]:
        norm_chart = context_norm_chart(trace) if tabs[2].open else None
        if not tabs[2].open:
            pass
        elif norm_chart is not None:
            st.altair_chart(norm_chart, width="stretch")
            st.caption("‖c_i‖ moves with attention; with a frozen context it is the same number at every step.")
        else:
            st.caption("Nothing decoded yet.")
    return clicked, alpha_chart


def context_panel(trace: DecodeTrace, step: StepRecord, choice: models.Choice) -> None:
    """What c_i was at the shown step: the α table, or the fixed/mean explanation."""
    table = source_table(trace, step)
    if step.alpha is None:
        kind = ("**Untrained ablation.** These are RNNsearch's weights with c_i frozen to the summary c "
                "it was never trained to read: what changes shows what attention was doing.\n\n"
                if choice.kind == "ablation" else "")
        st.info(f"{kind}**No alignment: every step reads the same summary vector** c = [→h_Tx; ←h_1] "
                f"(the encoder's last forward and first backward states). ‖c_i‖ = {step.context_norm:.3f} "
                "at every step; there are no α_ij or e_ij to show.")
        return
    stats = step_stats(trace, step)
    if step.energies is None:
        st.info("**Mean context:** α is uniform (1/T_x) by construction, so c_i is the same average of "
                "the annotations at every step; no energies are computed.")
    assert table is not None
    st.dataframe(
        table, hide_index=True, width="stretch",
        column_config={
            "j": st.column_config.NumberColumn("j", width="small"),
            "source word": st.column_config.TextColumn("source word x_j"),
            "read as": st.column_config.TextColumn(
                "read as", help=f"Words outside the vocabulary are read as {md('<unk>')}"),
            "e_ij": st.column_config.NumberColumn("energy e_ij", format="%.3f"),
            "α_ij": st.column_config.ProgressColumn("weight α_ij", format="%.3f", min_value=0.0, max_value=1.0),
            "most": st.column_config.TextColumn("max", width="small"),
        },
        height=min(38 + 35 * len(table), 420),
    )
    m = st.columns(3)
    m[0].metric("Σ_j α_ij", f"{stats['sum']:.2f}")
    m[1].metric("entropy of α_i", f"{stats['entropy']:.2f} nats",
                help=f"0 = all weight on one word; ln T_x = {stats['max_entropy']:.2f} = spread evenly.")
    m[2].html(f'<div style="font-size:.9rem;opacity:.8">most weight</div>'
              f'<div style="font-size:1.5rem">{esc(stats["word"])}</div>'
              f'<div style="font-size:.9rem">α = {stats["weight"]:.2f}</div>')


def topk_panel(step: StepRecord, beam: bool, nonce: str) -> None:
    """The shown step's candidates; clicking one forces it there and continues from it."""
    st.markdown(f"**Top-{len(step.topk)} candidates at step {step.i}**")
    for rank, (word, p) in enumerate(step.topk):
        chosen = word == step.token
        b, bar = st.columns([2, 3], vertical_alignment="center")
        b.button(("✓ " if chosen else "") + md(word), key=f"force_{nonce}_{rank}", on_click=ctl.on_force,
                 args=(step.i, word),
                 disabled=beam or chosen, type="primary" if chosen else "secondary", width="stretch",
                 help="The word written" if chosen else f"Force “{word}” at step {step.i} and continue from it")
        bar.progress(min(1.0, max(0.0, p)), text=f"{p:.1%}")
    if step.token not in [w for w, _ in step.topk]:
        st.caption(f"Written: {md(step.token)} (p = {step.prob:.3f}), outside the top-{len(step.topk)}.")
    st.caption("Forcing works in greedy mode." if beam else
               "Click a word to force it at this step; decoding continues from it.")


def export_section(trace: DecodeTrace, chart: Any, group: models.ModelGroup) -> None:
    """Downloads of the heatmap and the trace, and the shareable link of this view."""
    st.subheader("Share and export")
    base = f"rnnsearch-{trace.context}-{len(trace.steps)}w"
    c = st.columns(4)
    c[0].download_button("Heatmap PNG", data=(lambda ch=chart: chart_png(ch)) if chart is not None else b"",
                         file_name=f"{base}.png", mime="image/png", disabled=chart is None, key="dl_png",
                         icon=":material/image:", on_click="ignore")
    c[1].download_button("Heatmap SVG", data=(lambda ch=chart: chart_svg(ch)) if chart is not None else "",
                         file_name=f"{base}.svg", mime="image/svg+xml", disabled=chart is None, key="dl_svg",
                         icon=":material/draw:", on_click="ignore")
    c[2].download_button("Trace JSON", data=trace_json(trace), file_name=f"{base}.json",
                         mime="application/json", key="dl_json", icon=":material/data_object:", on_click="ignore")
    c[3].download_button("Trace CSV", data=trace_csv(trace), file_name=f"{base}.csv", mime="text/csv",
                         key="dl_csv", icon=":material/table:", on_click="ignore")
    query = urlencode(vs.view_to_query(ctl.current_view(group)), doseq=True)
    url = (st.context.url or "").split("?")[0]
    st.caption("Link to this view (sentence, model, mode, toggle, forced words and step):")
    st.code(f"{url}?{query}", language=None, wrap_lines=True)


def decoding_view(lm: LoadedModel, choice: models.Choice, text: str, group: models.ModelGroup) -> None:
    """Everything below the inputs; runs as a fragment so a step redraws only this part."""
    want = ss["w_speed"] if ss.get("playing") else None
    if want != ss.get("_timer"):
        st.rerun()  # a full run registers (or drops) the play timer
    if ss.get("playing"):
        ss["pos"] = ss["pos"] + 1
    beam = ss["w_mode"] == "beam"
    trace, done, limit = ctl.materialize(lm, choice, text)
    if ss.get("playing") and done:
        ss["playing"] = False
        ctl.log_event("model", "reached the end; playback stopped")
        ctl.write_query(group)
        st.rerun()

    controls(done, beam)
    status_line(trace, done, limit, choice)
    nonce = f"{choice.kind}{int(beam)}_{len(trace.steps)}_{abs(hash(tuple(s.token_id for s in trace.steps))) % 10**8}" \
            f"_{ss['sel_epoch']}"
    latest = len(trace.steps) - 1 if trace.steps else None
    top = st.container()
    clicked, alpha_chart = alignment_tabs(trace, latest, nonce)
    shown = clicked if clicked is not None and 0 <= clicked < len(trace.steps) else latest

    with top:
        st.markdown("**Translation so far**")
        st.html(translation_html(trace, shown))
        if trace.steps:
            st.caption(f"Detokenised: {md(trace.translation) or '—'}")
        step = trace.steps[shown] if shown is not None else None
        left, right = st.columns([3, 2], gap="large")
        with left:
            st.html(now_writing_html(step, shown == latest))
            if shown != latest:
                st.button("Follow the latest step", key=f"follow_{nonce}", on_click=ctl.on_follow,
                          icon=":material/arrow_downward:")
            st.markdown("**Source words** (shaded by α_ij of this step)")
            st.html(source_html(trace, step))
            if step is not None:
                context_panel(trace, step, choice)
        with right:
            if step is not None:
                topk_panel(step, beam, nonce)
    with st.expander("Event log", expanded=True):
        log = list(reversed(ss["log"]))
        st.dataframe(log, hide_index=True, width="stretch", height=min(38 + 35 * len(log), 280),
                     column_config={"#": st.column_config.NumberColumn(width=45),
                                    "who": st.column_config.TextColumn(width=60),
                                    "step": st.column_config.NumberColumn("words", width=55),
                                    "what": st.column_config.TextColumn(width=900)})
    export_section(trace, alpha_chart, group)
    ctl.write_query(group)


# ----------------------------------------------------------------------------------------------
# The page
# ----------------------------------------------------------------------------------------------


def notices(trace: DecodeTrace, raw_tokens: int | None) -> None:
    """Truncation and out-of-vocabulary notices for the source sentence."""
    if trace.truncated:
        st.warning(f"The sentence is long: only its first {ctl.MAX_SRC_TOKENS} tokens are translated"
                   + (f" (it has {raw_tokens})." if raw_tokens else "."))
    unk = [w for w, u in zip(trace.src_tokens, trace.src_unk) if u]
    if unk:
        shown = ", ".join(md(w) for w in dict.fromkeys(unk))
        st.info(f"{len(unk)} source token{'s are' if len(unk) != 1 else ' is'} outside the model's vocabulary "
                f"and read as {md('<unk>')} (marked in red): {shown}", icon=":material/help:")


def main() -> None:
    """The stepper page."""
    ctl.init_session()
    ctl.keep_widget_values()
    st.title("Step through decoding")
    st.caption("RNNsearch (Bahdanau, Cho & Bengio, 2015) translates one word at a time. Before each word "
               "the decoder scores every source word (energies e_ij), turns the scores into weights α_ij and "
               "reads their weighted sum, the context c_i. Step through it and watch where it looks.")
    directory = models.checkpoint_dir()
    groups = models.scan(directory)
    if not groups:
        no_checkpoints(directory)
        return
    group = sidebar(groups)
    inputs()
    choice = models.resolve(group, ss["w_freeze"], ss["w_ablation"])
    if choice.notice:
        st.warning(md(choice.notice))
    try:
        lm = models.load(choice.ckpt)
    except CheckpointError as e:  # a damaged or foreign file: say so in one line
        st.error(md(str(e)), icon=":material/error:")
        ctl.write_query(group)
        return
    text = ss["w_text"]
    try:
        if ss["w_mode"] == "beam":
            src_trace = ctl.get_beam(lm, choice, text, ss["w_beam"], ss["w_norm"])[0]
        else:
            src_trace = ctl.get_stepper(lm, choice, text)[0].trace
    except InputError as e:
        st.warning(md(str(e)), icon=":material/edit:")
        st.caption("Pick a preset or type an English sentence above.")
        ss["pos"] = 0
        ctl.write_query(group)
        return
    raw = len(lm.src_tok.tokenize(text)) if src_trace.truncated else None
    notices(src_trace, raw)
    ss["_timer"] = ss["w_speed"] if ss.get("playing") else None
    st.fragment(run_every=ss["_timer"])(decoding_view)(lm, choice, text, group)


with shell.page("Step through decoding"):
    main()
