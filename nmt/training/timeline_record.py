"""Recording a training timeline (:mod:`nmt.training.timeline`) from inside ``train.py``.

``train.py --timeline`` calls :func:`start` once the run is built (recording update 0 of a fresh
run); the NMT task (:mod:`nmt.training.nmt_task`) calls :func:`after_update` from the one training loop's
hook after every update (recording the scheduled ones) and :func:`at_end` when the run stops. Each
entry decodes the probe sentences greedily with :func:`nmt.decoding.search.greedy` (the model's own step),
scores BLEU on a fixed sample of validation sentences, the training loss on a fixed sample of
training pairs (teacher forcing, dropout off, no label smoothing: the same pairs at every entry, so
the curve is smooth and a resumed run measures what an uninterrupted one does) and, for en→fr
models with α, the AER of argmax α on the built-in Hansards trial set. Recording runs in eval
mode, with no gradient and no random numbers drawn, so it does not change the training it watches;
its time is not counted as training time.
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping, Sequence
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

import numpy as np
import torch

from nmt.decoding.search import forced, greedy, prepare_source
from nmt.explanation.align import alignment_error, argmax_links, read_links
from nmt.models.checkpoint import LoadedModel
from nmt.models.rnnsearch import sequence_loss
from nmt.text.corpora import BUILTIN_DIR, PROJECT, link_file
from nmt.text.data import Example, corpus_file, make_batch, read_lines
from nmt.text.metrics import corpus_bleu
from nmt.training import timeline

HANSARDS_TRIAL = "alignment/hansards-naacl2003-en-fr/trial"  # a label under evalsets/
N_VALID_PROBES = 20
N_BLEU = 200  # validation sentences scored at each entry
N_LOSS = 256  # training pairs the loss is measured on


@dataclass(frozen=True)
class Probe:
    """A sentence the timeline decodes at every entry: a preset or a validation sentence."""

    kind: str  # preset | valid
    name: str
    source: str
    reference: str = ""


def evenly(n_total: int, n: int) -> list[int]:
    """``n`` indices spread evenly over ``range(n_total)`` (all of them when ``n ≥ n_total``)."""
    if n >= n_total:
        return list(range(n_total))
    return [round(k * (n_total - 1) / (n - 1)) for k in range(n)] if n > 1 else [0]


def validation_probes(v_src: Sequence[str], v_tgt: Sequence[str], n: int = N_VALID_PROBES) -> list[Probe]:
    """``n`` validation sentences of different lengths: evenly spaced over the sentences sorted by length."""
    ok = [i for i, s in enumerate(v_src) if s.strip()]
    by_len = sorted(ok, key=lambda i: (len(v_src[i].split()), i))
    picked = [by_len[k] for k in evenly(len(by_len), n)]
    return [Probe("valid", f"valid #{i + 1} ({len(v_src[i].split())} words)", v_src[i], v_tgt[i]) for i in picked]


def preset_group(out_name: str, groups: Sequence[str]) -> str:
    """The preset group a run writes: the longest group whose name (without a trailing ``-NN``) starts
    the run folder's name, e.g. ``m30k-en-fr`` for ``m30k-en-fr-rnnsearch``; "" when none does."""
    fits = [g for g in groups if out_name.startswith(re.sub(r"-\d+$", "", g))]
    return max(fits, key=len) if fits else ""


@dataclass
class Gold:
    """Pre-tokenised gold-aligned sentences and their Sure/Possible links (:mod:`nmt.explanation.align`)."""

    label: str
    src: list[str]
    tgt: list[str]
    sure: list[set[tuple[int, int]]]
    possible: list[set[tuple[int, int]]]


def hansards_trial(src: str, tgt: str) -> Gold | None:
    """The built-in Hansards trial set (37 sentences) for en→fr, else None."""
    if (src, tgt) != ("en", "fr"):
        return None
    prefix = PROJECT / BUILTIN_DIR / HANSARDS_TRIAL
    return Gold(HANSARDS_TRIAL, read_lines(corpus_file(prefix.parent, prefix.name, src)),
                read_lines(corpus_file(prefix.parent, prefix.name, tgt)),
                read_links(link_file(prefix, src, tgt, "sure")), read_links(link_file(prefix, src, tgt, "possible")))


