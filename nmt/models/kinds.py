"""What a checkpoint is, described once: kind, context mode, name, label and colour.

Every page, the checkpoint catalogue and the stepper's toggle read a checkpoint's description from
:func:`nmt.models.registry.describe_model` (its config, and the context mode it is decoded in; each kind's
and mode's description is its record there) instead of keeping their own tables of names. Plain data:
no model is loaded, nothing here imports Streamlit.

Kinds: ``rnnsearch`` (Bahdanau et al. 2015, attention), ``rnnencdec`` (trained with one fixed
summary c), ``ablation`` (attention weights decoded with c_i frozen to the summary: untrained),
``mean`` (uniform α, decoded or trained so), ``luong`` (Luong et al. 2015, any variant) and
``ensemble`` (checkpoints decoding together, :mod:`nmt.decoding.ensemble`; its trace's α is the members' mean).
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from nmt.models.equations import CONTEXTS, ENSEMBLE, LookText

# One colour per model on every page (issue 21). The hue says what c_i is (blues: attention, a fresh
# c_i; oranges: one fixed summary c trained so; red: the untrained frozen ablation; green: the mean;
# teal, magenta, brown: Luong's global, local-p and local-m attention, global's score in its shade: dot
# light, general middle, concat dark); the shade tells apart models of one kind: a name ending in "-30"
# (trained on sentences up to 30 words, the paper's RNNsearch-30) is light, "-50" dark, any other the
# middle shade. The same checkpoint, or the results file's entry of that model, gets the same colour in
# every view (tests/test_model_colours.py).
SHADES = {  # kind: (light "-30", middle, dark "-50")
    "rnnsearch": ("#4292c6", "#206fb2", "#08306b"),
    "rnnencdec": ("#fd8d3c", "#e6550d", "#a63603"),
}
LUONG_COLOURS = {"global": "#01665e", "local-p": "#c51b7d", "local-m": "#8c510a"}
LUONG_GLOBAL_SCORES = {"dot": "#2a7f78", "general": "#01665e", "concat": "#003c30"}  # ≥ 4.5:1 on white
ABLATION_COLOUR = "#b2182b"
ATTENTION_COLOUR = SHADES["rnnsearch"][1]  # a fresh c_i per word (the heatmaps' blue)
FIXED_COLOUR = SHADES["rnnencdec"][1]  # one fixed c
MEAN_COLOUR = "#31a354"
ENSEMBLE_COLOUR = "#7b4fa6"  # several models' log p averaged (nmt.decoding.ensemble)


def model_colour(kind: str, name: str = "", attention: str = "global", score: str = "general") -> str:
    """The colour of a model of ``kind`` named ``name`` (a checkpoint's file stem or a results file's
    entry); ``attention`` and ``score`` are a Luong model's attention type and score function."""
    if kind == "luong":
        if attention == "global":
            return LUONG_GLOBAL_SCORES.get(score, LUONG_COLOURS["global"])
        return LUONG_COLOURS.get(attention, LUONG_COLOURS["global"])
    if kind in SHADES:
        trained_up_to = re.search(r"-(\d+)$", name)
        shade = {"30": 0, "50": 2}.get(trained_up_to.group(1) if trained_up_to else "", 1)
        return SHADES[kind][shade]
    return {"ablation": ABLATION_COLOUR, "mean": MEAN_COLOUR}.get(kind, FIXED_COLOUR)


def colour_of_name(name: str) -> str:
    """The colour of a model known only by its name in a results file ("RNNsearch-50", "rnnencdec",
    "luong-local-p"): its kind read from the name, then :func:`model_colour`."""
    low = name.lower()
    if "luong" in low:
        return model_colour("luong", name, next((a for a in ("local-p", "local-m") if a in low), "global"),
                            next((f for f in ("dot", "concat") if f in low), "general"))
    kind = "rnnencdec" if "encdec" in low else "mean" if "mean" in low else "rnnsearch"
    return model_colour(kind, name)


@dataclass(frozen=True)
class ModelDescription:
    """One checkpoint as decoded in one context mode.

    ``name`` is short (tables, pickers, column heads), ``label`` one line saying what c_i is,
    ``note`` the half-line a comparison column adds under the name.
    """

    kind: str  # rnnsearch | rnnencdec | ablation | mean | luong | ensemble
    context: str  # the mode it decodes in: attention | fixed | mean
    name: str
    label: str
    note: str
    colour: str
    paper: str = ""  # added to the name where models of two papers meet (the comparison page)
    look: LookText = CONTEXTS["attention"]  # how it forms c_i, in equations and words (nmt.models.equations)

    @property
    def has_alpha(self) -> bool:
        """Whether its decodings record α (any mode but the fixed summary); traces say it per step."""
        return self.context != "fixed"

    @property
    def full_name(self) -> str:
        """The name with its paper, e.g. "RNNsearch (Bahdanau 2015)"."""
        return f"{self.name} ({self.paper})" if self.paper else self.name


def luong_name(config: Mapping[str, Any]) -> str:
    """E.g. "Luong 2015, local-p, general, input feeding", read from a Luong config."""
    feeding = "input feeding" if config.get("input_feeding", True) else "no input feeding"
    return ", ".join(["Luong 2015", str(config.get("attention", "global")), str(config.get("score", "?")), feeding])


def describe_ensemble(members: list[str]) -> ModelDescription:
    """E.g. "Ensemble (3): RNNsearch + Luong general + Luong local-p" (``members``: each member's short name,
    :func:`nmt.models.registry.short_name`); its α is the members' mean."""
    name = f"Ensemble ({len(members)}): " + " + ".join(members)
    return ModelDescription("ensemble", "attention", name,
                            f"{name}: the members' log p averaged per step and renormalised; α is the mean of "
                            "their α", "the members' log p averaged per step and renormalised", ENSEMBLE_COLOUR,
                            look=ENSEMBLE)
