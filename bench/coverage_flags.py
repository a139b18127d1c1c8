"""Do attention's coverage flags predict a bad translation? Measured over whole test splits.

    python bench/coverage_flags.py --checkpoint checkpoints/europarl-en-fr-rnnsearch-50.pt \
        --data evalsets/wmt --split newstest2014-fren --json bench/coverage-flags.json

Each sentence is translated greedily; :func:`nmt.explanation.coverage.coverage` flags the source words its
translation never read (Σ_i α_ij < 0.2) or read again and again (> 3); sacrebleu's sentence chrF scores
it against the reference. :func:`nmt.explanation.coverage.flags_vs_quality` gives Spearman's ρ between the flag
count and chrF (negative: more flags, worse translations) and the mean chrF with and without flags.
The JSON gets one entry per checkpoint and split (a rerun replaces it).
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from bench.entries import upsert  # noqa: E402
from nmt.decoding.search import translate_traces  # noqa: E402
from nmt.explanation.coverage import REREAD, UNREAD, coverage, flags_vs_quality  # noqa: E402
from nmt.models import checkpoint  # noqa: E402
from nmt.text.data import read_parallel  # noqa: E402
from nmt.text.metrics import sentence_scores  # noqa: E402
from nmt.tools import cli  # noqa: E402


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--checkpoint", required=True)
    p.add_argument("--data", required=True)
    p.add_argument("--split", required=True)
    p.add_argument("--limit", type=int, default=None)
    p.add_argument("--json", required=True)
    args = p.parse_args(argv)
    lm = checkpoint.load(args.checkpoint)
    src, ref = read_parallel(Path(args.data), args.split, lm.src_tok.lang, lm.tgt_tok.lang, args.limit)
    t0 = time.time()
    traces = translate_traces(lm, src)
    flags, chrf, unread, reread = [], [], 0, 0
    for t, r in zip(traces, ref, strict=True):
        if t is None:
            continue
        cov = coverage([s.alpha for s in t.steps], len(t.src_tokens))
        if cov is None:
            continue
        flags.append(cov.flags)
        unread, reread = unread + len(cov.unread), reread + len(cov.reread)
        chrf.append(sentence_scores(t.translation, r)["chrf"])
    entry = {"checkpoint": Path(args.checkpoint).name, "data": Path(args.data).name, "split": args.split,
             "decoding": "greedy", "unread_below": UNREAD, "reread_above": REREAD, "words_unread": unread,
             "words_reread": reread, **flags_vs_quality(flags, chrf), "seconds": round(time.time() - t0, 1)}
    upsert(Path(args.json), entry, ("checkpoint", "data", "split", "decoding"))
    print(entry, file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(cli.run(main))
