"""Is attention an explanation? α against attributions, and the debate's two tests, on a corpus.

    python -m nmt.faithfulness --checkpoint CKPT --data DIR --split SPLIT [--limit N] --json OUT
        [--aer GOLD] [--device cpu|cuda] [--workers N]

For every sentence the model's greedy translation is explained (:mod:`nmt.attribution`: saliency,
gradient × input, integrated gradients, leave-one-out of the embedding and of the annotation in α)
and compared with α at every target step (Kendall τ-b, top-1 agreement, Jensen–Shannon divergence
in nats). The permutation test shuffles α at each step ``--permutations`` times and records the
total variation distance of p(y_i | …) and whether the argmax word flips; the adversarial test
(:func:`nmt.debate.adversarial_alpha`) finds, per step, the α farthest from the model's (JSD) that
keeps the output word and p(y_i) within ``--eps``. Means are pooled over target steps (``</s>``
included); a Kendall τ undefined for a step (a constant vector) is left out of its mean.
The JSD is in nats (natural log), so it lies in [0, ln 2].

With ``--aer GOLD`` (a Hansards-style gold set: a prefix ``DIR/test`` or a folder holding
``test.*``), each reference is force-decoded on its own tokens and every target word is linked to
the argmax source word of α and of each attribution; the AER of each (Och & Ney 2003) is reported.
"""

from __future__ import annotations

import argparse
import json
import math
import os
import resource
import sys
import time
from collections.abc import Sequence
from dataclasses import dataclass, field
from functools import partial
from pathlib import Path
from typing import Any

import numpy as np
import torch

from nmt import checkpoint, cli
from nmt.align import Links, alignment_error, read_links
from nmt.attribution import BASELINES, IG_GAP_TOL, MEASURES, METHODS, Attributions, attribute, explain_trace
from nmt.checkpoint import LoadedModel
from nmt.corpora import link_file
from nmt.data import corpus_file, read_lines, read_parallel
from nmt.debate import (
    LN2,
    AdversarialResult,
    PermutationResult,
    adversarial_alpha,
    debate_tests,
    jsd,
    permutation_test,
    project_simplex,
)
from nmt.decoding import InputError, forced, greedy
from nmt.parallel import map_chunks
from nmt.surgery import require_surgery
from nmt.trace import DecodeTrace
from nmt.vocab import EOS

__all__ = [  # the debate's tests (nmt.debate) are re-exported: callers import them from here
    "LN2", "PANEL_SENTENCE", "AdversarialResult", "PermutationResult", "SentenceReport", "adversarial_alpha",
    "aer_by_method", "analyse", "argmax_links", "debate_tests", "explain_sentences", "gold_links", "gold_prefix",
    "jsd", "main", "permutation_test", "project_simplex", "summarise", "time_panel",
]

# ----------------------------------------------------------------------------------------------
# One sentence, a corpus, a gold alignment set
# ----------------------------------------------------------------------------------------------


@dataclass
class SentenceReport:
    """Per-step results of one sentence (plain data: lists of floats)."""

    agreement: dict[str, dict[str, list[float]]]  # method → measure → per step
    perm_tvd: list[list[float]] = field(default_factory=list)  # step → permutation → TVD
    perm_flipped: list[list[bool]] = field(default_factory=list)
    adv_jsd: list[float] = field(default_factory=list)  # step → JSD(α', α) reached
    ig_delta: list[float] = field(default_factory=list)
    ig_points: list[int] = field(default_factory=list)  # step → IG points used (chosen by the gap)


def analyse(
    lm: LoadedModel, trace: DecodeTrace, *, ig_steps: int | None = None, baseline: str = "zero", n_perm: int = 20,
    eps: float = 0.01, adv_iters: int = 30, seed: int = 0, tests: bool = True, methods: Sequence[str] = METHODS,
) -> tuple[SentenceReport, Attributions]:
    """Attributions (``methods``), agreement with α, and (``tests``) the permutation and adversarial
    tests of one trace; ``ig_steps`` None chooses IG's points by the completeness gap."""
    require_surgery(lm)  # a clear error for a model without α, before any work
    att = explain_trace(lm, trace, ig_steps=ig_steps, baseline=baseline, methods=methods)
    report = SentenceReport(att.agreement(), ig_delta=att.ig_delta.tolist(),
                            ig_points=[int(p) for p in att.ig_points])
    if not tests or not trace.steps:
        return report, att
    perm, adv, _ = debate_tests(lm, trace.src_tokens, [s.token_id for s in trace.steps], n_perm=n_perm, seed=seed,
                                eps=eps, adv_iters=adv_iters)
    report.perm_tvd, report.perm_flipped = perm.tvd.tolist(), perm.flipped.tolist()
    report.adv_jsd = adv.jsd.tolist()
    return report, att


