"""One record per model kind and per context mode: what the code asks instead of reading ``arch`` strings.

As fairseq's ``register_model``: each kind a checkpoint's config names (``arch``: ``rnnsearch``, ``luong``)
has one :class:`Kind`: its config and model classes (the builder, and the capabilities its config alone
answers), its description and its Look text; each context mode of RNNsearch (``attention``, ``fixed``,
``mean``) has one :class:`Mode`: its description (as trained, or decoded so against its training) and its
Look text. :func:`build_model`, :func:`capabilities_of`, :func:`describe_model` and :func:`look_text` read
the records; a config whose kind or mode has none is refused, never described as another
(``tests/test_registry.py`` checks that every kind and mode has every part).

The per-kind parts that live above this layer are keyed by the same names and checked the same way: the
phases a step is split into (:data:`nmt.decoding.phases.PARTS`) and their cards (:mod:`ui.stepper.views_phases`).
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any

from nmt.models import kinds
from nmt.models.contract import Capabilities
from nmt.models.equations import CONTEXTS, ENSEMBLE, LookText, luong_look
from nmt.models.kinds import ATTENTION_COLOUR, FIXED_COLOUR, MEAN_COLOUR, ModelDescription, luong_name, model_colour
from nmt.models.luong import LuongConfig, LuongNMT
from nmt.models.rnnsearch import CONTEXT_MODES, ModelConfig, RNNSearch

Config = Mapping[str, Any]


@dataclass(frozen=True)
class Mode:
    """One context mode of RNNsearch: its description when it is the trained mode (``trained``) and when
    weights trained otherwise are decoded in it (``decoded``; None: the same), and its Look text."""

    trained: ModelDescription
    look: LookText
    decoded: ModelDescription | None = None

    def describe(self, trained_so: bool) -> ModelDescription:
        """Its description, for weights trained in this mode or not."""
        return self.trained if trained_so or self.decoded is None else self.decoded


MODES: dict[str, Mode] = {
    "attention": Mode(ModelDescription(
        "rnnsearch", "attention", "RNNsearch", "RNNsearch: a fresh context c_i for every target word",
        "a fresh context c_i = Σ_j α_ij h_j for every word", ATTENTION_COLOUR, "Bahdanau 2015"),
        CONTEXTS["attention"]),
    "fixed": Mode(ModelDescription(
        "rnnencdec", "fixed", "RNNencdec", "RNNencdec: one fixed summary c for every target word",
        "one fixed summary c, trained that way", FIXED_COLOUR), CONTEXTS["fixed"],
        decoded=ModelDescription("ablation", "fixed", "RNNsearch, c_i frozen",
                                 "RNNsearch weights with c_i frozen to the summary c (untrained ablation)",
                                 "RNNsearch weights reading a fixed c (an untrained ablation)", FIXED_COLOUR)),
    "mean": Mode(ModelDescription(
        "mean", "mean", "mean context", "mean context: uniform α, the same average c for every target word",
        "c = the mean of the annotations (uniform α)", MEAN_COLOUR), CONTEXTS["mean"]),
}


def mode(name: str) -> Mode:
    """The record of context mode ``name``; an unknown mode is an error, never another mode's text."""
    if name not in MODES:
        raise ValueError(f"context mode must be one of {tuple(MODES)}, got {name!r}")
    return MODES[name]


def _rnnsearch_describe(config: Config, context: str) -> ModelDescription:
    trained = str(config.get("context") or "attention")
    return mode(context).describe(trained_so=context == trained)


def _luong_describe(config: Config, context: str) -> ModelDescription:
    name = luong_name(config)
    return ModelDescription("luong", context, name, f"{name}: attends after each recurrent step",
                            "attends after each recurrent step (from h_t)", ATTENTION_COLOUR)


def _luong_look(config: Config, context: str) -> LookText:
    return luong_look(str(config.get("score", "general")), str(config.get("attention", "global")))


def _luong_short(config: Config) -> str:
    attention, score = str(config.get("attention", "global")), str(config.get("score", "?"))
    if attention == "global":
        return f"Luong {score}"
    return f"Luong {attention}" + ("" if score == "general" else f" {score}")


