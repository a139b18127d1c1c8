"""Lesson: the paper's story in eight stops, each a live view of the model, narrated at a chosen level.

Predict, then reveal: at the stops with an α row to predict, the row stays hidden until the class
picks the source word it expects and someone reveals it; the model's row then shows with the guess
framed (at the annotations stop, the row of cosines of the word asked about). A presentation clicker
works: → or PageDown for the next stop, ← or PageUp for the previous one, B (a clicker's blank-screen
key) to reveal. The URL holds the stop (``ls_stop``, 1-based; anything else opens stop 1) and the level
(``ls_level``). The sidebar offers a printable handout (HTML, print-styled).
Content: :mod:`ui.lesson.content`; drawing: :mod:`ui.lesson.views` (stop 3: :mod:`ui.lesson.views_similarity`).
"""

from __future__ import annotations

from ui.common import shell

shell.framed()  # a page Streamlit started on its own (a fresh server's first request) runs in the frame

from time import monotonic as now
from typing import Any

import streamlit as st

from nmt.decoding.trace import DecodeTrace
from nmt.explanation.paper_figures import FIG3A_SENTENCE
from ui.common import models, paper_panel
from ui.common import widgets as W
from ui.common.presets import EUROPARL
from ui.figures.common import FONT_MAIN, md, readable
from ui.figures.heatmaps import fixed_context_chart
from ui.lesson import check_panel as K
from ui.lesson import page as P
from ui.lesson import room as R
from ui.lesson import views as L
from ui.lesson import views_similarity as S
from ui.lesson import vote_panel
from ui.lesson.content import IDEAS, LEVELS, NOT_ATTENTION, STOPS, Stop
from ui.lesson.teacher import TEACHER, pace, plan_words

STOP_KEY, LEVEL_KEY, VIEW_KEY, VOTE_KEY = R.STOP_KEY, R.LEVEL_KEY, R.VIEW_KEY, R.VOTE_KEY


# ----------------------------------------------------------------------------------------------
# Navigation: the stop lives in the URL; clicker keys are button shortcuts
# ----------------------------------------------------------------------------------------------


def current_stop() -> int:
    """The 0-based stop: the room's (shared by the teacher's tabs), else the URL's (out of range or not a
    number: the first stop)."""
    room = R.room()
    return room.position.stop if room is not None else L.stop_index(st.query_params.get(STOP_KEY), len(STOPS))


def nav_bar(k: int, stop: Stop, checking: bool = False) -> None:
    """Back, position, next and reveal; PageUp/PageDown are hidden twins of back and next (through the
    concept check's questions while it runs, ``checking``)."""
    with st.container(horizontal=True, vertical_alignment="center", key="ls_top"):
        st.title(stop.title, anchor=False)
        st.space("stretch")
        st.button("Back", key="ls_back", icon=":material/arrow_back:", shortcut="Left", on_click=R.move, args=(-1,),
                  disabled=k == 0 and not checking)
        st.button("Next", key="ls_next", icon=":material/arrow_forward:", shortcut="Right", on_click=R.move,
                  args=(1,), disabled=k == len(STOPS) - 1 and not checking, type="primary")
        shown = bool(st.session_state.get(f"ls_rev_{stop.key}"))
        st.button("Hide row" if shown else "Reveal", key="ls_reveal", shortcut="B", on_click=R.reveal,
                  icon=":material/visibility_off:" if shown else ":material/visibility:", args=(stop.key,),
                  disabled=not stop.asks)
        if (link := P.stepper_link(stop, bool(st.session_state.get(f"ls_rev_{stop.key}")))) is not None:
            st.link_button("Stepper", link, key="ls_stepper", icon=":material/open_in_new:",
                           help="Open this stop's sentence in the stepper, in presentation mode, in a new tab: "
                                "try a word of your own; close that tab to come back to the lesson here.")
        st.markdown(f"**{k + 1} / {len(STOPS)}**", help=P.KEYS_NOTE)
    with st.container(key="ls_clicker"):  # hidden by CSS below; their shortcuts still work
        st.button("PageUp", key="ls_pgup", shortcut="PageUp", on_click=R.move, args=(-1,))
        st.button("PageDown", key="ls_pgdn", shortcut="PageDown", on_click=R.move, args=(1,))
    st.html("<style>.st-key-ls_clicker{display:none} .block-container{padding-top:4.25rem} "
            ".st-key-ls_top h1{font-size:2rem;padding:0}</style>")
    st.html(P.PILL_CSS)
    st.html(P.RELEASE_PILLS, unsafe_allow_javascript=True)


