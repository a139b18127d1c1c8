"""Builders of the beam search explorer: the search tree, the beam per step, the n-best list and how
the ranking changes under each length normalisation. They only rearrange what the trace recorded.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any

import altair as alt
import pandas as pd

from nmt.decoding.search import LENGTH_NORMS, length_penalty
from nmt.decoding.trace import DecodeTrace, Hypothesis
from ui.figures.common import EOS, FONT_MAIN, NORM_SHORT, source_labels
from ui.figures.heatmaps import alpha_chart, alpha_frame, fixed_context_chart
from ui.figures.subword_view import words_matrix

# The first sentence: with the shipped model at beam 5, "none", "length" and "gnmt" pick three different
# winners (the shortest, the longest and one between; tests/test_analysis.py checks it).
DEFAULT_SENTENCE = "A small child in a red coat points to a handbag in a shop window."

NODE_COLUMNS = ["id", "parent", "step", "token", "text", "logprob", "score", "status", "rank", "nbest",
                "on_best", "on_greedy", "x", "y"]


def _all_hyps(trace: DecodeTrace) -> list[Hypothesis]:
    """Every hypothesis of every recorded beam step (live, pruned and finished)."""
    return [h for b in trace.beam_steps for h in (*b.live, *b.pruned, *b.finished)]


def nbest_ids(trace: DecodeTrace) -> dict[int, int]:
    """Hypothesis id → 1-based n-best rank, matching each n-best entry to its node by its words.

    Beam search expands each (parent, word) pair once, so no two nodes share their words: an entry
    ending in ``</s>`` matches its finished node, one that ended at the length limit (or topped up the
    n-best list) the live node with its words.
    """
    by_tokens: dict[tuple[str, ...], Hypothesis] = {}
    for h in _all_hyps(trace):
        by_tokens.setdefault(tuple(h.tokens), h)
    out: dict[int, int] = {}
    for rank, entry in enumerate(trace.nbest, start=1):
        h = by_tokens.get(tuple(entry.tokens))
        if h is not None and h.id not in out:
            out[h.id] = rank
    return out


def beam_nodes(trace: DecodeTrace, greedy: DecodeTrace | None = None, layout: str = "tree",
               show_pruned: bool = True) -> pd.DataFrame:
    """One row per node of the search tree: the empty start and every partial hypothesis.

    Columns: ``id``, ``parent``, ``step`` (target position; -1 for the start), ``token``, ``text``
    (the words so far), cumulative ``logprob``, normalised ``score``, ``status`` (start / live /
    pruned / finished), ``rank`` (by log-probability within its step), ``nbest`` (1-based rank when
    the node ends an n-best hypothesis, else 0), ``on_best`` (on the path of the best hypothesis),
    ``on_greedy`` (its words are a prefix of the greedy output), and plot coordinates ``x``, ``y``.

    ``layout="tree"`` places leaves one per row in depth-first order (best child first) and a parent
    midway between its children; ``layout="rank"`` puts every node at its rank within its step.
    """
    if layout not in ("tree", "rank"):
        raise ValueError("layout must be 'tree' or 'rank'")
    hyps = [h for h in _all_hyps(trace) if show_pruned or h.status != "pruned"]
    if not hyps:
        return pd.DataFrame(columns=NODE_COLUMNS)
    ranks = nbest_ids(trace)
    greedy_tokens = greedy.target_tokens if greedy is not None else None
    rows: dict[int, dict[str, Any]] = {0: {
        "id": 0, "parent": -1, "step": -1, "token": "<s>", "text": "<s>", "logprob": 0.0, "score": 0.0,
        "status": "start", "rank": 0, "nbest": 0, "on_best": bool(ranks), "on_greedy": greedy is not None}}
    by_step: dict[int, list[Hypothesis]] = {}
    for h in hyps:
        by_step.setdefault(h.step, []).append(h)
    for step, group in by_step.items():
        for r, h in enumerate(sorted(group, key=lambda h: -h.logprob)):
            on_greedy = greedy_tokens is not None and list(h.tokens) == list(greedy_tokens[: len(h.tokens)])
            rows[h.id] = {"id": h.id, "parent": h.parent, "step": step, "token": h.token,
                          "text": " ".join(h.tokens), "logprob": h.logprob, "score": h.score, "status": h.status,
                          "rank": r, "nbest": ranks.get(h.id, 0), "on_best": False, "on_greedy": on_greedy}
    best = next((i for i, r in ranks.items() if r == 1), None)
    while best is not None and best in rows:
        rows[best]["on_best"] = True
        best = rows[best]["parent"] if best != 0 else None
    children: dict[int, list[int]] = {}
    for nid, row in rows.items():
        if nid != 0:
            children.setdefault(row["parent"], []).append(nid)
    if layout == "rank":
        for row in rows.values():
            row["y"] = float(row["rank"])
    else:
        counter = 0.0
        # Iterative post-order: leaves take the next row, parents sit between their children.
        stack: list[tuple[int, bool]] = [(0, False)]
        while stack:
            nid, done = stack.pop()
            kids = sorted(children.get(nid, []), key=lambda c: -rows[c]["logprob"])
            if not kids:
                rows[nid]["y"] = counter
                counter += 1
            elif done:
                ys = [rows[c]["y"] for c in kids]
                rows[nid]["y"] = (min(ys) + max(ys)) / 2
            else:
                stack.append((nid, True))
                stack.extend((c, False) for c in reversed(kids))
    df = pd.DataFrame([{**r, "x": float(r["step"])} for r in rows.values()], columns=NODE_COLUMNS)
    return df.sort_values(["step", "rank"], kind="stable").reset_index(drop=True)


def beam_edges(nodes: pd.DataFrame) -> pd.DataFrame:
    """One row per expansion (parent → child) with both ends' coordinates and path flags."""
    cols = ["parent", "child", "x", "y", "x2", "y2", "status", "on_best", "on_greedy", "token", "text"]
    if nodes.empty:
        return pd.DataFrame(columns=cols)
    pos = nodes.set_index("id")
    rows = []
    for _, n in nodes.iterrows():
        if n["id"] == 0 or n["parent"] not in pos.index:
            continue
        p = pos.loc[n["parent"]]
        rows.append({"parent": int(n["parent"]), "child": int(n["id"]), "x": p["x"], "y": p["y"], "x2": n["x"],
                     "y2": n["y"], "status": n["status"], "on_best": bool(n["on_best"] and p["on_best"]),
                     "on_greedy": bool(n["on_greedy"] and p["on_greedy"]), "token": n["token"], "text": n["text"]})
    return pd.DataFrame(rows, columns=cols)


