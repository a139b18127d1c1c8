"""The stepper's decoding state: the session's own :class:`~nmt.decoding.search.Stepper` or beam trace for
the inputs, brought to the session's position (:func:`materialize`), the bottleneck comparison's translations
and the small answers the panels ask of them. The model itself is shared by every session
(``ui.common.models.load``); what a session decoded is kept in its state (:mod:`ui.stepper.state`).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import streamlit as st
import torch

from nmt.decoding.sampling import SamplingRule
from nmt.decoding.search import InputError, Stepper, beam_search, greedy, prepare_source
from nmt.decoding.trace import DecodeTrace, Replacement
from nmt.models.candidates import CandidateSpec
from nmt.models.checkpoint import LoadedModel
from nmt.text.corpora import shown
from nmt.text.data import pad_ids
from ui.common import heavy, models, twins, user_models
from ui.common.typed import TYPED_NOTE
from ui.figures import stepper as sv
from ui.figures import stepper_charts as sc
from ui.figures import stepper_state as vs
from ui.figures.common import EOS
from ui.stepper import state, url
from ui.stepper.controller import log_event

MAX_SRC_TOKENS = 80
TOPK = 5


def source_trace(lm: LoadedModel, choice: models.Choice, text: str) -> tuple[DecodeTrace | None, str | None]:
    """The session's trace for the sentence (beam or stepper, built when the inputs change) and None, or None
    and why the sentence cannot be translated (then the position goes back to 0 and into the URL)."""
    try:
        if state.mode() == "beam":
            return get_beam(lm, choice, text, state.get("beam"), state.get("norm"))[0], None
        return get_stepper(lm, choice, text)[0].trace, None
    except InputError as e:
        state.set_pos(0)
        url.write_position()
        return None, str(e)


def chosen(group: models.ModelGroup) -> models.Choice:
    """What the toggles ask to decode the group with (before an ensemble is considered)."""
    return models.resolve(group, state.get("freeze"), state.get("ablation"))




def candidate_spec() -> CandidateSpec | None:
    """The candidate list the sidebar asks for (K′ = 10, the paper's), or None for the whole vocabulary."""
    return CandidateSpec(int(state.get("cand_k"))) if state.get("cand") else None


def sampling_rule() -> SamplingRule | None:
    """The sampling rule the sidebar asks for in Sample mode (``temp``, ``topk``, ``topp``, ``seed``), else None."""
    if state.get("mode") != "sample":
        return None
    return SamplingRule(float(state.get("temp")), int(state.get("topk")), float(state.get("topp")),
                        int(state.get("seed")))


def get_stepper(lm: LoadedModel, choice: models.Choice, text: str) -> tuple[Stepper, bool]:
    """This session's stepper for the inputs (built anew when they change); True if new."""
    # lm.path: the file, or an ensemble's files; meta["fusion"]: the LM fused with it, if any
    spec, rule = candidate_spec(), sampling_rule()
    toolkit_rules = not state.get("app_rules")  # an imported model: its toolkit's rules unless switched off
    sig = (lm.path, choice.ckpt.mtime, text, choice.context, str(lm.meta.get("fusion")), spec, rule, toolkit_rules)
    cached = state.get("_stepper")
    if cached is not None and cached[0] == sig:
        return cached[1], False
    stepper = Stepper(lm, text, context=choice.context, topk=TOPK, max_src_tokens=MAX_SRC_TOKENS, candidates=spec,
                      sampling=rule, toolkit_rules=toolkit_rules)
    state.put("_stepper", (sig, stepper))
    state.put("_fresh", True)
    return stepper, True


def current_stepper() -> Stepper | None:
    """This session's stepper as :func:`get_stepper` last built it (read only: views never build one)."""
    cached = state.get("_stepper")
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
           not state.get("app_rules"))
    cached = state.get("_beam")
    if cached is not None and cached[0] == sig:
        return cached[1], False
    with st.spinner(f"Beam search (k={k})…"):
        trace = beam_trace(lm, *sig)
    state.put("_beam", (sig, trace))
    state.put("_fresh", True)
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
    sides = [models.resolve(group, False, False), models.resolve(group, True, bool(state.get("ablation")))]
    if (sides[0].ckpt.path, sides[0].context) == (sides[1].ckpt.path, sides[1].context):
        return []
    twin = twins.stand_in(group, user_models.all_groups())
    return sides if twin is None else [*(twins.labelled(c) for c in sides), twin]


def typed_note() -> str | None:
    """The line saying that the sentence just typed moved the stepper to the everyday pair, while it holds."""
    if state.get("_typed_switch") != state.get("model"):
        return None
    return TYPED_NOTE.format(pair=state.get("model"), what="pair in the sidebar")


