"""The paired page's word analyses (compare-mt's, with paired-bootstrap intervals): where the frequencies come
from, the tables, the clickable n-gram examples and their downloads. The page file stays layout only.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pandas as pd
import streamlit as st

from nmt.models.checkpoint import LoadedModel
from nmt.text import word_analysis
from ui.common import heavy
from ui.common import widgets as W
from ui.figures.common import csv_text, md
from ui.paired import state
from ui.paired import views_words as pw

TRAIN_LINES = 500_000  # at most this many training lines are counted (Multi30k: all 29,000)


@heavy.cached("splits")
def _counts(directory: str, name: str, src: str, tgt: str, _lm: LoadedModel, path: str) -> dict[str, int]:
    """Target word counts of a training split, tokenised by the model at ``path`` (cached per server)."""
    _, tgt_lines = W.read_split(next(s for s in W.corpus_splits(src, tgt)
                                     if str(s.directory) == directory and s.name == name), src, tgt, TRAIN_LINES)
    return dict(word_analysis.word_counts(_lm.tgt_tok.tokenize(x) for x in tgt_lines))


def training_counts(lm: LoadedModel) -> tuple[dict[str, int] | None, str]:
    """Baseline A's training-split word counts and a line naming them, when the split its checkpoint
    records (``meta["train_data"]``) is among the data roots' splits; else ``(None, "")`` (the references)."""
    recorded = lm.meta.get("train_data") or {}
    folder, name = Path(str(recorded.get("dir", ""))).name, str(recorded.get("split", ""))
    src, tgt = lm.src_tok.lang, lm.tgt_tok.lang
    split = next((s for s in W.corpus_splits(src, tgt) if s.directory.name == folder and s.name == name), None)
    if split is None or not folder:
        return None, ""
    counts = _counts(str(split.directory), split.name, src, tgt, lm, str(lm.path))
    return counts, (f"{split.label}, the training split A's checkpoint records (checkpoints keep no word counts; "
                    f"up to {TRAIN_LINES:,} lines), tokenised by A's target tokeniser")


def _examples(res: dict[str, Any], side: str, lines: list[int] | None) -> None:
    """The example sentences of the n-gram clicked in the table of ``side``."""
    sel = state.ngram_selection(side)
    rows = getattr(getattr(sel, "selection", None), "rows", None) or (sel or {}).get("selection", {}).get("rows", [])
    if not rows:
        st.caption("Click a row to read its example sentences.")
        return
    for ex in pw.ngram_examples(res, side, int(rows[0])):
        line = lines[ex["k"]] if lines else ex["k"] + 1
        st.markdown(f"**Line {line}** · reference: {md(ex['reference'])}  \nA wrote: {md(ex['a'])}  \n"
                    f"B wrote: {md(ex['b'])}")


def section(res: dict[str, Any], stem: str) -> None:
    """Word F-measure by frequency and by third of the sentence, the n-grams each side matches, downloads."""
    if "words" not in res:
        return
    st.subheader("Which words: by frequency, by part of the sentence, by n-gram")
    st.caption(md(pw.source_line(res)))
    num = st.column_config.NumberColumn
    fmt = {c: num(format="%.3f") for c in ("F A", "F B", "ΔF (B − A)", "score")}
    frames = {t: pw.bucket_frame(res, t) for t in ("by_frequency", "by_position")}
    c1, c2 = st.columns([1.4, 1])
    c1.dataframe(frames["by_frequency"], hide_index=True, column_config=fmt, key="pr_by_freq")
    c2.dataframe(frames["by_position"], hide_index=True, column_config=fmt, key="pr_by_third")
    lines = res.get("lines")
    grams = {}
    for col, (side, title) in zip(st.columns(2), pw.NGRAM_SIDES.items(), strict=True):
        with col:
            st.markdown(f"**{title}**")
            grams[side] = pw.ngram_frame(res, side, lines)
            st.dataframe(grams[side], hide_index=True, column_config=fmt, key=f"pr_ng_{side}", on_select="rerun",
                         selection_mode="single-row")
            _examples(res, side, lines)
    W.downloads([W.Download("By frequency CSV", csv_text(frames["by_frequency"]), f"paired-{stem}-frequency.csv",
                            "text/csv"),
                 W.Download("By part CSV", csv_text(frames["by_position"]), f"paired-{stem}-thirds.csv", "text/csv"),
                 W.Download("N-grams CSV", csv_text(pd.concat([g.assign(side=pw.NGRAM_SIDES[k])
                                                               for k, g in grams.items()])),
                            f"paired-{stem}-ngrams.csv", "text/csv")], key="pr_words_dl")