NODE_KINDS = ("best", "n-best", "finished", "live", "pruned", "start")
NODE_KIND_COLOURS = ("#f2a900", "#ffd166", "#3a7d44", "#1f77b4", "#b0b0b0", "#333333")
NODE_KIND_SHAPES = ("diamond", "diamond", "square", "circle", "cross", "triangle-right")


def _node_kind(row: Mapping[str, Any]) -> str:
    """The legend category of a tree node: best, n-best, or its status."""
    if row["nbest"] == 1:
        return "best"
    if row["nbest"]:
        return "n-best"
    return str(row["status"])


def beam_tree_chart(
    nodes: pd.DataFrame, divergence: int | None = None, labels: bool | None = None, max_width: int = 800
) -> alt.LayerChart | None:
    """The search tree: nodes = partial hypotheses, edges = expansions, n-best highlighted.

    The best hypothesis' path is drawn thick and gold, the greedy output's path dashed red, pruned
    expansions faint; hovering a node shows its words, log-probability, normalised score and fate.
    ``divergence`` draws a rule at the step where greedy and beam search part. The tree is at most
    ``max_width`` pixels wide, legends below it; ``labels`` writes every node's word (default: when
    the tree has at most 250 nodes and a step is at least 64 px wide), else only the best path's.
    """
    if nodes.empty or len(nodes) < 2:
        return None
    nodes = nodes.copy()
    nodes["kind"] = [_node_kind(r) for r in nodes.to_dict("records")]
    nodes["nbest_label"] = [str(int(v)) if v else "" for v in nodes["nbest"]]
    edges = beam_edges(nodes)
    edges["kind"] = ["best path" if b else ("pruned" if s == "pruned" else "expansion")
                     for b, s in zip(edges["on_best"], edges["status"])]
    n_rows = float(nodes["y"].max() - nodes["y"].min() + 1)
    height = int(min(1400, max(260, 16 * n_rows)))
    steps = float(nodes["step"].max()) + 2
    width = int(min(max_width, max(420, 82 * steps)))
    x_scale = alt.Scale(domain=[-1.2, float(nodes["step"].max()) + 0.8], nice=False, zero=False)
    y_scale = alt.Scale(reverse=True, nice=False, zero=False,
                        domain=[float(nodes["y"].min()) - 0.6, float(nodes["y"].max()) + 0.6])
    x_axis = alt.Axis(title="target position i (step)", tickMinStep=1, format="d", grid=False)
    x = alt.X("x:Q", scale=x_scale, axis=x_axis)
    y = alt.Y("y:Q", scale=y_scale, axis=None)
    below = {"orient": "bottom", "direction": "horizontal"}
    edge_layer = alt.Chart(edges).mark_rule().encode(
        x=x, y=y, x2="x2:Q", y2="y2:Q",
        color=alt.Color("kind:N", scale=alt.Scale(domain=["best path", "expansion", "pruned"],
                                                  range=["#f2a900", "#7f9fbf", "#d0d0d0"]),
                        legend=alt.Legend(title="edges", **below)),
        strokeWidth=alt.StrokeWidth("kind:N", scale=alt.Scale(domain=["best path", "expansion", "pruned"],
                                                              range=[4, 1.4, 1]), legend=None),
    )
    layers: list[alt.Chart] = [edge_layer]
    greedy_edges = edges[edges["on_greedy"]]
    if not greedy_edges.empty:
        layers.append(alt.Chart(greedy_edges.assign(path="greedy output")).mark_rule(
            strokeDash=[5, 3], strokeWidth=2).encode(
            x=x, y=y, x2="x2:Q", y2="y2:Q",
            stroke=alt.Stroke("path:N", scale=alt.Scale(domain=["greedy output"], range=["#e4572e"]),
                              legend=alt.Legend(title=None, **below))))
    tip = [alt.Tooltip(f, title=t, format=".3f") if f in ("logprob:Q", "score:Q") else alt.Tooltip(f, title=t)
           for f, t in (("text:N", "hypothesis"), ("step:Q", "step i"), ("token:N", "word"),
                        ("logprob:Q", "log p (cumulative)"), ("score:Q", "normalised score"), ("status:N", "fate"),
                        ("rank:Q", "rank in step"), ("nbest_label:N", "n-best rank"),
                        ("on_greedy:N", "on greedy path"), ("id:Q", "id"), ("parent:Q", "parent id"))]
    kinds = alt.Legend(title="hypotheses", **below)
    layers.append(alt.Chart(nodes).mark_point(filled=True, opacity=1).encode(
        x=x, y=y,
        color=alt.Color("kind:N", scale=alt.Scale(domain=list(NODE_KINDS), range=list(NODE_KIND_COLOURS)),
                        legend=kinds),
        shape=alt.Shape("kind:N", scale=alt.Scale(domain=list(NODE_KINDS), range=list(NODE_KIND_SHAPES)),
                        legend=kinds),
        size=alt.condition("datum.nbest > 0", alt.value(170), alt.value(60)),
        tooltip=tip,
    ))
    if labels is None:
        labels = len(nodes) <= 250 and width / steps >= 64
    shown = nodes if labels else nodes[nodes["on_best"] | (nodes["nbest"] > 0)]
    if not shown.empty:
        layers.append(alt.Chart(shown).mark_text(align="left", dx=7, dy=-8, fontSize=FONT_MAIN).encode(
            x=x, y=y, text="token:N",
            opacity=alt.condition("datum.status == 'pruned'", alt.value(0.45), alt.value(1.0)), tooltip=tip))
    if divergence is not None:
        div = pd.DataFrame({"x": [divergence - 0.5], "note": [f"greedy and beam part at step {divergence}"]})
        layers.append(alt.Chart(div).mark_rule(color="#e4572e", strokeDash=[2, 2], opacity=0.7).encode(
            x=x, tooltip=[alt.Tooltip("note:N", title="")]))
    return alt.layer(*layers).resolve_scale(color="independent", shape="independent").properties(
        width=width, height=height, title="Beam search tree")


