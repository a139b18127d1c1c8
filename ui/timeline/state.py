"""Watch it learn's session state: the one module of ``pages/watch_it_learn.py`` and :mod:`ui.timeline` that
touches ``st.session_state``.

Every key starts with :data:`PREFIX` and is listed in :data:`KEYS` (a family of keys built at run time as a
pattern ending in ``*``). The run, the sentence, the update and the presentation switch are widgets bound to
the URL parameters of the same names (``wl_run``, ``wl_probe``, ``wl_update``, ``wl_present``); Play is not.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from fnmatch import fnmatchcase

import streamlit as st

from ui.timeline import views as V

PREFIX = "wl_"

RUN, PROBE, UPDATE, PRESENT = "wl_run", "wl_probe", "wl_update", "wl_present"  # widgets bound to the URL
PLAY = "wl_play"  # the Play toggle
FULL_RUN = "wl_full_run"  # set by a run of the whole page, so that the frame tells it from the play timer's
HEAT = "wl_heat_"  # + a model's name: its α chart
CURVES = "wl_curves"  # the curves' chart
DOWNLOADS = "wl_dl"  # the downloads' stem: their buttons are wl_dl_0, wl_dl_1 (ui.common.widgets.downloads)

KEYS: frozenset[str] = frozenset({RUN, PROBE, UPDATE, PRESENT, PLAY, FULL_RUN, f"{HEAT}*", CURVES,
                                  f"{DOWNLOADS}*"})


def listed(key: str, keys: Iterable[str] = KEYS) -> bool:
    """Whether ``key`` is one of ``keys`` (itself, or matched by a pattern ending in ``*``)."""
    return any(key == k or (k.endswith("*") and fnmatchcase(key, k)) for k in keys)


def heat_key(name: str) -> str:
    """The key of a model's α chart (``name`` made safe for a key by the caller)."""
    return f"{HEAT}{name}"


def presenting() -> bool:
    """Whether the presentation switch is on (before it is drawn: whether the URL says ``wl_present=true``)."""
    return bool(st.session_state.get(PRESENT, st.query_params.get(PRESENT) == "true"))


def playing() -> bool:
    """Whether Play is on."""
    return bool(st.session_state.get(PLAY))


def start_run(updates: Sequence[int]) -> bool:
    """A run of the whole page: Play at the last update starts again from the first; the frame is told that
    this run is not its timer's. Returns whether Play is on."""
    on = playing()
    if on and st.session_state.get(UPDATE) == updates[-1]:
        st.session_state[UPDATE] = updates[0]
    st.session_state[FULL_RUN] = True
    return on


def timer_tick() -> bool:
    """Whether this run of the frame is the play timer's own (not one after a run of the whole page)."""
    return not st.session_state.pop(FULL_RUN, False) and playing()


def advance(updates: Sequence[int]) -> bool:
    """Play: the next recorded update, stopping (Play off) at the last. Returns whether Play is still on."""
    now = st.session_state.get(UPDATE, updates[0])
    later = [u for u in updates if u > now]
    if later:
        st.session_state[UPDATE] = later[0]
    else:
        st.session_state[PLAY] = False
    return bool(later)


def snap_update(updates: Sequence[int]) -> None:
    """An update that was not recorded (an old or typed link) moves to the nearest recorded one."""
    if st.session_state.get(UPDATE) not in updates:
        st.session_state[UPDATE] = V.nearest(updates, int(st.session_state.get(UPDATE) or 0))