class Recorder:
    """Decodes and scores the probes at an update and writes the timeline file after each entry."""

    def __init__(self, path: Path, tl: timeline.Timeline, probes: list[Probe], bleu: tuple[list[str], list[str]],
                 loss_pairs: list[Example], gold: Gold | None) -> None:
        self.path, self.tl, self.probes, self.bleu = path, tl, probes, bleu
        self.loss_pairs, self.gold = loss_pairs, gold

    @torch.no_grad()
    def train_loss(self, lm: LoadedModel) -> float:
        """Mean per-token cross-entropy (nats) of the fixed training pairs, teacher forced."""
        total, n_tok = 0.0, 0
        for k in range(0, len(self.loss_pairs), 64):
            b = make_batch(self.loss_pairs[k:k + 64], lm.src_vocab, lm.tgt_vocab).to(lm.device)
            total += float(sequence_loss(lm.model(b.src, b.src_len, b.tgt_in), b.tgt_out))
            n_tok += b.n_tgt_tokens
        return total / max(n_tok, 1)

    def aer(self, lm: LoadedModel) -> float | None:
        """AER of argmax α on the gold set (None without a gold set or without α)."""
        if self.gold is None or lm.config.context == "fixed":
            return None
        traces = forced(lm, self.gold.src, self.gold.tgt, pretokenized=True, topk=1)
        return alignment_error([argmax_links(t) for t in traces], self.gold.sure, self.gold.possible)["aer"]

    def record(self, lm: LoadedModel, update: int) -> None:
        """Add the entry of ``update`` (the weights as they are now) and rewrite the file."""
        was_training = lm.model.training
        lm.model.eval()
        try:
            n = len(self.probes)
            traces = greedy(lm, [p.source for p in self.probes] + self.bleu[0], topk=1)
            hyps = [t.translation for t in traces[n:]]
            entry = {"update": update, "scheduled": timeline.is_scheduled(update),
                     "train_loss": self.train_loss(lm),
                     "bleu": corpus_bleu(hyps, self.bleu[1])["score"] if hyps else None,
                     "aer": self.aer(lm),
                     "translations": [t.translation for t in traces[:n]],
                     "tgt_tokens": [t.target_tokens for t in traces[:n]]}
            alphas = {p: np.array([s.alpha for s in t.steps], dtype=np.float32)
                      for p, t in enumerate(traces[:n]) if t.has_alignment}
        finally:
            lm.model.train(was_training)
        self.tl.add(entry, alphas)
        timeline.write(self.tl, self.path)


def new_header(lm: LoadedModel, args: Any, probes: list[Probe], n_bleu: int, n_loss: int,
               gold: Gold | None, group: str) -> dict[str, Any]:
    """What a timeline says about its run: model, options, probes (with their tokens) and measures."""
    srcs = [prepare_source(lm, p.source) for p in probes]
    cfg = lm.config.to_dict() if hasattr(lm.config, "to_dict") else {}
    return {
        "model": {"context": lm.config.context, "arch": cfg.get("arch", "rnnsearch"), "config": cfg},
        "run": {k: getattr(args, k, None) for k in ("config", "data", "src", "tgt", "seed", "batch_size", "lr",
                                                     "max_updates", "epochs", "time_budget", "out")},
        "note": getattr(args, "timeline_note", ""), "preset_group": group,
        "probes": [{**asdict(p), "src_tokens": [*s.tokens, "</s>"], "src_unk": s.unk} for p, s in zip(probes, srcs)],
        "bleu_sentences": n_bleu, "bleu_split": getattr(args, "valid_split", "val"),
        "loss_pairs": n_loss, "aer_gold": gold.label if gold else None,
    }


SENTENCES = PROJECT / "configs" / "timeline_sentences.json"


def preset_sentences(path: Path = SENTENCES) -> dict[str, list[str]]:
    """The stepper's preset sentences by checkpoint group, as written to ``configs/timeline_sentences.json``
    (a test keeps it equal to ``ui/common/presets.py``, so training never imports the app)."""
    return {str(k): [str(t) for t in v] for k, v in json.loads(path.read_text(encoding="utf-8")).items()}


def start(run: Any, presets: Mapping[str, Sequence[str]]) -> Recorder | None:
    """The recorder of a built ``train.py`` run (None unless ``--timeline`` and rank 0); records
    update 0 of a fresh run, and rewinds the file of a resumed one to its update."""
    env, args, data = run.env, run.env.args, run.data
    if not getattr(args, "timeline", False) or not env.is_main:
        return None
    group = args.timeline_presets if args.timeline_presets != "auto" else preset_group(env.out.name, list(presets))
    probes = [Probe("preset", f"preset {k + 1}", s) for k, s in enumerate(presets.get(group, ()))]
    probes += validation_probes(data.v_src, data.v_tgt)
    bleu_idx = [i for i in evenly(len(data.v_src), N_BLEU) if data.v_src[i].strip()]
    bleu = ([data.v_src[i] for i in bleu_idx], [data.v_tgt[i] for i in bleu_idx])
    loss_pairs = [data.examples[i] for i in evenly(len(data.examples), N_LOSS)]
    gold = hansards_trial(args.src, args.tgt)
    path = env.out / timeline.FILE_NAME
    update = run.st["update"]
    tl = timeline.read(path) if update and path.exists() else None
    if tl is None:
        tl = timeline.Timeline(new_header(run.lm, args, probes, len(bleu_idx), len(loss_pairs), gold, group))
    tl.rewind(update)
    rec = Recorder(path, tl, probes, bleu, loss_pairs, gold)
    if timeline.is_scheduled(update) and update not in tl.updates:
        rec.record(run.lm, update)
    return rec


def after_update(run: Any) -> None:
    """Record the update just made if it is scheduled (the NMT task's hook in :mod:`nmt.training.loop`, which
    does not count a hook's time as training time)."""
    rec, update = run.timeline, run.st["update"]
    if rec is not None and timeline.is_scheduled(update) and update not in rec.tl.updates:
        rec.record(run.lm, update)


def at_end(run: Any) -> None:
    """Record the update the run stops at (the weights of its last ``last.pt``) unless already there."""
    rec, update = run.timeline, run.st["update"]
    if rec is not None and update not in rec.tl.updates:
        rec.record(run.lm, update)
