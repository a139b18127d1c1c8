"""Plot builders and tables for the length-vs-quality page (the paper's Table 1 and Fig. 2).

Results come from two JSON shapes written by ``nmt``:

* ``nmt.export`` (``checkpoints/m30k-en-fr.results.json``):
  ``models[name].scores[split][greedy|beam5].by_length`` and ``.curve`` (validation BLEU);
* ``nmt.experiment`` (``checkpoints/europarl-en-fr.results.json``):
  ``models[name].tests[test].{all, no_unk, by_length}`` and ``paper_table1_newstest2014``.

:func:`length_rows` flattens either into one table, which every figure here reads.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pandas as pd
import plotly.graph_objects as go

from nmt.experiment import PAPER_TABLE1

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


def length_rows(results: dict[str, Any]) -> pd.DataFrame:
    """One row per model × test set × decoding × source-length bucket."""
    rows: list[dict[str, Any]] = []
    for name, m in (results.get("models") or {}).items():
        for test, by_dec in (m.get("scores") or {}).items():  # nmt.export shape
            for dec, res in by_dec.items():
                rows += _bucket_rows(name, test, dec, res.get("by_length", []))
        for test, res in (m.get("tests") or {}).items():  # nmt.experiment shape
            dec = "greedy" if res.get("beam", 1) == 1 else f"beam{res['beam']}"
            rows += _bucket_rows(name, test, dec, res.get("by_length", []))
    return pd.DataFrame(rows, columns=LENGTH_COLUMNS)


def length_figure(rows: pd.DataFrame, title: str = "BLEU by source sentence length") -> go.Figure:
    """BLEU per source-length bucket, one line per model, with CI bars and bucket sizes on hover."""
    fig = go.Figure()
    for model, g in rows.sort_values("lo").groupby("model", sort=False):
        ci = g["ci95"].astype(float) if g["ci95"].notna().any() else None
        fig.add_trace(go.Scatter(
            x=g["bucket"], y=g["bleu"], mode="lines+markers", name=str(model),
            error_y=None if ci is None else {"type": "data", "array": ci.fillna(0).tolist(), "visible": True},
            customdata=g[["n", "ci95", "test", "decoding"]].to_numpy(),
            hovertemplate=("<b>%{fullData.name}</b><br>source length %{x} words<br>BLEU %{y:.2f}"
                           "<br>sentences in bucket: %{customdata[0]}<br>95%% CI ± %{customdata[1]}"
                           "<br>%{customdata[2]} · %{customdata[3]}<extra></extra>"),
        ))
    fig.update_layout(title=title, xaxis_title="source sentence length (Moses tokens)", yaxis_title="BLEU",
                      hovermode="closest", legend_title="model", margin={"t": 50})
    return fig


def table1_frame(results: dict[str, Any], test: str) -> pd.DataFrame:
    """Our Table 1 (all sentences / no UNK) on ``test``, beside the paper's where it has one."""
    paper = results.get("paper_table1_newstest2014") or PAPER_TABLE1
    rows = []
    for name, m in (results.get("models") or {}).items():
        res = (m.get("tests") or {}).get(test)
        if res is None:
            continue
        no_unk = res.get("no_unk") or {}
        row = {"model": name, "BLEU (all)": res["all"]["score"], "± CI (all)": res["all"].get("ci95"),
               "BLEU (no UNK)": no_unk.get("score"), "no-UNK sentences": res.get("no_unk_sentences")}
        if "newstest2014" in test and name in paper:
            row["paper (all)"] = paper[name]["all"]
            row["paper (no UNK)"] = paper[name]["no_unk"]
        rows.append(row)
    return pd.DataFrame(rows)


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
            customdata=g[["epoch", "elapsed_s"]].to_numpy(),
            hovertemplate=("<b>%{fullData.name}</b><br>update %{x}<br>valid BLEU %{y:.2f}"
                           "<br>epoch %{customdata[0]} · %{customdata[1]} s of training<extra></extra>"),
        ))
    fig.update_layout(title="Validation BLEU during training (greedy)", xaxis_title="updates",
                      yaxis_title="BLEU", legend_title="model", margin={"t": 50})
    return fig
