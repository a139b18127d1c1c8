"""Alignments from attention, and their error rate against gold Sure/Possible links.

    python -m nmt.align --checkpoint CKPT --aer data/alignment/hansards-naacl2003-en-fr/test [--json OUT] \
        [--thresholds 0.1 0.2 0.3]

Gold files follow ``PREFIX.{src}``, ``PREFIX.{tgt}`` (pre-tokenised, one sentence per line) and
``PREFIX.{src}-{tgt}.sure`` / ``.possible`` (space-separated 0-based ``i-j`` links, source index
first, Possible ⊇ Sure), each plain, ``.gz`` or ``.xz``. The model force-decodes each reference
*on the given tokens* (no re-tokenisation, so indices line up) and links every target word y_i to
argmax_j α_ij (Luong et al. 2015), and with ``--thresholds`` to every source word with α_ij ≥ τ.
AER(A; S, P) = 1 − (|A∩S| + |A∩P|) / (|A| + |S|) (Och & Ney 2003).
"""

from __future__ import annotations

import argparse
import json
import sys
from collections.abc import Iterable, Sequence
from pathlib import Path
from typing import Any

from nmt import checkpoint, cli
from nmt.corpora import link_file
from nmt.data import corpus_file, read_lines
from nmt.decoding import forced
from nmt.trace import DecodeTrace

Links = set[tuple[int, int]]


def parse_links(line: str) -> Links:
    """``"0-0 1-2"`` → {(0, 0), (1, 2)}; fails clearly on malformed links."""
    out: Links = set()
    for item in line.split():
        a, sep, b = item.partition("-")
        if not sep or not a.isdigit() or not b.isdigit():
            raise ValueError(f"malformed link {item!r} (expected i-j with 0-based integers)")
        out.add((int(a), int(b)))
    return out


def read_links(path: str | Path) -> list[Links]:
    return [parse_links(line) for line in read_lines(path)]


def argmax_links(trace: DecodeTrace) -> Links:
    """(source j, target i) links of each target word to its most-attended source word.

    The ``</s>`` step and the source ``</s>`` position are left out (they are no words)."""
    links: Links = set()
    n_src = len(trace.src_tokens) - 1
    for s in trace.steps:
        if s.alpha is None or s.token == "</s>" or n_src == 0:
            continue
        real = s.alpha[:n_src]
        links.add((max(range(n_src), key=real.__getitem__), s.i))
    return links


def threshold_links(trace: DecodeTrace, tau: float) -> Links:
    """(source j, target i) links wherever α_ij ≥ ``tau``: a target word may link to several source
    words (or none), unlike :func:`argmax_links`. ``</s>`` steps and positions are left out."""
    links: Links = set()
    n_src = len(trace.src_tokens) - 1
    for s in trace.steps:
        if s.alpha is None or s.token == "</s>":
            continue
        links.update((j, s.i) for j in range(n_src) if s.alpha[j] >= tau)
    return links


def alignment_error(
    predicted: Iterable[Links], sure: Sequence[Links], possible: Sequence[Links]
) -> dict[str, float]:
    """Corpus AER, precision (against P) and recall (against S); P is taken to include S."""
    a_n = s_n = a_s = a_p = 0
    for a, s, p in zip(predicted, sure, possible, strict=True):
        p = p | s
        a_n += len(a)
        s_n += len(s)
        a_s += len(a & s)
        a_p += len(a & p)
    return {
        "aer": 1.0 - (a_s + a_p) / (a_n + s_n) if a_n + s_n else 0.0,
        "precision": a_p / a_n if a_n else 0.0,
        "recall": a_s / s_n if s_n else 0.0,
        "links_predicted": a_n, "links_sure": s_n,
    }


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
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
        Path(args.json).write_text(json.dumps(res, indent=1))
    return 0


if __name__ == "__main__":
    sys.exit(cli.run(main))
