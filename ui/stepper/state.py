"""The stepper's session state: the one module of ``ui/stepper`` and ``pages/stepper.py`` that touches
``st.session_state`` (issue 49).

Every key the stepper writes or reads carries :data:`PREFIX`, widget keys included; the rest of the
package names a key without it (``"pos"``, ``"text"``) and this module adds it, so a key is spelt once.
A bound control's key is also its URL parameter (``bind="query-params"``): :mod:`ui.stepper.url` reads
links written before the prefix (``?text=…&step=…``) as well. :data:`KEYS` lists every key; a name not
in it is refused (a typo fails at once, and the list stays complete: ``tests/test_stepper_state.py``).
"""

from __future__ import annotations

from collections.abc import Iterable
from fnmatch import fnmatchcase
from typing import Any

import streamlit as st

PREFIX: str = "sp_"
"""The stepper's key prefix: every session-state key (and so every URL parameter) of the page."""

BOUND_NAMES = ("text", "model", "mode", "beam", "norm", "freeze", "ablation", "present", "paper", "unk", "ens",
               "cand", "cand_k", "temp", "topk", "topp", "seed", "app_rules", "fusion", "beta")
"""The controls kept in the URL, each under its own key."""

_NAMES = (
    *BOUND_NAMES,
    # the view that is not a control: position, forced words, playback, the session's log
    "pos", "plan", "playing", "log", "sel_epoch", "_shown", "_init", "_timer", "_play_clock", "_present_drawn",
    "_show_table", "_model_by_hand", "_typed_switch", "_url_synced", "_url_sync_drawn",
    # what the session decoded and worked out once
    "_stepper", "_beam", "_fresh", "_catalogue", "_phases_replay", "_fusion_steps",
    # widgets not kept in the URL (the preset, the speed, the tabs, the heatmap's pieces / words)
    "w_preset", "w_speed", "w_tab", "w_pieces",
    "btn_reset", "btn_back", "btn_step", "btn_play", "btn_run", "btn_table", "btn_esc",
    "dl_png", "dl_svg", "dl_json", "dl_csv", "fusion_gate", "sample_translations",
    # families keyed at run time (by the decoded words' nonce, the step or the phase card)
    "force_*", "follow_*", "alpha_*", "energy_*", "drift_*", "ens_*", "sample_stages_*",
)
# Not here: the containers' keys ``inputs`` and ``phase_*``, hooks of the page's style
# (``.st-key-…`` in ui/figures/stepper_html.py) that Streamlit keeps out of session state.

KEYS: frozenset[str] = frozenset(PREFIX + n for n in _NAMES)
"""Every session-state key of the stepper (a family built at run time ends in ``*``)."""


def known(full: str) -> bool:
    """Whether ``full`` (a key with its prefix) is one of :data:`KEYS` or of a family there."""
    return full in KEYS or any(k.endswith("*") and fnmatchcase(full, k) for k in KEYS)


def key(name: str) -> str:
    """The session-state key (and, for a bound control, the URL parameter) of the stepper's ``name``."""
    full = PREFIX + name
    if not known(full):
        raise KeyError(f"{full!r} is not one of the stepper's keys (ui.stepper.state.KEYS)")
    return full


def get(name: str, default: Any = None) -> Any:
    """The value under ``name``, or ``default`` when the session has none."""
    return st.session_state.get(key(name), default)


def put(name: str, value: Any) -> None:
    """Set ``name`` (a widget's value too, before the widget is drawn in this run)."""
    st.session_state[key(name)] = value


def has(name: str) -> bool:
    """Whether the session holds ``name``."""
    return key(name) in st.session_state


def pop(name: str, default: Any = None) -> Any:
    """Remove ``name`` and return its value (``default`` when absent)."""
    return st.session_state.pop(key(name), default)


def setdefault(name: str, value: Any) -> Any:
    """``name``'s value, set to ``value`` first when the session has none."""
    return st.session_state.setdefault(key(name), value)


def restate(names: Iterable[str]) -> None:
    """Set each of ``names`` the session holds to its own value (a bound control then writes it to the URL)."""
    for n in names:
        if has(n):
            put(n, get(n))


def ours() -> list[str]:
    """The session's keys that carry the stepper's prefix (for the tests' check against :data:`KEYS`)."""
    return sorted(k for k in st.session_state if str(k).startswith(PREFIX))


# Typed accessors for what the page and the panels read most.

def pos() -> int:
    """The position: target words produced."""
    return int(st.session_state[key("pos")])


def set_pos(value: int) -> None:
    put("pos", value)


def playing() -> bool:
    """Whether Play runs."""
    return bool(get("playing"))


def present() -> bool:
    """Whether presentation mode is on."""
    return bool(get("present"))


def mode() -> str:
    """The decoding mode: greedy, beam or sample."""
    return str(get("mode"))


def text() -> str:
    """The sentence in the box."""
    return str(get("text"))


def plan() -> dict[int, str]:
    """The forced words by target position."""
    return st.session_state[key("plan")]