def explain_sentences(lm: LoadedModel, texts: list[str], **kw: Any) -> list[SentenceReport]:
    """:func:`analyse` of each sentence's greedy translation (one batch of ``texts``; ``kw`` as for
    :func:`analyse`): the corpus CLI's unit of work, in this process or a worker's."""
    return [analyse(lm, trace, **kw)[0] for trace in greedy(lm, texts, topk=1)]


def _mean(xs: Sequence[float]) -> float | None:
    v = [x for x in xs if x is not None and not math.isnan(x)]
    return round(float(np.mean(v)), 4) if v else None


def summarise(reports: Sequence[SentenceReport]) -> dict[str, Any]:
    """Corpus means: the agreement table (method × measure), the permutation and adversarial tests."""
    table: dict[str, dict[str, float | None]] = {}
    for m in METHODS:
        table[m] = {k: _mean([v for r in reports for v in r.agreement.get(m, {}).get(k, [])]) for k in MEASURES}
    tvd = [t for r in reports for row in r.perm_tvd for t in row]
    flips = [f for r in reports for row in r.perm_flipped for f in row]
    adv = [j for r in reports for j in r.adv_jsd]
    delta = [abs(d) for r in reports for d in r.ig_delta]
    points = [p for r in reports for p in r.ig_points]
    return {
        "agreement": table,
        "steps": sum(len(r.ig_delta) for r in reports),
        "tau_defined": {m: sum(1 for r in reports for v in r.agreement.get(m, {}).get("kendall_tau", [])
                               if not math.isnan(v)) for m in METHODS},
        "permutation": {"flip_rate": _mean([float(f) for f in flips]), "mean_tvd": _mean(tvd),
                        "median_tvd": round(float(np.median(tvd)), 4) if tvd else None, "trials": len(flips)},
        "adversarial": {"mean_jsd": _mean(adv), "median_jsd": round(float(np.median(adv)), 4) if adv else None,
                        "found_rate": _mean([float(j > 1e-6) for j in adv]), "max_jsd_ln2": round(LN2, 4)},
        "ig_abs_delta": {"mean": _mean(delta), "max": round(max(delta), 4) if delta else None,
                         "above_tol": _mean([float(d > IG_GAP_TOL) for d in delta]), "tol": IG_GAP_TOL,
                         "above_0.1": _mean([float(d > 0.1) for d in delta]),
                         "points_mean": _mean([float(p) for p in points]), "points_max": max(points, default=None)},
    }


def argmax_links(att: Attributions, scores: np.ndarray) -> Links:
    """(source j, target i) links of each target word (``</s>`` left out) to its highest-scoring
    source word (the source ``</s>`` left out), as :func:`nmt.align.argmax_links` does for α."""
    n = att.src_len - 1
    links: Links = set()
    if n <= 0:
        return links
    for r, i in enumerate(att.steps):
        if att.tgt_tokens[i] != EOS:
            links.add((int(np.argmax(scores[r, :n])), i))
    return links


def gold_prefix(path: str | Path, split: str = "test") -> Path:
    """``DIR/test`` for a folder, else the prefix as given."""
    p = Path(path)
    return p / split if p.is_dir() else p


def gold_links(lm: LoadedModel, pairs: list[tuple[str, str]], *, ig_steps: int | None = None,
               baseline: str = "zero", methods: Sequence[str] = METHODS) -> list[dict[str, Links]]:
    """Per gold pair (source, reference; Moses-tokenised), the argmax links of α and of each
    attribution on the force-decoded reference: the AER's unit of work, here or in a worker."""
    traces = forced(lm, [s for s, _ in pairs], [t for _, t in pairs], pretokenized=True, topk=1)
    out = []
    for trace in traces:
        att = explain_trace(lm, trace, ig_steps=ig_steps, baseline=baseline, methods=methods)
        out.append({"alpha": argmax_links(att, att.alpha), **{m: argmax_links(att, att.scores[m]) for m in methods}})
    return out


