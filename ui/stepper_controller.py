"""The stepper's controller: session state, callbacks, decoding state and replay, and the event log.

The stepper page (``app.py``) draws; this module decides. Everything a session owns lives in
``st.session_state``: its inputs (``w_*``), its position ``pos`` (target words produced), its forced
words ``plan``, playback, and its own :class:`~nmt.decoding.Stepper` or beam trace, while the model
itself is shared by every session (``ui.models.load``). The view is the :class:`ui.views.stepper_state.View`
written to the URL after each run, so a copied link reopens it.
"""

from __future__ import annotations

import streamlit as st

from nmt.checkpoint import LoadedModel
from nmt.decoding import Stepper, beam_search
from nmt.trace import DecodeTrace
from ui import models
from ui.presets import BY_NAME, PRESETS
from ui.views import stepper_state as vs
from ui.views.common import EOS

MAX_SRC_TOKENS = 80
TOPK = 5
CUSTOM = "(your own sentence)"
DEFAULT_PRESET = "Reordered phrase"

ss = st.session_state



# ----------------------------------------------------------------------------------------------
# Session state, callbacks, event log
# ----------------------------------------------------------------------------------------------


def log_event(who: str, what: str) -> None:
    """Add a line to this session's event log."""
    vs.add_event(ss["log"], who, what, ss.get("pos", 0))


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
    if ss.get("_init"):
        return
    params = dict(vs.query_snapshot(st.query_params))
    view = vs.view_from_query(params)
    if "text" not in params:
        preset = BY_NAME[DEFAULT_PRESET]
        view.text, view.freeze = preset.text, preset.freeze
    ss["w_text"] = view.text
    ss["w_preset"] = matching_preset(view.text, view.freeze)
    ss["w_model"] = view.model
    ss["w_mode"] = view.mode
    ss["w_beam"] = view.beam
    ss["w_norm"] = view.norm
    ss["w_freeze"] = view.freeze
    ss["w_ablation"] = view.ablation
    ss["w_speed"] = 0.5
    ss["pos"] = view.step
    ss["plan"] = dict(view.plan)
    ss["playing"] = False
    ss["_timer"] = None
    ss["sel_epoch"] = 0
    ss["log"] = []
    ss["_init"] = True
    log_event("you", "opened the page" + (" from a shared link" if params else ""))


WIDGET_KEYS = ("w_text", "w_preset", "w_model", "w_mode", "w_beam", "w_norm", "w_freeze", "w_ablation", "w_speed")


def keep_widget_values() -> None:
    """Keep inputs across runs in which their widget is not drawn.

    Streamlit forgets a widget's value when a run does not draw it (the beam slider in greedy
    mode, the speed slider while the sentence is empty); writing each value back into
    ``st.session_state`` at the top of the run keeps it (the documented way to stop the cleanup).
    """
    for k in WIDGET_KEYS:
        if k in ss:
            ss[k] = ss[k]


def pause() -> None:
    if ss.get("playing"):
        ss["playing"] = False
        log_event("you", "pause")


def on_text() -> None:
    """A new sentence: start from the first word, forget forced words."""
    pause()
    ss["pos"], ss["plan"] = 0, {}
    ss["w_preset"] = matching_preset(ss["w_text"], ss["w_freeze"])
    log_event("you", "typed a new sentence")


def on_preset() -> None:
    """Load a preset's sentence and bottleneck setting, from the first word."""
    name = ss["w_preset"]
    if name not in BY_NAME:
        return
    p = BY_NAME[name]
    pause()
    ss["w_text"], ss["w_freeze"], ss["w_ablation"] = p.text, p.freeze, False
    ss["pos"], ss["plan"] = 0, {}
    log_event("you", f"loaded the preset “{name}”")


def on_setting(what: str) -> None:
    """A model, mode or toggle change: keep the position so the two views can be compared."""
    pause()
    value = ss.get({"model": "w_model", "mode": "w_mode", "beam": "w_beam", "norm": "w_norm",
                    "freeze": "w_freeze", "ablation": "w_ablation"}[what])
    if what == "freeze":
        log_event("you", "froze c_i (RNNencdec setting)" if value else "unfroze c_i (fresh context per word)")
    elif what == "ablation":
        log_event("you", "freeze applies to the RNNsearch weights (ablation)" if value
                  else "freeze shows the RNNencdec")
    else:
        log_event("you", f"set {what} to {value}")


def on_step() -> None:
    pause()
    ss["pos"] = ss["pos"] + 1
    log_event("you", "step")


def on_back() -> None:
    pause()
    ss["pos"] = max(0, ss["pos"] - 1)
    log_event("you", f"back to {ss['pos']} words")


def on_reset() -> None:
    pause()
    ss["pos"], ss["plan"] = 0, {}
    log_event("you", "reset")


