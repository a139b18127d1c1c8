"""The stepper's controller: the session's first view, the callbacks, playback and the event log.

The stepper page (``pages/stepper.py``) draws; this module decides. Everything a session owns lives in its
state (:mod:`ui.stepper.state`, every key prefixed ``sp_``): its inputs (each bound control keyed by its URL
parameter: ``sp_text``, ``sp_model``, ``sp_mode`` …), its position ``pos`` (target words produced), its forced
words ``plan`` and playback; :mod:`ui.stepper.decoding` keeps what it decoded. The URL keeps the view as on
every page (:mod:`ui.stepper.url`).
"""

from __future__ import annotations

import time
from typing import Any

import streamlit as st

from ui.common import models, user_models
from ui.common.presets import BY_NAME, PRESETS
from ui.figures import stepper_charts as sc
from ui.figures import stepper_state as vs
from ui.stepper import state, url

CUSTOM = "(your own sentence)"
DEFAULT_PRESET = "Adjective swap"  # on the default (Multi30k) pair: a first launch needs no model switch


# ----------------------------------------------------------------------------------------------
# Session state, callbacks, event log
# ----------------------------------------------------------------------------------------------


def log_event(who: str, what: str, words: int | None = None) -> None:
    """Add a line to this session's event log; ``words``: target words written when it happened
    (by default the words on screen, so a request such as "run to the end" never logs 1000)."""
    vs.add_event(state.get("log"), who, what, state.get("_shown", 0) if words is None else words)


def look() -> sc.Look:
    """How to draw: presentation size, paper style, and the browser's light or dark theme."""
    theme = getattr(getattr(st.context, "theme", None), "type", None)
    return sc.Look(present=bool(state.get("present")), paper=bool(state.get("paper")), dark=theme == "dark")


def matching_preset(text: str, freeze: bool) -> str:
    """The preset whose sentence and toggle match, else the custom entry."""
    for p in PRESETS:
        if p.text == text and p.freeze == freeze:
            return p.name
    for p in PRESETS:
        if p.text == text:
            return p.name
    return CUSTOM


def init_session() -> None:
    """On a session's first run, set every input from the URL (or the default preset)."""
    if state.get("_init"):
        return
    params = url.query()
    view = url.view_from_url()
    url.move_old_names()  # a link from before the prefix: its parameters under their new names
    if "text" not in params:
        preset = BY_NAME[DEFAULT_PRESET]
        view.text, view.freeze = preset.text, preset.freeze
    url.seed_controls(view)
    state.put("w_preset", matching_preset(view.text, view.freeze))
    state.put("w_speed", 0.5)
    state.set_pos(view.step)
    state.put("plan", dict(view.plan))
    state.put("playing", False)
    state.put("_timer", None)
    state.put("sel_epoch", 0)
    state.put("log", [])
    state.put("_shown", 0)
    state.put("_model_by_hand", "model" in params)  # a shared link's pair stays when its sentence is edited
    state.put("_init", True)
    log_event("you", "opened the page" + (" from a shared link" if params else ""))


def bound(name: str) -> dict[str, Any]:
    """A control kept in the URL: its key (its URL parameter too), the binding, and the callback that logs a
    change of it (:func:`on_setting`)."""
    return {"key": state.key(name), **url.BOUND, "on_change": on_setting, "args": (name,)}


def pause() -> None:
    state.put("_play_clock", None)
    if state.get("playing"):
        state.put("playing", False)
        log_event("you", "pause")


def on_text() -> None:
    """A new sentence: start from the first word, forget forced words. A sentence of one's own goes to
    the pair trained for what people type (:func:`ui.common.models.typed_group`), unless a pair was chosen by
    hand; the log says so."""
    pause()
    state.set_pos(0)
    state.put("plan", {})
    state.put("w_preset", matching_preset(state.text(), state.get("freeze")))
    log_event("you", "typed a new sentence")
    if state.get("w_preset") == CUSTOM and not state.get("_model_by_hand"):
        typed = models.typed_group(user_models.all_groups(), state.text())
        if typed is not None and state.get("model") != typed:
            state.put("model", typed)
            state.put("_typed_switch", typed)  # the page says so under the sentence (typed_note) until a pair is picked
            log_event("you", f"switched to the checkpoint pair {typed}, trained for everyday sentences")


