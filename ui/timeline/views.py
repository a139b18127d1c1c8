"""Views of a training timeline (:mod:`nmt.training.timeline`): the "Watch it learn" page's figures and tables.

Pure functions of recorded timelines (no model, no Streamlit): the α heatmap of a probe sentence at
an update, its translation with the words that changed since the previous entry marked, the loss /
BLEU / AER / α-entropy curves with a cursor at the current update, and the exports.
"""

from __future__ import annotations

import difflib
import json
import math
from collections.abc import Mapping, Sequence
from typing import Any

import altair as alt
import numpy as np
import pandas as pd

from nmt.models.registry import describe_model
from nmt.training.timeline import Timeline, mean_entropy, row_entropy
from ui.figures.common import md
from ui.figures.heatmaps import alpha_chart

METRICS = ("training loss", "validation BLEU", "AER", "α entropy")
CURSOR_COLOUR = "#d62728"


def model_name(tl: Timeline) -> str:
    """"RNNsearch" / "RNNencdec" / a Luong name: the one description of the model (nmt.models.kinds)."""
    return describe_model(tl.header["model"].get("config") or tl.header["model"]).name


def model_colour(tl: Timeline) -> str:
    return describe_model(tl.header["model"].get("config") or tl.header["model"]).colour


def has_alpha(tl: Timeline) -> bool:
    return describe_model(tl.header["model"].get("config") or tl.header["model"]).has_alpha


def run_caption(tl: Timeline) -> str:
    """One line on what was recorded: snapshots, the last update and its BLEU (the run's note apart)."""
    last = tl.entries[-1] if tl.entries else None
    if last is None:
        return f"{model_name(tl)}: no entries recorded yet."
    bleu = "" if last.get("bleu") is None else (
        f"; greedy BLEU {last['bleu']:.1f} on {tl.header.get('bleu_sentences', '?')} validation sentences there")
    return f"{model_name(tl)}: {len(tl.entries)} snapshots from update 0 to {last['update']}{bleu}."


def probe_labels(tl: Timeline, width: int = 70) -> list[str]:
    """A label per probe sentence: "Preset: …" or "Validation, 12 words: …", cut to ``width`` characters."""
    out = []
    for p in tl.probes:
        head = "Preset" if p["kind"] == "preset" else f"Validation, {len(p['src_tokens']) - 1} tokens"
        text = p["source"] if len(p["source"]) <= width else p["source"][: width - 1] + "…"
        out.append(f"{head}: {text}")
    return out


def nearest(updates: Sequence[int], wanted: int) -> int:
    """The recorded update closest to ``wanted`` (the earlier one on a tie)."""
    return min(updates, key=lambda u: (abs(u - wanted), u))


def at_or_before(tl: Timeline, update: int) -> dict[str, Any] | None:
    """The entry of the last recorded update ≤ ``update`` (a model recorded more sparsely shows its latest)."""
    earlier = [e for e in tl.entries if e["update"] <= update]
    return earlier[-1] if earlier else None


def changed_words(previous: Sequence[str], current: Sequence[str]) -> list[tuple[str, bool]]:
    """The current translation's words, each marked True where it differs from the previous entry's
    (inserted or replaced in a word-level diff)."""
    marks = [False] * len(current)
    for op, _a0, _a1, b0, b1 in difflib.SequenceMatcher(a=list(previous), b=list(current),
                                                       autojunk=False).get_opcodes():
        if op in ("replace", "insert"):
            for k in range(b0, b1):
                marks[k] = True
    return list(zip(current, marks, strict=True))


def translation_markdown(tl: Timeline, update: int, probe: int) -> str:
    """The probe's translation at ``update`` as the model writes it (detokenised, and detruecased for a
    truecased model: « Elle lut … » where its tokens are « elle lut … »), words changed since the
    previous entry highlighted."""
    entry = at_or_before(tl, update)
    if entry is None:
        return "(not recorded yet)"
    k = tl.entries.index(entry)
    words = entry["translations"][probe].split()
    prev = tl.entries[k - 1]["translations"][probe].split() if k else words  # the first entry: nothing new
    out = [f":blue-background[**{md(w)}**]" if new else md(w) for w, new in changed_words(prev, words)]
    return " ".join(out) or "(empty)"


def note_head(note: str) -> str:
    """The part of a run's note before its first ``:`` or ``;`` outside parentheses (the one line a
    projector shows; the whole note is in the tooltip)."""
    depth = 0
    for k, ch in enumerate(note):
        depth += (ch == "(") - (ch == ")")
        if depth <= 0 and ch in ":;":
            return note[:k].rstrip()
    return note


def probe_chart(tl: Timeline, update: int, probe: int, title: str | None = None,
                max_width: int = 560) -> alt.TopLevelMixin | None:
    """α of the probe at (the entry at or before) ``update``; None for a model without α."""
    entry = at_or_before(tl, update)
    if entry is None:
        return None
    alpha = tl.alpha_of(entry["update"], probe)
    if alpha is None:
        return None
    p = tl.probes[probe]
    src = [f"{w} (unk)" if u else w for w, u in zip(p["src_tokens"], [*p["src_unk"], False], strict=False)]
    return alpha_chart(src, entry["tgt_tokens"][probe], alpha.tolist(), title=title, max_width=max_width,
                       legend="bottom")


