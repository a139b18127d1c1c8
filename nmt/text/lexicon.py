"""A bilingual dictionary from word alignments: each source word's likeliest translations.

From word-aligned parallel text (eflomal's links, ``scripts/build_lexicon.py``) the lexical
translation table is p(t | s) = c(s, t) / c(s), with c counting alignment links (Moses' lex.f2e;
unaligned words count nowhere). It is reduced to the best ``k`` translations per source word and
serves two uses of Jean et al. (2015): the K′ likeliest translations of each source word in a
decoding candidate list (§3.2, :mod:`nmt.models.candidates`), and the translation of the source word an
``<unk>`` attends to most (§2.3 / Luong et al. 2015, :mod:`nmt.decoding.unk_replace`).

File format (``.tsv``, optionally ``.xz``): one ``source<TAB>target<TAB>count`` line per kept
pair, best first within each source word.

A checkpoint's own dictionary is the file ``PREFIX.lexicon.tsv.xz`` beside it, where ``PREFIX`` is
the checkpoint's name or ``PREFIX-`` begins it (``m30k-en-fr.lexicon.tsv.xz`` serves every
``m30k-en-fr-*.pt``; the longest prefix wins): :func:`beside`.
"""

from __future__ import annotations

import functools
import lzma
import os
import sys
from collections import Counter, defaultdict
from collections.abc import Iterable, Sequence
from pathlib import Path

from nmt.text.atomic import atomic_path

Links = set[tuple[int, int]]
Lexicon = dict[str, list[tuple[str, int]]]  # source word → [(target word, link count)], best first


def link_counts(src: Iterable[Sequence[str]], tgt: Iterable[Sequence[str]],
                links: Iterable[Links]) -> dict[str, Counter[str]]:
    """c(s, t): how often source word s is linked to target word t (links ``(i, j)``: source i, target j)."""
    counts: dict[str, Counter[str]] = defaultdict(Counter)
    for s, t, pairs in zip(src, tgt, links, strict=True):
        for i, j in pairs:
            if i >= len(s) or j >= len(t):
                raise ValueError(f"link {i}-{j} outside a {len(s)}×{len(t)}-word sentence pair")
            counts[s[i]][t[j]] += 1
    return dict(counts)


def best_translations(counts: dict[str, Counter[str]], k: int = 1, min_count: int = 1) -> Lexicon:
    """The ``k`` most often linked targets of each source word (argmax p(t | s)); ties alphabetical."""
    out: Lexicon = {}
    for s, c in counts.items():
        ranked = sorted((w for w, n in c.items() if n >= min_count), key=lambda w: (-c[w], w))[:k]
        if ranked:
            out[s] = [(w, c[w]) for w in ranked]
    return out


def intersect(fwd: Iterable[Links], rev: Iterable[Links]) -> list[Links]:
    """Links found in both directions (high precision: the lowest AER of eflomal on Hansards here)."""
    return [a & b for a, b in zip(fwd, rev, strict=True)]


def write_lexicon(lex: Lexicon, path: str | Path) -> None:
    """``source<TAB>target<TAB>count`` lines, source words sorted; xz-compressed for ``.xz``."""
    path = Path(path)
    lines = "".join(f"{s}\t{t}\t{n}\n" for s in sorted(lex) for t, n in lex[s])
    with atomic_path(path) as tmp:  # a killed build leaves the old dictionary, never half of one
        if path.suffix == ".xz":
            with lzma.open(tmp, "wt", encoding="utf-8") as f:
                f.write(lines)
        else:
            tmp.write_text(lines, encoding="utf-8")


def read_lexicon(path: str | Path) -> Lexicon:
    """Inverse of :func:`write_lexicon`; fails clearly on a malformed line."""
    path = Path(path)
    opener = lzma.open if path.suffix == ".xz" else open
    lex: Lexicon = {}
    with opener(path, "rt", encoding="utf-8") as f:
        for n, line in enumerate(f, 1):
            parts = line.rstrip("\n").split("\t")
            if len(parts) != 3 or not parts[2].isdigit():
                raise ValueError(f"{path.name} line {n}: expected source<TAB>target<TAB>count")
            lex.setdefault(parts[0], []).append((parts[1], int(parts[2])))
    return lex


def translations(lex: Lexicon) -> dict[str, str]:
    """Each source word's single best translation."""
    return {s: ts[0][0] for s, ts in lex.items() if ts}


def ranked(lex: Lexicon) -> dict[str, tuple[str, ...]]:
    """Each source word's translations, best first, without their counts (a candidate list's K′,
    :mod:`nmt.models.candidates`); words interned, as a 35k-word dictionary repeats its targets often."""
    return {sys.intern(s): tuple(sys.intern(t) for t, _ in ts) for s, ts in lex.items() if ts}


def tables(path: str | Path) -> tuple[dict[str, tuple[str, ...]], dict[str, str]]:
    """(:func:`ranked`, :func:`translations`) of the dictionary file ``path``, read once per version of the file
    (path, size, modification time) and shared by every model that uses it (seven shipped models share one);
    the tables are never changed after reading. Errors as :func:`read_lexicon`'s."""
    st = os.stat(path)
    return _tables(os.path.abspath(path), st.st_size, st.st_mtime_ns)


@functools.lru_cache(maxsize=8)
def _tables(path: str, size: int, mtime_ns: int) -> tuple[dict[str, tuple[str, ...]], dict[str, str]]:
    lex = read_lexicon(path)
    return ranked(lex), translations(lex)


SUFFIX = ".lexicon.tsv.xz"


def beside(checkpoint: str | Path) -> Path | None:
    """The dictionary file that belongs to ``checkpoint`` (see the module's docstring), or None."""
    path = Path(checkpoint)
    if not path.parent.is_dir():
        return None
    fits = [f for f in path.parent.glob("*" + SUFFIX)
            if f"{path.stem}-".startswith(f.name.removesuffix(SUFFIX) + "-") and f.is_file()]
    return max(fits, key=lambda f: len(f.name)) if fits else None