def beam_step_frame(trace: DecodeTrace, step: int) -> pd.DataFrame:
    """The beam after ``step`` (0-based): each live hypothesis, pruned expansion and finished one."""
    cols = ["fate", "rank", "hypothesis", "word", "log p", "score", "id", "parent"]
    if not 0 <= step < len(trace.beam_steps):
        return pd.DataFrame(columns=cols)
    b = trace.beam_steps[step]
    rows = []
    for fate, hyps in (("live", b.live), ("finished", b.finished), ("pruned", b.pruned)):
        for r, h in enumerate(sorted(hyps, key=lambda h: -h.logprob), start=1):
            rows.append({"fate": fate, "rank": r, "hypothesis": " ".join(h.tokens), "word": h.token,
                         "log p": h.logprob, "score": h.score, "id": h.id, "parent": h.parent})
    return pd.DataFrame(rows, columns=cols)


def beam_all_frame(trace: DecodeTrace) -> pd.DataFrame:
    """Every hypothesis the search touched, one row each with its step (for CSV export)."""
    frames = [beam_step_frame(trace, i).assign(step=i) for i in range(len(trace.beam_steps))]
    if not frames:
        return pd.DataFrame(columns=["step", *beam_step_frame(trace, 0).columns])
    df = pd.concat(frames, ignore_index=True)
    return df[["step", *[c for c in df.columns if c != "step"]]]


