"""The bottleneck page's model work: the model columns (RNNsearch, RNNencdec, the frozen-context ablation, each
resolved once by :func:`ui.common.twins.columns`), the corpus for the length slider and sweep, each column's
translation and forced decoding of the reference, and the sweep's translations and reference scores. The page
file catches :class:`InputError` from here (a sentence a model cannot read).
"""

from __future__ import annotations

from dataclasses import dataclass

from nmt.decoding.search import InputError
from nmt.decoding.trace import DecodeTrace
from nmt.text.corpora import Split
from ui.common import models, twins
from ui.common import widgets as W
from ui.figures.unknown import Shown, shown

__all__ = ["Column", "InputError", "columns_for", "corpus", "decode_all", "sweep_scores", "texts"]
CORPUS_LINES = 5000  # corpus lines read for the length slider and the sweep


@dataclass(frozen=True)
class Column:
    """One model column: a display name, its checkpoint and the context mode to decode it in."""

    name: str
    ckpt: models.CheckpointInfo
    context: str  # the effective mode, as ui.common.models.resolve decided it
    note: str
    colour: str  # the model's colour on every page (nmt.models.kinds.model_colour)


def columns_for(group: models.ModelGroup, ablation: bool, groups: list[models.ModelGroup]) -> list[Column]:
    """RNNsearch, RNNencdec and (optionally) the frozen-context ablation, as far as the group has them,
    each resolved once by :func:`ui.common.twins.columns` (the stepper's toggle uses the same resolver). A pair
    without an RNNencdec of its own shows its frozen ablation and another pair's RNNencdec, headed with that
    pair's name, each described by its label (what it is, its data and vocabulary)."""
    chosen = twins.columns(group, ablation, groups)
    labelled = any(c.ckpt.group != group.name for c in chosen)  # a stand-in twin: say where each comes from
    return [Column(c.description.name + ("" if c.ckpt.group == group.name else f" ({c.ckpt.group})"), c.ckpt,
                   c.context, c.description.label if labelled else c.description.note, c.description.colour)
            for c in chosen]


def corpus(split: Split, src: str, tgt: str) -> tuple[list[str], list[str]]:
    """The split's first :data:`CORPUS_LINES` pairs with both sides non-empty, as (sources, references);
    OSError or ValueError when it cannot be read."""
    s_lines, r_lines = W.read_split(split, src, tgt, limit=CORPUS_LINES)
    keep = [(s, r) for s, r in zip(s_lines, r_lines) if s.strip() and r.strip()]
    return [s for s, _ in keep], [r for _, r in keep]


def decode_all(cols: list[Column], text: str, ref: str) -> list[tuple[Column, DecodeTrace, DecodeTrace | None]]:
    """Each column's own translation of ``text`` (top-5 kept) and, with a reference, its forced decoding."""
    results = []
    for c in cols:
        own = W.decode(W.job_for(c.ckpt, "greedy", context=c.context, topk=5), [text])[0]
        forced = W.decode(W.job_for(c.ckpt, "forced", context=c.context), [text], [ref])[0] if ref else None
        results.append((c, own, forced))
    return results


def texts(results: list[tuple[Column, DecodeTrace, DecodeTrace | None]]) -> list[Shown]:
    """Each translation as read: its ``<unk>`` replaced and marked (BLEU scores the raw one)."""
    return [shown(own, models.load(c.ckpt).tgt_tok.detokenize) for c, own, _ in results]


def sweep_scores(cols: list[Column], src: list[str], ref: list[str]
                 ) -> tuple[dict[str, list[str]], dict[str, list[float | None]]]:
    """Each column's translations of the sweep's sample and the per-word log-probability of each reference
    (in the server's heavy-job slots, cached for every visitor)."""
    hyps: dict[str, list[str]] = {}
    logp: dict[str, list[float | None]] = {}
    for c in cols:
        own = W.decode(W.job_for(c.ckpt, "greedy", context=c.context), src, label=f"{c.name}: translating",
                       heavy_job=True)
        forced = W.decode(W.job_for(c.ckpt, "forced", context=c.context), src, ref,
                          label=f"{c.name}: scoring the references", heavy_job=True)
        hyps[c.name] = [t.translation for t in own]
        logp[c.name] = [t.logprob / max(1, len(t.steps)) for t in forced]
    return hyps, logp
