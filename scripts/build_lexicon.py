"""Build a bilingual dictionary (lexical table) with eflomal from tokenised parallel text.

    python scripts/build_lexicon.py --src train.tc.en.xz --tgt train.tc.fr.xz --out lexicon.en-fr.tsv.xz
    python scripts/build_lexicon.py --raw --src tests/fixtures/tiny/train.en --tgt tests/fixtures/tiny/train.fr \\
        --out /tmp/tiny.tsv

Input: one sentence per line, tokens separated by spaces (``scripts/prep_large_vocab.py`` writes
tokenised and truecased text; with ``--raw`` the lines are Moses-tokenised here, language from
the file name). eflomal (Östling & Tiedemann 2016; ``pip install eflomal==2.0.0``) aligns both
directions; the links found in both (``--links intersection``, default) give link counts c(s, t),
reduced to the ``--k`` best targets per source word (:mod:`nmt.text.lexicon`). Prints a JSON summary.
"""

from __future__ import annotations

import argparse
import json
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from nmt.explanation.align import read_links
from nmt.text.data import read_lines
from nmt.text.lexicon import best_translations, intersect, link_counts, write_lexicon
from nmt.text.tokenize import Tokenizer


def lang_of(path: str) -> str:
    """``train.tc.en.xz`` → ``en``."""
    return Path(path).name.removesuffix(".gz").removesuffix(".xz").rsplit(".", 1)[-1]


def read_tokens(path: str, raw: bool, limit: int | None) -> list[list[str]]:
    """Tokenised sentences of a file (split on spaces, or Moses-tokenised with ``raw``)."""
    lines = read_lines(path, limit)
    if raw:
        tok = Tokenizer(lang_of(path))
        return [tok.tokenize(line) for line in lines]
    return [line.split() for line in lines]


def eflomal_links(src: list[list[str]], tgt: list[list[str]], work: Path) -> tuple[list, list]:
    """Forward and reverse eflomal links (source index first) of tokenised sentence pairs."""
    from eflomal import Aligner  # an optional tool: only this script needs it

    fwd, rev = work / "fwd", work / "rev"
    Aligner().align([" ".join(s) + "\n" for s in src], [" ".join(t) + "\n" for t in tgt],
                    links_filename_fwd=str(fwd), links_filename_rev=str(rev), quiet=True)
    return read_links(fwd), read_links(rev)


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--src", required=True)
    p.add_argument("--tgt", required=True)
    p.add_argument("--out", required=True, help="lexicon file (.tsv or .tsv.xz)")
    p.add_argument("--raw", action="store_true", help="Moses-tokenise the lines first")
    p.add_argument("--k", type=int, default=10, help="translations kept per source word")
    p.add_argument("--min-count", type=int, default=1, help="links a pair needs to be kept")
    p.add_argument("--links", choices=("intersection", "forward", "union"), default="intersection")
    p.add_argument("--limit", type=int, default=None, help="first N sentence pairs only")
    args = p.parse_args(argv)
    t0 = time.time()
    src, tgt = read_tokens(args.src, args.raw, args.limit), read_tokens(args.tgt, args.raw, args.limit)
    if len(src) != len(tgt):
        p.error(f"{len(src)} source but {len(tgt)} target lines")
    keep = [n for n, (s, t) in enumerate(zip(src, tgt, strict=True)) if s and t]  # eflomal needs words
    src, tgt = [src[n] for n in keep], [tgt[n] for n in keep]
    with tempfile.TemporaryDirectory() as work:
        fwd, rev = eflomal_links(src, tgt, Path(work))
    links = {"intersection": lambda: intersect(fwd, rev), "forward": lambda: fwd,
             "union": lambda: [a | b for a, b in zip(fwd, rev, strict=True)]}[args.links]()
    lex = best_translations(link_counts(src, tgt, links), args.k, args.min_count)
    write_lexicon(lex, args.out)
    print(json.dumps({"pairs": len(src), "links": args.links, "source_words": len(lex),
                      "entries": sum(map(len, lex.values())), "seconds": round(time.time() - t0, 1),
                      "out": Path(args.out).name}))
    return 0


if __name__ == "__main__":
    sys.exit(main())
