"""View state of the stepper page and its round trip through the URL's query parameters.

Everything the page shows is a function of a :class:`View`: the sentence, the model, the decoding
mode, the bottleneck toggle, the forced words (the *plan*) and the step position. The page's
controls keep their values in the URL as every page's do (``bind="query-params"``, the control's key
being the parameter's name); the two parts of the view that are not controls, the position
(``step``) and the forced words (``force``), are written beside them (:mod:`ui.stepper.url`). This module
reads a view from query parameters, tolerating any junk a hand-edited URL may carry and the older
``1``/``0`` flags of links shared before the controls were bound, writes the share link in the
form the bound controls read, and brings a :class:`nmt.decoding.search.Stepper` to the position and forced
words of a view.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from nmt.decoding.search import LENGTH_NORMS, InputError, Stepper
from nmt.decoding.trace import DecodeTrace, StepRecord
from nmt.models.registry import mode
from nmt.text.vocab import UNK_ID

MODES = ("greedy", "beam", "sample")
TEMP_RANGE = (0.1, 2.0)  # sampling's temperature (slider, step 0.1)
TOPK_RANGE = (0, 50)  # sampling's top-k (0: off)
TOPP_RANGE = (0.05, 1.0)  # sampling's top-p (1: off)
SEED_RANGE = (0, 9999)
FUSION_MODES = ("none", "shallow", "deep")  # the fusion choice as ui/stepper/fusion_panel.py offers it
MAX_TEXT_CHARS = 2000  # longer input is cut before tokenisation (the model reads 80 tokens anyway)
MAX_STEP = 1000
BEAM_RANGE = (2, 12)
CANDIDATE_KS = (0, 10, 100, 300, 1000, 3000, 10000)  # K, the most frequent target words in a candidate list
PLAY_CATCH_UP = 4  # at most this many words in one Play tick when the redraws fall behind the clock


@dataclass
class View:
    """What the stepper page shows; serialisable to and from the URL."""

    text: str = ""
    model: str = ""  # model group name (checkpoint prefix), "" = the default
    mode: str = "greedy"  # greedy | beam | sample
    beam: int = 5
    norm: str = "length"  # beam length normalisation
    freeze: bool = False  # the bottleneck toggle: c_i frozen (RNNencdec setting)
    ablation: bool = False  # freeze the RNNsearch weights themselves instead of showing RNNencdec
    step: int = 0  # number of target words produced
    plan: dict[int, str] = field(default_factory=dict)  # forced words by target position
    present: bool = False  # presentation: larger type, sidebar collapsed, no secondary panels
    paper: bool = False  # paper-style heatmap: greyscale, 0 black and 1 white (Fig. 3 of the paper)
    unk: bool = True  # replace an output <unk> by the source word of its largest α (marked as copied)
    ens: bool = False  # decode with the ensemble of the checkpoints sharing the group's vocabularies
    cand: bool = False  # decode over the sentence's candidate list (Jean et al. 2015 §3.2)
    cand_k: int = 1000  # its K most frequent words (one of CANDIDATE_KS)
    fusion: str = "none"  # LM fusion (ui/stepper/fusion_panel.py, its own bound control): none | shallow | deep
    beta: float | None = None  # shallow fusion's β, when it was set
    words: bool = False  # a subword model's heatmap of words (α summed over each word's pieces), not pieces
    temp: float = 1.0  # sampling: temperature
    topk: int = 0  # sampling: top-k, 0 = off
    topp: float = 1.0  # sampling: top-p, 1 = off
    seed: int = 0  # sampling: the seed of every step's draw
    app_rules: bool = False  # an imported model decodes by this app's search rules, not its toolkit's


# ----------------------------------------------------------------------------------------------
# Query parameters
# ----------------------------------------------------------------------------------------------


def _first(params: Mapping[str, Any], key: str) -> str | None:
    """The (last) string value of ``key`` in a mapping of str or list-of-str values."""
    v = params.get(key)
    if isinstance(v, (list, tuple)):
        v = v[-1] if v else None
    return v if isinstance(v, str) else None


def _all(params: Mapping[str, Any], key: str) -> list[str]:
    """Every string value of ``key`` (repeated query parameters come as lists)."""
    v = params.get(key)
    if v is None:
        return []
    if isinstance(v, str):
        return [v]
    return [x for x in v if isinstance(x, str)]


def _int(s: str | None, default: int, lo: int, hi: int) -> int:
    """``s`` as an int clamped to [lo, hi]; ``default`` when it is not a number."""
    try:
        return max(lo, min(hi, int(str(s).strip())))
    except (TypeError, ValueError):
        return default


def _bool(s: str | None, default: bool = False) -> bool:
    """``s`` as a flag: 1/true/yes/on or 0/false/no/off; anything else gives ``default``."""
    v = (s or "").strip().lower()
    if v in ("1", "true", "yes", "on"):
        return True
    if v in ("0", "false", "no", "off"):
        return False
    return default


def _float(s: str | None, default: float, lo: float, hi: float) -> float:
    """``s`` as a float clamped to [lo, hi] (two decimals); ``default`` when it is not a number."""
    try:
        v = float(str(s).strip())
    except (TypeError, ValueError):
        return default
    return default if v != v else round(max(lo, min(hi, v)), 2)


def _choice(s: str | None, options: Sequence[int], default: int) -> int:
    """``s`` as one of ``options`` (ints); anything else gives ``default``."""
    try:
        v = int(str(s).strip())
    except (TypeError, ValueError):
        return default
    return v if v in options else default


def _beta(s: str | None) -> float | None:
    """Shallow fusion's β from the URL, within [0, 1]; None when absent or not a number."""
    try:
        b = float(str(s).strip())
    except (TypeError, ValueError):
        return None
    return min(1.0, max(0.0, b)) if b == b else None  # NaN is no β


