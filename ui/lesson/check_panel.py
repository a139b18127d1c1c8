"""The concept check on the Lesson page: four questions before the lesson (at the intro) and again after it
(at the wrap-up), on the phones or by show of hands, and the wrap-up's before/after with the class's gain.

The sitting and the question are part of the room's shared position (:class:`ui.lesson.votes.Position`), so the
projector and the presenter view stay in step and the clicker's → / ← move through the questions
(:func:`ui.lesson.room.move`). Phones vote in the room's ballot of each question
(:func:`ui.lesson.check.ballot_key`); without phones the teacher types the hands counted, which win over
the phones' votes. The right answer shows in the presenter view only, until the wrap-up's results.
Questions: :mod:`ui.lesson.check`; tallies and gains: :mod:`ui.lesson.views_concept_check`. Used by
``pages/lesson.py``.
"""

from __future__ import annotations

from typing import Any

import streamlit as st

from ui.figures.common import FONT_MAIN, md, readable
from ui.lesson import room as R
from ui.lesson import state, vote_panel
from ui.lesson import views_concept_check as C
from ui.lesson.check import CHECK, PHASES, ballot_key
from ui.lesson.votes import Room

CHECK_AT = {"intro": "pre", "wrapup": "post"}
"""The stops that hold a sitting of the check: stop key → sitting."""


def running(room: Room, stop_key: str) -> str | None:
    """The sitting being asked at this stop, or None."""
    phase = room.position.check
    return phase if phase and CHECK_AT.get(stop_key) == phase else None


def begin(phase: str) -> None:
    """Start a sitting at its first question, for every tab of the room."""
    if (r := R.room()) is not None:
        r.move(check=phase, item=0)


def end() -> None:
    """Leave the check for the stop, for every tab; no question of it takes votes any more."""
    if (r := R.room()) is not None:
        r.move(check="", item=0)
        r.close()


def start_button(room: Room, stop_key: str) -> None:
    """At the intro and the wrap-up: the button that starts that stop's sitting of the check."""
    phase = CHECK_AT.get(stop_key)
    if phase is None:
        return
    asked = sum(1 for i in CHECK if room.hands(ballot_key(phase, i)) or room.ballot(ballot_key(phase, i)))
    label = f"Concept check {PHASES[phase]} ({len(CHECK)} questions)"
    st.button(label, key="ls_check", icon=":material/quiz:", on_click=begin, args=(phase,),
              help="Phones vote (or count hands); → and ← move through the questions."
              + (f" {asked} of {len(CHECK)} asked already; asking again keeps their votes." if asked else ""))


def tallies(room: Room) -> list[C.Row]:
    """Each question's tally at both sittings: hands where the teacher counted them, else phones."""
    out = []
    for item in CHECK:
        t = {}
        for phase in PHASES:
            key, form = ballot_key(phase, item), item.form(phase)
            b = room.ballot(key)
            t[phase] = C.tally(b.counts(1) if b else None, form.answer, room.hands(key))
        out.append(C.Row(item.key, item.concept, t["pre"], t["post"], (item.pre.right, item.post.right)))
    return out


def on_hands(key: str) -> None:
    """The hands typed for a question, into the room."""
    if (r := R.room()) is not None:
        r.count_hands(key, *state.hands(key))


def choices_text(choices: tuple[str, ...]) -> str:
    """The choices as the class reads them: one line of words, else a list (Markdown)."""
    if all(len(c.split()) == 1 for c in choices):
        return " · ".join(f"**{md(c)}**" for c in choices)
    return "\n".join(f"{n}. {md(c)}" for n, c in enumerate(choices, 1))


def hands_inputs(room: Room, key: str) -> None:
    """Without phones: the hands counted, which replace the phones' votes for this question."""
    right, answered = room.hands(key) or (0, 0)
    a, b = st.columns(2)
    every, right_key = state.hands_keys(key)
    a.number_input("Hands up in all", 0, room.max_phones, answered, key=every, on_change=on_hands, args=(key,))
    b.number_input("Hands up for the right answer", 0, room.max_phones, right, key=right_key,
                   on_change=on_hands, args=(key,))


def panel(room: Room, phase: str, voting: bool, presenter: bool) -> None:
    """One question of the sitting: its sentence, question and choices, the phones' ballot or the hands."""
    k = min(max(room.position.item, 0), len(CHECK) - 1)
    item = CHECK[k]
    form, key = item.form(phase), ballot_key(phase, item)
    left, right = st.columns([3, 2], gap="medium")
    with left:
        st.subheader(f"Concept check {PHASES[phase]}: question {k + 1} of {len(CHECK)}", anchor=False)
        st.markdown(f"*{md(form.sentence)}*")
        st.markdown(f"**{md(form.prompt)}**")
        st.markdown(choices_text(form.choices))
        st.caption("→ next question, ← previous; after the last one → goes back to the stop.")
        st.button("End the check", key="ls_check_end", icon=":material/close:", on_click=end)
    with right:
        if presenter:
            st.success(md(f"Right answer: {form.right}"))
        if voting:
            room.open(key, form.prompt, list(form.choices))
            vote_panel.join_strip(room)
        else:
            room.close()
        st.markdown("**No phones?** Count hands and type them:")
        hands_inputs(room, key)


def results(room: Room, col: Any) -> None:
    """The wrap-up's picture of the check: % right per question before and after, and the class's gain."""
    rows = tallies(room)
    with col:
        if any(r.pre.total or r.post.total for r in rows):
            st.altair_chart(readable(C.results_chart(rows), FONT_MAIN), height=150)
            with st.expander("The numbers"):
                st.dataframe(C.results_frame(rows), hide_index=True)
        st.markdown(md(C.gain_text(rows)))
