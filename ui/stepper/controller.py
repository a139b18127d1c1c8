"""The stepper's controller: session state, callbacks, decoding state and replay, and the event log.

The stepper page (``pages/stepper.py``) draws; this module decides. Everything a session owns lives in
``st.session_state``: its inputs (keyed by their URL parameter names: ``text``, ``model``, ``mode`` …),
its position ``pos`` (target words produced), its forced words ``plan``, playback, and its own
:class:`~nmt.decoding.search.Stepper` or beam trace, while the model itself is shared by every session
(``ui.common.models.load``). The URL keeps the view as on every page (:mod:`ui.stepper.url`).
"""

from __future__ import annotations

from typing import Any

import streamlit as st
import torch

from nmt.decoding.sampling import SamplingRule
from nmt.decoding.search import Stepper, beam_search, greedy, prepare_source
from nmt.decoding.trace import DecodeTrace, Replacement
from nmt.models.candidates import CandidateSpec
from nmt.models.checkpoint import LoadedModel
from nmt.text.data import pad_ids
from ui.common import heavy, models, twins, user_models
from ui.common.presets import BY_NAME, PRESETS
from ui.common.typed import TYPED_NOTE
from ui.figures import stepper as sv
from ui.figures import stepper_charts as sc
from ui.figures import stepper_state as vs
from ui.figures.common import EOS
from ui.stepper import url

MAX_SRC_TOKENS = 80
TOPK = 5
CUSTOM = "(your own sentence)"
DEFAULT_PRESET = "Adjective swap"  # on the default (Multi30k) pair: a first launch needs no model switch

ss = st.session_state


# ----------------------------------------------------------------------------------------------
# Session state, callbacks, event log
# ----------------------------------------------------------------------------------------------


def log_event(who: str, what: str, words: int | None = None) -> None:
    """Add a line to this session's event log; ``words``: target words written when it happened
    (by default the words on screen, so a request such as "run to the end" never logs 1000)."""
    vs.add_event(ss["log"], who, what, ss.get("_shown", 0) if words is None else words)


def look() -> sc.Look:
    """How to draw: presentation size, paper style, and the browser's light or dark theme."""
    theme = getattr(getattr(st.context, "theme", None), "type", None)
    return sc.Look(present=bool(ss.get("present")), paper=bool(ss.get("paper")), dark=theme == "dark")


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
    params = url.query()
    view = url.view_from_url()
    if "text" not in params:
        preset = BY_NAME[DEFAULT_PRESET]
        view.text, view.freeze = preset.text, preset.freeze
    url.seed_controls(view)
    ss["w_preset"] = matching_preset(view.text, view.freeze)
    ss["w_speed"] = 0.5
    ss["pos"] = view.step
    ss["plan"] = dict(view.plan)
    ss["playing"] = False
    ss["_timer"] = None
    ss["sel_epoch"] = 0
    ss["log"] = []
    ss["_shown"] = 0
    ss["_model_by_hand"] = "model" in params  # a shared link's pair stays when its sentence is edited
    ss["_init"] = True
    log_event("you", "opened the page" + (" from a shared link" if params else ""))


def pause() -> None:
    ss["_play_clock"] = None
    if ss.get("playing"):
        ss["playing"] = False
        log_event("you", "pause")


def on_text() -> None:
    """A new sentence: start from the first word, forget forced words. A sentence of one's own goes to
    the pair trained for what people type (:func:`ui.common.models.typed_group`), unless a pair was chosen by
    hand; the log says so."""
    pause()
    ss["pos"], ss["plan"] = 0, {}
    ss["w_preset"] = matching_preset(ss["text"], ss["freeze"])
    log_event("you", "typed a new sentence")
    if ss["w_preset"] == CUSTOM and not ss.get("_model_by_hand"):
        typed = models.typed_group(user_models.all_groups(), ss["text"])
        if typed is not None and ss.get("model") != typed:
            ss["model"] = typed
            ss["_typed_switch"] = typed  # the page says so under the sentence (typed_note) until a pair is picked
            log_event("you", f"switched to the checkpoint pair {typed}, trained for everyday sentences")