def stand_in_note(group: models.ModelGroup, choice: models.Choice) -> str:
    """What the frozen view adds for a pair without a twin of its own: where the stand-in RNNencdec is."""
    twin = twins.stand_in(group, user_models.all_groups())
    if twin is None or choice.kind != "ablation":
        return ""
    return (f" Under the band, the RNNencdec of the {twin.ckpt.group} pair, trained with one fixed c on other "
            "data and vocabularies, translates the same sentence beside it.")


def frozen_choice(group: models.ModelGroup) -> models.Choice:
    """What the stepper decodes with c_i frozen, as the toggle and the advanced checkbox now ask."""
    return models.resolve(group, True, bool(state.get("ablation")))


def bottleneck_pair(
    group: models.ModelGroup, text: str
) -> tuple[list[tuple[str, list[str], list[float]]], list[str], list[bool]] | None:
    """The sides of the toggle on this sentence (:func:`bottleneck_sides`): (label, words, c_i distances)
    for each, their colours and whether each reads one fixed c; None when there is nothing to compare."""
    sides = bottleneck_sides(group, text)
    if not sides:
        return None
    series = [(c.label, *greedy_summary(models.load(c.ckpt), str(c.ckpt.path), c.ckpt.mtime, text, c.context,
                                        bool(state.get("unk")))) for c in sides]
    return series, [c.description.colour for c in sides], [not c.description.has_alpha for c in sides]


def replacements(trace: DecodeTrace) -> dict[int, Replacement]:
    """What each ``<unk>`` output becomes (the dictionary's word or the copied source word), when the
    replacement is on."""
    return trace.unk_replacements() if state.get("unk") else {}


def catalogue(groups: list[models.ModelGroup]) -> tuple[dict[str, str], list[dict[str, Any]]]:
    """The model picker's labels and the checkpoint table, worked out once per session and folder."""
    sig = tuple((g.name, *(c.mtime for c in g.members)) for g in groups)
    cached = state.get("_catalogue")
    if cached is None or cached[0] != sig:
        labels = {g.name: models.group_label(g) for g in groups}
        cached = (sig, (labels, [models.describe(c) for g in groups for c in g.members]))
        state.put("_catalogue", cached)
    return cached[1]


def materialize(lm: LoadedModel, choice: models.Choice, text: str) -> tuple[DecodeTrace, bool, int]:
    """Decode up to the session's position; returns the trace so far, whether it ended, the limit.

    Greedy: the stepper is brought to the position with the forced words (one decoder step per
    Step press). Beam: the stored best hypothesis is cut at the position (no decoding at all).
    New steps go into the log, each with the number of words written by then.
    """
    if state.mode() == "beam":
        full = get_beam(lm, choice, text, state.get("beam"), state.get("norm"))[0]
        fresh = state.pop("_fresh", False)
        before = state.get("_shown", 0)
        pos = min(state.pos(), len(full.steps))
        shown = full.steps[:pos]
        words = [s.token for s in shown if s.token != EOS]
        trace = vs.prefix_trace(full, pos, lm.tgt_tok.detokenize(words))
        new = [] if fresh else shown[before:]
        done, limit = pos >= len(full.steps), len(full.steps)
        if fresh:
            log_event("model", f"beam search (k={state.get('beam')}) wrote “{full.translation}” "
                               f"({len(full.steps)} words); showing {pos}", pos)
    else:
        stepper = get_stepper(lm, choice, text)[0]
        fresh = state.pop("_fresh", False)
        planned = dict(state.plan())
        new = vs.sync_stepper(stepper, state.plan(), state.pos())
        for i in sorted(planned.keys() - state.plan().keys()):
            log_event("model", f"“{planned[i]}” is not in this sentence's candidate list: at step {i} the model "
                               "writes its own word", i)
        pos, trace, done, limit = stepper.position, stepper.trace, stepper.done, stepper.max_len
        if fresh:
            log_event("model", f"decoding with {choice.label}" + (f"; replayed {pos} words" if pos else ""), pos)
            new = []
    for rec in new:
        log_event("model", vs.describe_step(rec, trace), rec.i + 1)
    state.set_pos(pos)
    state.put("_shown", pos)
    return trace, done, limit


def nonce(choice: models.Choice, trace: DecodeTrace) -> str:
    """A key part that changes with the decoded words and the model, so a new heatmap (and its
    selection) replaces the old one, and with "follow the latest step" (which clears a selection)."""
    words = abs(hash(tuple(s.token_id for s in trace.steps))) % 10**8
    return f"{choice.kind}{int(trace.method == 'beam')}_{len(trace.steps)}_{words}_{state.get('sel_epoch')}"


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


def folder_shown(path: Path) -> str:
    """A folder as the page names it (:func:`nmt.text.corpora.shown`)."""
    return shown(path)
