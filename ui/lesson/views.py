"""Pure builders of the Lesson page: what each stop shows, computed from decode traces and arrays.

No Streamlit here. The α heatmap of a stop shows the rows decoded so far; the row the class
predicts is drawn as grey "?" cells until it is revealed, and then shows the guessed cell framed
in red and the model's argmax marked with a cross. The energies, softmax and context stops add the
numbers of that row (e_ij, exp, α_ij; c_i = Σ_j α_ij h_j), and the long-sentence stop BLEU by source
length (Fig. 2). The annotations stop (cosines of the h_j) is :mod:`ui.lesson.views_similarity`.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any
from urllib.parse import urlencode

import altair as alt
import numpy as np
import pandas as pd

from nmt.decoding.trace import DecodeTrace
from nmt.models.kinds import colour_of_name
from ui.figures import stepper_state as vs
from ui.figures.common import label_expr, source_labels
from ui.figures.heatmaps import alpha_frame
from ui.figures.length import length_rows
from ui.lesson.content import DEFAULT_LEVEL, LEVELS

GUESS, ARGMAX, HIDDEN = "#d62728", "#ff7f0e", "#e0e0e0"
INK = "#111111"
MIN_BUCKET = 10  # Fig. 2: buckets with fewer test sentences are left out (a BLEU of 2 sentences is noise)
CONTEXT_DIMS = 4  # dimensions of h_j shown in the c_i table


def stop_index(value: Any, n_stops: int) -> int:
    """The 0-based stop of a URL value (1-based text); anything else, or out of range, gives 0."""
    try:
        k = int(str(value).strip())
    except (TypeError, ValueError):
        return 0
    return k - 1 if 1 <= k <= n_stops else 0


def level_of(value: Any) -> str:
    """A narration level key from a URL value, the default one when it is not a level."""
    return value if isinstance(value, str) and value in LEVELS else DEFAULT_LEVEL


@dataclass(frozen=True)
class Verdict:
    """How a guess for one α row compares with the model's row."""

    step: int
    target: str
    argmax: int
    argmax_word: str
    argmax_alpha: float
    guess: int | None
    guess_word: str | None
    guess_alpha: float | None

    @property
    def matched(self) -> bool:
        """Whether the class guessed the source word the model attends to most."""
        return self.guess is not None and self.guess == self.argmax


def verdict(trace: DecodeTrace, step: int, guess: int | None) -> Verdict:
    """The model's argmax of α at ``step`` against the class's guessed source position."""
    s = trace.steps[step]
    if s.alpha is None:
        raise ValueError("this step has no α (fixed context)")
    a = list(s.alpha)
    j = max(range(len(a)), key=a.__getitem__)
    ok = guess is not None and 0 <= guess < len(a)
    return Verdict(step, s.token, j, trace.src_tokens[j], float(a[j]), guess if ok else None,
                   trace.src_tokens[guess] if ok else None, float(a[guess]) if ok else None)


def verdict_text(v: Verdict) -> str:
    """One sentence on the revealed row (plain text; the caller escapes it for Markdown)."""
    model = f"For “{v.target}” the model looks most at “{v.argmax_word}” (α = {v.argmax_alpha:.2f})."
    if v.guess is None:
        return model + " No guess was made."
    if v.matched:
        return f"{model} Your guess “{v.guess_word}” is right."
    return f"{model} Your guess “{v.guess_word}” got α = {v.guess_alpha:.2f}."


STEPPER_PAGE = "./"
"""The stepper's address relative to the Lesson's (``/lesson``): the app's first page, at the server's root."""


def stepper_link(text: str, group: str, step: int) -> str:
    """The stepper opened on a stop's sentence: its model group, ``step`` words written, presentation mode,
    in the stepper's own URL keys (:func:`ui.figures.stepper_state.view_to_query`), relative to the Lesson."""
    view = vs.View(text=text, model=group, step=max(0, step), present=True)
    return STEPPER_PAGE + "?" + urlencode(vs.view_to_query(view), doseq=True)


def then_text(trace: DecodeTrace, step: int) -> str:
    """One sentence on a row drawn after the revealed one (plain text): where the model looks for it."""
    v = verdict(trace, step, None)
    return f"Then, for “{v.target}”, it looks at “{v.argmax_word}” (α = {v.argmax_alpha:.2f})."