def on_preset() -> None:
    """Load a preset's sentence and bottleneck setting, from the first word."""
    name = state.get("w_preset")
    if name not in BY_NAME:
        return
    p = BY_NAME[name]
    pause()
    state.put("text", p.text)
    state.put("freeze", p.freeze)
    state.put("ablation", False)
    groups = {g.name for g in user_models.all_groups()}
    state.put("_model_by_hand", False)  # a preset chooses its pair; the next typed sentence may move on
    state.pop("_typed_switch", None)
    if p.group in groups and state.get("model") != p.group:
        state.put("model", p.group)  # the paper's sentences need the Europarl pair
        log_event("you", f"switched to the checkpoint pair {p.group} for this preset")
    state.set_pos(0)
    state.put("plan", {})
    log_event("you", f"loaded the preset “{name}”")


def on_setting(what: str) -> None:
    """A model, mode or toggle change: keep the position so the two views can be compared."""
    pause()
    value = state.get(what)  # each control's key is its setting's name
    if what == "model":
        state.put("_model_by_hand", True)  # typed sentences stay on it (on_text)
        state.pop("_typed_switch", None)
    flags = {"present": "presentation mode", "paper": "paper-style heatmap", "unk": "unknown-word replacement",
             "cand": "candidate list", "app_rules": "this app's search rules"}
    if what in flags:
        log_event("you", f"{flags[what]} {'on' if value else 'off'}")
    elif what == "freeze":
        log_event("you", "froze c_i (RNNencdec setting)" if value else "unfroze c_i (fresh context per word)")
    elif what == "ablation":
        log_event("you", "freeze applies to the RNNsearch weights (ablation)" if value
                  else "freeze shows the RNNencdec")
    else:
        log_event("you", f"set {what} to {value}")


def on_step() -> None:
    pause()
    log_event("you", "step")
    state.set_pos(state.pos() + 1)


def on_back() -> None:
    pause()
    state.set_pos(max(0, state.pos() - 1))
    log_event("you", f"back to {state.pos()} words", state.pos())


def on_reset() -> None:
    pause()
    state.set_pos(0)
    state.put("plan", {})
    log_event("you", "reset")


def on_run() -> None:
    pause()
    log_event("you", "run to the end")
    state.set_pos(vs.MAX_STEP)


def on_play() -> None:
    if state.get("playing"):
        pause()
    else:
        state.put("playing", True)
        state.put("_play_clock", None)
        log_event("you", f"play ({state.get('w_speed'):g} s per word)")


def on_force(i: int, word: str) -> None:
    """Force ``word`` at target position ``i`` and continue decoding from there."""
    pause()
    state.put("plan", vs.force_plan(state.plan(), i, word))
    state.set_pos(i + 1)
    state.put("sel_epoch", state.get("sel_epoch") + 1)
    log_event("you", f"forced “{word}” at step {i}")


def on_pick(i: int, nonce: str) -> None:
    """A candidate picked in the top-k pills of the view ``nonce``: force it at target position ``i``
    (:func:`on_force`)."""
    word = state.get(f"force_{nonce}")
    if word is not None:
        on_force(i, word)


def on_table() -> None:
    """Open the shown step's energy / weight table (presentation mode's T key)."""
    state.put("_show_table", True)


def on_follow() -> None:
    state.put("sel_epoch", state.get("sel_epoch") + 1)


def start_run() -> None:
    """The top of each run: the session set up (from the URL on its first view), the bound controls restated
    and the presentation mode this run draws remembered."""
    init_session()
    url.restate_controls()
    state.put("_present_drawn", state.present())


def pace_changed() -> bool:
    """Whether Play's pace or presentation mode changed since the page last ran whole (then it must, to
    register or drop the play timer, or to redraw for presentation); a new pace starts its clock anew."""
    want = state.get("w_speed") if state.playing() else None
    if want != state.get("_timer") or state.present() != state.get("_present_drawn"):
        state.put("_play_clock", None)
        return True
    return False


def advance_play() -> None:
    """While Play runs: move the position to where the clock says (:func:`vs.play_position`)."""
    if state.playing():
        now = time.monotonic()
        clock = state.get("_play_clock") or (state.pos(), now)
        state.put("_play_clock", clock)
        state.set_pos(vs.play_position(state.pos(), clock, now, float(state.get("w_speed"))))


def stop_at_end(done: bool) -> bool:
    """Play reached the end: stop it, log it and write the position; True when it did (the page reruns)."""
    if not (state.playing() and done):
        return False
    state.put("playing", False)
    log_event("model", "reached the end; playback stopped")
    url.write_position()
    return True


def table_asked() -> bool:
    """Whether the T key asked for this step's table since the last run (the request is used up)."""
    return bool(state.pop("_show_table", False))


def play_timer() -> float | None:
    """Seconds between the decoding view's reruns while Play runs, else None (remembered for :func:`pace_changed`)."""
    state.put("_timer", state.get("w_speed") if state.playing() else None)
    return state.get("_timer")
