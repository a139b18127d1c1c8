"""Compare attention: one sentence under Bahdanau's RNNsearch and Luong's attention variants.

Bahdanau et al. (2015) score every source word from the previous decoder state with a small MLP;
Luong et al. (2015) attend after the recurrent step, with a dot / general / concat / location
score, over the whole sentence (global) or a window of 2D+1 words around a position p_t (local),
and may feed the attentional vector back in (input feeding). This page puts the models side by
side on one sentence: the translation, α (with the local window outlined), the log-probability of
a reference and sentence BLEU. Controls are bound to URL query parameters (``cmp_*``; with
``cmp_app_rules`` imported models decode by this app's search rules instead of their toolkit's).
"""

from __future__ import annotations

from ui.common import shell

shell.framed()  # a page Streamlit started on its own (a fresh server's first request) runs in the frame

import json
from collections.abc import Callable
from typing import Any

import pandas as pd
import streamlit as st

from nmt.decoding.search import InputError
from nmt.decoding.trace import DecodeTrace
from ui.common import models, search_rules, user_models
from ui.common import typed as T
from ui.common import widgets as W
from ui.common.presets import PRESETS
from ui.figures.bottleneck import comparison_row
from ui.figures.common import MAX_REFERENCE_CHARS, MAX_SOURCE_CHARS, csv_text, md, model_heading
from ui.figures.compare import compare_chart, local_note, row_name, summary_frame
from ui.figures.unknown import Shown, shown

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


def main() -> None:
    """Build the page."""
    st.title("Compare attention")
    st.caption("Bahdanau's RNNsearch scores each source word before writing (from s_(i-1)); Luong's models "
               "attend after the recurrent step (from h_t), globally or in a window around p_t. Same "
               "sentence, side by side.")
    found = attention_models()
    if not found:
        W.no_checkpoints()
        return
    labels = list(found)
    chosen = st.multiselect("Models", labels, default=default_models(found), key="cmp_models", bind=BIND,
                            max_selections=MAX_COLUMNS, on_change=T.hand_picked("cmp_models"),
                            help="Attention models in the checkpoint folder, named by what they are "
                                 "(up to six side by side).")
    chosen = [c for c in chosen if c in found] or labels[:1]
    # an imported model decodes by its toolkit's search rules (nmt.decoding.toolkit) unless switched to this app's
    search_rules.toggle_each({label: found[label] for label in chosen}, "cmp_app_rules", st)
    text = st.text_area(models.source_label(found[chosen[0]]), DEFAULT_TEXT, key="cmp_text", bind=BIND,
                        max_chars=MAX_SOURCE_CHARS, height=80,
                        on_change=T.on_typed("cmp_models", "cmp_text", [DEFAULT_TEXT], with_typed_pair(found)))
    T.typed_note("cmp_models", TYPED_WHAT, TYPED_MORE)
    ref = (st.text_input("Reference translation (optional: log p(reference) and BLEU)", key="cmp_ref",
                         bind=BIND, max_chars=MAX_REFERENCE_CHARS) or "").strip()
    if not (text or "").strip():
        st.info("Type a sentence to compare the models on.")
        return
    results = []
    try:
        for label in chosen:
            ckpt = found[label]
            if W.load_lm(ckpt) is None:
                return
            own = W.decode(W.job_for(ckpt, "greedy", topk=5), [text])[0]
            forced = W.decode(W.job_for(ckpt, "forced"), [text], [ref])[0] if ref else None
            results.append((label, ckpt, own, forced))
    except InputError as err:
        W.input_error(err)
        return
    local = [models.load(ckpt).model.capabilities.gaussian_half_width() is not None for _, ckpt, own, _ in results
             if own.steps and own.steps[0].window is not None]
    if local:
        st.caption(local_note(local))
    rows = []
    texts = [shown(own, models.load(ckpt).tgt_tok.detokenize) for _, ckpt, own, _ in results]  # as read, not scored
    if note := next((t.note for t in texts if t.note), ""):
        st.caption(note)
    # Two models a row: at 1280×720 four columns left each heatmap ~50 px wide, its words overprinted.
    grid = [c for k in range(0, len(results), PER_ROW) for c in st.columns(PER_ROW, gap="large")]
    for col, (label, ckpt, own, forced), text in zip(grid, results, texts):
        row = comparison_row(row_name(label, [r[0] for r in results]), own, forced, ref or None)
        rows.append(row)
        with col:
            model_column(row, ckpt, own, forced, text)
    st.subheader("Summary")
    df: pd.DataFrame = summary_frame(rows)
    if any(t.swaps for t in texts):  # beside the raw translation that BLEU scores
        df.insert(2, "translation, <unk> replaced", [t.text for t in texts])
    st.dataframe(df, hide_index=True, column_config={
        c: st.column_config.NumberColumn(format="%.2f") for c in df.columns if c.startswith("log p")
        or c in ("BLEU", "chrF")})
    W.downloads([W.Download("Summary CSV", csv_text(df), "compare-attention.csv", "text/csv"),
                 W.Download("Summary JSON", json.dumps(rows, ensure_ascii=False, indent=1, default=str),
                            "compare-attention.json", "application/json")], key="cmp_dl_summary")


main()
