"""Watch it learn: the alignment emerging during training, scrubbed like a video (issue 23).

Reads the training timelines in the checkpoint folder (``NAME.timeline.npz``, recorded by
``train.py --timeline``, :mod:`nmt.training.timeline`): drag the slider or press Play to move through the
recorded updates; the chosen sentence's α goes from a uniform blur to a diagonal, its translation
changes word by word (changed words highlighted), and the loss / BLEU / AER / α-entropy curves
show a cursor at the current update, RNNsearch and RNNencdec side by side. No model is loaded.
Controls are bound to URL query parameters (``wl_*``). Reading the timelines: :mod:`ui.timeline.jobs`; session
state: :mod:`ui.timeline.state`; drawing: :mod:`ui.timeline.views`.
"""

from __future__ import annotations

from ui.common import shell

shell.framed()  # a page Streamlit started on its own (a fresh server's first request) runs in the frame

import streamlit as st

from ui.common import shell
from ui.common import widgets as W
from ui.figures.common import FONT, csv_text, md
from ui.figures.stepper_html import page_css
from ui.timeline import jobs
from ui.timeline import state as S
from ui.timeline import views as V
from ui.timeline.jobs import Timeline

BIND = W.BIND
PLAY_SECONDS = 1.2
HOW_TO = (
    "Record one with `train.py --timeline` (it writes `timeline.npz` beside `last.pt`), e.g. "
    "`scripts/timeline_m30k.sh` for the Multi30k pair, and copy it into the checkpoint folder as "
    "`NAME-rnnsearch.timeline.npz` / `NAME-rnnencdec.timeline.npz`.")


def model_column(name: str, tl: Timeline, update: int, probe: int, present: bool) -> None:
    """One model at the current update: translation (changes marked), α heatmap, numbers."""
    entry = V.at_or_before(tl, update)
    st.markdown(f"#### :{'blue' if V.has_alpha(tl) else 'orange'}[{md(name)}]")
    with st.container(border=True):
        st.markdown(("### " if present else "") + V.translation_markdown(tl, update, probe))
    if entry is not None:
        st.caption(md(V.numbers_line(tl, entry["update"], probe)), help="Training loss on a fixed sample of "
                   "training pairs (nats per word), greedy BLEU on a fixed sample of validation sentences, and "
                   "H(α_i) / log T_x of this sentence: 1 = uniform over the source, 0 = all weight on one word.")
    chart = V.probe_chart(tl, update, probe, max_width=620 if present else 520)
    if chart is not None:
        W.show_chart(chart, key=S.heat_key(W.safe_stem(name)), size=FONT)
    elif not V.has_alpha(tl):
        st.info("RNNencdec has no α: every target word reads the same fixed summary c of the whole sentence, "
                "at every update. Watch its translation instead.", icon=":material/info:")


def frame(tls: dict[str, Timeline], updates: list[int], probe: int, present: bool) -> None:
    """The slider, both models at the chosen update, and the curves (a fragment: Play reruns only this)."""
    if S.timer_tick() and not S.advance(updates):  # the play timer's own rerun, at the end:
        st.rerun()  # a full rerun draws the fragment again without the timer
    S.snap_update(updates)
    update = st.select_slider("Update (drag to scrub)", options=updates, key=S.UPDATE, bind=BIND,
                              help="Training updates at which the timeline was recorded: log-spaced, "
                                   "dense early where alignment appears.")
    cols = st.columns(len(tls))
    for col, (name, tl) in zip(cols, tls.items(), strict=True):
        with col:
            model_column(name, tl, update, probe, present)
    chart = V.curves_chart(V.curves_frame(tls, probe), update, {n: V.model_colour(t) for n, t in tls.items()},
                           width=300 if present else 260)
    if chart is not None:
        W.show_chart(chart, key=S.CURVES)
    stem = f"timeline-u{update}"
    W.downloads([W.Download("Curves CSV", lambda: csv_text(V.export_frame(tls, probe)), "timeline-curves.csv",
                            "text/csv"),
                 W.Download("This frame JSON", lambda: V.export_json(tls, update, probe), f"{stem}.json",
                            "application/json")], key=S.DOWNLOADS)


def main() -> None:
    """Build the page."""
    present = S.presenting()
    st.html(page_css(present))
    st.title("Watch it learn")
    if not present:
        st.caption("The paper's claim: the model learns where to look with no alignment labels, only by learning "
                   "to translate. Scrub through training and watch α go from a uniform blur to a diagonal.")
    pairs = jobs.find()
    if not pairs:
        st.info("No training timeline is in the checkpoint folder yet. " + HOW_TO, icon=":material/info:")
        return
    top = st.columns([2, 3, 0.8, 1.4], vertical_alignment="bottom")  # "Presentation" on one line at 1280 px
    names = [p.name for p in pairs]
    run = top[0].selectbox("Recorded run", names, key=S.RUN, bind=BIND)
    pair = next((p for p in pairs if p.name == run), pairs[0])
    tls = jobs.load_pair(pair)
    if not tls:
        st.info(f"The timelines of {md(pair.name)} have no entries. " + HOW_TO, icon=":material/info:")
        return
    first = next(iter(tls.values()))
    labels = V.probe_labels(first)
    choice = top[1].selectbox("Sentence", labels, key=S.PROBE, bind=BIND)
    probe = labels.index(choice) if choice in labels else 0
    top[2].toggle("Play", key=S.PLAY, help="Step through the recorded updates, one every "
                  f"{PLAY_SECONDS:g} s, from the current one to the last.")
    top[3].toggle("Presentation", key=S.PRESENT, bind=BIND, help="Bigger text and no explanations, for a "
                  "projector.")
    notes = list(dict.fromkeys(tl.header.get("note") or "" for tl in tls.values()))
    about = " ".join([*(V.run_caption(tl) for tl in tls.values()), *notes])
    if present:  # one line on a projector (what run this is), the rest in the tooltip
        st.caption(md(V.note_head(notes[0]) if notes and notes[0] else V.run_caption(first)), help=about)
    else:
        st.caption(md(about))
    updates = sorted({u for tl in tls.values() for u in tl.updates})
    playing = S.start_run(updates)  # Play at the end starts again from the beginning
    st.fragment(run_every=PLAY_SECONDS if playing else None)(shell.guarded("Watch it learn", frame))(
        tls, updates, probe, present)


main()