def on_preset() -> None:
    """Load a preset's sentence and bottleneck setting, from the first word."""
    name = ss["w_preset"]
    if name not in BY_NAME:
        return
    p = BY_NAME[name]
    pause()
    ss["text"], ss["freeze"], ss["ablation"] = p.text, p.freeze, False
    groups = {g.name for g in user_models.all_groups()}
    ss["_model_by_hand"] = False  # a preset chooses its pair; the next typed sentence may move on
    ss.pop("_typed_switch", None)
    if p.group in groups and ss.get("model") != p.group:
        ss["model"] = p.group  # the paper's sentences need the Europarl pair
        log_event("you", f"switched to the checkpoint pair {p.group} for this preset")
    ss["pos"], ss["plan"] = 0, {}
    log_event("you", f"loaded the preset “{name}”")


def on_setting(what: str) -> None:
    """A model, mode or toggle change: keep the position so the two views can be compared."""
    pause()
    value = ss.get(what)  # each control's key is its setting's name
    if what == "model":
        ss["_model_by_hand"] = True  # typed sentences stay on it (on_text)
        ss.pop("_typed_switch", None)
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
    ss["pos"] = ss["pos"] + 1


def on_back() -> None:
    pause()
    ss["pos"] = max(0, ss["pos"] - 1)
    log_event("you", f"back to {ss['pos']} words", ss["pos"])


def on_reset() -> None:
    pause()
    ss["pos"], ss["plan"] = 0, {}
    log_event("you", "reset")


def on_run() -> None:
    pause()
    log_event("you", "run to the end")
    ss["pos"] = vs.MAX_STEP


def on_play() -> None:
    if ss.get("playing"):
        pause()
    else:
        ss["playing"], ss["_play_clock"] = True, None
        log_event("you", f"play ({ss['w_speed']:g} s per word)")


def on_force(i: int, word: str) -> None:
    """Force ``word`` at target position ``i`` and continue decoding from there."""
    pause()
    ss["plan"] = vs.force_plan(ss["plan"], i, word)
    ss["pos"] = i + 1
    ss["sel_epoch"] += 1
    log_event("you", f"forced “{word}” at step {i}")


def on_table() -> None:
    """Open the shown step's energy / weight table (presentation mode's T key)."""
    ss["_show_table"] = True


def on_follow() -> None:
    ss["sel_epoch"] += 1


# ----------------------------------------------------------------------------------------------
# Decoding state
# ----------------------------------------------------------------------------------------------


def candidate_spec() -> CandidateSpec | None:
    """The candidate list the sidebar asks for (K′ = 10, the paper's), or None for the whole vocabulary."""
    return CandidateSpec(int(ss["cand_k"])) if ss.get("cand") else None


def sampling_rule() -> SamplingRule | None:
    """The sampling rule the sidebar asks for in Sample mode (``temp``, ``topk``, ``topp``, ``seed``), else None."""
    if ss.get("mode") != "sample":
        return None
    return SamplingRule(float(ss["temp"]), int(ss["topk"]), float(ss["topp"]), int(ss["seed"]))


def get_stepper(lm: LoadedModel, choice: models.Choice, text: str) -> tuple[Stepper, bool]:
    """This session's stepper for the inputs (built anew when they change); True if new."""
    # lm.path: the file, or an ensemble's files; meta["fusion"]: the LM fused with it, if any
    spec, rule = candidate_spec(), sampling_rule()
    toolkit_rules = not ss.get("app_rules")  # an imported model: its toolkit's rules unless switched off
    sig = (lm.path, choice.ckpt.mtime, text, choice.context, str(lm.meta.get("fusion")), spec, rule, toolkit_rules)
    cached = ss.get("_stepper")
    if cached is not None and cached[0] == sig:
        return cached[1], False
    stepper = Stepper(lm, text, context=choice.context, topk=TOPK, max_src_tokens=MAX_SRC_TOKENS, candidates=spec,
                      sampling=rule, toolkit_rules=toolkit_rules)
    ss["_stepper"] = (sig, stepper)
    ss["_fresh"] = True
    return stepper, True


def current_stepper() -> Stepper | None:
    """This session's stepper as :func:`get_stepper` last built it (read only: views never build one)."""
    cached = ss.get("_stepper")
    return None if cached is None else cached[1]


