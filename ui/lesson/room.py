"""The Lesson's position held by its room on the server, so the projector and the presenter view stay in step.

The room (:mod:`ui.lesson.votes`) holds the stop, the narration level, the revealed rows and whether phones
vote; each teacher's tab copies them into its address and its widgets whenever the room's version
changes (:func:`sync`), and its controls change the room, not the tab (:func:`move`, :func:`reveal`).
A tab notices the other tab's move within a second (:func:`ui.lesson.vote_panel.follow`). The address's
other settings are read here too: the presenter view, the phones' switch, the level and α's colours.
The tab's copy lives in its session state (:mod:`ui.lesson.state`). Used by ``pages/lesson.py``.
"""

from __future__ import annotations

from typing import Any

import streamlit as st

from ui.lesson import state, vote_panel
from ui.lesson import views as L
from ui.lesson.check import CHECK
from ui.lesson.content import LEVELS, STOPS
from ui.lesson.votes import Room

STOP_KEY, LEVEL_KEY, VIEW_KEY = "ls_stop", "ls_level", "ls_view"  # ls_view=presenter: the teacher's tab
VOTE_KEY = "ls_vote"  # true: the class votes from their phones


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
    p, version = r.snapshot()
    if state.seen() == (r.code, version):
        return
    st.query_params[STOP_KEY], st.query_params[LEVEL_KEY] = str(p.stop + 1), p.level
    if p.voting:
        st.query_params[VOTE_KEY] = "true"
    else:
        st.query_params.pop(VOTE_KEY, None)
    state.copy_position([s.key for s in STOPS], p.revealed, (r.code, version))  # the widgets start again


def drawn(r: Room) -> int:
    """The room's version this tab copied last (:func:`sync`): what its follower compares with. Not the
    room's version at the end of the run: a move by the other tab while this one draws would then pass
    unseen, and the tab would stay on the stop it drew (a presenter's quick → ← left the projector behind)."""
    seen = state.seen()
    return int(seen[1]) if seen is not None and seen[0] == r.code else -1


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
        level = L.level_of(state.level_chosen())
        r.move(level=level if level in LEVELS else None)


def reveal(key: str) -> None:
    """Reveal stop ``key``'s hidden row, or hide it again, for every tab (revealing closes its vote)."""
    if (r := room()) is not None:
        r.reveal(key, key not in r.position.revealed)


def set_voting() -> None:
    """Phones vote, or not, for every tab of the room."""
    if (r := room()) is not None:
        r.move(voting=state.voting_chosen())


def links(r: Room, stop: int, presenter: bool) -> str:
    """A relative address of this lesson's room at ``stop`` (the presenter view or the projected one)."""
    level = L.level_of(st.query_params.get(LEVEL_KEY))
    view = f"{VIEW_KEY}=presenter&" if presenter else ""
    return (f"lesson?{view}{STOP_KEY}={stop + 1}&{LEVEL_KEY}={level}&{vote_panel.ROOM_KEY}={r.code}"
            f"&{vote_panel.TEACHER_KEY}={r.key}")


def current_stop() -> int:
    """The 0-based stop: the room's (shared by the teacher's tabs), else the URL's (out of range or not a
    number: the first stop)."""
    r = room()
    return r.position.stop if r is not None else L.stop_index(st.query_params.get(STOP_KEY), len(STOPS))


def projected_link() -> str:
    """The projected view's address in this room (relative: the same server)."""
    r = room()
    return "lesson" if r is None else links(r, current_stop(), presenter=False)


def voting() -> bool:
    """Whether the class votes from their phones (the room's switch, copied into ``ls_vote=true``)."""
    return st.query_params.get(VOTE_KEY) == "true"


def presenting() -> bool:
    """Whether this tab is the presenter view (``ls_view=presenter``)."""
    return st.query_params.get(VIEW_KEY) == "presenter"


def level() -> str:
    """The narration level the address names (an unknown one: the default)."""
    return L.level_of(st.query_params.get(LEVEL_KEY))


def colours() -> dict[str, Any]:
    """α's palette and log scale, from the URL (``ls_palette``, ``ls_log``)."""
    palette = st.query_params.get("ls_palette")
    return {"palette": palette if palette in L.PALETTES else "blues", "log": st.query_params.get("ls_log") == "true"}


def on_colours() -> None:
    """Write the palette and log-scale choices into the URL."""
    palette, log = state.colours_chosen()
    st.query_params["ls_palette"] = palette
    if log:
        st.query_params["ls_log"] = "true"
    else:
        st.query_params.pop("ls_log", None)