def parse_plan(values: Sequence[str]) -> dict[int, str]:
    """Forced words from ``"<position>:<word>"`` strings; malformed entries are skipped."""
    plan: dict[int, str] = {}
    for v in values:
        pos, sep, word = v.partition(":")
        if not sep or not word or not pos.strip().isdigit():
            continue
        k = int(pos)
        if k < MAX_STEP:
            plan[k] = word
    return plan


def format_plan(plan: Mapping[int, str]) -> list[str]:
    """The ``"<position>:<word>"`` strings of a plan, in position order."""
    return [f"{k}:{w}" for k, w in sorted(plan.items())]


def view_from_query(params: Mapping[str, Any]) -> View:
    """A view from query parameters (values str or list of str); unknown or bad values fall back."""
    d = View()
    mode = _first(params, "mode")
    norm = _first(params, "norm")
    fusion = _first(params, "fusion")
    return View(
        text=(_first(params, "text") or "")[:MAX_TEXT_CHARS],
        model=(_first(params, "model") or "")[:200],
        mode=mode if mode in MODES else d.mode,
        beam=_int(_first(params, "beam"), d.beam, *BEAM_RANGE),
        norm=norm if norm in LENGTH_NORMS else d.norm,
        freeze=_bool(_first(params, "freeze")),
        ablation=_bool(_first(params, "ablation")),
        step=_int(_first(params, "step"), 0, 0, MAX_STEP),
        plan=parse_plan(_all(params, "force")),
        present=_bool(_first(params, "present")),
        paper=_bool(_first(params, "paper")),
        unk=_bool(_first(params, "unk"), d.unk),
        ens=_bool(_first(params, "ens")),
        cand=_bool(_first(params, "cand")),
        cand_k=_choice(_first(params, "cand_k"), CANDIDATE_KS, d.cand_k),
        fusion=fusion if fusion in FUSION_MODES else d.fusion,
        beta=_beta(_first(params, "beta")),
        words=_bool(_first(params, "words")),
        temp=_float(_first(params, "temp"), d.temp, *TEMP_RANGE),
        topk=_int(_first(params, "topk"), d.topk, *TOPK_RANGE),
        topp=_float(_first(params, "topp"), d.topp, *TOPP_RANGE),
        seed=_int(_first(params, "seed"), d.seed, *SEED_RANGE),
        app_rules=_bool(_first(params, "app_rules")),
    )


def view_to_query(view: View) -> dict[str, str | list[str]]:
    """Query parameters of a view, as the bound controls write them (flags ``true``/``false``);
    defaults are left out to keep URLs short."""
    q: dict[str, str | list[str]] = {"text": view.text, "model": view.model, "step": str(view.step)}
    if view.mode == "beam":
        q["mode"] = view.mode
        q["beam"] = str(view.beam)
        if view.norm != "length":
            q["norm"] = view.norm
    elif view.mode == "sample":
        q |= {"mode": "sample", "temp": f"{view.temp:g}", "topk": str(view.topk), "topp": f"{view.topp:g}",
              "seed": str(view.seed)}
    if view.freeze:
        q["freeze"] = "true"
    if view.ablation:
        q["ablation"] = "true"
    if view.plan:
        q["force"] = format_plan(view.plan)
    if view.present:
        q["present"] = "true"
    if view.paper:
        q["paper"] = "true"
    if not view.unk:
        q["unk"] = "false"
    if view.ens:
        q["ens"] = "true"
    if view.cand:
        q["cand"] = "true"
        if view.cand_k != View.cand_k:
            q["cand_k"] = str(view.cand_k)
    if view.fusion != "none":
        q["fusion"] = view.fusion
        if view.fusion == "shallow" and view.beta is not None:
            q["beta"] = f"{view.beta:g}"
    if view.words:
        q["words"] = "true"
    if view.app_rules:
        q["app_rules"] = "true"
    return {k: v for k, v in q.items() if v != ""}