def nbest_frame(trace: DecodeTrace) -> pd.DataFrame:
    """The n-best list: rank, translation, words, log-probability and normalised score."""
    return pd.DataFrame([{"rank": r, "translation": e.translation, "words": len(e.tokens),
                          "log p": e.logprob, "score": e.score} for r, e in enumerate(trace.nbest, start=1)],
                        columns=["rank", "translation", "words", "log p", "score"])


def finished_pool(trace: DecodeTrace) -> list[tuple[list[str], float]]:
    """Every distinct finished hypothesis (words, cumulative log p), n-best entries included."""
    seen: dict[tuple[str, ...], float] = {}
    for b in trace.beam_steps:
        for h in b.finished:
            seen.setdefault(tuple(h.tokens), h.logprob)
    for e in trace.nbest:
        seen.setdefault(tuple(e.tokens), e.logprob)
    return [(list(t), lp) for t, lp in seen.items()]


def rerank_frame(trace: DecodeTrace, gnmt_alpha: float = 0.6,
                 detok: Callable[[list[str]], str] | None = None) -> pd.DataFrame:
    """The finished hypotheses ranked under each length normalisation.

    Scores are log p divided by the penalty of :func:`nmt.decoding.search.length_penalty` for the
    hypothesis' length (``</s>`` counted, as the search does). Columns ``score <norm>`` and
    ``rank <norm>`` per normalisation; rows sorted by the rank without normalisation. ``detok`` (the
    model's ``tgt_tok.detokenize``) writes each hypothesis as the translation boxes do, a subword
    model's pieces joined into words; without it the tokens are joined by spaces.
    """
    pool = finished_pool(trace)
    cols = ["hypothesis", "words", "log p"] + [f"{p} {n}" for n in LENGTH_NORMS for p in ("score", "rank")]
    if not pool:
        return pd.DataFrame(columns=cols)
    join = detok or " ".join
    df = pd.DataFrame({"hypothesis": [join([t for t in toks if t != EOS]) for toks, _ in pool],
                       "words": [len(toks) for toks, _ in pool], "log p": [lp for _, lp in pool]})
    for n in LENGTH_NORMS:
        df[f"score {n}"] = [lp / length_penalty(len(toks), n, gnmt_alpha) for toks, lp in pool]
        df[f"rank {n}"] = df[f"score {n}"].rank(ascending=False, method="first").astype(int)
    return df.sort_values("rank none").reset_index(drop=True)[cols]


def winners(df: pd.DataFrame) -> dict[str, str]:
    """The hypothesis each length normalisation ranks first, from :func:`rerank_frame`."""
    return {n: str(df.loc[df[f"rank {n}"] == 1, "hypothesis"].iloc[0]) for n in LENGTH_NORMS} if len(df) else {}