# ----------------------------------------------------------------------------------------------
# The stops' views
# ----------------------------------------------------------------------------------------------


def pick(trace: DecodeTrace, stop: Stop, left: Any, right: Any) -> tuple[int | None, bool]:
    """The guess pills (right, above the chart) over the stop's choices, and whether the answer is revealed;
    once revealed without a pill, the phones' most voted word (its line on the left). Returns (guess, revealed)."""
    words, choices = trace.src_tokens, P.options(stop, trace)
    guess = right.pills("Your guess", choices, format_func=lambda j: words[j], key=f"ls_guess_{stop.key}")
    revealed = bool(st.session_state.get(f"ls_rev_{stop.key}"))
    if revealed and guess is None and voting() and (room := R.room()) is not None:
        if (phones := vote_panel.class_guess(room.ballot(stop.key))) is not None:  # the class's own guess
            guess = choices[phones[0]]
            left.markdown(md(phones[1]))
    return guess, revealed


def guess_controls(trace: DecodeTrace, stop: Stop, left: Any, right: Any) -> tuple[int, int | None, bool]:
    """The question for the row (left), the guess pills (right, above the heatmap) and, once
    revealed, the verdict (left); returns (step, guess, revealed)."""
    step = min(stop.predict or 0, len(trace.steps) - 1)
    ask = "gets the highest energy" if stop.key == "energies" else "will it read"
    left.markdown(f"Next target word: **{md(trace.steps[step].token)}**. Which source word {ask}? "
                  "Pick one on the right, then reveal (B).")
    guess, revealed = pick(trace, stop, left, right)
    if revealed:
        v = L.verdict(trace, step, guess)  # α's argmax is the energies' (the softmax keeps their order)
        text = L.energy_verdict_text(trace, step, guess) if stop.key == "energies" else L.verdict_text(v)
        (left.success if v.matched else left.info)(md(text))
        if stop.then is not None and stop.then < len(trace.steps):  # the rest of the story (stop 7: « rouge »)
            left.markdown(md(L.then_text(trace, stop.then)))
    return step, guess, revealed


def numbers(stop: Stop, group: models.ModelGroup, trace: DecodeTrace, step: int) -> None:
    """The revealed row's numbers: energies, the softmax worked through, or c_i as a weighted sum (at the
    school level the mix in shares, no vectors; the norms at the PhD level only)."""
    assert stop.sentence is not None and group.search is not None
    level = L.level_of(st.query_params.get(LEVEL_KEY))
    if stop.key in ("energies", "softmax"):
        df = L.energy_table(trace, step)
        df = df[["source word", "e_ij"]] if stop.key == "energies" else df
    else:
        alpha = trace.steps[step].alpha or []
        if level == "school":
            st.markdown(md(L.mix_text(trace.steps[step].token, trace.src_tokens, alpha)))
            return
        h = P.annotations_of(group.search, stop.sentence)
        df = L.context_table(trace.src_tokens, alpha, h)
        if level == "phd":
            st.caption(f"‖c_i‖ over all {h.shape[1]} dimensions: {L.context_norm(alpha, h):.4f} from α and h_j; "
                       f"the decoder's own ‖c_i‖: {trace.steps[step].context_norm:.4f}.")
    table = L.wide(df)
    st.dataframe(table, hide_index=True, row_height=30,
                 column_config={c: st.column_config.NumberColumn(format="%.2f") for c in table.columns[1:]})


def first_row_note(col: Any, trace: DecodeTrace, rows: int) -> None:
    """Under a heatmap whose first row is drawn: why that row reads ``</s>`` or the verb."""
    note = L.first_row_note(trace, rows)
    if note:
        col.caption(md(note))