@heavy.cached("stepper")
def beam_trace(
    _lm: LoadedModel, path: str, mtime: float, text: str, context: str, k: int, norm: str, fusion: str = "None",
    candidates: CandidateSpec | None = None, toolkit_rules: bool = True,
) -> DecodeTrace:
    """The beam search of one (checkpoint, sentence, context, k, normalisation, fusion, candidate list), run
    once for every session (a class opening the same preset searches once); each session then steps
    through it. ``_lm`` is the model loaded from ``path`` (one file, or an ensemble's; fused with an LM as
    named by ``fusion``), left out of the cache key."""
    return beam_search(_lm, [text], beam=k, n_best=min(k, 5), length_norm=norm, context=context, topk=TOPK,
                       max_src_tokens=MAX_SRC_TOKENS, candidates=candidates, toolkit_rules=toolkit_rules)[0]


def get_beam(lm: LoadedModel, choice: models.Choice, text: str, k: int, norm: str) -> tuple[DecodeTrace, bool]:
    """This session's beam-search trace for the inputs (looked up anew only when they change)."""
    sig = (lm.path, choice.ckpt.mtime, text, choice.context, k, norm, str(lm.meta.get("fusion")), candidate_spec(),
           not ss.get("app_rules"))
    cached = ss.get("_beam")
    if cached is not None and cached[0] == sig:
        return cached[1], False
    with st.spinner(f"Beam search (k={k})…"):
        trace = beam_trace(lm, *sig)
    ss["_beam"] = (sig, trace)
    ss["_fresh"] = True
    return trace, True


@heavy.cached("stepper")
def greedy_summary(_lm: LoadedModel, path: str, mtime: float, text: str, context: str, unk: bool
                   ) -> tuple[list[str], list[float]]:
    """A whole greedy translation (words, ``</s>`` left out) and how far each c_i is from c_0.

    With attention, c_i = Σ_j α_ij h_j is summed from the trace's α and the encoder's annotations;
    with a fixed context every c_i is the one summary c, so the distances are 0 by construction.
    ``_lm`` is the checkpoint at ``path`` (the cache key), loaded by the caller.
    """
    lm = _lm
    t = greedy(lm, [text], context=context, topk=1, max_src_tokens=MAX_SRC_TOKENS)[0]
    words = sv.output_words(t, t.unk_replacements() if unk else None)
    if not t.has_alignment:
        return words, [0.0] * len(words)
    src = prepare_source(lm, text, MAX_SRC_TOKENS)
    ids, lengths = pad_ids([src.ids])
    with torch.no_grad():
        h = lm.model.encode(ids.to(lm.device), lengths.to(lm.device)).memory[0].float().cpu().numpy()  # h_j / h̄_s
    return words, sc.context_drift(t.alpha_matrix()[: len(words)], h)


def bottleneck_sides(group: models.ModelGroup, text: str) -> list[models.Choice]:
    """The models the bottleneck comparison shows: the fresh-c_i one and the frozen one of the toggle,
    and, for a pair without an RNNencdec twin of its own, a stand-in trained RNNencdec from another pair
    (:func:`ui.common.twins.stand_in`), every side then labelled with its data and vocabulary. [] when the
    toggle's two sides are one model (nothing to compare)."""
    sides = [models.resolve(group, False, False), models.resolve(group, True, bool(ss["ablation"]))]
    if (sides[0].ckpt.path, sides[0].context) == (sides[1].ckpt.path, sides[1].context):
        return []
    twin = twins.stand_in(group, user_models.all_groups())
    return sides if twin is None else [*(twins.labelled(c) for c in sides), twin]


def typed_note() -> str | None:
    """The line saying that the sentence just typed moved the stepper to the everyday pair, while it holds."""
    if ss.get("_typed_switch") != ss.get("model"):
        return None
    return TYPED_NOTE.format(pair=ss["model"], what="pair in the sidebar")


def stand_in_note(group: models.ModelGroup, choice: models.Choice) -> str:
    """What the frozen view adds for a pair without a twin of its own: where the stand-in RNNencdec is."""
    twin = twins.stand_in(group, user_models.all_groups())
    if twin is None or choice.kind != "ablation":
        return ""
    return (f" Under the band, the RNNencdec of the {twin.ckpt.group} pair, trained with one fixed c on other "
            "data and vocabularies, translates the same sentence beside it.")


def frozen_choice(group: models.ModelGroup) -> models.Choice:
    """What the stepper decodes with c_i frozen, as the toggle and the advanced checkbox now ask."""
    return models.resolve(group, True, bool(ss.get("ablation")))