def cell_size(n_src: int, width: int = 560) -> int:
    """Pixel width of a heatmap column so ``n_src`` columns fit in about ``width`` (24 to 40 px)."""
    return max(24, min(40, width // max(n_src, 1)))


def row_values(trace: DecodeTrace, quantity: str = "alpha") -> list[list[float] | None]:
    """Each step's row as recorded by the decode trace: its weights α_ij (``"alpha"``) or its energies
    e_ij before the softmax (``"energy"``); ``None`` where the step has none (a fixed context)."""
    if quantity not in ("alpha", "energy"):
        raise ValueError(f"no such row: {quantity}")
    rows = [s.alpha if quantity == "alpha" else s.energies for s in trace.steps]
    return [None if r is None else list(r) for r in rows]


PALETTES = {"blues": "Blue (dark = more)", "viridis": "Viridis, colour-blind safe (dark = more)"}
"""α's colour schemes, URL value → label; both run light to dark, so "dark = looked at a lot" holds."""


def _colour(quantity: str, cells: pd.DataFrame, legend: str, rows: int, palette: str = "blues",
            log: bool = False) -> alt.Color:
    """α on a fixed 0–1 scale (``palette``; ``log``: symmetric-log, so weights of 0.01–0.1 show too);
    energies, which have no fixed range, on a purple one over the values shown."""
    length = max(40, min(120, rows * 30 - 20)) if legend == "right" else 120
    if quantity == "alpha":
        scale = alt.Scale(scheme=palette if palette in PALETTES else "blues", domain=[0, 1],
                          reverse=palette == "viridis", **({"type": "symlog", "constant": 0.01} if log else {}))
        ticks = [0, 0.01, 0.1, 1] if log else [0, 0.5, 1]
        return alt.Color("alpha:Q", scale=scale, legend=alt.Legend(title="α_ij (log)" if log else "α_ij",
                                                                    orient=legend, gradientLength=length, values=ticks))
    lo, hi = (float(cells["alpha"].min()), float(cells["alpha"].max())) if len(cells) else (0.0, 1.0)
    # the light half of the purples only, so each cell's number reads in dark ink (≥ 4.5:1) on any cell
    return alt.Color("alpha:Q", scale=alt.Scale(scheme={"name": "purples", "extent": [0, 0.55]},
                                                domain=[lo, max(hi, lo + 1e-6)]),
                     legend=alt.Legend(title="e_ij", orient=legend, gradientLength=length))


def describe(trace: DecodeTrace, last: int, hidden: bool, quantity: str = "alpha") -> str:
    """The heatmap in words, for a screen reader (Vega-Lite's ``description``, the SVG's label): the
    sentence, then each drawn row's most-read source word and its weight (or energy), the hidden row as such."""
    values, name = row_values(trace, quantity), "α" if quantity == "alpha" else "energy e"
    parts = []
    for i, s in enumerate(trace.steps[: last + 1]):
        row = values[i]
        if (hidden and i == last) or row is None or not row:
            parts.append(f"« {s.token} »: hidden, to predict" if hidden and i == last else f"« {s.token} »: no row")
            continue
        j = max(range(len(row)), key=row.__getitem__)
        parts.append(f"« {s.token} » reads “{trace.src_tokens[j]}” ({name} = {row[j]:.2f})")
    kind = "Attention weights α" if quantity == "alpha" else "Energies e_ij"
    columns = ", ".join(f"“{w}”" for w in source_labels(trace))
    return (f"{kind} of “{trace.source}”; columns, the English words: {columns}; one row per French word "
            "written: " + "; ".join(parts) + ".")


def lesson_alpha_chart(trace: DecodeTrace, step: int | None, revealed: bool, guess: int | None = None,
                       cell: int | None = None, legend: str = "right", fit: bool = False,
                       quantity: str = "alpha", palette: str = "blues", log: bool = False,
                       through: int | None = None) -> alt.LayerChart | None:
    """The α heatmap up to ``step``: rows before it, and row ``step`` hidden ("?") or, once
    ``revealed``, drawn with the guess framed in red and the argmax crossed in orange.

    ``step`` None draws every row (a stop without a prediction). ``fit`` stretches the columns to
    the container's width (cells of ``cell`` px otherwise). ``quantity="energy"`` draws the energies
    e_ij the trace recorded before the softmax instead of α, each cell with its number; ``palette`` and
    ``log`` colour α (:func:`_colour`). The chart carries its rows in words (:func:`describe`) for a
    screen reader. ``through``: once revealed, the rows after ``step`` up to ``through`` are drawn too, each
    with its argmax crossed (stop 7: « voiture » jumps ahead to “car”, « rouge » comes back to “red”).
    ``None`` for a fixed context."""
    if not trace.has_alignment:
        return None
    last = len(trace.steps) - 1 if step is None else min(step, len(trace.steps) - 1)
    end = min(max(through, last), len(trace.steps) - 1) if revealed and step is not None and through else last
    cell = cell or cell_size(len(trace.src_tokens))
    src, tgt = source_labels(trace), [s.token for s in trace.steps[: end + 1]]
    values = row_values(trace, quantity)
    shown = [*values[:last], values[last] if revealed or step is None else None, *values[last + 1: end + 1]]
    cells = alpha_frame(src, tgt, shown)
    name = "α_ij" if quantity == "alpha" else "e_ij"
    cells["says"] = [f"« {t} » and “{w}”: {name[0]} = {a:.2f}" for t, w, a in  # a cell in words, for a screen reader
                     zip(cells["target"], cells["source"], cells["alpha"], strict=True)]
    x = alt.X("j:O", title=None, scale=alt.Scale(domain=list(range(len(src)))),
              axis=alt.Axis(orient="top", labelAngle=-40, labelExpr=label_expr(src), labelOverlap=False,
                            labelFlush=False, aria=False))  # its words are in each cell's and the chart's text
    y = alt.Y("i:O", title=None, scale=alt.Scale(domain=list(range(len(tgt)))),
              axis=alt.Axis(labelExpr=label_expr(tgt), labelOverlap=False, labelFlush=False,  # no label off its row
                            aria=False))  # a screen reader would read its positions 0, 1, 2 … not its words
    tips = [alt.Tooltip("target:N", title="target word"), alt.Tooltip("source:N", title="source word"),
            alt.Tooltip("alpha:Q", title=name, format=".3f")]
    layers: list[alt.Chart] = [alt.Chart(cells).mark_rect().encode(
        x=x, y=y, tooltip=tips, color=_colour(quantity, cells, legend, len(tgt), palette, log),
        description="says:N")]
    if step is not None and not revealed:
        hidden = pd.DataFrame({"i": [last] * len(src), "j": list(range(len(src))), "q": ["?"] * len(src),
                               "says": [f"« {tgt[last]} » and “{w}”: hidden, to predict" for w in src]})
        layers.append(alt.Chart(hidden).mark_rect(color=HIDDEN).encode(x=x, y=y, description="says:N"))
        layers.append(alt.Chart(hidden).mark_text(color=INK, fontSize=16, fontWeight="bold", aria=False).encode(
            x=x, y=y, text="q:N"))
    elif step is not None:
        layers.extend(_marks(trace, last, guess, x, y, cell, end, badge=quantity == "energy"))
    if quantity == "energy" and len(cells):  # the numbers themselves (energies have no fixed scale), over the marks
        layers.append(alt.Chart(cells).mark_text(fontSize=14, fontWeight="bold", color=INK, aria=False).encode(
            x=x, y=y, text=alt.Text("alpha:Q", format=".1f")))
    return alt.layer(*layers).properties(width="container" if fit else alt.Step(cell),
                                         height=alt.Step(max(18, min(cell, 30))),
                                         description=describe(trace, end, step is not None and not revealed, quantity))


def _marks(trace: DecodeTrace, last: int, guess: int | None, x: alt.X, y: alt.Y, cell: int,
           end: int | None = None, badge: bool = False) -> list[alt.Chart]:
    """The revealed row's marks: the model's argmax crossed in orange (and on each row after it up to
    ``end``), the class's guess framed in red. ``badge``: the argmax as an orange patch under its cell's
    number instead (the energies stop: a cross would cover the number it marks; dark on orange, 7.5:1)."""
    v = verdict(trace, last, guess)
    marks = [{"i": i, "j": (w := verdict(trace, i, None)).argmax, "what": "model's argmax",
              "says": f"« {w.target} » reads “{w.argmax_word}” most (the model's choice)"}
             for i in range(last, max(last, end or last) + 1)]
    mark = (alt.MarkDef(type="rect", color=ARGMAX, cornerRadius=4, width=max(cell - 4, 40), height=22) if badge
            else alt.MarkDef(type="point", shape="cross", filled=True, color=ARGMAX, size=cell * 6))
    out = [alt.Chart(pd.DataFrame(marks), mark=mark).encode(x=x, y=y, description="says:N")]
    if v.guess is not None:
        frame = pd.DataFrame([{"i": last, "j": v.guess, "what": "your guess",
                               "says": f"your guess for « {v.target} »: “{v.guess_word}”"}])
        out.append(alt.Chart(frame).mark_rect(fill=None, stroke=GUESS, strokeWidth=4).encode(
            x=x, y=y, description="says:N"))
    return out


def energy_verdict_text(trace: DecodeTrace, step: int, guess: int | None) -> str:
    """The energies stop's verdict: the highest energy e_ij of the row (the trace's own numbers) and the
    guess's (plain text)."""
    s = trace.steps[step]
    if s.energies is None:
        raise ValueError("this step has no energies (fixed context)")
    e = list(s.energies)
    j = max(range(len(e)), key=e.__getitem__)
    head = f"Before “{s.token}” the highest energy is “{trace.src_tokens[j]}” (e = {e[j]:.2f})."
    if guess is None or not 0 <= guess < len(e):
        return head + " No guess was made."
    if guess == j:
        return f"{head} Your guess “{trace.src_tokens[guess]}” is right."
    return f"{head} Your guess “{trace.src_tokens[guess]}” has e = {e[guess]:.2f}."


FIRST_ROW_NOTE = ("Why does the first row read « {src} »? The first word is scored from the decoder's starting "
                  "state, a summary of the whole sentence, before any word is written: the model looks, then "
                  "picks « {word} ».")


def first_row_note(trace: DecodeTrace, shown_rows: int) -> str | None:
    """One line on the first row when it is drawn (``shown_rows`` ≥ 1) and its largest α is not on the
    first source word (often ``</s>`` or the verb); None otherwise."""
    if shown_rows < 1 or not trace.steps or trace.steps[0].alpha is None or not trace.steps[0].alpha:
        return None
    a = list(trace.steps[0].alpha)
    j = max(range(len(a)), key=a.__getitem__)
    if j == 0:
        return None
    return FIRST_ROW_NOTE.format(src=trace.src_tokens[j], word=trace.steps[0].token)


def energy_table(trace: DecodeTrace, step: int) -> pd.DataFrame:
    """Row ``step`` worked through the softmax: e_ij, e_ij − max_k e_ik, its exp, and
    α_ij = exp / Σ exp, beside the α the model recorded."""
    s = trace.steps[step]
    if s.energies is None or s.alpha is None:
        raise ValueError("this step has no energies (fixed context)")
    e = np.asarray(s.energies, dtype=np.float64)
    shifted = e - e.max()
    ex = np.exp(shifted)
    return pd.DataFrame({"source word": source_labels(trace)[: len(e)], "e_ij": e, "e_ij − max": shifted,
                         "exp(e_ij − max)": ex, "α_ij = exp / Σ": ex / ex.sum(),
                         "α_ij (model)": np.asarray(s.alpha[: len(e)], dtype=np.float64)})


def context_table(words: Sequence[str], alpha: Sequence[float], annotations: Any,
                  dims: int = CONTEXT_DIMS) -> pd.DataFrame:
    """c_i = Σ_j α_ij h_j on the first ``dims`` dimensions: one row per source word with α_ij and
    α_ij·h_j[d], and a last row ``c_i`` with the sums."""
    a = np.asarray(alpha, dtype=np.float64)
    h = np.asarray(annotations, dtype=np.float64)[: len(a), :dims]
    weighted = a[:, None] * h
    rows = [{"source word": w, "α_ij": float(a[j]), **{f"α·h[{d}]": float(weighted[j, d]) for d in range(h.shape[1])}}
            for j, w in enumerate(list(words)[: len(a)])]
    rows.append({"source word": "c_i = Σ", "α_ij": float(a.sum()),
                 **{f"α·h[{d}]": float(weighted[:, d].sum()) for d in range(h.shape[1])}})
    return pd.DataFrame(rows)


def mix_text(target: str, words: Sequence[str], alpha: Sequence[float], top: int = 3) -> str:
    """The context in school words: the recipe of the mix for ``target``, its ``top`` largest shares in
    percent (plain text)."""
    order = sorted(range(len(alpha)), key=lambda j: -alpha[j])[:top]
    shares = ", ".join(f"{100 * alpha[j]:.0f} % of the note of “{words[j]}”" for j in order)
    return f"The mix for « {target} »: {shares}, and the rest from the other words."


def context_norm(alpha: Sequence[float], annotations: Any) -> float:
    """‖Σ_j α_ij h_j‖ over every dimension (to compare with the decoder's recorded ‖c_i‖)."""
    a = np.asarray(alpha, dtype=np.float64)
    return float(np.linalg.norm(a @ np.asarray(annotations, dtype=np.float64)[: len(a)]))


def fig2_frame(results: Mapping[str, Any], test: str, decoding: str = "greedy",
               min_n: int = MIN_BUCKET) -> pd.DataFrame:
    """BLEU by source length of every model on ``test`` (one decoding), buckets of ≥ ``min_n`` sentences."""
    rows = length_rows(dict(results))
    rows = rows[(rows["test"] == test) & (rows["decoding"] == decoding) & (rows["n"] >= min_n)]
    return rows[["model", "bucket", "lo", "n", "bleu"]].sort_values(["model", "lo"]).reset_index(drop=True)


def bleu_gaps(frame: pd.DataFrame, better: str, worse: str) -> dict[str, float]:
    """BLEU of ``better`` minus BLEU of ``worse`` per bucket both have, in bucket order."""
    wide = frame.pivot_table(index=["lo", "bucket"], columns="model", values="bleu").sort_index()
    wide = wide.dropna(subset=[better, worse]) if {better, worse} <= set(wide.columns) else wide.iloc[:0]
    return {str(b): round(float(r[better] - r[worse]), 2) for (_, b), r in wide.iterrows()}


def model_colours(names: Sequence[str]) -> list[str]:
    """A colour per model name (in the given order): the model's own colour on every page
    (:func:`nmt.models.kinds.colour_of_name`: blues for RNNsearch, oranges for RNNencdec, -30 light, -50 dark)."""
    return [colour_of_name(n) for n in names]


def paper_name(name: str) -> str:
    """A model's name as the paper writes it: a results file's ``rnnsearch`` / ``rnnencdec`` keys (the lesson's
    Multi30k pair) as RNNsearch / RNNencdec, beside the Europarl models' RNNsearch-50; others as they are."""
    return {"rnnsearch": "RNNsearch", "rnnencdec": "RNNencdec"}.get(name, name)


def fig2_chart(frame: pd.DataFrame, title: str = "", width: int = 300, height: int = 230) -> alt.Chart | None:
    """Fig. 2 on our data: BLEU against source length bucket, one line per model (its legend in two columns
    above the plot: four names in one column took half of the chart's height)."""
    if frame.empty:
        return None
    order = frame.sort_values("lo")["bucket"].drop_duplicates().tolist()
    names = sorted(paper_name(m) for m in frame["model"].unique())
    values = [{"model": paper_name(str(r.model)), "bucket": str(r.bucket), "bleu": float(r.bleu), "n": int(r.n)}
              for r in frame.itertuples()]  # plain values: no Arrow column types reach the browser
    return alt.Chart(alt.Data(values=values)).mark_line(point={"size": 70}, strokeWidth=3).encode(
        x=alt.X("bucket:O", sort=order, title="source sentence length (words)", axis=alt.Axis(labelAngle=-45)),
        y=alt.Y("bleu:Q", title="BLEU", scale=alt.Scale(zero=True)),
        color=alt.Color("model:N", title=None, scale=alt.Scale(domain=names, range=model_colours(names)),
                        legend=alt.Legend(orient="top", direction="horizontal", columns=2)),
        tooltip=["model:N", "bucket:N", alt.Tooltip("bleu:Q", format=".1f"), alt.Tooltip("n:Q", title="sentences")],
    ).properties(width=width, height=height, title=title, description=fig2_description(frame, title))


def fig2_description(frame: pd.DataFrame, title: str) -> str:
    """Fig. 2 in words, for a screen reader: each model's BLEU from the shortest to the longest bucket."""
    parts = []
    for name, g in frame.sort_values("lo").groupby("model", sort=True):
        first, last = g.iloc[0], g.iloc[-1]
        parts.append(f"{paper_name(str(name))} {first.bleu:.1f} BLEU at {first.bucket} words, "
                     f"{last.bleu:.1f} at {last.bucket}")
    return f"BLEU by source sentence length, {title}: " + "; ".join(parts) + "."


def wide(frame: pd.DataFrame, label: str = "source word") -> pd.DataFrame:
    """A per-word table turned sideways (a first column naming the quantity, then one column per
    word) to fit under a chart; a word that occurs twice gets its position added (``a (6)``) so columns stay unique."""
    words = list(frame[label])
    names = [f"{w} ({j})" if words.count(w) > 1 else str(w) for j, w in enumerate(words)]
    out = frame.drop(columns=[label]).T
    out.columns = names
    out.insert(0, "quantity", list(out.index))
    return out.reset_index(drop=True)