def view_predict(stop: Stop, group: models.ModelGroup, left: Any, right: Any) -> None:
    """Energies, softmax, context, reordering, unknown words: the rows so far (the energies e_ij at the
    energies stop, α elsewhere, both as the decode trace recorded them) with the row to predict."""
    assert stop.sentence is not None and group.search is not None
    t = P.trace_of(group.search, stop.sentence)
    with left:
        if stop.key in ("reorder", "unknown"):
            text = P.as_read(group.search, t, stop, bool(st.session_state.get(f"ls_rev_{stop.key}")))
            st.markdown(f"The model writes: **{text.markdown}**")
    step, guess, revealed = guess_controls(t, stop, left, right)
    with right:
        # its column's width, even at 150 % zoom; the legend beside the rows, so the numbers fit 720 px
        chart = L.lesson_alpha_chart(t, step, revealed, guess, legend="right", fit=True, **colours(),
                                     quantity="energy" if stop.key == "energies" else "alpha", through=stop.then)
        if chart is not None:
            W.show_chart(chart, size=FONT_MAIN, fit=True)
        if revealed and stop.key in ("softmax", "context"):  # the energies stop shows its numbers in the cells
            numbers(stop, group, t, step)
    if revealed and stop.key == "reorder":  # the paper's own reordering, over the page when asked for
        paper_beside(right)
    # beside the numbers' table on the left, so that the table stays within 720 px; under the chart elsewhere
    first_row_note(left if stop.key in ("energies", "softmax", "context") else right, t, step + int(revealed))


def paper_beside(col: Any) -> None:
    """The paper's Fig. 3(a) α beside our Europarl RNNsearch-50's on the same sentence, in a dialog."""
    group = P.model_pair(EUROPARL, warn=False)
    if group is None or group.search is None or group.name != EUROPARL:
        return
    t = P.trace_of(group.search, FIG3A_SENTENCE)
    if col.button("The paper saw this too: Fig. 3(a)", key="ls_paper", icon=":material/compare:"):
        paper_panel.dialog(t, "ours (Europarl RNNsearch-50)")


def view_bottleneck(stop: Stop, group: models.ModelGroup, left: Any, right: Any) -> None:
    """RNNsearch's α beside the RNNencdec's one fixed summary, each under its translation."""
    assert stop.sentence is not None and group.search is not None
    cols = right.columns(2)
    for col, ckpt, name in ((cols[0], group.search, "RNNsearch"), (cols[1], group.encdec, "RNNencdec")):
        if ckpt is None:
            col.info(f"No {name} checkpoint in this pair.")
            continue
        t = P.trace_of(ckpt, stop.sentence)
        col.markdown(f"**{name}** writes: {P.as_read(ckpt, t, stop, True).markdown}")
        chart = (L.lesson_alpha_chart(t, None, True, cell=20, legend="bottom", fit=True, **colours()) if t.has_alignment
                 else fixed_context_chart(t, title="one fixed c", max_width=340))
        if chart is None:
            continue
        if t.has_alignment:
            with col:
                W.show_chart(chart, size=FONT_MAIN, fit=True)
            first_row_note(left, t, len(t.steps))  # the left column has room; the charts fill 720 px
        else:  # an explicit height: in a column Streamlit squashed its rows under their 14 px labels
            col.altair_chart(readable(chart, FONT_MAIN), width="content", height=20 * len(t.steps) + 100)


def view_annotations(stop: Stop, group: models.ModelGroup, left: Any, right: Any) -> None:
    """The cosine similarity of the annotations h_j, the asked word's row and column hidden until the class
    has guessed which word's annotation is most like its own, then its verdict at the chosen level."""
    assert stop.sentence is not None and group.search is not None and stop.like is not None
    t = P.trace_of(group.search, stop.sentence)
    h = P.annotations_of(group.search, stop.sentence)
    probe, level = stop.like[0], L.level_of(st.query_params.get(LEVEL_KEY))
    left.markdown(md(S.ask_text(t.src_tokens, h.shape[1], probe, level)) + " Pick one on the right, then reveal (B).")
    guess, revealed = pick(t, stop, left, right)
    if revealed:
        v = S.likeness(t.src_tokens, h, probe, guess)
        (left.success if v.matched else left.info)(md(S.likeness_text(v, level)))
    with right:  # rows of 24 px while phones vote: their histogram comes under the grid, within 720 px
        W.show_chart(S.similarity_chart(t.src_tokens, h, probe=probe, revealed=revealed, guess=guess, digits=2,
                                        row=24 if voting() else None), size=FONT_MAIN)
        if revealed:
            st.markdown(md(S.marks_note(t.src_tokens[probe], guess is not None)))


