"""What renormalising the ensemble's distribution changes, on the shipped Multi30k ensemble.

    nice -n 10 python -m bench.ensemble_renorm [--sentences N] [--out bench/ensemble-renorm.json]

The ensemble of the three shipped members (RNNsearch, Luong general, Luong local-p) decodes
test_2016_flickr and test_2017_flickr (their first ``--sentences``; all by default) twice: with the
rule of :mod:`nmt.decoding.ensemble` (the members' mean log p renormalised per step) and with the mean log p
left unnormalised, as it was before.
Recorded: over the greedy steps, how far Σ_k p_ens(k) is from 1 under each rule (min, median, max);
for greedy and beam 5 (length-normalised), how many translations differ and the cased BLEU of each
rule (sacreBLEU, :func:`nmt.text.metrics.corpus_bleu`). Greedy cannot change (one step's ranking is the
same under both rules); the beam may, since its scores add −log Z_i per step.
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
import time
from pathlib import Path
from typing import Any

import torch

from nmt.decoding.ensemble import Ensemble, ensemble_of
from nmt.decoding.search import beam_search, greedy
from nmt.models import checkpoint
from nmt.models.checkpoint import LoadedModel
from nmt.text.data import read_parallel
from nmt.text.metrics import corpus_bleu

ROOT = Path(__file__).resolve().parent.parent
SPLITS = ("test_2016_flickr", "test_2017_flickr")
MEMBERS = ("m30k-en-fr-rnnsearch.pt", "m30k-en-fr-luong-global-general.pt", "m30k-en-fr-luong-local-p.pt")


class Sums:
    """Wraps an ensemble's step: records Σ_k exp(log p) per row of every step (the shown p's sum) and,
    with ``plain``, returns the members' mean log p unnormalised (the rule before renormalising)."""

    def __init__(self, model: Ensemble, plain: bool) -> None:
        self.model, self.plain, self.sums = model, plain, []
        self.step = model.step

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        out = self.step(*args, **kwargs)
        if self.plain:
            out.log_probs = out.attended.member_log_probs.mean(0)
        self.sums += out.log_probs.exp().sum(-1).tolist()
        return out


def decode(ens: LoadedModel, src: list[str], plain: bool, beam: int) -> tuple[list[str], list[float]]:
    """Translations of ``src`` under one rule, and the sums of p over the vocabulary at every step."""
    spy = Sums(ens.model, plain)
    ens.model.step = spy
    try:
        traces = greedy(ens, src) if beam == 1 else beam_search(ens, src, beam=beam)
    finally:
        del ens.model.step
    return [t.translation for t in traces], spy.sums


def spread(xs: list[float]) -> dict[str, float]:
    return {"min": round(min(xs), 4), "median": round(statistics.median(xs), 4), "max": round(max(xs), 4),
            "max_abs_minus_1": float(f"{max(abs(x - 1) for x in xs):.2g}"), "steps": len(xs)}


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--sentences", type=int, default=None)
    p.add_argument("--out", default="bench/ensemble-renorm.json")
    args = p.parse_args(argv)
    torch.set_num_threads(1)
    ens = ensemble_of([checkpoint.load(ROOT / "checkpoints" / m) for m in MEMBERS], list(MEMBERS))
    out: dict[str, Any] = {"what": " ".join(__doc__.split("\n\n")[2].split()),
                           "command": "nice -n 10 python -m bench.ensemble_renorm", "members": list(MEMBERS),
                           "threads": 1, "splits": {}}
    for split, name, beam in [(s, n, b) for s in SPLITS for n, b in (("greedy", 1), ("beam5", 5))]:
        src, ref = read_parallel(ROOT / "data" / "multi30k", split, "en", "fr", args.sentences)
        t0 = time.perf_counter()
        new, new_sums = decode(ens, src, False, beam)
        old, old_sums = decode(ens, src, True, beam)
        row = {"changed": sum(a != b for a, b in zip(new, old, strict=True)),
               "bleu_renormalised": corpus_bleu(new, ref)["score"], "bleu_unnormalised": corpus_bleu(old, ref)["score"],
               "sentences": len(src), "seconds": round(time.perf_counter() - t0, 1)}
        if beam == 1:
            row["sum_p_unnormalised"], row["sum_p_renormalised"] = spread(old_sums), spread(new_sums)
        out["splits"].setdefault(split, {})[name] = row
        print(split, name, json.dumps(row), flush=True)
        Path(args.out).write_text(json.dumps(out, indent=1, ensure_ascii=False) + "\n", encoding="utf-8")
    return 0


if __name__ == "__main__":
    sys.exit(main())
