"""Builders of the "Is attention an explanation?" page's surgery panel and debate tests.

The original and the edited translation word by word, the summary of an edit, and the readings of
the permutation and adversarial-α tests (:mod:`nmt.decoding.surgery`, :mod:`nmt.explanation.debate`), from plain
lists the page computed. No model and no Streamlit here: unit-tested on hand-made numbers.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import altair as alt
import numpy as np
import pandas as pd

from ui.figures.common import label_expr, md
from ui.figures.heatmaps import alpha_chart

if TYPE_CHECKING:  # a type only: the builders never touch the model
    from nmt.decoding.surgery import SurgeryPreset

EDIT_LABELS: dict[str, str] = {  # what the surgery radio shows → nmt.decoding.surgery.Edit kind ("freeze": freeze_from)
    "zero": "zero",
    "one-hot": "onehot",
    "uniform": "uniform",
    "shuffle": "shuffle",
    "copy": "copy",
    "freeze": "freeze",
}
ONCE_ONLY = frozenset({"copy", "freeze"})  # kinds that cannot be repeated at every later step
EDIT_HELP = {
    "zero": "set α_ij of one source word to 0 and renormalise the rest",
    "one-hot": "put all of α on one source word",
    "uniform": "spread α evenly over every source token (1/Tx each)",
    "shuffle": "permute α over the source tokens (a seeded random order)",
    "copy": "use the α of another step (From step) of the unedited decoding",
    "freeze": "hold this step's α at every later step too",
}


def preset_edit(preset: SurgeryPreset | None) -> tuple[str, int | None]:
    """The surgery radio's label and the source position of a preset's edit (the first label and
    None without one; "freeze" for a preset that freezes α)."""
    first = next(iter(EDIT_LABELS))
    if preset is None or (not preset.freeze and not preset.edits):  # no preset, or one about the attributions
        return first, None
    if preset.freeze:
        return "freeze", None
    edit = preset.edits[0]
    return next((k for k, v in EDIT_LABELS.items() if v == edit.kind), first), edit.j


# ----------------------------------------------------------------------------------------------
# Surgery: the original and the edited translation, word by word
# ----------------------------------------------------------------------------------------------


def first_difference(a: Sequence[str], b: Sequence[str]) -> int | None:
    """The first position where two token lists differ (a shorter list differs where it ends); None if equal."""
    for i, (x, y) in enumerate(zip(a, b)):
        if x != y:
            return i
    return None if len(a) == len(b) else min(len(a), len(b))


def surgery_frame(
    original: Sequence[str], edited: Sequence[str], edited_steps: Sequence[int],
    original_lp: Sequence[float], edited_lp: Sequence[float], forced_lp: Sequence[float] | None = None,
) -> pd.DataFrame:
    """The two translations aligned position by position, with what happened at each.

    ``original_lp`` / ``edited_lp``: log p of each written word; ``forced_lp``: log p of the
    *original* words with the edit applied (forced decoding), so ``Δ log p`` is what the edit cost
    the model's own word. ``note`` marks the edited steps ("α edited") and the first changed word."""
    first = first_difference(original, edited)
    out = []
    for i in range(max(len(original), len(edited))):
        o = original[i] if i < len(original) else ""
        e = edited[i] if i < len(edited) else ""
        notes = []
        if i in edited_steps:
            notes.append("α edited")
        if first is not None and i == first:
            notes.append("first change")
        elif first is not None and i > first and o != e:
            notes.append("differs")
        olp = float(original_lp[i]) if i < len(original_lp) else math.nan
        flp = float(forced_lp[i]) if forced_lp is not None and i < len(forced_lp) else math.nan
        out.append({"i": i, "original": o, "edited": e, "same": o == e, "note": ", ".join(notes),
                    "log p original": olp, "log p edited": float(edited_lp[i]) if i < len(edited_lp) else math.nan,
                    "Δ log p (original word)": flp - olp})
    return pd.DataFrame(out, columns=["i", "original", "edited", "same", "note", "log p original", "log p edited",
                                      "Δ log p (original word)"])


def surgery_style(frame: pd.DataFrame) -> Any:
    """A pandas Styler of :func:`surgery_frame`: edited steps outlined in blue, changed words in orange."""

    def colour(row: pd.Series) -> list[str]:
        css = ""
        if "α edited" in row["note"]:
            css = "background-color: #dbe9f6; font-weight: 600"
        if not row["same"]:
            css = "background-color: #fde0cf" + ("; font-weight: 600" if "first change" in row["note"] else "")
        return [css] * len(row)

    fmt = {c: "{:.3f}" for c in frame.columns if c.startswith("log p") or c.startswith("Δ")}
    return frame.style.apply(colour, axis=1).format(fmt, na_rep="—")


