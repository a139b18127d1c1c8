"""The Lesson's position held by its room on the server, so the projector and the presenter view stay in step.

The room (:mod:`ui.lesson.votes`) holds the stop, the narration level, the revealed rows and whether phones
vote; each teacher's tab copies them into its address and its widgets whenever the room's version
changes (:func:`sync`), and its controls change the room, not the tab (:func:`move`, :func:`reveal`).
A tab notices the other tab's move within a second (:func:`ui.lesson.vote_panel.follow`). Used by
``pages/lesson.py``.
"""

from __future__ import annotations

import streamlit as st

from ui.lesson import views as L
from ui.lesson import vote_panel
from ui.lesson.check import CHECK
from ui.lesson.content import LEVELS, STOPS
from ui.lesson.votes import Room

STOP_KEY, LEVEL_KEY, VIEW_KEY = "ls_stop", "ls_level", "ls_view"  # ls_view=presenter: the teacher's tab
VOTE_KEY = "ls_vote"  # true: the class votes from their phones
SEEN_KEY = "ls_seen"  # (room code, version) this tab last drew


def room() -> Room | None:
    """This tab's room, when its address carries the code and the teacher key (never creates one)."""
    return vote_panel.rooms().teacher(st.query_params.get(vote_panel.ROOM_KEY),
                                      st.query_params.get(vote_panel.TEACHER_KEY))


def start() -> Room | None:
    """This tab's room as a teacher, synced into the tab: a new room (starting where the address says)
    for a tab on the teacher's machine without one; None for a visitor who is not the teacher."""
    r = room()
    if r is None:
        r = vote_panel.teacher_room()
        if r is None:
            return None
        r.move(stop=L.stop_index(st.query_params.get(STOP_KEY), len(STOPS)),
               level=L.level_of(st.query_params.get(LEVEL_KEY)), voting=st.query_params.get(VOTE_KEY) == "true")
    sync(r)
    return r


def sync(r: Room) -> None:
    """Copy the room's position into this tab's address and state when it changed since last drawn."""
    if st.session_state.get(SEEN_KEY) == (r.code, r.version):
        return
    p = r.position
    st.query_params[STOP_KEY], st.query_params[LEVEL_KEY] = str(p.stop + 1), p.level
    if p.voting:
        st.query_params[VOTE_KEY] = "true"
    else:
        st.query_params.pop(VOTE_KEY, None)
    for key in (LEVEL_KEY, "ls_vote_on"):  # the widgets start again from the address
        st.session_state.pop(key, None)
    for s in STOPS:
        st.session_state[f"ls_rev_{s.key}"] = s.key in p.revealed
    st.session_state[SEEN_KEY] = (r.code, r.version)


def move(delta: int) -> None:
    """Move ``delta`` stops (clamped to the lesson), for every tab of the room; while the concept check
    runs, ``delta`` questions instead, and past its first or last question back to the stop."""
    if (r := room()) is None:
        return
    p = r.position
    if p.check:
        item = p.item + delta
        r.move(**({"item": item} if 0 <= item < len(CHECK) else {"check": "", "item": 0}))
        if not 0 <= item < len(CHECK):
            r.close()
        return
    r.move(stop=min(len(STOPS) - 1, max(0, p.stop + delta)))


def set_level() -> None:
    """The narration level chosen in this tab, for every tab of the room."""
    if (r := room()) is not None:
        level = L.level_of(st.session_state.get(LEVEL_KEY))
        r.move(level=level if level in LEVELS else None)


def reveal(key: str) -> None:
    """Reveal stop ``key``'s hidden row, or hide it again, for every tab (revealing closes its vote)."""
    if (r := room()) is not None:
        r.reveal(key, key not in r.position.revealed)


def set_voting() -> None:
    """Phones vote, or not, for every tab of the room."""
    if (r := room()) is not None:
        r.move(voting=bool(st.session_state.get("ls_vote_on")))


def links(r: Room, stop: int, presenter: bool) -> str:
    """A relative address of this lesson's room at ``stop`` (the presenter view or the projected one)."""
    level = L.level_of(st.query_params.get(LEVEL_KEY))
    view = f"{VIEW_KEY}=presenter&" if presenter else ""
    return (f"lesson?{view}{STOP_KEY}={stop + 1}&{LEVEL_KEY}={level}&{vote_panel.ROOM_KEY}={r.code}"
            f"&{vote_panel.TEACHER_KEY}={r.key}")
