"""Translate raw sentences from stdin, one per line, to stdout (batched).

    echo "A man rides a bike." | python -m nmt.translate --checkpoint checkpoints/m30k-en-fr-rnnsearch.pt --beam 5

Empty input lines give empty output lines; sources over ``--max-src-tokens`` are truncated (a note
goes to stderr), so line i of the output is always the translation of line i of the input.
"""

from __future__ import annotations

import argparse
import sys

import torch

from nmt import checkpoint, cli
from nmt.decoding import LENGTH_NORMS, MAX_SOURCE_TOKENS, translate_traces
from nmt.model import CONTEXT_MODES


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--checkpoint", required=True)
    p.add_argument("--beam", type=int, default=1, help="beam size (1 = greedy)")
    p.add_argument("--length-norm", choices=LENGTH_NORMS, default="length")
    p.add_argument("--context", choices=CONTEXT_MODES, default=None,
                   help="override the model's context mode (an untrained ablation)")
    p.add_argument("--unk-replace", action="store_true", help="copy the most-attended source word for <unk>")
    p.add_argument("--batch-size", type=int, default=64)
    p.add_argument("--threads", type=int, default=0)
    args = p.parse_args(argv)
    if args.threads:
        torch.set_num_threads(args.threads)
    lm = checkpoint.load(args.checkpoint)
    lines = [line.rstrip("\n") for line in sys.stdin]
    traces = translate_traces(lm, lines, beam=args.beam, unk_replace=args.unk_replace, context=args.context,
                              batch_size=args.batch_size, length_norm=args.length_norm)
    for n, t in enumerate(traces, 1):
        if t is not None and t.truncated:
            print(f"line {n}: source longer than {MAX_SOURCE_TOKENS} tokens, truncated", file=sys.stderr)
    sys.stdout.write("".join(("" if t is None else t.translation) + "\n" for t in traces))
    return 0


if __name__ == "__main__":
    sys.exit(cli.run(main))
