"""The Lesson's and the vote page's session state: the one module of ``pages/lesson.py``, ``pages/vote.py`` and
:mod:`ui.lesson` that touches ``st.session_state``.

Every key starts with :data:`PREFIX` and is listed in :data:`KEYS` (a family of keys built at run time as a
pattern ending in ``*``); the page, its panels and the phone's page read and write them through the small
accessors below. What the class shares (the stop, the level, the revealed rows, the votes) lives in the
room on the server (:mod:`ui.lesson.votes`), not here: a tab's state is only its copy of the room's position
and its widgets. The lesson's URL parameters (``ls_stop``, ``ls_level``, ``ls_room`` …, and the phone's
``room`` and ``v``) are in :mod:`ui.lesson.room` and :mod:`ui.lesson.vote_panel`.
"""

from __future__ import annotations

from collections.abc import Iterable
from fnmatch import fnmatchcase
from typing import Any

import streamlit as st

PREFIX = "ls_"

# the teacher's tab
LEVEL = "ls_level"  # the narration level's radio (named as the URL parameter that holds the level)
VOTE_ON = "ls_vote_on"  # the "Phones vote" toggle
PALETTE, LOG = "ls_palette_w", "ls_log_w"  # α's colours and log scale (written into ls_palette / ls_log)
SEEN = "ls_seen"  # (room code, version) this tab last drew
REVEALED = "ls_rev_"  # + a stop's key: its hidden row is revealed in this tab
GUESS = "ls_guess_"  # + a stop's key: the guess pills
HANDS_ALL, HANDS_RIGHT = "ls_all_", "ls_right_"  # + a check question's ballot key: the hands counted
# the phone's page
PHONE = "ls_vote_phone"  # this browser's token
OUTCOME = "ls_vote_outcome"  # what became of the last tap, for the page to say
CODE = "ls_vote_code"  # the room code typed
TAP = "ls_v_"  # + "<question serial>_<choice>": a word's button

KEYS: frozenset[str] = frozenset({
    LEVEL, VOTE_ON, PALETTE, LOG, SEEN, f"{REVEALED}*", f"{GUESS}*", f"{HANDS_ALL}*", f"{HANDS_RIGHT}*",
    # buttons, download buttons and the containers styled by their key
    "ls_top", "ls_back", "ls_next", "ls_reveal", "ls_stepper", "ls_clicker", "ls_pgup", "ls_pgdn", "ls_paper",
    "ls_teacher", "ls_key", "ls_handout", "ls_check", "ls_check_end", "ls_join", "ls_revote", "ls_showvotes",
    PHONE, OUTCOME, CODE, f"{TAP}*", "ls_phone_status", "ls_phone_choices",
})


def listed(key: str, keys: Iterable[str] = KEYS) -> bool:
    """Whether ``key`` is one of ``keys`` (itself, or matched by a pattern ending in ``*``)."""
    return any(key == k or (k.endswith("*") and fnmatchcase(key, k)) for k in keys)


# ----------------------------------------------------------------------------------------------
# The teacher's tab
# ----------------------------------------------------------------------------------------------


def revealed(stop_key: str) -> bool:
    """Whether stop ``stop_key``'s hidden row is revealed in this tab (as the room last said)."""
    return bool(st.session_state.get(f"{REVEALED}{stop_key}"))


def seen() -> Any:
    """The (room code, version) this tab last drew, or None."""
    return st.session_state.get(SEEN)


def copy_position(stop_keys: Iterable[str], shown: Iterable[str], drawn: tuple[str, int]) -> None:
    """The room's position into this tab: each stop's row revealed or not (``shown``), the level's radio and
    the phones' toggle to start again from the address, and ``drawn`` (room code, version) as seen."""
    shown = set(shown)
    for key in (LEVEL, VOTE_ON):
        st.session_state.pop(key, None)
    for key in stop_keys:
        st.session_state[f"{REVEALED}{key}"] = key in shown
    st.session_state[SEEN] = drawn


def level_chosen() -> str | None:
    """The narration level chosen on the radio, or None."""
    return st.session_state.get(LEVEL)


def voting_chosen() -> bool:
    """Whether the "Phones vote" toggle is on."""
    return bool(st.session_state.get(VOTE_ON))


def colours_chosen() -> tuple[str, bool]:
    """The palette and log-scale choices of the sidebar (blues and linear until chosen)."""
    return str(st.session_state.get(PALETTE, "blues")), bool(st.session_state.get(LOG))


def guess_key(stop_key: str) -> str:
    """The key of stop ``stop_key``'s guess pills."""
    return f"{GUESS}{stop_key}"


def hands_keys(ballot: str) -> tuple[str, str]:
    """The keys of a check question's two counts: hands up in all, hands up for the right answer."""
    return f"{HANDS_ALL}{ballot}", f"{HANDS_RIGHT}{ballot}"


def hands(ballot: str) -> tuple[int, int]:
    """The hands typed for a check question: (for the right answer, in all), 0 where nothing is typed."""
    every, right = hands_keys(ballot)
    return st.session_state.get(right) or 0, st.session_state.get(every) or 0


# ----------------------------------------------------------------------------------------------
# The phone's page
# ----------------------------------------------------------------------------------------------


def phone_token() -> Any:
    """This browser's token as kept in the session, or None."""
    return st.session_state.get(PHONE)


def keep_phone_token(token: str) -> None:
    """Keep this browser's token in the session."""
    st.session_state[PHONE] = token


def tell(outcome: object) -> None:
    """What became of a tap, for the next run of the page to say."""
    st.session_state[OUTCOME] = outcome


def told() -> Any:
    """What became of the last tap (said once: it is forgotten), or None."""
    return st.session_state.pop(OUTCOME, None)


def code_typed() -> str:
    """The room code typed on the phone, as typed ("" before)."""
    return str(st.session_state.get(CODE, ""))


def tap_key(serial: int, choice: int) -> str:
    """The key of a word's button on the phone (question ``serial``, choice ``choice``)."""
    return f"{TAP}{serial}_{choice}"