def view_length(stop: Stop, group: models.ModelGroup, left: Any, right: Any) -> None:
    """Fig. 2: BLEU by source length, for the Europarl models and the Multi30k pair."""
    charts = P.fig2_charts()
    if not charts:
        left.info("No BLEU-by-length results (*.results.json) in the checkpoint folder.")
        return
    cols = right.columns(len(charts))
    for col, (chart, gaps) in zip(cols, charts):  # an explicit height: in columns Streamlit squashed the plot
        col.altair_chart(readable(chart, FONT_MAIN), height=420, width="content")
        left.markdown(md(gaps))


def view_intro(stop: Stop, group: models.ModelGroup, left: Any, right: Any) -> None:
    """How to read a heatmap: one whole sentence's α, every row drawn, and why the first row reads ``</s>``."""
    assert stop.sentence is not None and group.search is not None
    t = P.trace_of(group.search, stop.sentence)
    left.markdown(f"The model writes: **{P.as_read(group.search, t, stop, True).markdown}**")
    with right:
        chart = L.lesson_alpha_chart(t, None, True, legend="right", fit=True, **colours())
        if chart is not None:
            W.show_chart(chart, size=FONT_MAIN, fit=True)
        st.markdown("**Rows**: the French words, in the order they were written. **Columns**: the English words "
                    "read (and </s>, the end of the sentence). **Dark**: looked at a lot.")
    first_row_note(left, t, len(t.steps))


def view_wrapup(stop: Stop, group: models.ModelGroup, left: Any, right: Any) -> None:
    """The three ideas, what attention is not, and what the class learned (the concept check)."""
    with right:
        st.markdown("\n".join(f"{n}. {md(idea)}" for n, idea in enumerate(IDEAS, 1)))
        st.warning(md(NOT_ATTENTION), icon=":material/lightbulb:")
    if (room := R.room()) is not None:
        K.results(room, right)


VIEWS = {"intro": view_intro, "wrapup": view_wrapup,
         "bottleneck": view_bottleneck, "annotations": view_annotations, "energies": view_predict,
         "softmax": view_predict, "context": view_predict, "reorder": view_predict, "unknown": view_predict,
         "length": view_length}


def presenter(stop: Stop, room: vote_panel.Room) -> None:
    """The teacher's panel (presenter view only): the answer, what to say, the model's own numbers, the
    minutes planned and elapsed, the next stop, and the answer key."""
    t = TEACHER.get(stop.key)
    with st.container(border=True, key="ls_teacher"):
        st.markdown("**Presenter view**: the answers show only here, not in the projected tab "
                    f"([open it]({md(projected_link())})), which follows this tab.")
        if t is not None:
            st.markdown(f"**Answer.** {md(t.answer)}")
            if (line := P.model_line(stop)) is not None:
                st.markdown(f"**The model.** {md(line)}")
            st.markdown(f"**Say:** {md(t.say)}")
        k = STOPS.index(stop)
        clock = pace([s.key for s in STOPS], k, now() - room.started)
        st.markdown(f"**Plan.** {md(plan_words(stop.key))}. {md(clock)}")
        if k + 1 < len(STOPS):
            st.caption(f"Next: {md(STOPS[k + 1].title)}")
        st.download_button("Answer key (HTML)", P.answer_key, file_name="lesson-answer-key.html", mime="text/html",
                           on_click="ignore", icon=":material/key:", key="ls_key")


def colours() -> dict[str, Any]:
    """α's palette and log scale, from the URL (``ls_palette``, ``ls_log``)."""
    palette = st.query_params.get("ls_palette")
    return {"palette": palette if palette in L.PALETTES else "blues", "log": st.query_params.get("ls_log") == "true"}


def on_colours() -> None:
    """Write the palette and log-scale choices into the URL."""
    st.query_params["ls_palette"] = st.session_state.get("ls_palette_w", "blues")
    if st.session_state.get("ls_log_w"):
        st.query_params["ls_log"] = "true"
    else:
        st.query_params.pop("ls_log", None)