def query_snapshot(params: Any) -> dict[str, list[str]]:
    """All values of ``st.query_params`` (or any mapping with ``get_all``) as lists, for comparing."""
    if hasattr(params, "get_all"):
        return {k: list(params.get_all(k)) for k in params}
    return {k: list(_all(params, k)) for k in params}



# ----------------------------------------------------------------------------------------------
# Plans and stepping
# ----------------------------------------------------------------------------------------------


def force_plan(plan: Mapping[int, str], position: int, word: str) -> dict[int, str]:
    """The plan after forcing ``word`` at ``position``: earlier forced words stay, later ones go."""
    out = {k: w for k, w in plan.items() if k < position}
    out[position] = word
    return out


def _matches(rec: StepRecord, plan: Mapping[int, str], stoi: Mapping[str, int]) -> bool:
    """Whether an already decoded step agrees with the plan at its position."""
    if rec.i in plan:
        return rec.forced and rec.token_id == stoi.get(plan[rec.i], UNK_ID)
    return not rec.forced


def sync_stepper(stepper: Stepper, plan: dict[int, str], target: int) -> list[StepRecord]:
    """Bring ``stepper`` to ``target`` words with the plan's forced words; return the new steps.

    Steps that already agree with the plan are kept (so a step costs one decoder step, not a
    whole decode); from the first disagreement on the stepper goes back and decodes again. It
    stops early where decoding ends (``</s>`` or the length limit). A forced word the stepper
    refuses (outside the sentence's candidate list) is dropped from ``plan``, and the model writes
    its own word there.
    """
    stoi = stepper.lm.tgt_vocab.stoi
    keep = 0
    for rec in stepper.trace.steps[:target]:
        if not _matches(rec, plan, stoi):
            break
        keep += 1
    while stepper.position > keep:
        stepper.back()
    new = []
    while stepper.position < target and not stepper.done:
        force = plan.get(stepper.position)
        try:
            new.append(stepper.step(force))
        except InputError:
            if force is None:
                raise
            del plan[stepper.position]
            new.append(stepper.step())
    return new


def prefix_trace(trace: DecodeTrace, n: int, translation: str) -> DecodeTrace:
    """A copy of ``trace`` showing only its first ``n`` steps (the beam view's cursor)."""
    steps = trace.steps[:n]
    return dataclasses.replace(trace, steps=steps, translation=translation,
                               finished=bool(steps) and len(steps) == len(trace.steps) and trace.finished)


# ----------------------------------------------------------------------------------------------
# Event log
# ----------------------------------------------------------------------------------------------

MAX_LOG = 500


def describe_step(rec: StepRecord, trace: DecodeTrace) -> str:
    """One event-log line for what the model did at a step of ``trace`` (plain text, never HTML)."""
    what = f"step {rec.i}: wrote “{rec.token}” (p={rec.prob:.2f})"
    look = mode(trace.context).look  # the mode's phrase (its record, nmt.models.registry)
    if not look.has_energies:
        what += ", " + look.log.format(norm=rec.context_norm)
    elif rec.alpha is not None:
        j = max(range(len(rec.alpha)), key=rec.alpha.__getitem__)
        what += ", " + look.log.format(word=trace.src_tokens[j], weight=rec.alpha[j])
    if rec.forced:
        best, p = rec.topk[0] if rec.topk else ("?", 0.0)
        what += f"; forced by you (the model preferred “{best}”, p={p:.2f})"
    if trace.method == "beam":
        what = "beam best hypothesis, " + what
    return what


def add_event(log: list[dict[str, Any]], who: str, what: str, step: int) -> None:
    """Append an event (capped at :data:`MAX_LOG`, oldest dropped)."""
    n = (log[-1]["#"] + 1) if log else 1
    log.append({"#": n, "who": who, "step": step, "what": what})
    if len(log) > MAX_LOG:
        del log[: len(log) - MAX_LOG]


def play_position(pos: int, clock: tuple[int, float], now: float, speed: float) -> int:
    """Where Play goes at this tick: one word per ``speed`` seconds since it started at ``clock`` =
    (position, time), the first word at once. A redraw slower than ``speed`` (a loaded server) is
    caught up, up to :data:`PLAY_CATCH_UP` words a tick, instead of slowing the pace; every tick
    writes at least one word."""
    start_pos, started = clock
    due = start_pos + 1 + int(max(now - started, 0.0) / speed)
    return min(max(pos + 1, due), pos + PLAY_CATCH_UP)