def bottleneck_pair(
    group: models.ModelGroup, text: str
) -> tuple[list[tuple[str, list[str], list[float]]], list[str], list[bool]] | None:
    """The sides of the toggle on this sentence (:func:`bottleneck_sides`): (label, words, c_i distances)
    for each, their colours and whether each reads one fixed c; None when there is nothing to compare."""
    sides = bottleneck_sides(group, text)
    if not sides:
        return None
    series = [(c.label, *greedy_summary(models.load(c.ckpt), str(c.ckpt.path), c.ckpt.mtime, text, c.context,
                                        bool(ss["unk"]))) for c in sides]
    return series, [c.description.colour for c in sides], [not c.description.has_alpha for c in sides]


def replacements(trace: DecodeTrace) -> dict[int, Replacement]:
    """What each ``<unk>`` output becomes (the dictionary's word or the copied source word), when the
    replacement is on."""
    return trace.unk_replacements() if ss.get("unk") else {}


def catalogue(groups: list[models.ModelGroup]) -> tuple[dict[str, str], list[dict[str, Any]]]:
    """The model picker's labels and the checkpoint table, worked out once per session and folder."""
    sig = tuple((g.name, *(c.mtime for c in g.members)) for g in groups)
    cached = ss.get("_catalogue")
    if cached is None or cached[0] != sig:
        labels = {g.name: models.group_label(g) for g in groups}
        cached = (sig, (labels, [models.describe(c) for g in groups for c in g.members]))
        ss["_catalogue"] = cached
    return cached[1]


def materialize(lm: LoadedModel, choice: models.Choice, text: str) -> tuple[DecodeTrace, bool, int]:
    """Decode up to the session's position; returns the trace so far, whether it ended, the limit.

    Greedy: the stepper is brought to the position with the forced words (one decoder step per
    Step press). Beam: the stored best hypothesis is cut at the position (no decoding at all).
    New steps go into the log, each with the number of words written by then.
    """
    if ss["mode"] == "beam":
        full = get_beam(lm, choice, text, ss["beam"], ss["norm"])[0]
        fresh = ss.pop("_fresh", False)
        before = ss.get("_shown", 0)
        pos = min(ss["pos"], len(full.steps))
        shown = full.steps[:pos]
        words = [s.token for s in shown if s.token != EOS]
        trace = vs.prefix_trace(full, pos, lm.tgt_tok.detokenize(words))
        new = [] if fresh else shown[before:]
        done, limit = pos >= len(full.steps), len(full.steps)
        if fresh:
            log_event("model", f"beam search (k={ss['beam']}) wrote “{full.translation}” "
                               f"({len(full.steps)} words); showing {pos}", pos)
    else:
        stepper = get_stepper(lm, choice, text)[0]
        fresh = ss.pop("_fresh", False)
        planned = dict(ss["plan"])
        new = vs.sync_stepper(stepper, ss["plan"], ss["pos"])
        for i in sorted(planned.keys() - ss["plan"].keys()):
            log_event("model", f"“{planned[i]}” is not in this sentence's candidate list: at step {i} the model "
                               "writes its own word", i)
        pos, trace, done, limit = stepper.position, stepper.trace, stepper.done, stepper.max_len
        if fresh:
            log_event("model", f"decoding with {choice.label}" + (f"; replayed {pos} words" if pos else ""), pos)
            new = []
    for rec in new:
        log_event("model", vs.describe_step(rec, trace), rec.i + 1)
    ss["pos"] = pos
    ss["_shown"] = pos
    return trace, done, limit


def nonce(choice: models.Choice, trace: DecodeTrace) -> str:
    """A key part that changes with the decoded words and the model, so a new heatmap (and its
    selection) replaces the old one, and with "follow the latest step" (which clears a selection)."""
    words = abs(hash(tuple(s.token_id for s in trace.steps))) % 10**8
    return f"{choice.kind}{int(trace.method == 'beam')}_{len(trace.steps)}_{words}_{ss['sel_epoch']}"


def translation_text(lm: LoadedModel, trace: DecodeTrace) -> str:
    """The detokenised translation so far, with each ``<unk>`` replaced when that is on."""
    return lm.tgt_tok.detokenize(sv.output_words(trace, replacements(trace)))


def ended(trace: DecodeTrace, done: bool) -> str | None:
    """How decoding ended, for the line under the latest word (None while it goes on)."""
    if not done:
        return None
    if trace.method == "beam":
        return "End of the beam's best hypothesis."
    return "Finished: the model wrote </s>." if trace.finished else "Stopped at the length limit."