def rerank_chart(df: pd.DataFrame, width: int = 760) -> alt.LayerChart | None:
    """Slope chart: each finished hypothesis' rank under every normalisation, its words at the right
    (inside the ``width``, so a chart squeezed to fit its column keeps its slopes)."""
    if df.empty:
        return None
    long = pd.DataFrame([{"normalisation": NORM_SHORT[n], "rank": int(r[f"rank {n}"]), "hypothesis": r["hypothesis"],
                          "words": int(r["words"]), "score": float(r[f"score {n}"])}
                         for _, r in df.iterrows() for n in LENGTH_NORMS])
    sel = alt.selection_point(fields=["hypothesis"], on="pointerover", nearest=True, empty=False)
    base = alt.Chart(long).encode(
        x=alt.X("normalisation:N", sort=list(NORM_SHORT.values()), title=None,  # the right part: the words
                axis=alt.Axis(labelAngle=0, orient="top"), scale=alt.Scale(range=[20, 300], padding=0.25)),
        y=alt.Y("rank:O", title="rank (1 = chosen)"),
        detail="hypothesis:N",
        color=alt.Color("words:O", title="length (words)", scale=alt.Scale(scheme="viridis"),
                        legend=alt.Legend(orient="bottom", direction="horizontal")),
        tooltip=["hypothesis:N", "words:Q", "normalisation:N", "rank:O", alt.Tooltip("score:Q", format=".3f")],
    )
    lines = base.mark_line(point=alt.OverlayMarkDef(size=70)).encode(
        opacity=alt.condition(sel, alt.value(1.0), alt.value(0.6)),
        strokeWidth=alt.condition(sel, alt.value(4), alt.value(2)),
    ).add_params(sel)
    last = NORM_SHORT[LENGTH_NORMS[-1]]
    words = base.transform_filter(alt.datum.normalisation == last).mark_text(
        align="left", dx=12, fontSize=FONT_MAIN, limit=width - 330).encode(text="hypothesis:N",
                                                                        color=alt.value("#31333F"))
    return alt.layer(lines, words).properties(width=width, height=alt.Step(30),
                                              title="How the ranking changes with length normalisation")


@dataclass
class Divergence:
    """Where the greedy output and the beam's best hypothesis part (``step`` None: they agree)."""

    step: int | None
    greedy_word: str | None
    beam_word: str | None
    greedy_pruned_at: int | None  # step at which the greedy output's path was pruned from the beam


def divergence(greedy: DecodeTrace, beam: DecodeTrace) -> Divergence:
    """Compare the greedy output with the beam's best: first differing step and the greedy path's fate."""
    g, b = greedy.target_tokens, beam.target_tokens
    step = None
    for i in range(max(len(g), len(b))):
        if i >= len(g) or i >= len(b) or g[i] != b[i]:
            step = i
            break
    pruned_at = None
    for i, bs in enumerate(beam.beam_steps[: len(g)]):
        prefix = list(g[: i + 1])
        if any(list(h.tokens) == prefix for h in bs.pruned):
            pruned_at = i
            break
    return Divergence(step, g[step] if step is not None and step < len(g) else None,
                      b[step] if step is not None and step < len(b) else None, pruned_at)


def nbest_alpha_chart(trace: DecodeTrace, rank: int, words: str | None = None) -> alt.TopLevelMixin | None:
    """The α heatmap of the n-best hypothesis ``rank`` (1-based), or the fixed-summary drawing; ``words``:
    a subword model's kind, to draw words made of its pieces (:func:`ui.figures.subword_view.words_matrix`)."""
    if not 1 <= rank <= len(trace.nbest):
        return None
    e = trace.nbest[rank - 1]
    if e.alpha is None:
        return fixed_context_chart(trace) if rank == 1 else None
    title = f"α of hypothesis {rank}: {e.translation}"
    if words:
        src, tgt, alpha = words_matrix(trace.src_tokens, e.tokens, e.alpha, words)
        return alpha_chart(src, tgt, alpha, title=title + " (words)")
    return alpha_chart(source_labels(trace), e.tokens, e.alpha, title=title)


def nbest_cells(trace: DecodeTrace, rank: int) -> pd.DataFrame:
    """Long-format α cells of one n-best hypothesis (for CSV export)."""
    e = trace.nbest[rank - 1]
    if e.alpha is None:
        return pd.DataFrame(columns=["i", "j", "target", "source", "alpha"])
    return alpha_frame(trace.src_tokens, e.tokens, e.alpha)
