"""What each stop of the Lesson draws beside its narration, and the panels around it: the guess pills and
the verdict, the rows so far with the row to predict, the bottleneck's two models, the annotations'
similarities, Fig. 2, the wrap-up's ideas; the presenter view's panel and, while phones vote, the join
strip and the question's histogram. Used by ``pages/lesson.py`` (:data:`VIEWS`, :func:`presenter`,
:func:`phones`); models and traces come from :mod:`ui.lesson.page`, drawing from :mod:`ui.lesson.views`.
"""

from __future__ import annotations

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
from ui.lesson import state, vote_panel
from ui.lesson import views as L
from ui.lesson import views_similarity as S
from ui.lesson.content import IDEAS, NOT_ATTENTION, STOPS, Stop
from ui.lesson.teacher import TEACHER, pace, plan_words
from ui.lesson.votes import Room

# ----------------------------------------------------------------------------------------------
# The stops' views
# ----------------------------------------------------------------------------------------------


def pick(trace: DecodeTrace, stop: Stop, left: Any, right: Any) -> tuple[int | None, bool]:
    """The guess pills (right, above the chart) over the stop's choices, and whether the answer is revealed;
    once revealed without a pill, the phones' most voted word (its line on the left). Returns (guess, revealed)."""
    words, choices = trace.src_tokens, P.options(stop, trace)
    guess = right.pills("Your guess", choices, format_func=lambda j: words[j], key=state.guess_key(stop.key))
    revealed = state.revealed(stop.key)
    if revealed and guess is None and R.voting() and (room := R.room()) is not None:
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
    level = R.level()
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
            text = P.as_read(group.search, t, stop, state.revealed(stop.key))
            st.markdown(f"The model writes: **{text.markdown}**")
    step, guess, revealed = guess_controls(t, stop, left, right)
    with right:
        # its column's width, even at 150 % zoom; the legend beside the rows, so the numbers fit 720 px
        chart = L.lesson_alpha_chart(t, step, revealed, guess, legend="right", fit=True, **R.colours(),
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
        chart = (L.lesson_alpha_chart(t, None, True, cell=20, legend="bottom", fit=True, **R.colours())
                 if t.has_alignment else fixed_context_chart(t, title="one fixed c", max_width=340))
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
    probe, level = stop.like[0], R.level()
    left.markdown(md(S.ask_text(t.src_tokens, h.shape[1], probe, level)) + " Pick one on the right, then reveal (B).")
    guess, revealed = pick(t, stop, left, right)
    if revealed:
        v = S.likeness(t.src_tokens, h, probe, guess)
        (left.success if v.matched else left.info)(md(S.likeness_text(v, level)))
    with right:  # rows of 24 px while phones vote: their histogram comes under the grid, within 720 px
        W.show_chart(S.similarity_chart(t.src_tokens, h, probe=probe, revealed=revealed, guess=guess, digits=2,
                                        row=24 if R.voting() else None), size=FONT_MAIN)
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
        chart = L.lesson_alpha_chart(t, None, True, legend="right", fit=True, **R.colours())
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


def presenter(stop: Stop, room: Room) -> None:
    """The teacher's panel (presenter view only): the answer, what to say, the model's own numbers, the
    minutes planned and elapsed, the next stop, and the answer key."""
    t = TEACHER.get(stop.key)
    with st.container(border=True, key="ls_teacher"):
        st.markdown("**Presenter view**: the answers show only here, not in the projected tab "
                    f"([open it]({md(R.projected_link())})), which follows this tab.")
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




def phones(room: Room, stop: Stop, group: models.ModelGroup, left: Any, right: Any) -> None:
    """While phones vote: the join strip on every stop, and the question's panel where there is one."""
    if not R.voting():
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

