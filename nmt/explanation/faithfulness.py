"""Is attention an explanation? α against attributions, and the debate's two tests, on a corpus.

    python -m nmt faithfulness --checkpoint CKPT --data DIR --split SPLIT [--limit N] --json OUT
        [--aer GOLD] [--device cpu|cuda] [--workers N]

For every sentence the model's greedy translation is explained (:mod:`nmt.explanation.attribution`: saliency,
gradient × input, integrated gradients, leave-one-out of the embedding and of the annotation in α)
and compared with α at every target step (Kendall τ-b, top-1 agreement, Jensen–Shannon divergence
in nats). The permutation test shuffles α at each step ``--permutations`` times and records the
total variation distance of p(y_i | …) and whether the argmax word flips; the adversarial test
(:func:`nmt.explanation.debate.adversarial_alpha`) finds, per step, the α farthest from the model's (JSD) that
keeps the output word and p(y_i) within ``--eps``. Means are pooled over target steps (``</s>``
included); a Kendall τ undefined for a step (a constant vector) is left out of its mean.
The JSD is in nats (natural log), so it lies in [0, ln 2].

With ``--aer GOLD`` (a Hansards-style gold set: a prefix ``DIR/test`` or a folder holding
``test.*``), each reference is force-decoded on its own tokens and every target word is linked to
the argmax source word of α and of each attribution; the AER of each (Och & Ney 2003) is reported.
"""

from __future__ import annotations

import math
import os
import time
from collections.abc import Sequence
from dataclasses import dataclass, field
from functools import partial
from pathlib import Path
from typing import Any

import numpy as np
import torch

from nmt.decoding.parallel import map_chunks
from nmt.decoding.search import InputError, forced, greedy
from nmt.decoding.surgery import require_surgery
from nmt.decoding.trace import DecodeTrace
from nmt.explanation.align import Links, alignment_error, read_links
from nmt.explanation.attribution import IG_GAP_TOL, MEASURES, METHODS, Attributions, attribute, explain_trace
from nmt.explanation.debate import (
    LN2,
    AdversarialResult,
    PermutationResult,
    adversarial_alpha,
    debate_tests,
    jsd,
    permutation_test,
    project_simplex,
)
from nmt.models.checkpoint import LoadedModel
from nmt.text.corpora import link_file
from nmt.text.data import corpus_file, read_lines
from nmt.text.vocab import EOS

__all__ = [  # the debate's tests (nmt.explanation.debate) are re-exported: callers import them from here
    "LN2", "PANEL_SENTENCE", "AdversarialResult", "PermutationResult", "SentenceReport", "adversarial_alpha",
    "aer_by_method", "analyse", "argmax_links", "debate_tests", "explain_sentences", "gold_links", "gold_prefix",
    "jsd", "permutation_test", "project_simplex", "summarise", "time_panel",
]

# ----------------------------------------------------------------------------------------------
# One sentence, a corpus, a gold alignment set
# ----------------------------------------------------------------------------------------------


@dataclass
class SentenceReport:
    """Per-step results of one sentence (plain data: lists of floats)."""

    agreement: dict[str, dict[str, list[float]]]  # method → measure → per step
    perm_tvd: list[list[float]] = field(default_factory=list)  # step → permutation → TVD
    perm_flipped: list[list[bool]] = field(default_factory=list)
    adv_jsd: list[float] = field(default_factory=list)  # step → JSD(α', α) reached
    ig_delta: list[float] = field(default_factory=list)
    ig_points: list[int] = field(default_factory=list)  # step → IG points used (chosen by the gap)