def probe_entropy(tl: Timeline, update: int, probe: int) -> float | None:
    """Mean α-row entropy of one probe (``</s>`` step left out) divided by log T_x: 1 uniform, 0 one-hot."""
    return mean_entropy(tl, update, [probe])


def numbers_line(tl: Timeline, update: int, probe: int) -> str:
    """"update 20 · loss 0.12 · BLEU 100.0 · α entropy 0.65" for the entry recorded at ``update``."""
    e = tl.entry_at(update)
    if e is None:
        return ""
    parts = [f"update {update}", f"loss {e['train_loss']:.2f}"]
    if e.get("bleu") is not None:
        parts.append(f"BLEU {e['bleu']:.1f}")
    if e.get("aer") is not None:
        parts.append(f"AER {e['aer']:.2f}")
    h = probe_entropy(tl, update, probe)
    if h is not None:
        parts.append(f"α entropy {h:.2f}")
    return " · ".join(parts)


def curves_frame(timelines: Mapping[str, Timeline], probe: int) -> pd.DataFrame:
    """Long table of the curves: model, update, metric, series, value (metric names in :data:`METRICS`)."""
    rows = []
    for name, tl in timelines.items():
        for e in tl.entries:
            u = e["update"]
            vals = {("training loss", "training loss"): e.get("train_loss"),
                    ("validation BLEU", "greedy BLEU"): e.get("bleu"), ("AER", "AER"): e.get("aer"),
                    ("α entropy", "this sentence"): probe_entropy(tl, u, probe),
                    ("α entropy", "all probe sentences"): mean_entropy(tl, u)}
            for (metric, series), v in vals.items():
                if v is not None and math.isfinite(v):
                    rows.append({"model": name, "update": u, "metric": metric, "series": series, "value": float(v)})
    return pd.DataFrame(rows, columns=["model", "update", "metric", "series", "value"])


Y_TITLES = {"training loss": "nats per word", "validation BLEU": "BLEU", "AER": "AER (lower is better)",
            "α entropy": "H(α_i) / log T_x"}


def curves_chart(frame: pd.DataFrame, cursor: int, colours: Mapping[str, str], width: int = 260,
                 height: int = 140) -> alt.TopLevelMixin | None:
    """The four curves (2 × 2), models coloured as everywhere, a red rule at the current update."""
    if frame.empty:
        return None
    names = list(colours)
    x = alt.X("update:Q", scale=alt.Scale(type="symlog", constant=1), title="update (log scale)")
    panels = []
    for metric in METRICS:
        part = frame[frame["metric"] == metric]
        if part.empty:
            continue
        lines = alt.Chart(part).mark_line(point=True).encode(
            x=x, y=alt.Y("value:Q", title=Y_TITLES[metric]),
            color=alt.Color("model:N", scale=alt.Scale(domain=names, range=[colours[n] for n in names]),
                            legend=alt.Legend(title=None, orient="bottom")),
            strokeDash=alt.StrokeDash("series:N", legend=alt.Legend(title=None, orient="bottom")
                                      if metric == "α entropy" else None),
            tooltip=["model:N", "series:N", "update:Q", alt.Tooltip("value:Q", format=".3f")])
        rule = alt.Chart(pd.DataFrame({"update": [cursor]})).mark_rule(color=CURSOR_COLOUR, strokeWidth=2).encode(x=x)
        panels.append(alt.layer(lines, rule).properties(width=width, height=height, title=metric))
    rows = [alt.hconcat(*panels[k:k + 2]) for k in range(0, len(panels), 2)]
    return alt.vconcat(*rows).resolve_scale(color="shared", strokeDash="shared")


def export_frame(timelines: Mapping[str, Timeline], probe: int) -> pd.DataFrame:
    """One row per model and recorded update: the measures and the probe's translation (CSV export)."""
    rows = []
    for name, tl in timelines.items():
        for e in tl.entries:
            rows.append({"model": name, "update": e["update"], "training_loss": e.get("train_loss"),
                         "bleu": e.get("bleu"), "aer": e.get("aer"),
                         "alpha_entropy_sentence": probe_entropy(tl, e["update"], probe),
                         "alpha_entropy_all": mean_entropy(tl, e["update"]),
                         "translation": e["translations"][probe]})
    return pd.DataFrame(rows)


def export_json(timelines: Mapping[str, Timeline], update: int, probe: int) -> str:
    """The current frame as JSON: per model, the entry shown at ``update`` with the probe's tokens and α."""
    out: dict[str, Any] = {"update": update, "probe": None, "models": {}}
    for name, tl in timelines.items():
        p = tl.probes[probe]
        out["probe"] = {k: p[k] for k in ("kind", "source", "reference", "src_tokens")}
        e = at_or_before(tl, update)
        if e is None:
            continue
        a = tl.alpha_of(e["update"], probe)
        out["models"][name] = {
            "update": e["update"], "translation": e["translations"][probe], "tgt_tokens": e["tgt_tokens"][probe],
            "training_loss": e.get("train_loss"), "bleu": e.get("bleu"), "aer": e.get("aer"),
            "alpha": None if a is None else np.round(a, 4).tolist(),
            "alpha_row_entropy": None if a is None else np.round(row_entropy(a), 4).tolist(),
            "note": tl.header.get("note", "")}
    return json.dumps(out, ensure_ascii=False, indent=1)
