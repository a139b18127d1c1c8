"""Pure builders of the Lesson's concept check: each question's tally before and after the lesson, the
normalised gain, and the wrap-up's picture of what the class got right.

No Streamlit here. A sitting's tally of one question comes from the phones' votes (its ballot's counts
and the right choice) or from hands counted by the teacher (which win when entered). The normalised gain
is Hake's (1998): g = (post − pre) / (100 − pre), with pre and post the percentages right, the share of
what was still to learn that the class learnt; the class's g is taken of the mean percentages over the
questions asked at both sittings (each question weighs the same).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import altair as alt
import pandas as pd

from ui.figures.common import label_expr

BEFORE, AFTER = "#9ecae1", "#08519c"  # the histogram's two rounds: light before, dark after
HAKE = ("Hake (1998) measured a normalised gain of about 0.23 in lecture courses and 0.48 with interactive "
        "engagement.")


@dataclass(frozen=True)
class Tally:
    """How many answered one question at one sitting, how many were right, and who counted."""

    correct: int
    total: int
    source: str = "phones"  # "phones", "hands" or "none"

    @property
    def percent(self) -> float | None:
        """The percentage right, or None when nobody answered."""
        return None if self.total <= 0 else 100.0 * self.correct / self.total

    def words(self) -> str:
        """"3 of 10 (30 %)", or "not asked"."""
        p = self.percent
        return "not asked" if p is None else f"{self.correct} of {self.total} ({p:.0f} %)"


def tally(counts: Sequence[int] | None, answer: int, hands: tuple[int, int] | None = None) -> Tally:
    """One question's tally: the teacher's hands (right, answered) when they count anyone, else the
    phones' votes per choice (``counts``) with the right choice at ``answer``, else nobody."""
    if hands is not None and hands[1] > 0:
        return Tally(min(max(hands[0], 0), hands[1]), hands[1], "hands")
    if counts and sum(counts) > 0:
        return Tally(int(counts[answer]), int(sum(counts)), "phones")
    return Tally(0, 0, "none")


def normalised_gain(pre: float | None, post: float | None) -> float | None:
    """(post − pre) / (100 − pre) for percentages right; None when either is missing or pre is 100 %."""
    if pre is None or post is None or pre >= 100.0:
        return None
    return (post - pre) / (100.0 - pre)


@dataclass(frozen=True)
class Row:
    """One question of the check: its concept, the right answers, and the two sittings' tallies."""

    key: str
    concept: str
    pre: Tally
    post: Tally
    right: tuple[str, str] = ("", "")  # the right choice before, after

    @property
    def gain(self) -> float | None:
        """This question's normalised gain."""
        return normalised_gain(self.pre.percent, self.post.percent)


def class_gain(rows: Sequence[Row]) -> tuple[float | None, float | None, float | None]:
    """The class's mean percentage right before and after, over the questions asked at both sittings,
    and the normalised gain of those means; (None, None, None) when no question was asked twice."""
    both = [r for r in rows if r.pre.percent is not None and r.post.percent is not None]
    if not both:
        return None, None, None
    pre = sum(r.pre.percent for r in both) / len(both)  # type: ignore[misc]
    post = sum(r.post.percent for r in both) / len(both)  # type: ignore[misc]
    return pre, post, normalised_gain(pre, post)


def _gain_words(g: float | None) -> str:
    return "–" if g is None else f"{g:.2f}"


def results_frame(rows: Sequence[Row]) -> pd.DataFrame:
    """The wrap-up's table: each question's concept, its right answers, both tallies and its gain."""
    return pd.DataFrame([{"question": r.concept, "right answer": " / ".join(dict.fromkeys(r.right)),
                          "before": r.pre.words(), "after": r.post.words(), "gain": _gain_words(r.gain)}
                         for r in rows])


def gain_text(rows: Sequence[Row]) -> str:
    """The class's result in one sentence (plain text), or how to get one."""
    pre, post, g = class_gain(rows)
    if pre is None or post is None:
        return "Ask the concept check at the intro and again here: the class's gain appears once both are in."
    counted = sum(r.pre.percent is not None and r.post.percent is not None for r in rows)
    head = f"The class: {pre:.0f} % right before the lesson, {post:.0f} % after ({counted} of {len(rows)} questions)"
    if g is None:
        return head + "; everyone was right before, so there was nothing left to gain."
    return f"{head}: normalised gain {g:.2f}, the share of what was still to learn that the class learnt. {HAKE}"


def results_chart(rows: Sequence[Row], width: int = 520) -> alt.Chart:
    """Percentage right per question, before (light) and after (dark), side by side."""
    data = [{"question": r.concept, "j": j, "sitting": name, "right": round(t.percent, 1)}
            for j, r in enumerate(rows)
            for name, t in (("before", r.pre), ("after", r.post)) if t.percent is not None]
    return alt.Chart(alt.Data(values=data)).mark_bar().encode(
        x=alt.X("j:O", title=None, scale=alt.Scale(domain=list(range(len(rows)))),
                axis=alt.Axis(labelExpr=label_expr([r.concept.split(":")[0] for r in rows]), labelAngle=0,
                              labelOverlap=False)),
        xOffset=alt.XOffset("sitting:N", sort=["before", "after"]),
        y=alt.Y("right:Q", title="% right", scale=alt.Scale(domain=[0, 100]), axis=alt.Axis(tickCount=3)),
        color=alt.Color("sitting:N", sort=["before", "after"], scale=alt.Scale(range=[BEFORE, AFTER]),
                        legend=alt.Legend(orient="right", title=None)),
        tooltip=["question:N", "sitting:N", alt.Tooltip("right:Q", title="% right")],
    ).properties(width=width, height=110, description=chart_description(rows))


def chart_description(rows: Sequence[Row]) -> str:
    """The results chart in words, for a screen reader: each question before and after."""
    return "Concept check, percentage right per question: " + "; ".join(
        f"{r.concept}: before {r.pre.words()}, after {r.post.words()}" for r in rows) + "."