def voting() -> bool:
    """Whether the class votes from their phones (the room's switch, copied into ``ls_vote=true``)."""
    return st.query_params.get(VOTE_KEY) == "true"


def projected_link() -> str:
    """The projected view's address in this room (relative: the same server)."""
    room = R.room()
    return "lesson" if room is None else R.links(room, current_stop(), presenter=False)


def refused() -> None:
    """A visitor who is not the teacher (a phone): no lesson, no answers, the way to the vote instead."""
    st.title("Lesson", anchor=False)
    st.info("The Lesson runs on the teacher's machine. To vote, open the address the projector shows "
            "(or scan its code).")
    st.markdown("[Vote with the room code](vote)")


def phones(room: vote_panel.Room, stop: Stop, group: models.ModelGroup, left: Any, right: Any) -> None:
    """While phones vote: the join strip on every stop, and the question's panel where there is one."""
    if not voting():
        room.close()
        return
    question = P.question(stop, group)
    if question is not None:
        room.open(*question)
    else:
        room.close()
    with left:
        vote_panel.join_strip(room)
    if question is not None:
        with right:  # below the chart, where a histogram has room before the reveal
            vote_panel.projector(room, *question)


def sidebar(k: int, room: vote_panel.Room) -> None:
    """The handout, the colours, the phones' switch and the presenter view's link."""
    with st.sidebar:
        st.download_button("Handout (HTML, print it)", P.handout, file_name="lesson-handout.html",
                           mime="text/html", on_click="ignore", icon=":material/print:", key="ls_handout")
        st.radio("Colours of α", list(L.PALETTES), format_func=L.PALETTES.__getitem__, key="ls_palette_w",
                 index=list(L.PALETTES).index(colours()["palette"]), on_change=on_colours)
        st.toggle("α on a log scale", key="ls_log_w", value=colours()["log"], on_change=on_colours,
                  help="Symmetric-log colours: weights of 0.01 to 0.1, invisible on a linear scale, show too.")
        st.toggle("Phones vote", key="ls_vote_on", value=voting(), on_change=R.set_voting,
                  help="The class votes from their phones (same Wi-Fi): the projector shows the address to open.")
        st.link_button("Presenter view (a second tab)", R.links(room, k, presenter=True),
                       icon=":material/co_present:")


def body(room: vote_panel.Room, stop: Stop, group: models.ModelGroup, level: str) -> None:
    """The stop itself: narration and question on the left, its view on the right, the phones' panel."""
    left, right = st.columns([1, 2] if stop.key == "bottleneck" else [2, 3], gap="medium")
    with left:
        if stop.sentence:
            st.markdown(f"*{md(stop.sentence)}*")
        if stop.asks and not st.session_state.get(f"ls_rev_{stop.key}"):
            st.caption("Guess first: the explanation appears with the model's row (B).")  # it names the answer
        else:
            st.markdown(md(stop.narration[level]))
    VIEWS[stop.key](stop, group, left, right)
    with left, st.container(border=True):
        st.markdown(f"**Question for the class.** {md(stop.question)}")
    with left:
        K.start_button(room, stop.key)
    phones(room, stop, group, left, right)


def main() -> None:
    """Build the page."""
    room = R.start()
    if room is None:
        refused()
        return
    with st.sidebar:
        st.header("Lesson")
        level = st.radio("Narration", list(LEVELS), format_func=LEVELS.__getitem__, key=LEVEL_KEY,
                         index=list(LEVELS).index(L.level_of(st.query_params.get(LEVEL_KEY))),
                         on_change=R.set_level)
    level = L.level_of(level)
    k = current_stop()
    stop = STOPS[k]
    group = P.model_pair(stop.group)
    if group is None or group.search is None or W.load_lm(group.search) is None:
        return
    checking = K.running(room, stop.key)
    nav_bar(k, stop, checking is not None)
    if st.query_params.get(VIEW_KEY) == "presenter":
        presenter(stop, room)
    if checking is not None:
        K.panel(room, checking, voting(), st.query_params.get(VIEW_KEY) == "presenter")
    else:
        body(room, stop, group, level)
    sidebar(k, room)
    vote_panel.follow(room, room.version)


main()
