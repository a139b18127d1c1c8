"""Plain builders of the three analysis pages: beam search, alignments and the bottleneck.

Every function here reads :class:`nmt.trace.DecodeTrace` objects (or plain text) and returns an
altair chart, a pandas data frame, a dict or a list, so all of it is unit-tested without a browser
or a Streamlit session. Nothing here touches a model: the numbers are the ones the traces recorded,
only rearranged, ranked or averaged.

Truthfulness: a trace decoded with a fixed context (RNNencdec, or the RNNsearch weights with c_i
frozen) has no α. It is drawn by :func:`fixed_context_chart`, one bar per target word spanning the
whole source ("reads the same summary c"), never as a heatmap of invented weights.

Also here: the parser of user-uploaded sentence pairs (:func:`parse_tsv_pairs`,
:func:`parse_two_files`), which fails with a :class:`PairsError` whose message can be shown as is.
Corpus splits are found by :mod:`nmt.corpora`, only under the configured data roots.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import altair as alt
import numpy as np
import pandas as pd

from nmt.align import Links, alignment_error, argmax_links
from nmt.decoding import LENGTH_NORMS, length_penalty
from nmt.metrics import bleu_by_length, sentence_scores
from nmt.trace import DecodeTrace, Hypothesis
from ui.plots import label_expr, source_labels

EOS = "</s>"
NORM_LABELS = {
    "none": "none (raw log-probability)",
    "length": "divide by length (Jean et al. 2015)",
    "gnmt": "GNMT length penalty (Wu et al. 2016)",
}

# ----------------------------------------------------------------------------------------------
# Uploaded sentence pairs
# ----------------------------------------------------------------------------------------------

MAX_PAIRS = 5000
MAX_UPLOAD_MB = 5  # also server.maxUploadSize in .streamlit/config.toml (Streamlit's MB = 2**20 bytes)
MAX_UPLOAD_BYTES = MAX_UPLOAD_MB * 2**20


class PairsError(ValueError):
    """A problem with uploaded or pasted sentence pairs; the message is fit to show as is."""


def decode_text(data: bytes | str, name: str) -> str:
    """UTF-8 text of an uploaded file (BOM dropped); a clear :class:`PairsError` for anything else."""
    if isinstance(data, str):
        text = data
    else:
        if len(data) > MAX_UPLOAD_BYTES:
            raise PairsError(f"{name} is {len(data) / 2**20:.1f} MB; the limit is {MAX_UPLOAD_MB} MB.")
        if b"\x00" in data:
            raise PairsError(f"{name} looks like a binary file (it contains NUL bytes), not plain text.")
        try:
            text = data.decode("utf-8")
        except UnicodeDecodeError as err:
            line = data[: err.start].count(b"\n") + 1
            bad = data[err.start : err.start + 1].hex()
            raise PairsError(
                f"{name} is not UTF-8 text: byte 0x{bad} on line {line} cannot be decoded. "
                "It is probably in Latin-1 / Windows-1252; save it as UTF-8 and upload it again."
            ) from None
    return text.removeprefix("\ufeff")


def _lines(text: str) -> list[str]:
    """Lines without their line ends (\\n, \\r\\n or \\r), a final line end not making an extra line."""
    return text.splitlines()


def _check_count(pairs: list[tuple[str, str]]) -> list[tuple[str, str]]:
    """The pairs, if there are some and not too many to browse."""
    if not pairs:
        raise PairsError("No sentence pairs found: the input is empty.")
    if len(pairs) > MAX_PAIRS:
        raise PairsError(f"{len(pairs)} pairs is too many to browse here; keep it to at most {MAX_PAIRS}.")
    return pairs


def parse_tsv_pairs(data: bytes | str, name: str = "the pasted text") -> list[tuple[str, str]]:
    """Sentence pairs from ``source<TAB>reference`` lines.

    Blank lines are skipped; a line without exactly one tab, or with an empty side, is an error
    naming its line number.
    """
    text = decode_text(data, name)
    pairs: list[tuple[str, str]] = []
    for n, line in enumerate(_lines(text), start=1):
        if not line.strip():
            continue
        parts = line.split("\t")
        if len(parts) != 2:
            what = "no tab" if len(parts) == 1 else f"{len(parts) - 1} tabs"
            raise PairsError(f"Line {n} of {name} has {what}; write one pair per line as "
                             "source<TAB>reference.")
        src, ref = parts[0].strip(), parts[1].strip()
        if not src or not ref:
            side = "source" if not src else "reference"
            raise PairsError(f"Line {n} of {name} has an empty {side} side.")
        pairs.append((src, ref))
    return _check_count(pairs)


def parse_two_files(
    src: bytes | str, ref: bytes | str, src_name: str = "the source file", ref_name: str = "the reference file"
) -> list[tuple[str, str]]:
    """Sentence pairs from two files with one sentence per line, line k of one translating line k.

    Line counts must match (a final blank line is ignored); a line blank in both files is skipped,
    a line blank in only one is an error naming its line number.
    """
    s_lines = _lines(decode_text(src, src_name))
    r_lines = _lines(decode_text(ref, ref_name))
    while s_lines and not s_lines[-1].strip():
        s_lines.pop()
    while r_lines and not r_lines[-1].strip():
        r_lines.pop()
    if len(s_lines) != len(r_lines):
        raise PairsError(f"{src_name} has {len(s_lines)} lines but {ref_name} has {len(r_lines)}; "
                         "line k of one file must translate line k of the other.")
    pairs: list[tuple[str, str]] = []
    for n, (s, r) in enumerate(zip(s_lines, r_lines), start=1):
        s, r = s.strip(), r.strip()
        if not s and not r:
            continue
        if not s or not r:
            raise PairsError(f"Line {n} is empty in {src_name if not s else ref_name} but not in "
                             f"{ref_name if not s else src_name}.")
        pairs.append((s, r))
    return _check_count(pairs)


# ----------------------------------------------------------------------------------------------
# Alignment heatmaps (α), with gold links, and the honest picture of a fixed context
# ----------------------------------------------------------------------------------------------


def _cell_steps(n_src: int, n_tgt: int, max_width: int = 860) -> tuple[int, int]:
    """Heatmap cell width and height in pixels, so ``n_src`` columns fit in about ``max_width``."""
    return int(max(8, min(34, max_width // max(n_src, 1)))), (20 if n_tgt <= 40 else 14)


def alpha_frame(src: Sequence[str], tgt: Sequence[str], alpha: Sequence[Sequence[float] | None]) -> pd.DataFrame:
    """Long-format α cells (target row i × source column j) with both words."""
    rows = []
    for i, row in enumerate(alpha):
        if row is None:
            continue
        for j, a in enumerate(row[: len(src)]):
            rows.append({"i": i, "j": j, "target": tgt[i], "source": src[j], "alpha": float(a)})
    return pd.DataFrame(rows, columns=["i", "j", "target", "source", "alpha"])


def links_frame(
    src: Sequence[str], tgt: Sequence[str], sure: Links | None = None, possible: Links | None = None,
    predicted: Links | None = None,
) -> pd.DataFrame:
    """Link markers (source j, target i) of the gold Sure / Possible sets and of argmax α.

    Possible-only links are those in P but not in S; links outside the sentence are dropped.
    """
    rows = []
    sure, possible, predicted = sure or set(), possible or set(), predicted or set()
    for kind, links in (("sure", sure), ("possible", possible - sure), ("argmax α", predicted)):
        for j, i in sorted(links):
            if 0 <= j < len(src) and 0 <= i < len(tgt):
                rows.append({"i": i, "j": j, "target": tgt[i], "source": src[j], "link": kind})
    return pd.DataFrame(rows, columns=["i", "j", "target", "source", "link"])


LINK_SHAPES = {"sure": "square", "possible": "circle", "argmax α": "cross"}
LINK_COLOURS = {"sure": "#111111", "possible": "#6c6c6c", "argmax α": "#e4572e"}


def alpha_chart(
    src: Sequence[str], tgt: Sequence[str], alpha: Sequence[Sequence[float] | None], *,
    links: pd.DataFrame | None = None, title: str | None = None, max_width: int = 860,
) -> alt.Chart | alt.LayerChart | None:
    """The α heatmap (rows: target words, columns: source words), optionally with link markers.

    Cells shrink so the heatmap is about ``max_width`` pixels wide (but no narrower than 8 px).
    Returns ``None`` when no row has α (a fixed context: there is no alignment to draw).
    """
    cells = alpha_frame(src, tgt, alpha)
    if cells.empty:
        return None
    x_step, y_step = _cell_steps(len(src), len(tgt), max_width)
    x = alt.X("j:O", title="source word j", scale=alt.Scale(domain=list(range(len(src)))),
              axis=alt.Axis(orient="top", labelAngle=-50, labelExpr=label_expr(src), labelOverlap=False,
                            labelLimit=140))
    y = alt.Y("i:O", title="target word i", scale=alt.Scale(domain=list(range(len(tgt)))),
              axis=alt.Axis(labelExpr=label_expr(tgt), labelOverlap=False, labelLimit=140))
    heat = alt.Chart(cells).mark_rect().encode(
        x=x, y=y,
        color=alt.Color("alpha:Q", scale=alt.Scale(scheme="blues", domain=[0, 1]),
                        legend=alt.Legend(title="α_ij", gradientLength=110)),
        tooltip=[alt.Tooltip("i:O", title="i (target)"), alt.Tooltip("target:N", title="target word"),
                 alt.Tooltip("j:O", title="j (source)"), alt.Tooltip("source:N", title="source word"),
                 alt.Tooltip("alpha:Q", title="α_ij", format=".3f")],
    )
    chart: alt.Chart | alt.LayerChart = heat
    if links is not None and not links.empty:
        kinds = [k for k in LINK_SHAPES if k in set(links["link"])]
        size = (min(x_step, y_step) * 0.85) ** 2
        marks = alt.Chart(links).mark_point(filled=False, strokeWidth=2, size=size).encode(
            x=x, y=y,
            shape=alt.Shape("link:N", scale=alt.Scale(domain=kinds, range=[LINK_SHAPES[k] for k in kinds]),
                            legend=alt.Legend(title="links")),
            color=alt.Color("link:N", scale=alt.Scale(domain=kinds, range=[LINK_COLOURS[k] for k in kinds]),
                            legend=alt.Legend(title="links")),
            tooltip=[alt.Tooltip("link:N"), alt.Tooltip("target:N", title="target word"),
                     alt.Tooltip("source:N", title="source word"), alt.Tooltip("i:O"), alt.Tooltip("j:O")],
        )
        chart = alt.layer(heat, marks).resolve_scale(color="independent", shape="independent")
    props: dict[str, Any] = {"width": alt.Step(x_step), "height": alt.Step(y_step)}
    if title:
        props["title"] = title
    return chart.properties(**props)


def trace_alpha_chart(
    trace: DecodeTrace, *, sure: Links | None = None, possible: Links | None = None, show_argmax: bool = False,
    title: str | None = None, max_width: int = 860,
) -> alt.Chart | alt.LayerChart | None:
    """The α heatmap of a trace, with gold Sure/Possible links and argmax-α links if asked.

    ``None`` for a fixed-context trace (use :func:`fixed_context_chart`)."""
    if not trace.has_alignment:
        return None
    tgt = [f"{s.token}*" if s.forced else s.token for s in trace.steps]
    links = None
    if sure is not None or possible is not None or show_argmax:
        links = links_frame(trace.src_tokens, tgt, sure, possible, argmax_links(trace) if show_argmax else None)
    return alpha_chart(source_labels(trace), tgt, [s.alpha for s in trace.steps], links=links, title=title,
                       max_width=max_width)


def fixed_context_chart(trace: DecodeTrace, title: str | None = None, max_width: int = 860) -> alt.LayerChart | None:
    """What a fixed-context decoder reads: every target word the same summary c of the whole source.

    One bar per target word spans all source columns (there are no per-word weights to colour);
    hovering shows ‖c_i‖, which is the same at every step. ``None`` for a trace without steps.
    """
    if not trace.steps:
        return None
    n = len(trace.src_tokens)
    tgt = [f"{s.token}*" if s.forced else s.token for s in trace.steps]
    df = pd.DataFrame({
        "i": [s.i for s in trace.steps], "target": tgt, "x0": -0.45, "x1": n - 0.55, "mid": (n - 1) / 2,
        "context_norm": [s.context_norm for s in trace.steps],
        "note": ["reads the same summary c"] * len(trace.steps),
    })
    x_step, y_step = _cell_steps(n, len(tgt), max_width)
    x_scale = alt.Scale(domain=[-0.5, n - 0.5], nice=False, zero=False)
    x_axis = alt.Axis(orient="top", values=list(range(n)), labelExpr=label_expr(source_labels(trace)),
                      labelAngle=-50, labelOverlap=False, grid=False, labelLimit=140)
    x_title = "source words (summarised into one vector c)"
    x = alt.X("x0:Q", title=x_title, scale=x_scale, axis=x_axis)
    y = alt.Y("i:O", title="target word i", scale=alt.Scale(domain=list(range(len(tgt)))),
              axis=alt.Axis(labelExpr=label_expr(tgt), labelOverlap=False, labelLimit=140))
    tip = [alt.Tooltip("target:N", title="target word"), alt.Tooltip("note:N", title="context"),
           alt.Tooltip("context_norm:Q", title="‖c_i‖", format=".3f")]
    bars = alt.Chart(df).mark_bar(color="#9e9e9e", opacity=0.45, cornerRadius=3).encode(
        x=x, x2="x1:Q", y=y, tooltip=tip)
    text = alt.Chart(df).mark_text(fontSize=11, color="#333333").encode(
        x=alt.X("mid:Q", title=x_title, scale=x_scale, axis=x_axis), y=y,
        text=alt.value("reads the same summary c"), tooltip=tip)
    chart = alt.layer(bars, text).properties(width=max(x_step * n, 240), height=alt.Step(y_step),
                                             title=title or "Fixed context: no α exists")
    return chart


def trace_chart(
    trace: DecodeTrace, title: str | None = None, max_width: int = 860, **gold: Any
) -> alt.TopLevelMixin | None:
    """The α heatmap of a trace, or the fixed-summary drawing when it has no alignment."""
    if trace.has_alignment:
        return trace_alpha_chart(trace, title=title, max_width=max_width, **gold)
    return fixed_context_chart(trace, title=title, max_width=max_width)


def alpha_stats(trace: DecodeTrace) -> dict[str, float | None]:
    """Mean entropy of α_i (nats) and mean of max_j α_ij over the target words (``</s>`` left out).

    ``None`` for both when the trace has no alignment."""
    steps = [s for s in trace.steps if s.alpha is not None and s.token != EOS] or \
            [s for s in trace.steps if s.alpha is not None]
    if not steps:
        return {"entropy": None, "max_alpha": None}
    ent = [s.entropy() or 0.0 for s in steps]
    peak = [float(max(s.alpha or [0.0])) for s in steps]
    return {"entropy": float(np.mean(ent)), "max_alpha": float(np.mean(peak))}


# ----------------------------------------------------------------------------------------------
# Beam search: the tree, the beam per step, n-best, and rankings under each length normalisation
# ----------------------------------------------------------------------------------------------

NODE_COLUMNS = ["id", "parent", "step", "token", "text", "logprob", "score", "status", "rank", "nbest",
                "on_best", "on_greedy", "x", "y"]


def _all_hyps(trace: DecodeTrace) -> list[Hypothesis]:
    """Every hypothesis of every recorded beam step (live, pruned and finished)."""
    out: list[Hypothesis] = []
    for b in trace.beam_steps:
        out.extend(b.live)
        out.extend(b.pruned)
        out.extend(b.finished)
    return out


def nbest_ids(trace: DecodeTrace) -> dict[int, int]:
    """Hypothesis id → 1-based n-best rank, matching each n-best entry to its node by its words.

    A finished node is matched first; an entry that ended at the length limit matches the live node
    of the last step with the same words.
    """
    by_tokens: dict[tuple[str, ...], Hypothesis] = {}
    for h in _all_hyps(trace):
        key = tuple(h.tokens)
        old = by_tokens.get(key)
        if old is None or (h.status == "finished" and old.status != "finished"):
            by_tokens[key] = h
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
    for row in rows.values():
        row["x"] = float(row["step"])
    df = pd.DataFrame(list(rows.values()), columns=NODE_COLUMNS)
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
    nodes: pd.DataFrame, divergence: int | None = None, labels: bool | None = None
) -> alt.LayerChart | None:
    """The search tree: nodes = partial hypotheses, edges = expansions, n-best highlighted.

    The best hypothesis' path is drawn thick and gold, the greedy output's path dashed red, pruned
    expansions faint; hovering a node shows its words, log-probability, normalised score and fate.
    ``divergence`` draws a rule at the step where greedy and beam search part. ``labels`` writes
    each node's word (default: when the tree has at most 250 nodes).
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
    width = int(min(2400, max(420, 82 * (nodes["step"].max() + 2))))
    x_scale = alt.Scale(domain=[-1.2, float(nodes["step"].max()) + 0.8], nice=False, zero=False)
    y_scale = alt.Scale(reverse=True, nice=False, zero=False,
                        domain=[float(nodes["y"].min()) - 0.6, float(nodes["y"].max()) + 0.6])
    x_axis = alt.Axis(title="target position i (step)", tickMinStep=1, format="d", grid=False)
    x = alt.X("x:Q", scale=x_scale, axis=x_axis)
    y = alt.Y("y:Q", scale=y_scale, axis=None)
    edge_layer = alt.Chart(edges).mark_rule().encode(
        x=x, y=y, x2="x2:Q", y2="y2:Q",
        color=alt.Color("kind:N", scale=alt.Scale(domain=["best path", "expansion", "pruned"],
                                                  range=["#f2a900", "#7f9fbf", "#d0d0d0"]),
                        legend=alt.Legend(title="edges")),
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
                              legend=alt.Legend(title=None))))
    tip = [alt.Tooltip("text:N", title="hypothesis"), alt.Tooltip("step:Q", title="step i"),
           alt.Tooltip("token:N", title="word"), alt.Tooltip("logprob:Q", title="log p (cumulative)", format=".3f"),
           alt.Tooltip("score:Q", title="normalised score", format=".3f"), alt.Tooltip("status:N", title="fate"),
           alt.Tooltip("rank:Q", title="rank in step"), alt.Tooltip("nbest_label:N", title="n-best rank"),
           alt.Tooltip("on_greedy:N", title="on greedy path"), alt.Tooltip("id:Q", title="id"),
           alt.Tooltip("parent:Q", title="parent id")]
    layers.append(alt.Chart(nodes).mark_point(filled=True, opacity=1).encode(
        x=x, y=y,
        color=alt.Color("kind:N", scale=alt.Scale(domain=list(NODE_KINDS), range=list(NODE_KIND_COLOURS)),
                        legend=alt.Legend(title="hypotheses")),
        shape=alt.Shape("kind:N", scale=alt.Scale(domain=list(NODE_KINDS), range=list(NODE_KIND_SHAPES)),
                        legend=alt.Legend(title="hypotheses")),
        size=alt.condition("datum.nbest > 0", alt.value(170), alt.value(60)),
        tooltip=tip,
    ))
    if labels is None:
        labels = len(nodes) <= 250
    shown = nodes if labels else nodes[nodes["on_best"] | (nodes["nbest"] > 0)]
    if not shown.empty:
        layers.append(alt.Chart(shown).mark_text(align="left", dx=7, dy=-7, fontSize=10).encode(
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


def rerank_frame(trace: DecodeTrace, gnmt_alpha: float = 0.6) -> pd.DataFrame:
    """The finished hypotheses ranked under each length normalisation.

    Scores are log p divided by the penalty of :func:`nmt.decoding.length_penalty` for the
    hypothesis' length (``</s>`` counted, as the search does). Columns ``score <norm>`` and
    ``rank <norm>`` per normalisation; rows sorted by the rank without normalisation.
    """
    pool = finished_pool(trace)
    cols = ["hypothesis", "words", "log p"] + [f"{p} {n}" for n in LENGTH_NORMS for p in ("score", "rank")]
    if not pool:
        return pd.DataFrame(columns=cols)
    df = pd.DataFrame({"hypothesis": [" ".join(t for t in toks if t != EOS) for toks, _ in pool],
                       "words": [len(toks) for toks, _ in pool], "log p": [lp for _, lp in pool]})
    for n in LENGTH_NORMS:
        df[f"score {n}"] = [lp / length_penalty(len(toks), n, gnmt_alpha) for toks, lp in pool]
        df[f"rank {n}"] = df[f"score {n}"].rank(ascending=False, method="first").astype(int)
    return df.sort_values("rank none").reset_index(drop=True)[cols]


def rerank_chart(df: pd.DataFrame) -> alt.Chart | None:
    """Slope chart: each finished hypothesis' rank without normalisation, by length and with GNMT."""
    if df.empty:
        return None
    names = {"none": "none", "length": "÷ length", "gnmt": "GNMT"}
    long = pd.DataFrame([{"normalisation": names[n], "rank": int(r[f"rank {n}"]), "hypothesis": r["hypothesis"],
                          "words": int(r["words"]), "score": float(r[f"score {n}"])}
                         for _, r in df.iterrows() for n in LENGTH_NORMS])
    sel = alt.selection_point(fields=["hypothesis"], on="pointerover", nearest=True, empty=False)
    base = alt.Chart(long).encode(
        x=alt.X("normalisation:N", sort=list(names.values()), title=None, axis=alt.Axis(labelAngle=0, orient="top")),
        y=alt.Y("rank:O", title="rank (1 = chosen)"),
        detail="hypothesis:N",
        color=alt.Color("words:O", title="length (words)", scale=alt.Scale(scheme="viridis")),
        tooltip=["hypothesis:N", "words:Q", "normalisation:N", "rank:O", alt.Tooltip("score:Q", format=".3f")],
    )
    lines = base.mark_line(point=True).encode(
        opacity=alt.condition(sel, alt.value(1.0), alt.value(0.55)),
        strokeWidth=alt.condition(sel, alt.value(3.5), alt.value(1.5)),
    ).add_params(sel)
    return lines.properties(width=360, height=alt.Step(22), title="How the ranking changes with length normalisation")


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


def nbest_alpha_chart(trace: DecodeTrace, rank: int) -> alt.TopLevelMixin | None:
    """The α heatmap of the n-best hypothesis ``rank`` (1-based), or the fixed-summary drawing."""
    if not 1 <= rank <= len(trace.nbest):
        return None
    e = trace.nbest[rank - 1]
    if e.alpha is None:
        return fixed_context_chart(trace) if rank == 1 else None
    return alpha_chart(source_labels(trace), e.tokens, e.alpha, title=f"α of hypothesis {rank}: {e.translation}")


def nbest_cells(trace: DecodeTrace, rank: int) -> pd.DataFrame:
    """Long-format α cells of one n-best hypothesis (for CSV export)."""
    e = trace.nbest[rank - 1]
    if e.alpha is None:
        return pd.DataFrame(columns=["i", "j", "target", "source", "alpha"])
    return alpha_frame(trace.src_tokens, e.tokens, e.alpha)


# ----------------------------------------------------------------------------------------------
# The alignment browser's table, gold links and AER
# ----------------------------------------------------------------------------------------------


def filter_pairs(pairs: Sequence[tuple[str, str]], length: tuple[int, int] = (0, 10**6), query: str = "") -> list[int]:
    """Indices of pairs whose source has ``length[0]``–``length[1]`` words and that contain ``query``.

    Words are whitespace-separated; the search is case-insensitive over both sides."""
    lo, hi = length
    q = query.strip().lower()
    return [k for k, (s, r) in enumerate(pairs)
            if lo <= len(s.split()) <= hi and (not q or q in s.lower() or q in r.lower())]


def selected_row(state: Any) -> int | None:
    """The first selected row position of an ``st.dataframe`` selection (object or mapping form)."""
    sel = state.get("selection") if isinstance(state, Mapping) else getattr(state, "selection", None)
    rows = sel.get("rows") if isinstance(sel, Mapping) else getattr(sel, "rows", None)
    if not rows:
        return None
    try:
        return int(rows[0])
    except (TypeError, ValueError):
        return None


def browser_row(idx: int, src: str, ref: str, own: DecodeTrace, forced_: DecodeTrace | None,
                hyp_for_scoring: str | None = None, ref_for_scoring: str | None = None) -> dict[str, Any]:
    """One row of the sentence table: lengths, the translation, sentence BLEU/chrF and α statistics.

    ``hyp_for_scoring``/``ref_for_scoring`` override what is scored (e.g. tokenised lowercase text
    for pre-tokenised gold sets); by default the detokenised translation against the reference.
    """
    scores = sentence_scores(hyp_for_scoring if hyp_for_scoring is not None else own.translation,
                             ref_for_scoring if ref_for_scoring is not None else ref)
    stats = alpha_stats(own)
    return {
        "#": idx, "source": src, "reference": ref, "translation": own.translation,
        "src words": len(own.src_tokens) - 1, "ref words": len(ref.split()),
        "BLEU": scores["bleu"], "chrF": scores["chrf"],
        "α entropy": stats["entropy"], "max α": stats["max_alpha"],
        "ref log p": forced_.logprob if forced_ is not None else None,
    }


BROWSER_COLUMNS = ["#", "source", "reference", "translation", "src words", "ref words", "BLEU", "chrF",
                   "α entropy", "max α", "ref log p"]


def browser_frame(rows: Iterable[Mapping[str, Any]]) -> pd.DataFrame:
    """The sentence table from :func:`browser_row` rows (plus an ``AER`` column when present)."""
    rows = list(rows)
    cols = BROWSER_COLUMNS + (["AER"] if any("AER" in r for r in rows) else [])
    return pd.DataFrame(rows, columns=cols)


def sentence_aer(trace: DecodeTrace, sure: Links, possible: Links) -> float | None:
    """AER of one sentence's argmax-α links; ``None`` without α or without gold links."""
    if not trace.has_alignment or not (sure or possible):
        return None
    return float(alignment_error([argmax_links(trace)], [sure], [possible])["aer"])


def corpus_aer(traces: Sequence[DecodeTrace], sure: Sequence[Links], possible: Sequence[Links]) -> dict[str, Any]:
    """AER, precision and recall of argmax-α links over a whole gold set (Och & Ney 2003)."""
    if any(not t.has_alignment for t in traces):
        raise ValueError("a fixed-context model has no α, so it has no alignment to score")
    res = alignment_error([argmax_links(t) for t in traces], sure, possible)
    return {**res, "sentences": len(traces)}


def links_csv(traces: Sequence[DecodeTrace], indices: Sequence[int]) -> str:
    """Predicted argmax-α links per sentence in the gold files' ``j-i`` format, as CSV."""
    rows = [{"#": k, "links": " ".join(f"{j}-{i}" for j, i in sorted(argmax_links(t)))}
            for k, t in zip(indices, traces)]
    return pd.DataFrame(rows, columns=["#", "links"]).to_csv(index=False)


# ----------------------------------------------------------------------------------------------
# The bottleneck page: per-model comparison and the length sweep
# ----------------------------------------------------------------------------------------------


def comparison_row(name: str, own: DecodeTrace, forced_: DecodeTrace | None, ref: str | None) -> dict[str, Any]:
    """One model's column summary: translation, its log p, the reference's log p and sentence BLEU."""
    row: dict[str, Any] = {"model": name, "context": own.context, "translation": own.translation,
                           "words": len([s for s in own.steps if s.token != EOS]), "log p (own)": own.logprob,
                           "log p (reference)": None, "log p / word (reference)": None, "BLEU": None, "chrF": None}
    if forced_ is not None:
        row["log p (reference)"] = forced_.logprob
        row["log p / word (reference)"] = forced_.logprob / max(1, len(forced_.steps))
    if ref:
        sc = sentence_scores(own.translation, ref)
        row["BLEU"], row["chrF"] = sc["bleu"], sc["chrf"]
    return row


def lengths_of(sources: Sequence[str]) -> list[int]:
    """Source lengths in whitespace-separated words."""
    return [len(s.split()) for s in sources]


def pick_by_length(sources: Sequence[str], length: int) -> list[int]:
    """Indices of sentences with exactly ``length`` words (or, if none, the nearest length present)."""
    lens = lengths_of(sources)
    if not lens:
        return []
    present = sorted(set(lens))
    best = min(present, key=lambda n: (abs(n - length), n))
    return [k for k, n in enumerate(lens) if n == best]


def sweep_sample(sources: Sequence[str], width: int = 5, per_bucket: int = 8, max_len: int = 80) -> list[int]:
    """Up to ``per_bucket`` sentence indices from each ``width``-word source-length bucket (in order)."""
    taken: dict[int, list[int]] = {}
    for k, n in enumerate(lengths_of(sources)):
        if 0 < n <= max_len:
            b = taken.setdefault(n // width, [])
            if len(b) < per_bucket:
                b.append(k)
    return sorted(k for b in taken.values() for k in b)


def sweep_frame(lengths: Sequence[int], hyps: Mapping[str, Sequence[str]], refs: Sequence[str],
                ref_logp: Mapping[str, Sequence[float | None]] | None = None, width: int = 5) -> pd.DataFrame:
    """Corpus BLEU (sacrebleu) of each model per source-length bucket, and mean reference log p/word."""
    rows = []
    for name, h in hyps.items():
        for b in bleu_by_length(lengths, h, refs, width=width):
            row = {"model": name, "length": f"{b['lo']}–{b['hi'] - 1}", "lo": b["lo"], "n": b["n"], "BLEU": b["score"]}
            if ref_logp is not None and name in ref_logp:
                vals = [ref_logp[name][k] for k, n in enumerate(lengths) if b["lo"] <= n < b["hi"]
                        and ref_logp[name][k] is not None]
                row["ref log p / word"] = float(np.mean(vals)) if vals else None
            rows.append(row)
    return pd.DataFrame(rows)


def sweep_chart(df: pd.DataFrame, value: str = "BLEU") -> alt.Chart | None:
    """BLEU (or reference log p per word) against source length, one line per model."""
    if df.empty or value not in df.columns:
        return None
    return alt.Chart(df.dropna(subset=[value])).mark_line(point=True).encode(
        x=alt.X("lo:Q", title="source length (words, bucket start)"),
        y=alt.Y(f"{value}:Q", title=value),
        color=alt.Color("model:N", title=None, legend=alt.Legend(orient="bottom")),
        tooltip=["model:N", "length:N", "n:Q", alt.Tooltip(f"{value}:Q", format=".2f")],
    ).properties(height=260, title=f"{value} by source length")


def logp_chart(rows: Sequence[Mapping[str, Any]]) -> alt.Chart | None:
    """Bar chart of the reference's log-probability under each model (closer to 0 = more likely)."""
    df = pd.DataFrame([r for r in rows if r.get("log p (reference)") is not None])
    if df.empty:
        return None
    return alt.Chart(df).mark_bar().encode(
        x=alt.X("log p (reference):Q", title="log p(reference | source)"),
        y=alt.Y("model:N", title=None, sort=None),
        color=alt.Color("model:N", legend=None),
        tooltip=["model:N", alt.Tooltip("log p (reference):Q", format=".3f"),
                 alt.Tooltip("log p / word (reference):Q", format=".3f")],
    ).properties(height=alt.Step(28), title="How likely each model finds the reference")


def finite(x: float | None) -> bool:
    """Whether ``x`` is a finite number (for formatting optional metrics)."""
    return x is not None and isinstance(x, (int, float)) and math.isfinite(x)