def on_run() -> None:
    pause()
    ss["pos"] = vs.MAX_STEP
    log_event("you", "run to the end")


def on_play() -> None:
    if ss.get("playing"):
        pause()
    else:
        ss["playing"] = True
        log_event("you", f"play ({ss['w_speed']:g} s per word)")


def on_force(i: int, word: str) -> None:
    """Force ``word`` at target position ``i`` and continue decoding from there."""
    pause()
    ss["plan"] = vs.force_plan(ss["plan"], i, word)
    ss["pos"] = i + 1
    ss["sel_epoch"] += 1
    log_event("you", f"forced “{word}” at step {i}")


def on_follow() -> None:
    ss["sel_epoch"] += 1


# ----------------------------------------------------------------------------------------------



# ----------------------------------------------------------------------------------------------
# Decoding state
# ----------------------------------------------------------------------------------------------


def get_stepper(lm: LoadedModel, choice: models.Choice, text: str) -> tuple[Stepper, bool]:
    """This session's stepper for the inputs (built anew when they change); True if new."""
    sig = (str(choice.ckpt.path), choice.ckpt.mtime, text, choice.context)
    cached = ss.get("_stepper")
    if cached is not None and cached[0] == sig:
        return cached[1], False
    stepper = Stepper(lm, text, context=choice.context, topk=TOPK, max_src_tokens=MAX_SRC_TOKENS)
    ss["_stepper"] = (sig, stepper)
    ss["_fresh"] = True
    return stepper, True


def get_beam(lm: LoadedModel, choice: models.Choice, text: str, k: int, norm: str) -> tuple[DecodeTrace, bool]:
    """This session's beam-search trace for the inputs (decoded anew when they change)."""
    sig = (str(choice.ckpt.path), choice.ckpt.mtime, text, choice.context, k, norm)
    cached = ss.get("_beam")
    if cached is not None and cached[0] == sig:
        return cached[1], False
    with st.spinner(f"Beam search (k={k})…"):
        trace = beam_search(lm, [text], beam=k, n_best=min(k, 5), length_norm=norm, context=choice.context,
                            topk=TOPK, max_src_tokens=MAX_SRC_TOKENS)[0]
    ss["_beam"] = (sig, trace)
    ss["_fresh"] = True
    return trace, True


def current_view(group: models.ModelGroup) -> vs.View:
    """The view as the URL should record it."""
    return vs.View(text=ss["w_text"], model=group.name, mode=ss["w_mode"], beam=ss["w_beam"], norm=ss["w_norm"],
                   freeze=ss["w_freeze"], ablation=ss["w_ablation"], step=ss["pos"], plan=dict(ss["plan"]))


def write_query(group: models.ModelGroup) -> None:
    """Put the view into the URL (only when it changed)."""
    q = vs.view_to_query(current_view(group))
    if not vs.same_query(vs.query_snapshot(st.query_params), q):
        st.query_params.from_dict(q)


def materialize(lm: LoadedModel, choice: models.Choice, text: str) -> tuple[DecodeTrace, bool, int]:
    """Decode up to the session's position; returns the trace so far, whether it ended, the limit.

    Greedy: the stepper is brought to the position with the forced words (one decoder step per
    Step press). Beam: the best hypothesis is cut at the position. New steps go into the log.
    """
    if ss["w_mode"] == "beam":
        full = get_beam(lm, choice, text, ss["w_beam"], ss["w_norm"])[0]
        fresh = ss.pop("_fresh", False)
        before = ss.get("_shown", 0)
        pos = min(ss["pos"], len(full.steps))
        shown = full.steps[:pos]
        words = [s.token for s in shown if s.token != EOS]
        trace = vs.prefix_trace(full, pos, lm.tgt_tok.detokenize(words))
        new = [] if fresh else shown[before:]
        done, limit = pos >= len(full.steps), len(full.steps)
        if fresh:
            log_event("model", f"beam search (k={ss['w_beam']}) wrote “{full.translation}” "
                          f"({len(full.steps)} words); showing {pos}")
    else:
        stepper = get_stepper(lm, choice, text)[0]
        fresh = ss.pop("_fresh", False)
        new = vs.sync_stepper(stepper, ss["plan"], ss["pos"])
        pos, trace, done, limit = stepper.position, stepper.trace, stepper.done, stepper.max_len
        if fresh:
            log_event("model", f"decoding with {choice.label}" + (f"; replayed {pos} words" if pos else ""))
            new = []
    for rec in new:
        log_event("model", vs.describe_step(rec, trace.src_tokens, trace.method))
    ss["pos"] = pos
    ss["_shown"] = pos
    return trace, done, limit


# ----------------------------------------------------------------------------------------------
# The decoding view (a fragment: step, back and play rerun only this part)
# ----------------------------------------------------------------------------------------------
