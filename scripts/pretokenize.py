"""Moses-tokenise one side of a corpus split once, so that training on a lent GPU need not.

    python scripts/pretokenize.py data/europarl-v7-fr-en/train.en.gz .gpu-data/europarl-v7-fr-en/train.tok.en.xz

Writes one line of space-separated tokens per input line (the exact tokens ``nmt.text.tokenize``
gives; Moses tokens never contain spaces), xz-compressed. ``train.py --pretokenized`` reads
such a split by splitting on spaces.
"""

from __future__ import annotations

import lzma
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from nmt.text.data import read_lines
from nmt.text.tokenize import Tokenizer


def main(src: str, dst: str) -> None:
    name = Path(src).name.removesuffix(".gz").removesuffix(".xz")
    lang = name.rsplit(".", 1)[-1]
    tok = Tokenizer(lang)
    lines = read_lines(src)
    Path(dst).parent.mkdir(parents=True, exist_ok=True)
    with lzma.open(dst, "wt", encoding="utf-8", preset=9) as f:
        for line in lines:
            f.write(" ".join(tok.tokenize(line)) + "\n")
    print(f"{dst}: {len(lines)} lines ({lang})", file=sys.stderr)


if __name__ == "__main__":
    main(*sys.argv[1:3])