def analyse(
    lm: LoadedModel, trace: DecodeTrace, *, ig_steps: int | None = None, baseline: str = "zero", n_perm: int = 20,
    eps: float = 0.01, adv_iters: int = 30, seed: int = 0, tests: bool = True, methods: Sequence[str] = METHODS,
) -> tuple[SentenceReport, Attributions]:
    """Attributions (``methods``), agreement with α, and (``tests``) the permutation and adversarial
    tests of one trace; ``ig_steps`` None chooses IG's points by the completeness gap."""
    require_surgery(lm)  # a clear error for a model without α, before any work
    att = explain_trace(lm, trace, ig_steps=ig_steps, baseline=baseline, methods=methods)
    report = SentenceReport(att.agreement(), ig_delta=att.ig_delta.tolist(),
                            ig_points=[int(p) for p in att.ig_points])
    if not tests or not trace.steps:
        return report, att
    perm, adv, _ = debate_tests(lm, trace.src_tokens, [s.token_id for s in trace.steps], n_perm=n_perm, seed=seed,
                                eps=eps, adv_iters=adv_iters)
    report.perm_tvd, report.perm_flipped = perm.tvd.tolist(), perm.flipped.tolist()
    report.adv_jsd = adv.jsd.tolist()
    return report, att


def explain_sentences(lm: LoadedModel, texts: list[str], **kw: Any) -> list[SentenceReport]:
    """:func:`analyse` of each sentence's greedy translation (one batch of ``texts``; ``kw`` as for
    :func:`analyse`): the corpus CLI's unit of work, in this process or a worker's."""
    return [analyse(lm, trace, **kw)[0] for trace in greedy(lm, texts, topk=1)]


def _mean(xs: Sequence[float]) -> float | None:
    v = [x for x in xs if x is not None and not math.isnan(x)]
    return round(float(np.mean(v)), 4) if v else None


def summarise(reports: Sequence[SentenceReport]) -> dict[str, Any]:
    """Corpus means: the agreement table (method × measure), the permutation and adversarial tests."""
    table: dict[str, dict[str, float | None]] = {}
    for m in METHODS:
        table[m] = {k: _mean([v for r in reports for v in r.agreement.get(m, {}).get(k, [])]) for k in MEASURES}
    tvd = [t for r in reports for row in r.perm_tvd for t in row]
    flips = [f for r in reports for row in r.perm_flipped for f in row]
    adv = [j for r in reports for j in r.adv_jsd]
    delta = [abs(d) for r in reports for d in r.ig_delta]
    points = [p for r in reports for p in r.ig_points]
    return {
        "agreement": table,
        "steps": sum(len(r.ig_delta) for r in reports),
        "tau_defined": {m: sum(1 for r in reports for v in r.agreement.get(m, {}).get("kendall_tau", [])
                               if not math.isnan(v)) for m in METHODS},
        "permutation": {"flip_rate": _mean([float(f) for f in flips]), "mean_tvd": _mean(tvd),
                        "median_tvd": round(float(np.median(tvd)), 4) if tvd else None, "trials": len(flips)},
        "adversarial": {"mean_jsd": _mean(adv), "median_jsd": round(float(np.median(adv)), 4) if adv else None,
                        "found_rate": _mean([float(j > 1e-6) for j in adv]), "max_jsd_ln2": round(LN2, 4)},
        "ig_abs_delta": {"mean": _mean(delta), "max": round(max(delta), 4) if delta else None,
                         "above_tol": _mean([float(d > IG_GAP_TOL) for d in delta]), "tol": IG_GAP_TOL,
                         "above_0.1": _mean([float(d > 0.1) for d in delta]),
                         "points_mean": _mean([float(p) for p in points]), "points_max": max(points, default=None)},
    }


def argmax_links(att: Attributions, scores: np.ndarray) -> Links:
    """(source j, target i) links of each target word (``</s>`` left out) to its highest-scoring
    source word (the source ``</s>`` left out), as :func:`nmt.explanation.align.argmax_links` does for α."""
    n = att.src_len - 1
    links: Links = set()
    if n <= 0:
        return links
    for r, i in enumerate(att.steps):
        if att.tgt_tokens[i] != EOS:
            links.add((int(np.argmax(scores[r, :n])), i))
    return links


def gold_prefix(path: str | Path, split: str = "test") -> Path:
    """``DIR/test`` for a folder, else the prefix as given."""
    p = Path(path)
    return p / split if p.is_dir() else p


