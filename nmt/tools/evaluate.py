"""Score a checkpoint on a corpus split with sacrebleu, overall and by source-length bucket.

    python -m nmt evaluate --checkpoint CKPT --data DIR --split SPLIT [--beam K] [--json OUT]

Reports cased detokenised BLEU with its signature, lowercased BLEU, tokenised lowercased BLEU
(see :mod:`nmt.text.metrics`), BLEU per source-length bucket of 10 words (the paper's Fig. 2 protocol,
source length in Moses tokens), and decoding speed.
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from typing import Any

import torch

from nmt.decoding.search import translate
from nmt.models import checkpoint
from nmt.models.checkpoint import LoadedModel
from nmt.text import atomic
from nmt.text.data import read_parallel
from nmt.text.metrics import all_bleu, bleu_by_length
from nmt.tools import cli


def evaluate(
    lm: LoadedModel, src: list[str], ref: list[str], *, beam: int = 1, length_norm: str = "length",
    context: str | None = None, unk_replace: bool = False, bucket_width: int = 10, n_bootstrap: int = 1,
    batch_size: int = 64,
) -> dict[str, Any]:
    """Translate ``src`` and score it against ``ref``; returns BLEU variants, buckets and speed."""
    t0 = time.perf_counter()
    hyps = translate(lm, src, beam=beam, length_norm=length_norm, context=context, unk_replace=unk_replace,
                     batch_size=batch_size)
    seconds = time.perf_counter() - t0
    src_len = [len(lm.src_tok.tokenize(s)) for s in src]
    return {
        **all_bleu(hyps, ref, lm.tgt_tok.lang),
        "by_length": bleu_by_length(src_len, hyps, ref, bucket_width, n_bootstrap=n_bootstrap),
        "beam": beam, "length_norm": length_norm if beam > 1 else "none",
        "context": context or lm.config.context, "unk_replace": unk_replace,
        "sentences": len(src), "seconds": round(seconds, 2), "sentences_per_s": round(len(src) / seconds, 1),
        "hypotheses": hyps,
    }


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    cli.checkpoint_option(p)
    cli.corpus_options(p)
    cli.search_options(p)
    p.add_argument("--unk-replace", action="store_true")
    p.add_argument("--limit", type=int, default=None, help="first N sentences only")
    cli.add_unsealed_flag(p)
    p.add_argument("--bootstrap", type=int, default=1, help="bootstrap resamples for 95%% CIs per bucket")
    p.add_argument("--json", help="write the full result (with hypotheses) here")
    cli.threads_option(p)
    args = p.parse_args(argv)
    if args.threads:
        torch.set_num_threads(args.threads)
    lm = checkpoint.load(args.checkpoint)
    src, ref = read_parallel(args.data, args.split, lm.src_tok.lang, lm.tgt_tok.lang, args.limit)
    res = evaluate(lm, src, ref, beam=args.beam, length_norm=args.length_norm, context=args.context,
                   unk_replace=args.unk_replace, n_bootstrap=args.bootstrap)
    res.update({"checkpoint": args.checkpoint, "split": args.split})
    for key in ("bleu", "bleu_lc", "bleu_tok_lc"):
        print(f"{key:12s} {res[key]['score']:6.2f}  {res[key]['signature']}")
    for b in res["by_length"]:
        print(f"  src len {b['lo']:3d}-{b['hi'] - 1:3d}  n={b['n']:5d}  BLEU {b['score']:6.2f}")
    print(f"{res['sentences']} sentences in {res['seconds']}s ({res['sentences_per_s']} sent/s)")
    if args.json:
        atomic.write_text(args.json, json.dumps(res, ensure_ascii=False, indent=1))
    return 0


if __name__ == "__main__":
    sys.exit(cli.run(main))