@dataclass(frozen=True)
class Kind:
    """One kind of checkpoint (``arch``): ``config`` and ``model`` classes (``model(config, init=…)`` builds it,
    ``model.capabilities_for(config)`` says what it can do), ``describe(config, mode)`` and
    ``look(config, mode)`` (its :class:`ModelDescription` and :class:`LookText` decoded in ``mode``) and
    ``short(config)`` (a few words for an ensemble's member list)."""

    config: type[ModelConfig] | type[LuongConfig]
    model: type[RNNSearch] | type[LuongNMT]
    describe: Callable[[Config, str], ModelDescription]
    look: Callable[[Config, str], LookText]
    short: Callable[[Config], str]


KINDS: dict[str, Kind] = {
    "rnnsearch": Kind(ModelConfig, RNNSearch, _rnnsearch_describe, lambda config, context: mode(context).look,
                      lambda config: "RNNencdec" if config.get("context") == "fixed" else "RNNsearch"),
    "luong": Kind(LuongConfig, LuongNMT, _luong_describe, _luong_look, _luong_short),
}
ARCHS = tuple(KINDS)
"""The kinds a checkpoint's config may name (``arch``; none means RNNsearch)."""


def kind(config: Config) -> Kind:
    """The record of the kind ``config`` names (``arch``, default ``rnnsearch``); an unknown one is an error."""
    arch = config.get("arch", "rnnsearch")
    if arch not in KINDS:
        raise ValueError(f"arch must be one of {ARCHS}, got {arch!r}")
    return KINDS[arch]


def build_model(cfg: dict[str, Any], init: bool = True) -> RNNSearch | LuongNMT:
    """The model a config dict describes (RNNSearch without ``arch``)."""
    k = kind(cfg)
    return k.model(k.config.from_dict(cfg), init=init)  # type: ignore[arg-type]


def capabilities_of(cfg: dict[str, Any]) -> Capabilities:
    """What the model a config dict describes can do, answered by its class without building it (a
    checkpoint's config is enough: the pages ask before loading weights)."""
    k = kind(cfg)
    return k.model.capabilities_for(k.config.from_dict(cfg))  # type: ignore[arg-type]


def short_name(config: Config) -> str:
    """A few words for a member of an ensemble: "RNNsearch", "RNNencdec", "Luong general", "Luong local-p"."""
    return kind(config).short(config)


def describe_ensemble(members: list[Config]) -> ModelDescription:
    """An ensemble of checkpoints with the configs ``members``, e.g. "Ensemble (3): RNNsearch + Luong general +
    Luong local-p"."""
    return kinds.describe_ensemble([short_name(m) for m in members])


def describe_model(config: Config, context: str | None = None, name: str = "") -> ModelDescription:
    """The description of a checkpoint with ``config`` decoded in ``context`` (default: as trained);
    ``name`` (its file stem) picks its shade of its kind's colour (:func:`nmt.models.kinds.model_colour`).
    An ensemble's config (``arch`` "ensemble", its ``members``' configs) describes the ensemble."""
    if config.get("arch") == "ensemble":
        return describe_ensemble(list(config.get("members") or []))
    context = context or str(config.get("context") or "attention")
    k = kind(config)
    d = k.describe(config, context)
    return dataclasses.replace(d, colour=model_colour(d.kind, name, str(config.get("attention", "global")),
                                                      str(config.get("score", "general"))),
                               look=k.look(config, context))


def look_text(config: Config, context: str) -> LookText:
    """The :class:`LookText` of a checkpoint with ``config`` decoded in ``context`` (an ensemble's: the mean α)."""
    if config.get("arch") == "ensemble":
        return ENSEMBLE
    return kind(config).look(config, context)


def check_modes() -> None:
    """Every context mode the RNNsearch decoder accepts has its record (run by the completeness test)."""
    missing = set(CONTEXT_MODES) ^ set(MODES)
    if missing:
        raise AssertionError(f"context modes without a record, or records without a mode: {sorted(missing)}")