def aer_by_method(
    lm: LoadedModel, prefix: Path, *, limit: int | None = None, ig_steps: int | None = None, baseline: str = "zero",
    progress: bool = True, path: str = "", workers: int = 1, methods: Sequence[str] = METHODS,
) -> dict[str, Any]:
    """AER of argmax α and argmax of each attribution on force-decoded gold references
    (``workers`` processes loading ``path``, as :func:`nmt.parallel.map_chunks`)."""
    s_lang, t_lang = lm.src_tok.lang, lm.tgt_tok.lang
    src = read_lines(corpus_file(prefix.parent, prefix.name, s_lang), limit)
    tgt = read_lines(corpus_file(prefix.parent, prefix.name, t_lang), limit)
    sure = read_links(link_file(prefix, s_lang, t_lang, "sure"))[: len(src)]
    possible = read_links(link_file(prefix, s_lang, t_lang, "possible"))[: len(src)]
    if not (len(src) == len(tgt) == len(sure) == len(possible)):
        counts = (len(src), len(tgt), len(sure), len(possible))
        raise InputError(f"gold set {prefix}: line counts differ {counts}")
    per_pair = map_chunks(partial(gold_links, ig_steps=ig_steps, baseline=baseline, methods=methods),
                          list(zip(src, tgt, strict=True)),
                          lm=lm, path=path, device=str(lm.device), workers=workers, progress=progress, desc="AER")
    out: dict[str, Any] = {"gold": str(prefix), "sentences": len(src)}
    for m in ("alpha", *methods):
        res = alignment_error([links[m] for links in per_pair], sure, possible)
        out[m] = {k: round(v, 4) if isinstance(v, float) else v for k, v in res.items()}
    return out


PANEL_SENTENCE = ("A man in a blue shirt and a woman in a white dress are sitting on a wooden bench in front of a "
                  "large building .")  # 25 words (26 Moses tokens with the full stop)


