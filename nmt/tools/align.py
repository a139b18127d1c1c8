"""``python -m nmt align``: the command line of :mod:`nmt.explanation.align`.

The old form ``python -m nmt.align`` still works for one release.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path
from typing import Any

from nmt.decoding.search import forced
from nmt.explanation import align
from nmt.explanation.align import alignment_error, argmax_links, read_links, threshold_links
from nmt.models import checkpoint
from nmt.text import atomic
from nmt.text.corpora import link_file
from nmt.text.data import corpus_file, read_lines
from nmt.tools import cli


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=align.__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    cli.checkpoint_option(p)
    p.add_argument("--aer", required=True, help="gold set prefix, e.g. DIR/test")
    p.add_argument("--json", help="write results and predicted links here")
    cli.add_unsealed_flag(p)
    p.add_argument("--thresholds", type=float, nargs="*", default=[],
                   help="also score the links α_ij ≥ τ for each τ (e.g. 0.1 0.2 0.3 0.5)")
    args = p.parse_args(argv)
    lm = checkpoint.load(args.checkpoint)
    s_lang, t_lang = lm.src_tok.lang, lm.tgt_tok.lang
    prefix = Path(args.aer)
    src = read_lines(corpus_file(prefix.parent, prefix.name, s_lang))
    tgt = read_lines(corpus_file(prefix.parent, prefix.name, t_lang))
    sure = read_links(link_file(prefix, s_lang, t_lang, "sure"))
    possible = read_links(link_file(prefix, s_lang, t_lang, "possible"))
    if not (len(src) == len(tgt) == len(sure) == len(possible)):
        counts = (len(src), len(tgt), len(sure), len(possible))
        raise SystemExit(f"gold set {prefix}: line counts differ {counts}")
    traces = forced(lm, src, tgt, pretokenized=True, topk=1)
    predicted = [argmax_links(t) for t in traces]
    res: dict[str, Any] = {"checkpoint": args.checkpoint, "gold": str(prefix), "sentences": len(src),
                           **alignment_error(predicted, sure, possible)}
    print(f"AER {res['aer']:.4f}  precision {res['precision']:.4f}  recall {res['recall']:.4f}  "
          f"({res['sentences']} sentences, argmax α)")
    if args.thresholds:
        res["thresholded"] = {}
        for tau in args.thresholds:
            r = alignment_error([threshold_links(t, tau) for t in traces], sure, possible)
            res["thresholded"][f"{tau:g}"] = r
            print(f"AER {r['aer']:.4f}  precision {r['precision']:.4f}  recall {r['recall']:.4f}  (α ≥ {tau:g})")
    if args.json:
        res["links"] = [" ".join(f"{j}-{i}" for j, i in sorted(a)) for a in predicted]
        atomic.write_text(args.json, json.dumps(res, indent=1))
    return 0


if __name__ == "__main__":
    sys.exit(cli.run(main))
