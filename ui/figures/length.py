"""Plot builders and tables for the length-vs-quality page (the paper's Table 1 and Fig. 2).

Results come from two JSON shapes written by ``nmt``:

* ``nmt.tools.export`` (``checkpoints/m30k-en-fr.results.json``):
  ``models[name].scores[split][greedy|beam5].by_length`` and ``.curve`` (validation BLEU);
* ``nmt.tools.experiment`` (``checkpoints/europarl-en-fr.results.json``):
  ``models[name].tests[test].{all, no_unk, by_length}`` (greedy; ``tests_beam5`` for beam 5) and
  ``paper_table1_newstest2014``.

:func:`length_rows` flattens either into one table, which every figure here reads.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pandas as pd
import plotly.graph_objects as go

from nmt.models.kinds import colour_of_name
from nmt.tools.experiment import PAPER_TABLE1, experiment_tests
from ui.figures.common import FONT_MAIN

# Main-content charts: text of at least 14 px, dark, legible on a projector.
_TEXT = {"size": FONT_MAIN, "color": "#31333F"}
READABLE: dict[str, Any] = {
    "font": _TEXT, "title_font": {**_TEXT, "size": FONT_MAIN + 4}, "legend_font": _TEXT, "legend_title_font": _TEXT,
    **{f"{ax}_{part}": _TEXT for ax in ("xaxis", "yaxis") for part in ("tickfont", "title_font")}}
LENGTH_COLUMNS = ["model", "test", "decoding", "lo", "hi", "bucket", "n", "bleu", "ci95"]


def load_results(paths: list[Path]) -> dict[str, dict[str, Any]]:
    """Results files by name; unreadable files are skipped (their name maps to an error text)."""
    out: dict[str, dict[str, Any]] = {}
    for p in paths:
        try:
            out[p.name] = json.loads(p.read_text())
        except (OSError, ValueError) as e:
            out[p.name] = {"error": f"{p.name}: {e}"}
    return out


def _bucket_rows(model: str, test: str, decoding: str, buckets: list[dict[str, Any]]) -> list[dict[str, Any]]:
    return [{"model": model, "test": test, "decoding": decoding, "lo": b["lo"], "hi": b["hi"],
             "bucket": f"{b['lo']}–{b['hi'] - 1}", "n": b["n"], "bleu": b["score"], "ci95": b.get("ci95")}
            for b in buckets]


def with_empty_buckets(buckets: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """The buckets with the empty ones between them put back (``n`` 0, no score).

    ``nmt.text.metrics.bleu_by_length`` leaves out a bucket no sentence falls in; a chart that skipped it
    would join its neighbours as if the lengths were consecutive, so each gap is named instead.
    """
    if len(buckets) < 2:
        return list(buckets)
    widths = [b["hi"] - b["lo"] for b in buckets]
    width = max(set(widths), key=widths.count)
    have = {b["lo"]: b for b in buckets}
    lo, last = min(have), max(have)
    out = []
    while lo <= last:
        out.append(have.get(lo) or {"lo": lo, "hi": lo + width, "n": 0, "score": None})
        lo = have[lo]["hi"] if lo in have else lo + width
    return out


def length_rows(results: dict[str, Any]) -> pd.DataFrame:
    """One row per model × test set × decoding × source-length bucket, empty buckets included (``n`` 0)."""
    rows: list[dict[str, Any]] = []
    for name, m in (results.get("models") or {}).items():
        for test, by_dec in (m.get("scores") or {}).items():  # nmt.tools.export shape
            for dec, res in by_dec.items():
                rows += _bucket_rows(name, test, dec, with_empty_buckets(res.get("by_length", [])))
        for test, res in experiment_tests(m):  # nmt.tools.experiment shape
            dec = "greedy" if res.get("beam", 1) == 1 else f"beam{res['beam']}"
            rows += _bucket_rows(name, test, dec, with_empty_buckets(res.get("by_length", [])))
    return pd.DataFrame(rows, columns=LENGTH_COLUMNS)


def empty_bucket_note(rows: pd.DataFrame) -> str:
    """One sentence naming the buckets no sentence falls in (per model where they differ), or ''."""
    empty = rows[rows["n"].eq(0)]
    if empty.empty:
        return ""
    models = rows["model"].nunique()
    parts = []
    for bucket, g in empty.sort_values("lo").groupby("bucket", sort=False):
        who = "" if g["model"].nunique() == models else f" ({', '.join(sorted(map(str, g['model'].unique())))} only)"
        parts.append(f"{bucket} words long{who}")
    which = "that bucket is" if len(parts) == 1 else "those buckets are"
    return f"No test sentence is {'; '.join(parts)}: {which} shown empty, not skipped."


def length_figure(rows: pd.DataFrame, title: str = "BLEU by source sentence length") -> go.Figure:
    """BLEU per source-length bucket, one line per model, with CI bars and bucket sizes on hover."""
    fig = go.Figure()
    order = rows.sort_values("lo").drop_duplicates("bucket")["bucket"].tolist()
    for model, g in rows.sort_values("lo").groupby("model", sort=False):
        ci = g["ci95"].astype(float) if g["ci95"].notna().any() else None
        fig.add_trace(go.Scatter(
            x=g["bucket"], y=g["bleu"], mode="lines+markers", name=str(model), line_color=colour_of_name(str(model)),
            error_y=None if ci is None else {"type": "data", "array": ci.fillna(0).tolist(), "visible": True},
            customdata=g[["n", "ci95", "test", "decoding"]].to_numpy(),
            hovertemplate=("<b>%{fullData.name}</b><br>source length %{x} words<br>BLEU %{y:.2f}"
                           "<br>sentences in bucket: %{customdata[0]}<br>95%% CI ± %{customdata[1]}"
                           "<br>%{customdata[2]} · %{customdata[3]}<extra></extra>"),
        ))
    for bucket in rows.loc[rows["n"].eq(0), "bucket"].unique():
        fig.add_annotation(x=bucket, yref="paper", y=0.02, text="no sentences", showarrow=False, textangle=-90,
                           yanchor="bottom", font=_TEXT)
    fig.update_layout(title=title, xaxis_title="source sentence length (Moses tokens)", yaxis_title="BLEU",
                      hovermode="closest", legend_title="model", margin={"t": 50}, **READABLE)
    fig.update_xaxes(categoryorder="array", categoryarray=order)
    return fig


TABLE1_COLUMNS = ["model", "decoding", "BLEU (all)", "± CI (all)", "BLEU (no UNK)", "no-UNK sentences", "from"]


def _decoding(res: dict[str, Any]) -> str:
    return "greedy" if res.get("beam", 1) == 1 else f"beam{res['beam']}"


def table1_frame(results: dict[str, Any], test: str, origin: str = "") -> pd.DataFrame:
    """Our Table 1 (BLEU on all sentences / on sentences without UNK) on ``test``, one row per model
    and decoding, beside the paper's numbers where the test set is newstest2014.

    ``nmt.tools.experiment`` results have both columns; ``nmt.tools.export`` results only BLEU on all sentences
    (their no-UNK cells are empty). ``origin`` fills the ``from`` column.
    """
    paper = results.get("paper_table1_newstest2014") or PAPER_TABLE1
    rows = []
    for name, m in (results.get("models") or {}).items():
        found = [(_decoding(res), res["all"], res.get("no_unk"), res.get("no_unk_sentences"))
                 for t, res in experiment_tests(m) if t == test]  # nmt.tools.experiment shape
        found += [(dec, res.get("bleu") or {}, None, None)
                  for dec, res in ((m.get("scores") or {}).get(test) or {}).items()]  # nmt.tools.export shape
        for dec, bleu, no_unk, n_no_unk in found:
            row = {"model": name, "decoding": dec, "BLEU (all)": bleu.get("score"), "± CI (all)": bleu.get("ci95"),
                   "BLEU (no UNK)": (no_unk or {}).get("score"), "no-UNK sentences": n_no_unk, "from": origin}
            if "newstest2014" in test and name in paper:
                row["paper (all)"], row["paper (no UNK)"] = paper[name]["all"], paper[name]["no_unk"]
            rows.append(row)
    cols = TABLE1_COLUMNS + [c for c in ("paper (all)", "paper (no UNK)") if any(c in r for r in rows)]
    return pd.DataFrame(rows, columns=cols)


def table1_note(table: pd.DataFrame, file: str) -> str:
    """Where the Table 1 rows come from, and plainly what is missing (Markdown-safe file name first)."""
    if table.empty:
        return (f"{file} has no scores on this test set, so there is no Table 1 for it. Recompute below "
                "scores a checkpoint on all sentences and on those without unknown words.")
    note = ("BLEU on all sentences and on the sentences with no word outside the model's shortlists (source "
            "or reference): Table 1 of Bahdanau et al. (2015)")
    if table["no-UNK sentences"].isna().all():  # nmt.tools.export counts no sentences without UNK
        return (f"{note}. {file} was written by nmt.tools.export, which scores all sentences only: its no-UNK "
                "column is empty. Recompute below adds both columns for a checkpoint; python -m "
                "nmt.tools.experiment writes a whole Table 1.")
    missing = table["BLEU (no UNK)"].isna() & table["no-UNK sentences"].eq(0)
    extra = " An empty no-UNK cell with 0 sentences: every sentence has an unknown word." if missing.any() else ""
    return f"{note}; from {file} (python -m nmt experiment).{extra}"


def results_test_name(label: str, name: str, tests: set[str]) -> str:
    """The name a results file uses for a split: ``multi30k/test_2016_flickr`` (nmt.tools.experiment) or
    ``test_2016_flickr`` (nmt.tools.export), whichever the file has; the label when it has neither."""
    return label if label in tests or name not in tests else name


def curve_rows(results: dict[str, Any]) -> pd.DataFrame:
    """Validation BLEU against updates for each model that has a training curve."""
    rows = []
    for name, m in (results.get("models") or {}).items():
        for rec in m.get("curve") or []:
            if rec.get("type", "valid") == "valid":
                rows.append({"model": name, "update": rec["update"], "epoch": rec.get("epoch"),
                             "valid BLEU": rec["bleu"], "elapsed_s": rec.get("elapsed")})
    return pd.DataFrame(rows, columns=["model", "update", "epoch", "valid BLEU", "elapsed_s"])


def curve_figure(rows: pd.DataFrame) -> go.Figure:
    """Validation BLEU during training, one line per model; hover gives epoch and training time."""
    fig = go.Figure()
    for model, g in rows.groupby("model", sort=False):
        fig.add_trace(go.Scatter(
            x=g["update"], y=g["valid BLEU"], mode="lines+markers", name=str(model),
            line_color=colour_of_name(str(model)),
            customdata=g[["epoch", "elapsed_s"]].to_numpy(),
            hovertemplate=("<b>%{fullData.name}</b><br>update %{x}<br>valid BLEU %{y:.2f}"
                           "<br>epoch %{customdata[0]} · %{customdata[1]} s of training<extra></extra>"),
        ))
    fig.update_layout(title="Validation BLEU during training (greedy)", xaxis_title="updates",
                      yaxis_title="BLEU", legend_title="model", margin={"t": 50}, **READABLE)
    return fig


FIG2_FILE, FIG2_TEST = "europarl-en-fr.results.json", "europarl-v7-fr-en/test2000q4"
"""The results file and test set that show the paper's Fig. 2 (the Europarl RNNsearch-50 and RNNencdec-50)."""


def opening_results(all_results: dict[str, dict[str, Any]]) -> int:
    """Index of the results file the page opens on: the Fig. 2 file when it has per-length scores, else
    the first file that has some (a file without them would hide the figure), else the first."""
    names = list(all_results)
    with_rows = [n for n in names if not length_rows(all_results[n]).empty]
    pick = FIG2_FILE if FIG2_FILE in with_rows else (with_rows[0] if with_rows else None)
    return names.index(pick) if pick is not None else 0


def opening_test(tests: list[str]) -> int:
    """Index of the test set the page opens on: Fig. 2's when the file has it, else the first."""
    return tests.index(FIG2_TEST) if FIG2_TEST in tests else 0
