"""Translate raw sentences from stdin, one per line, to stdout (batched, written as it goes).

    echo "A man rides a bike." | python -m nmt translate --checkpoint checkpoints/m30k-en-fr-rnnsearch.pt --beam 5

Empty input lines give empty output lines; sources over --max-src-tokens tokens are truncated (a
note goes to stderr), so line i of the output is always the translation of line i of the input. With
--unk-replace, stderr also says of each replaced ``<unk>`` whether it came from the dictionary or was copied.
Input is read and translated --chunk lines at a time, each chunk written before the next is read,
so a long file streams in bounded memory. A file that is not an intact, sealed checkpoint is refused
in one line (exit status 2); --allow-unsealed loads one written before checkpoints were sealed.
A model imported from another toolkit decodes by that toolkit's search rules (a note on stderr says
which); --app-rules decodes it by this app's.
"""

from __future__ import annotations

import argparse
import itertools
import sys
from collections.abc import Iterable, Iterator
from typing import TextIO

import torch

from nmt.decoding.search import MAX_SOURCE_TOKENS, translate_traces
from nmt.decoding.toolkit import rules_of
from nmt.decoding.trace import DICTIONARY, DecodeTrace
from nmt.models import checkpoint
from nmt.models.candidates import CandidateError, CandidateSpec
from nmt.tools import cli

CHUNK = 1000  # lines translated, then written, at a time


def chunks(lines: Iterable[str], size: int) -> Iterator[list[str]]:
    """Consecutive lists of ``size`` lines (the last may be shorter), newline removed, read lazily."""
    it = (line.rstrip("\n") for line in lines)
    while batch := list(itertools.islice(it, size)):
        yield batch


def parser() -> argparse.ArgumentParser:
    """The command line; every option named in the description above is one of these."""
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    cli.checkpoint_option(p)
    cli.search_options(p)
    p.add_argument("--unk-replace", nargs="?", const="dictionary", choices=("dictionary", "copy"),
                   help="replace each <unk> by the most-attended source word's translation in the model's "
                        "dictionary (PREFIX.lexicon.tsv.xz beside the checkpoint), else by that word itself "
                        "(the default, 'dictionary'); 'copy' always copies the word (nmt.decoding.unk_replace)")
    p.add_argument("--unk-dict", help="another dictionary (scripts/build_lexicon.py) for --unk-replace; implies it")
    p.add_argument("--candidates", type=int, metavar="K",
                   help="decode each sentence over its own candidate list (Jean et al. 2015 §3.2): the K most "
                        "frequent target words plus --candidates-per-word translations of each source word from "
                        "the model's dictionary (or --unk-dict)")
    p.add_argument("--candidates-per-word", type=int, default=10, metavar="K2",
                   help="K′, dictionary translations per source word in a candidate list (default: 10)")
    p.add_argument("--max-src-tokens", type=int, default=MAX_SOURCE_TOKENS,
                   help=f"translate at most this many source tokens per line (default: {MAX_SOURCE_TOKENS})")
    p.add_argument("--batch-size", type=int, default=64, help="sentences decoded together")
    p.add_argument("--app-rules", action="store_true",
                   help="decode a model imported from another toolkit by this app's search rules (length limit "
                        "min(2n + 10, 250), --length-norm) instead of its toolkit's, which it follows by default "
                        "(nmt.decoding.toolkit)")
    cli.add_unsealed_flag(p)
    p.add_argument("--chunk", type=int, default=CHUNK, help=f"lines read and written at a time (default: {CHUNK})")
    cli.threads_option(p)
    return p


def spec_of(args: argparse.Namespace) -> CandidateSpec | None:
    """The candidate lists ``--candidates`` and ``--candidates-per-word`` ask for (None: the full softmax)."""
    return None if args.candidates is None else CandidateSpec(args.candidates, args.candidates_per_word)


def replacement_notes(trace: DecodeTrace) -> list[str]:
    """One note per ``<unk>`` the trace's rule replaced (:meth:`~nmt.decoding.trace.DecodeTrace.unk_replacements`),
    marked as the app marks it: e.g. ``«fromage» from the dictionary ('cheese')`` or ``«Zorblax» copied``."""
    return [f"«{r.word}» from the dictionary ('{r.source}')" if r.label == DICTIONARY else f"«{r.word}» copied"
            for _, r in sorted(trace.unk_replacements().items())]


def translate_stream(lm: checkpoint.LoadedModel, src: TextIO, out: TextIO, err: TextIO,
                     args: argparse.Namespace) -> None:
    """Translate ``src`` to ``out`` chunk by chunk; notes on truncated lines go to ``err``.

    With ``--unk-replace`` each ``<unk>`` is replaced from the model's dictionary (else copied), and ``err``
    gets a line per replaced word saying which (the translations on ``out`` stay one per line); with
    ``--candidates`` each sentence decodes over its candidate list."""
    done = 0
    for lines in chunks(src, args.chunk):
        traces = translate_traces(lm, lines, beam=args.beam, unk_replace=bool(args.unk_replace),
                                  context=args.context, batch_size=args.batch_size, length_norm=args.length_norm,
                                  max_src_tokens=args.max_src_tokens, candidates=spec_of(args),
                                  toolkit_rules=not args.app_rules)
        for n, t in enumerate(traces, done + 1):
            if t is not None and t.truncated:
                print(f"line {n}: source longer than {args.max_src_tokens} tokens, truncated", file=err)
            if t is not None and args.unk_replace:
                for note in replacement_notes(t):
                    print(f"line {n}: {note}", file=err)
        out.write("".join(("" if t is None else t.translation) + "\n" for t in traces))
        out.flush()
        done += len(lines)


def main(argv: list[str] | None = None) -> int:
    p = parser()
    args = p.parse_args(argv)
    if args.max_src_tokens < 1 or args.chunk < 1 or args.batch_size < 1:
        p.error("--max-src-tokens, --chunk and --batch-size must be at least 1")
    if args.threads:
        torch.set_num_threads(args.threads)
    try:
        spec = spec_of(args)
    except CandidateError as err:
        p.error(str(err))
    lm = checkpoint.load(args.checkpoint)
    if args.unk_dict:
        checkpoint.use_dictionary(lm, args.unk_dict)
        args.unk_replace = args.unk_replace or "dictionary"
    if args.unk_replace == "copy":
        lm.dictionary = {}  # <unk> copies its source word; candidate lists still read the translations
    if spec is not None and not lm.translations:
        print("note: the model has no dictionary, so each candidate list holds only the K most frequent words",
              file=sys.stderr)
    rules = rules_of(lm)
    if rules is not None and not args.app_rules:
        print(f"note: {rules.note()} (--app-rules: this app's rules)", file=sys.stderr)
    translate_stream(lm, sys.stdin, sys.stdout, sys.stderr, args)
    return 0


if __name__ == "__main__":
    sys.exit(cli.run(main))
