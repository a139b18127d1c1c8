"""Alignments from attention, and their error rate against gold Sure/Possible links.

    python -m nmt align --checkpoint CKPT --aer data/alignment/hansards-naacl2003-en-fr/test [--json OUT] \
        [--thresholds 0.1 0.2 0.3]

Gold files follow ``PREFIX.{src}``, ``PREFIX.{tgt}`` (pre-tokenised, one sentence per line) and
``PREFIX.{src}-{tgt}.sure`` / ``.possible`` (space-separated 0-based ``i-j`` links, source index
first, Possible ⊇ Sure), each plain, ``.gz`` or ``.xz``. The model force-decodes each reference
*on the given tokens* (no re-tokenisation, so indices line up) and links every target word y_i to
argmax_j α_ij (Luong et al. 2015), and with ``--thresholds`` to every source word with α_ij ≥ τ.
AER(A; S, P) = 1 − (|A∩S| + |A∩P|) / (|A| + |S|) (Och & Ney 2003).
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from pathlib import Path

from nmt.decoding.trace import DecodeTrace
from nmt.text.data import read_lines

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
