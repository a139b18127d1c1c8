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
from nmt.explanation.align import Links, alignment_error, argmax_links, read_links, threshold_links
from nmt.explanation.symmetrize import LABELS, flip, symmetrized_corpus
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
    p.add_argument("--reverse", metavar="CKPT",
                   help="a model of the opposite direction (e.g. fr→en beside en→fr): also score each direction's "
                        "argmax links, their intersection, union, grow-diag and grow-diag-final")
    p.add_argument("--thresholds", type=float, nargs="*", default=[],
                   help="also score the links α_ij ≥ τ for each τ (e.g. 0.1 0.2 0.3 0.5)")
    args = p.parse_args(argv)
    lm = checkpoint.load(args.checkpoint)
    s_lang, t_lang = lm.src_tok.lang, lm.tgt_tok.lang
    prefix = Path(args.aer)
    src = read_lines(corpus_file(prefix.parent, prefix.name, s_lang))
    tgt = read_lines(corpus_file(prefix.parent, prefix.name, t_lang))
    sure, possible = gold_links(prefix, s_lang, t_lang)
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
    sets: dict[str, list[Links]] = {}
    if args.reverse:
        res["symmetrized"], sets = both_ways(args.reverse, (s_lang, t_lang), src, tgt, predicted, (sure, possible))
        res["reverse_checkpoint"] = args.reverse
    if args.json:
        if sets:
            res["symmetrized_links"] = {m: [" ".join(f"{j}-{i}" for j, i in sorted(a)) for a in links]
                                        for m, links in sets.items()}
        res["links"] = [" ".join(f"{j}-{i}" for j, i in sorted(a)) for a in predicted]
        atomic.write_text(args.json, json.dumps(res, indent=1))
    return 0


def gold_links(prefix: Path, s_lang: str, t_lang: str) -> tuple[list[Links], list[Links]]:
    """Sure and Possible links as (source, target) of this model: ``PREFIX.{src}-{tgt}.*``, else the
    other direction's ``PREFIX.{tgt}-{src}.*`` turned round (a fr→en model on an en-fr gold set)."""
    sure_file = link_file(prefix, s_lang, t_lang, "sure")
    if sure_file.exists() or not link_file(prefix, t_lang, s_lang, "sure").exists():
        return read_links(sure_file), read_links(link_file(prefix, s_lang, t_lang, "possible"))
    sure, possible = ([flip(a) for a in read_links(link_file(prefix, t_lang, s_lang, kind))]
                      for kind in ("sure", "possible"))
    return sure, possible


def both_ways(reverse: str, langs: tuple[str, str], src: list[str], tgt: list[str], forward: list[Links],
              gold: tuple[list[Links], list[Links]]) -> tuple[dict[str, dict], dict[str, list[Links]]]:
    """AER of each link set of :mod:`nmt.explanation.symmetrize`, with a reverse model force-decoding the
    source from the target; printed one line each. Returns (method → scores, method → links)."""
    rev = checkpoint.load(reverse)
    if (rev.src_tok.lang, rev.tgt_tok.lang) != (langs[1], langs[0]):
        raise SystemExit(f"--reverse {reverse} translates {rev.src_tok.lang}→{rev.tgt_tok.lang}; "
                         f"it must translate {langs[1]}→{langs[0]}")
    backward = [flip(argmax_links(t)) for t in forced(rev, tgt, src, pretokenized=True, topk=1)]
    sets = symmetrized_corpus(forward, backward)
    scores = {}
    for method, links in sets.items():
        r = scores[method] = alignment_error(links, *gold)
        print(f"AER {r['aer']:.4f}  precision {r['precision']:.4f}  recall {r['recall']:.4f}  ({LABELS[method]})")
    return scores, sets


if __name__ == "__main__":
    sys.exit(cli.run(main))