def surgery_summary(
    original: Sequence[str], edited: Sequence[str], step: int, what: str, delta: float | None = None,
) -> str:
    """One plain paragraph (Markdown, words escaped) about what an edit at ``step`` did."""
    word = original[step] if 0 <= step < len(original) else "(end)"
    head = f"At step {step} (“{md(word)}”) α was changed: {md(what)}. "
    cost = ""
    if delta is not None and math.isfinite(delta):
        cost = (f" log p of “{md(word)}” moved by {delta:+.3f} nats"
                f" (p × {math.exp(delta):.3g}).")
    first = first_difference(original, edited)
    if first is None:
        return head + "The translation stays the same word for word." + cost
    o = original[first] if first < len(original) else "(nothing: it had ended)"
    e = edited[first] if first < len(edited) else "(nothing: it ended)"
    o, e = (f"“{md(x)}”" if not x.startswith("(") else x for x in (o, e))
    where = "at that very step" if first == step else f"from step {first} on"
    return head + f"The translation changes {where}: {e} instead of {o}." + cost


def reference_cost(word: str, step: int, logprob: float, edited: float) -> str:
    """One sentence on what an edit does to the log p of the given translation's word at ``step``."""
    return (f"Your word “{md(word)}” at step {step}: log p {logprob:.3f} with the model's α, {edited:.3f} with the "
            f"edit ({edited - logprob:+.3f} nats, p × {math.exp(edited - logprob):.3g}).")


def surgery_alpha_chart(
    src: Sequence[str], tokens: Sequence[str], alpha: Sequence[Sequence[float] | None], edited_steps: Sequence[int],
    title: str, max_width: int = 420,
) -> alt.TopLevelMixin | None:
    """The α heatmap of one decoding, the edited steps' rows labelled ``✎ word``."""
    labels = [f"✎ {t}" if i in edited_steps else t for i, t in enumerate(tokens)]
    return alpha_chart(src, labels, alpha, title=title, max_width=max_width, legend="bottom")


# ----------------------------------------------------------------------------------------------
# The debate's two tests at one step
# ----------------------------------------------------------------------------------------------


@dataclass
class Debate:
    """The permutation and adversarial tests of one sentence (plain lists, step-major)."""

    tvd: list[list[float]]  # step → permutation → total variation distance of p(· | …)
    flipped: list[list[bool]]  # step → permutation → argmax word changed
    alpha: list[list[float]]  # step → the model's α
    adv_alpha: list[list[float]]  # step → the adversarial α'
    adv_jsd: list[float]  # step → JSD(α', α) in nats
    adv_prob: list[float]  # step → p'(y_i) under α'
    prob: list[float]  # step → p(y_i) under the model's α
    eps: float = 0.01
    n: int = 20

    def to_dict(self) -> dict[str, Any]:
        return dict(self.__dict__)


LN2 = math.log(2.0)
PAD = alt.AutoSizeParams(type="pad")  # the plot keeps its height (Streamlit's default fits axes and legend into it)


def permutation_reading(flipped: Sequence[bool], tvd: Sequence[float], word: str) -> str:
    """A plain sentence about one step's permutation test: how often shuffling α changed the word."""
    n, k = len(flipped), int(sum(bool(f) for f in flipped))
    if not n:
        return "No permutation was run."
    med = float(np.median(tvd)) if len(tvd) else math.nan
    head = (f"Shuffling α changed the word in {k} of {n} trials (median total variation distance of p "
            f"{med:.2f}). ")
    if 2 * k >= n:
        return head + f"At this step the model really uses what α points at to write “{md(word)}”."
    if k == 0 and med < 0.1:
        return head + (f"α hardly matters here: “{md(word)}” comes from the words already written, "
                       "not from where α looks.")
    if k == 0:
        return head + (f"The word “{md(word)}” survives every shuffle, though its probability moves: "
                       "α shapes the distribution but does not decide the word.")
    return head + f"α matters only in part: most shuffles still write “{md(word)}”."


