"""Luong et al.'s Tables 4 and 6 for the shipped Multi30k Luong models: perplexity, BLEU and AER.

    nice -n 10 python -m scripts.luong_tables [--results checkpoints/m30k-en-fr-luong.results.json] \\
        [--data DIR] [--gold DIR]

For every model of the results file (written by ``nmt.tools.export``), this adds

* ``perplexity``: exp of the mean negative log-likelihood per reference token (``</s>`` included) under
  forced decoding (:func:`nmt.decoding.search.forced`, the model's own step; no label smoothing) on each test
  split, as Luong et al.'s Table 4 reports test perplexity beside BLEU;
* ``hansards_aer``: AER of the argmax-α links on the Hansards en–fr test set (Table 6; read by the
  Alignment browser's AER table), and of the links α_ij ≥ τ with τ chosen on the trial set;

then writes ``table4`` (one row per model: attention, score, perplexity, BLEU greedy / beam 5) and
``table6`` (AER, precision, recall) at the top of the file. BLEU is not recomputed: it is read from the
``scores`` ``nmt.tools.export`` recorded. ``--data`` defaults to ``data/multi30k`` when present, else the
built-in ``evalsets/multi30k``; ``--gold`` to ``data/alignment/hansards-naacl2003-en-fr``, else its
built-in copy.
"""

from __future__ import annotations

import argparse
import json
import math
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from nmt.decoding.search import forced
from nmt.decoding.trace import DecodeTrace
from nmt.explanation.align import alignment_error, argmax_links, read_links, threshold_links
from nmt.models import checkpoint
from nmt.models.checkpoint import LoadedModel
from nmt.text.corpora import link_file
from nmt.text.data import corpus_file, read_lines, read_parallel
from nmt.tools import cli

ROOT = Path(__file__).resolve().parent.parent
RESULTS = "checkpoints/m30k-en-fr-luong.results.json"
SPLITS = ("test_2016_flickr", "test_2017_flickr")
TAUS = (0.1, 0.2, 0.3, 0.5)
GOLD = "alignment/hansards-naacl2003-en-fr"


def perplexity(traces: Sequence[DecodeTrace]) -> dict[str, float]:
    """exp(−Σ log p(y_i | y_<i, x) / N) over every forced step of every trace (N: the steps, ``</s>`` included)."""
    n = sum(len(t.steps) for t in traces)
    nll = -sum(s.logprob for t in traces for s in t.steps)
    return {"ppl": round(math.exp(nll / n), 3), "tokens": n}


def _root(configured: Path, built_in: Path, probe: str) -> Path:
    """``configured`` if it holds ``probe`` (a file stem's English side), else ``built_in``."""
    try:
        corpus_file(configured, probe, "en")
        return configured
    except (FileNotFoundError, ValueError, OSError):
        return built_in


def _gold(prefix: Path) -> tuple[list[str], list[str], list, list]:
    src, tgt = (read_lines(corpus_file(prefix.parent, prefix.name, lang)) for lang in ("en", "fr"))
    return (src, tgt, read_links(link_file(prefix, "en", "fr", "sure")),
            read_links(link_file(prefix, "en", "fr", "possible")))


def hansards_aer(lm: LoadedModel, gold: Path) -> dict[str, Any]:
    """Argmax-α AER on test; α ≥ τ links with τ picked (lowest AER) on trial, then scored on test."""
    def traces(split: str) -> tuple[list[DecodeTrace], list, list]:
        src, tgt, sure, possible = _gold(gold / split)
        return forced(lm, src, tgt, pretokenized=True, topk=1), sure, possible

    trial, t_sure, t_possible = traces("trial")
    by_tau = {tau: alignment_error([threshold_links(t, tau) for t in trial], t_sure, t_possible)["aer"] for tau in TAUS}
    tau = min(TAUS, key=lambda x: (by_tau[x], x))
    test, sure, possible = traces("test")
    return {"set": "Hansards en–fr test (447 sentences, lowercased, out of domain for Multi30k)",
            "argmax": alignment_error([argmax_links(t) for t in test], sure, possible),
            "tau_from_trial": tau, "trial_aer_by_tau": {f"{x:g}": round(a, 4) for x, a in by_tau.items()},
            "thresholded": {f"{tau:g}": alignment_error([threshold_links(t, tau) for t in test], sure, possible)}}


def table_rows(models: dict[str, dict[str, Any]], split: str = SPLITS[0]) -> tuple[list[dict], list[dict]]:
    """Table 4 (perplexity and BLEU on ``split``) and Table 6 (argmax-α AER) rows, one per model."""
    t4, t6 = [], []
    for name, m in models.items():
        cfg, scores = m.get("config", {}), m.get("scores", {}).get(split, {})
        head = {"model": name, "attention": cfg.get("attention"), "score": cfg.get("score"),
                "input_feeding": cfg.get("input_feeding")}
        t4.append({**head, "ppl": (m.get("perplexity") or {}).get(split, {}).get("ppl"),
                   **{f"bleu_{d}": scores.get(d, {}).get("bleu", {}).get("score") for d in ("greedy", "beam5")}})
        aer = (m.get("hansards_aer") or {}).get("argmax")
        if aer:
            t6.append({**head, **{k: round(aer[k], 4) for k in ("aer", "precision", "recall")}})
    return t4, t6


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--results", default=RESULTS)
    p.add_argument("--data", default=None, help="folder with SPLIT.en[.gz] and SPLIT.fr[.gz]")
    p.add_argument("--gold", default=None, help="folder with the Hansards trial.* and test.* gold files")
    p.add_argument("--splits", nargs="+", default=list(SPLITS))
    args = p.parse_args(argv)
    data = Path(args.data) if args.data else _root(ROOT / "data" / "multi30k", ROOT / "evalsets" / "multi30k",
                                                   args.splits[0])
    gold = Path(args.gold) if args.gold else _root(ROOT / "data" / GOLD, ROOT / "evalsets" / GOLD, "test")
    path = Path(args.results)
    res = json.loads(path.read_text(encoding="utf-8"))
    for name, m in res["models"].items():
        lm = checkpoint.load(ROOT / m["checkpoint"])
        m["perplexity"] = {s: perplexity(forced(lm, *read_parallel(data, s, "en", "fr"), topk=1)) for s in args.splits}
        m["hansards_aer"] = hansards_aer(lm, gold)
        print(f"{name:24s} ppl {m['perplexity'][args.splits[0]]['ppl']:7.3f}  "
              f"AER {m['hansards_aer']['argmax']['aer']:.3f}", flush=True)
    res["table4"], res["table6"] = table_rows(res["models"], args.splits[0])
    res["tables_how"] = ("table4: perplexity (forced decoding, no label smoothing) and cased BLEU (sacreBLEU, from "
                         f"'scores') on {args.splits[0]}; table6: AER of argmax-α links on the Hansards en–fr test "
                         "set; written by python -m scripts.luong_tables")
    path.write_text(json.dumps(res, indent=1, ensure_ascii=False), encoding="utf-8")
    return 0


if __name__ == "__main__":
    sys.exit(cli.run(main))
