"""Alignments both ways: joining the links of two models of opposite directions (en→fr and fr→en).

Each direction links every one of its *target* words to one source word (argmax α, see
:mod:`nmt.explanation.align`), so each misses the many-to-one links the other side needs. Statistical
aligners join the two directions (Och & Ney 2003; Koehn, Och & Marcu 2003, "grow-diag-final"): start
from the intersection (precise), grow it into neighbouring union links that align a so far unaligned
word, then add any remaining link of either direction that aligns an unaligned word.

The growing rules and their visiting order follow fast_align's ``atools -c grow-diag-final`` (Dyer et
al. 2013, src/atools.cc); Moses's pseudo-code (statmt.org, "grow-diag-final") walks the neighbours of each
kept link instead, which can keep a different link when two candidates compete for one word:

* grow-diag: candidates are the union's links not yet kept, visited in (source, target) order; one is
  kept when its source *or* its target word is still unaligned and one of its 8 neighbours (the 4
  sides and the 4 diagonals) is kept. Links kept during a pass count for the rest of that pass; passes
  repeat until one keeps nothing.
* final: each link of the forward direction, then each of the reverse one, in (source, target) order, is
  kept when its source *or* its target word is still unaligned (``final-and`` would require both).

Links are ``(source j, target i)`` of the *forward* model; a reverse model's links come in its own
``(its source, its target)`` order and are turned with :func:`flip` first.
"""

from __future__ import annotations

from collections.abc import Iterable

from nmt.explanation.align import Links

NEIGHBOURS = ((-1, 0), (0, -1), (1, 0), (0, 1), (-1, -1), (-1, 1), (1, -1), (1, 1))
METHODS = ("forward", "reverse", "intersection", "union", "grow-diag", "grow-diag-final")
LABELS = {"forward": "forward α (argmax)", "reverse": "reverse α (argmax)", "intersection": "intersection",
          "union": "union", "grow-diag": "grow-diag", "grow-diag-final": "grow-diag-final"}


def flip(links: Iterable[tuple[int, int]]) -> Links:
    """A reverse model's ``(its source, its target)`` links as the forward model's ``(source, target)``."""
    return {(b, a) for a, b in links}


class _Grower:
    """The kept links and which source / target words they align, while growing."""

    def __init__(self, start: Links) -> None:
        self.kept: Links = set(start)
        self.src = {j for j, _ in start}
        self.tgt = {i for _, i in start}

    def keep(self, link: tuple[int, int]) -> None:
        self.kept.add(link)
        self.src.add(link[0])
        self.tgt.add(link[1])

    def one_unaligned(self, link: tuple[int, int]) -> bool:
        """Whether the link's source word or its target word (or both) is not aligned yet."""
        return link[0] not in self.src or link[1] not in self.tgt

    def next_to_kept(self, link: tuple[int, int]) -> bool:
        return any((link[0] + dj, link[1] + di) in self.kept for dj, di in NEIGHBOURS)

    def grow_diag(self, union: Links) -> None:
        """Keep union links beside kept ones that align an unaligned word, pass after pass."""
        todo = sorted(union - self.kept)
        grew = True
        while grew:
            grew = False
            for link in todo:
                if link not in self.kept and self.one_unaligned(link) and self.next_to_kept(link):
                    self.keep(link)
                    grew = True
            todo = [link for link in todo if link not in self.kept]

    def final(self, links: Links) -> None:
        """Keep each link of one direction that aligns a word still unaligned."""
        for link in sorted(links):
            if link not in self.kept and self.one_unaligned(link):
                self.keep(link)


def grow_diag(forward: Links, reverse: Links) -> Links:
    """The intersection grown into neighbouring union links (no final step)."""
    g = _Grower(forward & reverse)
    g.grow_diag(forward | reverse)
    return g.kept


def grow_diag_final(forward: Links, reverse: Links) -> Links:
    """grow-diag, then the final step over the forward links and then the reverse ones."""
    g = _Grower(forward & reverse)
    g.grow_diag(forward | reverse)
    g.final(forward)
    g.final(reverse)
    return g.kept


def symmetrized(forward: Links, reverse: Links) -> dict[str, Links]:
    """Every link set of :data:`METHODS` from the forward links and the (already flipped) reverse ones."""
    return {"forward": set(forward), "reverse": set(reverse), "intersection": forward & reverse,
            "union": forward | reverse, "grow-diag": grow_diag(forward, reverse),
            "grow-diag-final": grow_diag_final(forward, reverse)}


def symmetrized_corpus(forward: list[Links], reverse: list[Links]) -> dict[str, list[Links]]:
    """:func:`symmetrized` sentence by sentence: method → one link set per sentence."""
    if len(forward) != len(reverse):
        raise ValueError(f"{len(forward)} forward link sets but {len(reverse)} reverse ones")
    per = [symmetrized(f, r) for f, r in zip(forward, reverse)]
    return {m: [p[m] for p in per] for m in METHODS}
