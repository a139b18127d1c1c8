"""IG at a fixed number of points against IG with the points chosen by the completeness gap, sentence by sentence.

    python -m scripts.ig_gap_recompute --checkpoint CKPT --data DIR --split SPLIT --gold PREFIX \
        --limit N --aer-limit M --out runs/ig-gap.jsonl          # appends one line per sentence; resumes
    python -m scripts.ig_gap_recompute --summarise runs/ig-gap.jsonl   # the pooled table of what is done

Issue 24: the tables of ``bench/faithfulness-*.json`` were made with IG at 20 points, whose
completeness gap on the shipped Multi30k model is 0.15–0.2 nats on average. This redoes only the IG
row (the other methods do not depend on the points): for each corpus sentence (greedy translation)
and, interleaved, each gold sentence (force-decoded reference), IG at ``--fixed`` points and IG by
the gap (:data:`nmt.attribution.IG_GAP_TOL`), the agreement with α per step, the gap per step and
the argmax links. One JSON line per sentence, written as soon as it is done, so a run stopped at any
time leaves a usable prefix (the CPU of a loaded machine does about one sentence a minute).
"""

from __future__ import annotations

import argparse
import json
import math
import sys
from pathlib import Path
from typing import Any

import numpy as np

from nmt import checkpoint
from nmt.align import alignment_error, read_links
from nmt.attribution import IG_GAP_TOL, MEASURES, explain_trace
from nmt.corpora import link_file
from nmt.data import corpus_file, read_lines, read_parallel
from nmt.decoding import forced, greedy
from nmt.faithfulness import argmax_links


def _one(lm: checkpoint.LoadedModel, trace: Any, fixed: int) -> dict[str, Any]:
    """Both IG variants of one trace: per-step agreement, |gap|, points, and argmax links."""
    out: dict[str, Any] = {}
    for name, steps in (("fixed", fixed), ("by_gap", None)):
        att = explain_trace(lm, trace, ig_steps=steps, methods=["ig"])
        out[name] = {"agreement": att.agreement()["ig"], "gap": np.abs(att.ig_delta).tolist(),
                     "points": [int(p) for p in att.ig_points],
                     "links": sorted(argmax_links(att, att.scores["ig"]))}
    return out


def run(args: argparse.Namespace) -> None:
    """Append the sentences not yet in ``args.out`` (corpus and gold interleaved)."""
    lm = checkpoint.load(args.checkpoint)
    src, _ = read_parallel(args.data, args.split, lm.src_tok.lang, lm.tgt_tok.lang, args.limit)
    prefix = Path(args.gold)
    gold_src = read_lines(corpus_file(prefix.parent, prefix.name, lm.src_tok.lang), args.aer_limit)
    gold_tgt = read_lines(corpus_file(prefix.parent, prefix.name, lm.tgt_tok.lang), args.aer_limit)
    out = Path(args.out)
    done = {(r["kind"], r["k"]) for r in _rows(out)}
    with out.open("a", encoding="utf-8") as f:
        for k in range(max(len(src), len(gold_src))):
            jobs = []
            if k < len(src) and ("corpus", k) not in done:
                jobs.append(("corpus", lambda k=k: greedy(lm, [src[k]], topk=1)[0]))
            if k < len(gold_src) and ("gold", k) not in done:
                jobs.append(("gold", lambda k=k: forced(lm, [gold_src[k]], [gold_tgt[k]], pretokenized=True,
                                                          topk=1)[0]))
            for kind, make in jobs:
                f.write(json.dumps({"kind": kind, "k": k, **_one(lm, make(), args.fixed)}) + "\n")
                f.flush()


def _rows(path: Path) -> list[dict[str, Any]]:
    if not path.exists():
        return []
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines() if line.strip()]


def _mean(xs: list[float]) -> float | None:
    v = [x for x in xs if not math.isnan(x)]
    return round(float(np.mean(v)), 4) if v else None


def summarise(path: Path, gold: str | None = None, src_lang: str = "en", tgt_lang: str = "fr") -> dict[str, Any]:
    """Pooled over the finished sentences: for each variant, the IG agreement table (NaN τ left
    out), the gap (mean, max, share above the tolerance and above 0.1) and the points; with ``gold``,
    the AER of the IG argmax links on the finished gold sentences (their first ones, in order)."""
    rows = _rows(path)
    corpus = sorted((r for r in rows if r["kind"] == "corpus"), key=lambda r: r["k"])
    res: dict[str, Any] = {"sentences": len(corpus), "steps": sum(len(r["fixed"]["gap"]) for r in corpus),
                           "tol": IG_GAP_TOL}
    for name in ("fixed", "by_gap"):
        gap = [g for r in corpus for g in r[name]["gap"]]
        pts = [p for r in corpus for p in r[name]["points"]]
        res[name] = {**{k: _mean([v for r in corpus for v in r[name]["agreement"][k]]) for k in MEASURES},
                     "gap_mean": _mean(gap), "gap_max": round(max(gap), 4) if gap else None,
                     "above_tol": _mean([float(g > IG_GAP_TOL) for g in gap]),
                     "above_0.1": _mean([float(g > 0.1) for g in gap]),
                     "points_mean": _mean([float(p) for p in pts]), "points_max": max(pts, default=None)}
    golds = sorted((r for r in rows if r["kind"] == "gold"), key=lambda r: r["k"])
    n = next((i for i, r in enumerate(golds) if r["k"] != i), len(golds))  # the finished prefix
    if gold and n:
        prefix = Path(gold)
        sure = read_links(link_file(prefix, src_lang, tgt_lang, "sure"))[:n]
        possible = read_links(link_file(prefix, src_lang, tgt_lang, "possible"))[:n]
        res["aer"] = {"sentences": n, **{name: round(alignment_error(
            [{tuple(x) for x in r[name]["links"]} for r in golds[:n]], sure, possible)["aer"], 4)
            for name in ("fixed", "by_gap")}}
    return res


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--checkpoint")
    p.add_argument("--data")
    p.add_argument("--split")
    p.add_argument("--gold", help="Hansards-style gold prefix DIR/test")
    p.add_argument("--limit", type=int, default=None)
    p.add_argument("--aer-limit", type=int, default=None)
    p.add_argument("--fixed", type=int, default=20, help="the fixed number of IG points to compare with")
    p.add_argument("--out", default="runs/ig-gap.jsonl")
    p.add_argument("--summarise", metavar="JSONL", help="print the pooled summary of a run's lines and exit")
    args = p.parse_args(argv)
    if args.summarise:
        print(json.dumps(summarise(Path(args.summarise), args.gold), indent=1))
        return 0
    run(args)
    return 0


if __name__ == "__main__":
    sys.exit(main())