def gold_links(lm: LoadedModel, pairs: list[tuple[str, str]], *, ig_steps: int | None = None,
               baseline: str = "zero", methods: Sequence[str] = METHODS) -> list[dict[str, Links]]:
    """Per gold pair (source, reference; Moses-tokenised), the argmax links of α and of each
    attribution on the force-decoded reference: the AER's unit of work, here or in a worker."""
    traces = forced(lm, [s for s, _ in pairs], [t for _, t in pairs], pretokenized=True, topk=1)
    out = []
    for trace in traces:
        att = explain_trace(lm, trace, ig_steps=ig_steps, baseline=baseline, methods=methods)
        out.append({"alpha": argmax_links(att, att.alpha), **{m: argmax_links(att, att.scores[m]) for m in methods}})
    return out


def aer_by_method(
    lm: LoadedModel, prefix: Path, *, limit: int | None = None, ig_steps: int | None = None, baseline: str = "zero",
    progress: bool = True, path: str = "", workers: int = 1, methods: Sequence[str] = METHODS,
) -> dict[str, Any]:
    """AER of argmax α and argmax of each attribution on force-decoded gold references
    (``workers`` processes loading ``path``, as :func:`nmt.decoding.parallel.map_chunks`)."""
    s_lang, t_lang = lm.src_tok.lang, lm.tgt_tok.lang
    src = read_lines(corpus_file(prefix.parent, prefix.name, s_lang), limit)
    tgt = read_lines(corpus_file(prefix.parent, prefix.name, t_lang), limit)
    sure = read_links(link_file(prefix, s_lang, t_lang, "sure"))[: len(src)]
    possible = read_links(link_file(prefix, s_lang, t_lang, "possible"))[: len(src)]
    if not (len(src) == len(tgt) == len(sure) == len(possible)):
        counts = (len(src), len(tgt), len(sure), len(possible))
        raise InputError(f"gold set {prefix}: line counts differ {counts}")
    per_pair = map_chunks(partial(gold_links, ig_steps=ig_steps, baseline=baseline, methods=methods),
                          list(zip(src, tgt, strict=True)),
                          lm=lm, path=path, device=str(lm.device), workers=workers, progress=progress, desc="AER")
    out: dict[str, Any] = {"gold": str(prefix), "sentences": len(src)}
    for m in ("alpha", *methods):
        res = alignment_error([links[m] for links in per_pair], sure, possible)
        out[m] = {k: round(v, 4) if isinstance(v, float) else v for k, v in res.items()}
    return out


PANEL_SENTENCE = ("A man in a blue shirt and a woman in a white dress are sitting on a wooden bench in front of a "
                  "large building .")  # 25 words (26 Moses tokens with the full stop)


def time_panel(lm: LoadedModel, text: str = PANEL_SENTENCE, repeats: int = 5,
               ig_steps: int | None = None) -> dict[str, Any]:
    """Seconds (median of ``repeats``, wall and CPU) for one step's full panel: α and the five
    attributions (IG at ``ig_steps`` points) of one target word, at the middle and the last word.
    ``src_tokens`` counts the source ids with ``</s>``."""
    trace = greedy(lm, [text], topk=1)[0]
    src = lm.src_vocab.encode(trace.src_tokens[:-1])
    ids = [s.token_id for s in trace.steps]
    out: dict[str, Any] = {"sentence": text, "src_tokens": len(src), "tgt_tokens": len(ids), "repeats": repeats,
                           "ig_steps": ig_steps, "torch_threads": torch.get_num_threads()}
    for name, step in (("middle", len(ids) // 2), ("last_word", max(0, len(ids) - 2))):
        wall, cpu = [], []
        for _ in range(repeats):
            t0, c0 = time.perf_counter(), time.process_time()
            attribute(lm, src, ids, steps=[step], ig_steps=ig_steps)
            wall.append(time.perf_counter() - t0)
            cpu.append(time.process_time() - c0)
        out[name] = {"step": step, "wall_s": round(float(np.median(wall)), 3), "cpu_s": round(float(np.median(cpu)), 3)}
    out["load_average_1min"] = round(os.getloadavg()[0], 2) if hasattr(os, "getloadavg") else None
    return out


