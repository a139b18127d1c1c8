"""The Lesson's annotations stop (stop 3), pure: how alike the annotations h_j of a sentence's words are
(cosine similarity), which word's annotation is most like an asked word's (the class predicts it), the
verdict at each narration level, and the grid of cosines with the asked word's row and column hidden
("?") until the reveal, then its most alike word and the guess framed, as the α stops mark theirs.

No Streamlit here; the annotations come from the model's encoder (the page computes them).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import altair as alt
import numpy as np
import pandas as pd

from ui.figures.common import label_expr
from ui.lesson.views import ARGMAX, GUESS, HIDDEN, INK


def marks_note(word: str, guessed: bool) -> str:
    """Under the revealed grid: what its frames mean (plain text), the red one only where there is a guess."""
    return f"Orange dashes: the word whose annotation is most like that of “{word}”." + (
        " Red: your guess." if guessed else "")


def cosine_matrix(annotations: Any) -> np.ndarray:
    """Cosine similarity of every pair of annotation vectors (rows of ``annotations``)."""
    h = np.asarray(annotations, dtype=np.float64)
    norms = np.linalg.norm(h, axis=1, keepdims=True)
    n = h / np.where(norms == 0, 1.0, norms)
    return n @ n.T


@dataclass(frozen=True)
class Likeness:
    """The asked word's row of cosines, the other word whose annotation is most like its own, and the guess."""

    words: tuple[str, ...]
    probe: int  # the asked word's position j
    cosines: tuple[float, ...]  # cos(h_j, h_k) for every k (1 for k = j)
    argmax: int  # the k ≠ j of the largest cosine
    guess: int | None

    @property
    def matched(self) -> bool:
        """Whether the class guessed the word whose annotation is most like the asked word's."""
        return self.guess is not None and self.guess == self.argmax

    def mean_at(self, lo: int, hi: int | None = None) -> float | None:
        """The mean cosine of the words ``lo`` to ``hi`` positions away (any farther without ``hi``); None if none."""
        got = [c for k, c in enumerate(self.cosines) if lo <= abs(k - self.probe) and (hi is None
                                                                                       or abs(k - self.probe) <= hi)]
        return sum(got) / len(got) if got else None


def likeness(words: Sequence[str], annotations: Any, probe: int, guess: int | None) -> Likeness:
    """The row of word ``probe`` (0-based; ``annotations`` has a row per word) and its most alike other word,
    against the class's ``guess`` (a position; out of range: no guess)."""
    n = len(words)
    if not 0 <= probe < n or n < 2:
        raise ValueError(f"no word {probe} among {n} with another to compare")
    row = cosine_matrix(np.asarray(annotations, dtype=np.float64)[:n])[probe]
    k = max((k for k in range(n) if k != probe), key=lambda k: row[k])
    ok = guess is not None and 0 <= guess < n
    return Likeness(tuple(words), probe, tuple(float(c) for c in row), k, guess if ok else None)


def _where(v: Likeness, k: int) -> str:
    """How far word ``k`` is from the asked word, in words."""
    d = abs(k - v.probe)
    return "the word itself" if d == 0 else "right next to it" if d == 1 else f"{d} words away"


def likeness_text(v: Likeness, level: str) -> str:
    """The verdict at a narration level (plain text; the caller escapes it for Markdown): which word's
    annotation is most like the asked word's, how far apart they are, and the guess's cosine."""
    w, c, k, p = v.words, v.cosines, v.argmax, v.words[v.probe]
    if level == "school":
        head = (f"The note most like the note of “{p}” is the note of “{w[k]}”, {_where(v, k)}: "
                f"similarity {c[k]:.2f} (1 would be the same).")
    elif level == "phd":
        near, far = v.mean_at(1, 1), v.mean_at(3)
        spread = f"; mean cos {near:.2f} at |j − k| = 1" if near is not None else ""
        spread += f", {far:.2f} at |j − k| ≥ 3" if far is not None else ""
        head = (f"The h_k most like h_j for x_j = “{p}”: “{w[k]}”, cos = {c[k]:.2f} at |j − k| = "
                f"{abs(k - v.probe)}{spread}.")
    else:
        head = (f"The annotation most like that of “{p}” is the annotation of “{w[k]}”: cosine {c[k]:.2f}, "
                f"{_where(v, k)}.")
    if v.guess is None:
        return head + " No guess was made."
    g = v.guess
    if v.matched:
        return f"{head} Your guess “{w[g]}” is right."
    name = "similarity" if level == "school" else "cos" if level == "phd" else "cosine"
    return f"{head} Your guess “{w[g]}” has {name} {c[g]:.2f}, {_where(v, g)}."


def ask_text(words: Sequence[str], dims: int, probe: int, level: str) -> str:
    """The stop's question over the grid at a narration level (plain text): what the grid compares, and
    which word's annotation the class is to find most like that of ``words[probe]``."""
    if level == "school":
        n = len(words) - int(bool(words) and words[-1] == "</s>")
        return (f"Each of the {n} English words (and the end, </s>) has a note of {dims} numbers; the grid "
                f"shows how alike two notes are (1: the same). Which note is most like the note of “{words[probe]}”?")
    return (f"Each of the {len(words)} source positions has an annotation h_j of {dims} numbers; the grid compares "
            f"every pair (cosine). Which word's annotation is most like that of “{words[probe]}”?")


