"""The compare-attention page's pickers and columns: which checkpoints attend, which are shown first, the
models a sentence of one's own brings in, and one model's column (heading, translation, log p(reference), BLEU,
α heatmap, downloads). Streamlit layout; the decoding is :mod:`ui.compare.jobs`."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import streamlit as st

from nmt.decoding.trace import DecodeTrace
from ui.common import models, user_models
from ui.common import widgets as W
from ui.common.presets import PRESETS
from ui.figures.common import md, model_heading
from ui.figures.compare import compare_chart
from ui.figures.unknown import Shown

BIND = W.BIND
DEFAULT_TEXT = PRESETS[0].text
MAX_COLUMNS = 6  # RNNsearch beside Luong's five variants (dot, general, concat, local-m, local-p)
DEFAULT_COLUMNS = 4  # two rows of two at 1280×720
# First shown: Bahdanau's two models beside Luong's global (general) and local-p, the models Luong's paper
# recommends; the other variants (dot, concat, local-m) are one click away.
DEFAULT_STEMS = ("europarl-en-fr-rnnsearch-50", "m30k-en-fr-rnnsearch", "m30k-en-fr-luong-global-general",
                 "m30k-en-fr-luong-local-p")
PER_ROW = 2
HEATMAP_WIDTH = 240  # px of heatmap cells in a half-width column at 1280×720 (labels and legend take the rest)
# A sentence of one's own: each model reads it with its own vocabulary, so the pair trained for everyday
# sentences joins the models shown (as the first column) rather than replacing the Multi30k ones.
TYPED_WHAT = "set of models above"
TYPED_MORE = ("Its RNNsearch is the first column; every model reads the sentence with its own vocabulary, and "
              "those trained on Multi30k image captions (Luong's among them) may garble everyday sentences.")


def attention_models() -> dict[str, models.CheckpointInfo]:
    """Checkpoints that attend (RNNsearch and Luong models; not RNNencdec), by display label."""
    out: dict[str, models.CheckpointInfo] = {}
    for c in W.all_checkpoints():
        d = models.description(c)
        if d.has_alpha:
            way = models.direction(c)
            label = f"{d.full_name} · {c.name}" + (f" · {way}" if way and way != models.FIRST_DIRECTION else "")
            out[f"{user_models.LABEL} › {label}" if c.yours else label] = c
    return out


def default_models(found: dict[str, models.CheckpointInfo]) -> list[str]:
    """The labels first selected: those of :data:`DEFAULT_STEMS` found, else the first few found."""
    picked = [label for label, c in found.items() if c.path.stem in DEFAULT_STEMS]
    return picked or list(found)[:DEFAULT_COLUMNS]


def with_typed_pair(found: dict[str, models.CheckpointInfo]) -> Callable[[models.ModelGroup, Any], list[str]]:
    """The models' value for a sentence of one's own (:func:`ui.common.typed.on_typed`): the RNNsearch of the pair
    trained for everyday sentences first, then the models chosen, at most :data:`MAX_COLUMNS`."""
    def value(pair: models.ModelGroup, current: Any) -> list[str]:
        first = [label for label, c in found.items() if pair.search is not None and c.path == pair.search.path]
        way = models.direction(pair.search)  # side by side on one sentence: models that read its language only
        same = [label for label in current or [] if label in found and models.direction(found[label]) == way]
        return (first + [label for label in same if label not in first])[:MAX_COLUMNS]
    return value


def model_column(row: dict, ckpt: models.CheckpointInfo, own: DecodeTrace, forced: DecodeTrace | None,
                 text: Shown) -> None:
    """One model: its name in its colour, the translation (``text``: its ``<unk>`` replaced and marked;
    BLEU scores the raw one), log p(reference), BLEU, the α heatmap, downloads."""
    st.html(model_heading(row["model"], models.description(ckpt).colour))
    st.caption(md(ckpt.name))
    with st.container(border=True):
        st.markdown(text.markdown or "(empty)")
    m1, m2 = st.columns(2)
    m1.metric("log p(reference)", f"{forced.logprob:.2f}" if forced is not None else "—",
              help="Forced decoding of the reference: how likely this model finds the human translation.")
    m2.metric("sentence BLEU", f"{row['BLEU']:.1f}" if row["BLEU"] is not None else "—")
    chart = compare_chart(own, title=row["model"], max_width=HEATMAP_WIDTH)
    if chart is not None:
        W.show_chart(chart, key=f"cmp_chart_{W.safe_stem(ckpt.name)}")
    stem = W.safe_stem(ckpt.path.stem)
    W.downloads([*W.chart_downloads(chart, f"compare-{stem}"),
                 W.Download("JSON", own.to_json(indent=1), f"trace-{stem}.json", "application/json")],
                key=f"cmp_dl_{stem}")