def time_panel(lm: LoadedModel, text: str = PANEL_SENTENCE, repeats: int = 5,
               ig_steps: int | None = None) -> dict[str, Any]:
    """Seconds (median of ``repeats``, wall and CPU) for one step's full panel: α and the five
    attributions (IG at ``ig_steps`` points) of one target word, at the middle and the last word.
    ``src_tokens`` counts the source ids with ``</s>``."""
    trace = greedy(lm, [text], topk=1)[0]
    src = lm.src_vocab.encode(trace.src_tokens[:-1])
    ids = [s.token_id for s in trace.steps]
    out: dict[str, Any] = {"sentence": text, "src_tokens": len(src), "tgt_tokens": len(ids), "repeats": repeats,
                           "ig_steps": ig_steps, "torch_threads": torch.get_num_threads()}
    for name, step in (("middle", len(ids) // 2), ("last_word", max(0, len(ids) - 2))):
        wall, cpu = [], []
        for _ in range(repeats):
            t0, c0 = time.perf_counter(), time.process_time()
            attribute(lm, src, ids, steps=[step], ig_steps=ig_steps)
            wall.append(time.perf_counter() - t0)
            cpu.append(time.process_time() - c0)
        out[name] = {"step": step, "wall_s": round(float(np.median(wall)), 3), "cpu_s": round(float(np.median(cpu)), 3)}
    out["load_average_1min"] = round(os.getloadavg()[0], 2) if hasattr(os, "getloadavg") else None
    return out


def _cpu_seconds() -> float:
    """CPU seconds of this process and of its finished children (the ``--workers`` processes)."""
    kids = resource.getrusage(resource.RUSAGE_CHILDREN)
    return time.process_time() + kids.ru_utime + kids.ru_stime


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    cli.checkpoint_option(p)
    cli.corpus_options(p)
    p.add_argument("--limit", type=int, default=None, help="first N sentences only")
    p.add_argument("--json", required=True, help="write the summary (and per-sentence results) here")
    cli.add_unsealed_flag(p)
    p.add_argument("--aer", help="gold alignments: a prefix DIR/test or a folder holding test.*")
    p.add_argument("--aer-limit", type=int, default=None, help="first N gold sentences only")
    cli.device_option(p, default="cpu")
    p.add_argument("--workers", type=int, default=1,
                   help="processes, each with its own model on --device and $RNNSEARCH_THREADS threads (default 1)")
    p.add_argument("--ig-steps", type=int, default=None,
                   help="fixed IG points (default: chosen per step until the completeness gap is below "
                        f"{IG_GAP_TOL} nats)")
    p.add_argument("--methods", default=",".join(METHODS),
                   help="comma-separated attributions to compute (default all; e.g. ig to redo IG only)")
    p.add_argument("--no-tests", action="store_true", help="skip the permutation and adversarial tests")
    p.add_argument("--baseline", choices=BASELINES, default="zero", help="IG baseline and leave-one-out filler")
    p.add_argument("--permutations", type=int, default=20, help="shuffles of α per step")
    p.add_argument("--eps", type=float, default=0.01, help="adversarial α: allowed change of p(y_i)")
    p.add_argument("--adv-iters", type=int, default=30, help="adversarial α: projected-gradient steps")
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--no-progress", action="store_true")
    p.add_argument("--per-sentence", action="store_true", help="also store every sentence's per-step results")
    p.add_argument("--time-panel", action="store_true", help="also time one step's full panel on a 25-word sentence")
    args = p.parse_args(argv)
    methods = [m for m in args.methods.split(",") if m]
    if not methods or set(methods) - set(METHODS):
        raise InputError(f"--methods {args.methods}: expected a comma-separated subset of {','.join(METHODS)}")
    if args.device.startswith("cuda") and not torch.cuda.is_available():
        raise InputError(f"--device {args.device}: no CUDA device is available here")
    lm = checkpoint.load(args.checkpoint, device=args.device)
    require_surgery(lm)
    src, _ = read_parallel(args.data, args.split, lm.src_tok.lang, lm.tgt_tok.lang, args.limit)
    t0, c0 = time.perf_counter(), _cpu_seconds()
    explain = partial(explain_sentences, ig_steps=args.ig_steps, baseline=args.baseline, n_perm=args.permutations,
                      eps=args.eps, adv_iters=args.adv_iters, seed=args.seed, tests=not args.no_tests, methods=methods)
    reports = map_chunks(explain, src, lm=lm, path=args.checkpoint, device=args.device, workers=args.workers,
                         progress=not args.no_progress, desc="faithfulness")
    seconds, cpu = time.perf_counter() - t0, _cpu_seconds() - c0
    res: dict[str, Any] = {
        "checkpoint": args.checkpoint, "data": args.data, "split": args.split, "sentences": len(src),
        "limit": args.limit, "decoding": "greedy", "ig_steps": args.ig_steps or "by completeness gap",
        "baseline": args.baseline, "methods": methods, "tests": not args.no_tests,
        "permutations": args.permutations, "eps": args.eps, "adv_iters": args.adv_iters, "seed": args.seed,
        "device": args.device, "workers": args.workers, "torch_threads": torch.get_num_threads(),
        **summarise(reports), "seconds": round(seconds, 1), "cpu_seconds": round(cpu, 1),
        "sentences_per_s": round(len(src) / seconds, 3) if seconds else None,
        "load_average_1min": round(os.getloadavg()[0], 2) if hasattr(os, "getloadavg") else None,
    }
    _print_summary(res)
    if args.aer:
        t1, c1 = time.perf_counter(), _cpu_seconds()
        res["aer"] = aer_by_method(lm, gold_prefix(args.aer), limit=args.aer_limit, ig_steps=args.ig_steps,
                                   baseline=args.baseline, progress=not args.no_progress, path=args.checkpoint,
                                   workers=args.workers, methods=methods)
        res["aer"]["seconds"] = round(time.perf_counter() - t1, 1)
        res["aer"]["cpu_seconds"] = round(_cpu_seconds() - c1, 1)
        print(f"AER on {res['aer']['sentences']} gold sentences ({res['aer']['gold']}):")
        for m in ("alpha", *methods):
            print(f"  {m:10s} {res['aer'][m]['aer']:.4f}")
    if args.time_panel:
        res["panel_timing"] = time_panel(lm, ig_steps=args.ig_steps)
        print(f"one step's full panel, 25-word sentence: {res['panel_timing']['middle']['wall_s']} s (middle word)")
    if args.per_sentence:
        res["per_sentence"] = [r.__dict__ for r in reports]
    Path(args.json).write_text(json.dumps(res, ensure_ascii=False, indent=1))
    return 0


def _print_summary(res: dict[str, Any]) -> None:
    print(f"{res['sentences']} sentences, {res['steps']} target steps, {res['seconds']} s ({res['cpu_seconds']} s CPU)")
    print(f"{'method':10s} " + " ".join(f"{k:>12s}" for k in MEASURES))
    for m, row in res["agreement"].items():
        print(f"{m:10s} " + " ".join(f"{'-' if row[k] is None else format(row[k], '.4f'):>12s}" for k in MEASURES))
    perm, adv = res["permutation"], res["adversarial"]
    print(f"permutation: flip rate {perm['flip_rate']}, median TVD {perm['median_tvd']} ({perm['trials']} shuffles)")
    print(f"adversarial α: mean JSD {adv['mean_jsd']} nats (max ln 2 = {adv['max_jsd_ln2']}), "
          f"found for {adv['found_rate']} of steps")
    gap = res["ig_abs_delta"]
    print(f"IG completeness gap: mean {gap['mean']}, max {gap['max']} nats, above {gap['tol']}: {gap['above_tol']} "
          f"of steps; {gap['points_mean']} points on average (at most {gap['points_max']})")


if __name__ == "__main__":
    sys.exit(cli.run(main))