def _describe(words: Sequence[str], sim: np.ndarray, hidden: int | None, v: Likeness | None) -> str:
    """The grid in words, for a screen reader: each word's most alike other word (the hidden word's row and
    column left out, and said to be hidden), then the revealed answer and guess."""
    shown = [j for j in range(len(words)) if j != hidden]
    near = []
    for j in shown:
        others = [k for k in shown if k != j]
        if others:
            k = max(others, key=lambda k: sim[j, k])
            near.append(f"“{words[j]}” is most like “{words[k]}” ({sim[j, k]:.1f})")
    text = "Cosine similarity of the annotations h_j of every pair of source words: " + "; ".join(near) + "."
    if hidden is not None:
        text += f" The row and column of “{words[hidden]}”: hidden, to predict."
    if v is not None:
        text += (f" “{words[v.probe]}” is most like “{words[v.argmax]}” ({v.cosines[v.argmax]:.2f}, the model's "
                 "answer)" + (f"; your guess: “{words[v.guess]}” ({v.cosines[v.guess]:.2f})." if v.guess is not None
                              else "."))
    return text


def similarity_chart(words: Sequence[str], annotations: Any, cell: int = 40, probe: int | None = None,
                     revealed: bool = True, guess: int | None = None, digits: int = 1,
                     row: int | None = None) -> alt.LayerChart:
    """The annotations' cosine similarities as a labelled heatmap (source words on both axes, each cell's
    cosine written with ``digits`` decimals; columns ``cell`` px wide, rows ``row`` px high, ``cell`` − 8 unless
    given). With ``probe``, the stop's question: that word's row and column
    grey "?" cells until ``revealed``, then its most alike word framed in orange dashes and ``guess`` in red."""
    sim = cosine_matrix(np.asarray(annotations, dtype=np.float64)[: len(words)])
    n, hidden = len(words), probe if probe is not None and not revealed else None
    rows = [{"j": j, "k": k, "a": words[j], "b": words[k], "cos": round(float(sim[j, k]), 2),
             "says": f"“{words[j]}” and “{words[k]}”: cosine {sim[j, k]:.2f}"}  # a cell in words, for a screen reader
            for j in range(n) for k in range(n) if hidden not in (j, k)]
    df = pd.DataFrame(rows)
    x = alt.X("k:O", title=None, scale=alt.Scale(domain=list(range(n))),
              axis=alt.Axis(orient="top", labelAngle=-40, labelExpr=label_expr(words), labelOverlap=False,
                            aria=False))  # positions, not words: silent
    y = alt.Y("j:O", title=None, scale=alt.Scale(domain=list(range(n))),
              axis=alt.Axis(labelExpr=label_expr(words), labelOverlap=False, aria=False))
    base = alt.Chart(df).encode(x=x, y=y)
    layers: list[alt.Chart] = [
        base.mark_rect().encode(color=alt.Color("cos:Q", scale=alt.Scale(scheme="blues", domain=[-0.2, 1]),
                                                legend=alt.Legend(title="cos(h_j, h_k)")),
                                tooltip=["a:N", "b:N", "cos:Q"], description="says:N")]
    v = None
    if hidden is not None:
        cells = pd.DataFrame([{"j": j, "k": k, "q": "?", "says": f"“{words[j]}” and “{words[k]}”: hidden, to predict"}
                              for j in range(n) for k in range(n) if hidden in (j, k)])
        layers.append(alt.Chart(cells).mark_rect(color=HIDDEN).encode(x=x, y=y, description="says:N"))
        layers.append(alt.Chart(cells).mark_text(color=INK, fontSize=16, fontWeight="bold", aria=False).encode(
            x=x, y=y, text="q:N"))
    elif probe is not None:
        v = likeness(words, annotations, probe, guess)
        layers.extend(_marks(v, x, y))
    layers.append(base.mark_text(fontSize=14, aria=False).encode(  # the numbers last: over the marks
        text=alt.Text("cos:Q", format=f".{digits}f"),
        color=alt.condition("datum.cos > 0.6", alt.value("#ffffff"), alt.value(INK))))
    return alt.layer(*layers).properties(width=alt.Step(cell), height=alt.Step(row or cell - 8),
                                         description=_describe(words, sim, hidden, v))


def _marks(v: Likeness, x: alt.X, y: alt.Y) -> list[alt.Chart]:
    """The revealed row's marks: the class's guess framed in red, and the most alike word framed in orange
    dashes over it (a frame, not the α charts' cross, which would hide the cell's number; dashed, so a right
    guess shows both)."""
    w = v.words
    out = []
    if v.guess is not None:
        frame = pd.DataFrame([{"j": v.probe, "k": v.guess, "what": "your guess",
                               "says": f"your guess for “{w[v.probe]}”: “{w[v.guess]}”"}])
        out.append(alt.Chart(frame).mark_rect(fill=None, stroke=GUESS, strokeWidth=4).encode(
            x=x, y=y, description="says:N"))
    best = pd.DataFrame([{"j": v.probe, "k": v.argmax, "what": "most alike",
                          "says": f"“{w[v.probe]}” is most like “{w[v.argmax]}” (the model's answer)"}])
    out.append(alt.Chart(best).mark_rect(fill=None, stroke=ARGMAX, strokeWidth=4, strokeDash=[6, 4]).encode(
        x=x, y=y, description="says:N"))
    return out
