"""``python -m nmt faithfulness``: the command line of :mod:`nmt.explanation.faithfulness`.

The old form ``python -m nmt.faithfulness`` still works for one release.
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import sys
import time
from functools import partial
from typing import Any

import torch

from nmt.decoding.parallel import map_chunks
from nmt.decoding.search import InputError
from nmt.decoding.surgery import require_surgery
from nmt.explanation import faithfulness
from nmt.explanation.attribution import BASELINES, IG_GAP_TOL, MEASURES, METHODS
from nmt.explanation.faithfulness import aer_by_method, explain_sentences, gold_prefix, summarise, time_panel
from nmt.models import checkpoint
from nmt.text import atomic
from nmt.text.data import read_parallel
from nmt.tools import cli


def _cpu_seconds() -> float:
    """CPU seconds of this process and of its finished children (the ``--workers`` processes)."""
    kids = resource.getrusage(resource.RUSAGE_CHILDREN)
    return time.process_time() + kids.ru_utime + kids.ru_stime


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=faithfulness.__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
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
    atomic.write_text(args.json, json.dumps(res, ensure_ascii=False, indent=1))
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