def adversarial_reading(jsd: float, prob: float, adv_prob: float, word: str, eps: float = 0.01,
                        best: str | None = None) -> str:
    """A plain sentence about one step's adversarial α (JSD in nats, at most ln 2 ≈ 0.69). ``best``:
    the model's most likely word where it is not ``word`` (a forced translation)."""
    if not math.isfinite(jsd) or jsd <= 1e-6:
        return (f"No different α was found that keeps “{md(word)}” within ε = {eps:g} of its probability: "
                "at this step the model's α is hard to replace.")
    far = jsd >= 0.25 * LN2
    keeps = (f"still ranks “{md(best)}” first and gives your “{md(word)}”" if best and best != word else
             f"still writes “{md(word)}”, with")
    head = (f"An α {jsd:.2f} nats away from the model's (JSD; at most ln 2 ≈ 0.69) {keeps} p = {prob_text(adv_prob)} "
            f"instead of {prob_text(prob)}. ")
    if prob < eps:
        head += (f"That p is below ε = {eps:g}, so keeping it within ε asks almost nothing: what had to stay is the "
                 "most likely word. ")
    if far:
        return head + "A very different attention gives the same output, so α alone does not explain this word."
    return head + "Only a mildly different α keeps the word, so α is close to the one that works."


def prob_text(p: float) -> str:
    """A probability for a sentence: three decimals, or two significant figures below 0.001."""
    return f"{p:.3f}" if p >= 1e-3 or p == 0 else f"{p:.1e}"


def debate_summary(debate: Debate) -> str:
    """The two tests over the whole sentence, in one sentence."""
    flips = [f for row in debate.flipped for f in row]
    if not flips:
        return ""
    rate = sum(bool(f) for f in flips) / len(flips)
    found = sum(1 for j in debate.adv_jsd if j > 1e-6)
    return (f"Over the whole sentence ({len(debate.flipped)} steps), shuffling α changed the word in {rate:.0%} of "
            f"{len(flips)} trials, and an adversarial α that keeps the word was found at {found} of "
            f"{len(debate.adv_jsd)} steps (mean JSD {float(np.mean(debate.adv_jsd)):.2f} nats).")


def adversarial_frame(src: Sequence[str], alpha: Sequence[float], adv: Sequence[float]) -> pd.DataFrame:
    """α and the adversarial α' over the source words, long format."""
    out = []
    for name, vals in (("model's α", alpha), ("adversarial α'", adv)):
        out += [{"which": name, "j": j, "source": src[j], "weight": float(v)} for j, v in enumerate(vals)]
    return pd.DataFrame(out, columns=["which", "j", "source", "weight"])


def adversarial_chart(frame: pd.DataFrame, src: Sequence[str], max_width: int = 320) -> alt.Chart | None:
    """Grouped bars of α and α' over the source words (hover for the weights)."""
    if frame.empty:
        return None
    step = max_width / max(len(src), 1)  # pixels per source word (α and α' side by side)
    return alt.Chart(frame).mark_bar().encode(
        x=alt.X("j:O", title=None, axis=alt.Axis(labelExpr=label_expr(src), labelAngle=-45 if step >= 40 else -90,
                                                   labelOverlap=False, labelLimit=120)),
        xOffset=alt.XOffset("which:N", sort=["model's α", "adversarial α'"]),
        y=alt.Y("weight:Q", title="weight", scale=alt.Scale(domain=[0, 1])),
        color=alt.Color("which:N", sort=["model's α", "adversarial α'"],
                        scale=alt.Scale(range=["#1f77b4", "#e4572e"]), legend=alt.Legend(title=None, orient="top")),
        tooltip=[alt.Tooltip("which:N"), alt.Tooltip("source:N", title="source word"),
                 alt.Tooltip("weight:Q", format=".3f")],
    ).properties(width=max_width, height=170, autosize=PAD)


def tvd_frame(tvd: Sequence[float], flipped: Sequence[bool]) -> pd.DataFrame:
    """One row per permutation trial: its TVD and whether the word changed."""
    return pd.DataFrame({"trial": list(range(1, len(tvd) + 1)), "TVD": [float(t) for t in tvd],
                         "word": ["changed" if f else "kept" for f in flipped]})


def tvd_chart(frame: pd.DataFrame) -> alt.Chart | None:
    """The permutation trials as points on [0, 1]: how far each shuffle moved p, coloured by the outcome."""
    if frame.empty:
        return None
    return alt.Chart(frame).mark_circle(size=110, opacity=0.8).encode(
        x=alt.X("TVD:Q", title="total variation distance of p(· | shuffled α) from p", scale=alt.Scale(domain=[0, 1])),
        y=alt.Y("word:N", title=None, sort=["changed", "kept"]),
        color=alt.Color("word:N", scale=alt.Scale(domain=["changed", "kept"], range=["#e4572e", "#1f77b4"]),
                        legend=None),
        tooltip=[alt.Tooltip("trial:O"), alt.Tooltip("TVD:Q", format=".3f"), alt.Tooltip("word:N")],
    ).properties(width=320, height=90, autosize=PAD)
