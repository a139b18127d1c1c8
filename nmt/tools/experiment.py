"""The paper's experiment: BLEU of RNNsearch and RNNencdec as source sentences get longer.

    python -m nmt experiment --data data --out checkpoints/europarl-en-fr.results.json \
        --model RNNsearch-50=checkpoints/europarl-en-fr-rnnsearch-50.pt \
        --model RNNencdec-50=checkpoints/europarl-en-fr-rnnencdec-50.pt \
        --test wmt/newstest2014-fren --test europarl-v7-fr-en/test2000q4 [--limit N]

For each model and test set: corpus BLEU (sacrebleu, with signature and a 95 % bootstrap CI) on
all sentences and on the sentences without unknown words (no source or reference word outside
the model's shortlists: Table 1's two columns), and BLEU per source-length bucket of 10 words with
bucket sizes and CIs (Fig. 2). Test sets are named ``SUBDIR/SPLIT`` under ``--data``. Greedy scores
go under ``models[NAME].tests``, beam-K scores (``--beam K``) under ``models[NAME].tests_beamK``.
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from nmt.decoding.search import translate
from nmt.models import checkpoint
from nmt.models.checkpoint import LoadedModel
from nmt.models.device import pick_device
from nmt.text import atomic
from nmt.text.data import read_parallel
from nmt.text.metrics import bleu_by_length, corpus_bleu
from nmt.text.vocab import UNK_ID
from nmt.tools import cli

# Bahdanau et al. (2015), Table 1, BLEU on newstest2014 (all sentences / no UNK).
PAPER_TABLE1 = {
    "RNNencdec-30": {"all": 13.93, "no_unk": 24.19},
    "RNNsearch-30": {"all": 21.50, "no_unk": 31.44},
    "RNNencdec-50": {"all": 17.82, "no_unk": 26.71},
    "RNNsearch-50": {"all": 26.75, "no_unk": 34.16},
}


def tests_key(beam: int) -> str:
    """Where a model's scores go in the results JSON: ``tests`` (greedy) or ``tests_beam{K}``, so that
    greedy and beam-search scores of one model and test set sit side by side."""
    return "tests" if beam == 1 else f"tests_beam{beam}"


def experiment_tests(entry: dict[str, Any]) -> list[tuple[str, dict[str, Any]]]:
    """(test, result) pairs of one model entry, greedy and every beam width."""
    return [(test, res) for key, by_test in entry.items() if key == "tests" or key.startswith("tests_beam")
            for test, res in (by_test or {}).items()]


def has_no_unk(lm: LoadedModel, src: str, ref: str) -> bool:
    """True when every source and reference word is in the model's shortlists."""
    return (UNK_ID not in lm.src_vocab.encode(lm.src_tok.tokenize(src), add_eos=False)
            and UNK_ID not in lm.tgt_vocab.encode(lm.tgt_tok.tokenize(ref), add_eos=False))


def score_test_set(
    lm: LoadedModel, src: list[str], ref: list[str], *, beam: int = 1, n_bootstrap: int = 1000,
    bucket_width: int = 10, progress: Callable[[float], None] | None = None, chunk: int = 256,
    toolkit_rules: bool = True,
) -> dict[str, Any]:
    """Table 1 and Fig. 2 numbers of one model on one test set (an imported model decoded by its toolkit's search
    rules unless ``toolkit_rules`` is False)."""
    hyps: list[str] = []
    for k in range(0, len(src), chunk):
        hyps += translate(lm, src[k : k + chunk], beam=beam, toolkit_rules=toolkit_rules)
        if progress is not None:
            progress(min(1.0, (k + chunk) / max(len(src), 1)))
    src_len = [len(lm.src_tok.tokenize(s)) for s in src]
    keep = [k for k in range(len(src)) if has_no_unk(lm, src[k], ref[k])]
    return {
        "sentences": len(src), "no_unk_sentences": len(keep), "beam": beam,
        "all": corpus_bleu(hyps, ref, n_bootstrap=n_bootstrap),
        # None when no sentence is free of unknown words (there is nothing to score).
        "no_unk": corpus_bleu([hyps[k] for k in keep], [ref[k] for k in keep], n_bootstrap=n_bootstrap)
        if keep else None,
        "by_length": bleu_by_length(src_len, hyps, ref, bucket_width, n_bootstrap=n_bootstrap),
    }


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--data", required=True)
    p.add_argument("--model", action="append", required=True, help="NAME=CHECKPOINT (repeatable)")
    p.add_argument("--test", action="append", required=True, help="SUBDIR/SPLIT under --data (repeatable)")
    p.add_argument("--beam", type=int, default=1)
    p.add_argument("--limit", type=int, default=None, help="first N sentences of each test set")
    p.add_argument("--bootstrap", type=int, default=1000)
    p.add_argument("--out", required=True, help="results JSON (models already in it are kept)")
    cli.add_unsealed_flag(p)
    cli.device_option(p)
    args = p.parse_args(argv)
    out = Path(args.out)
    results = json.loads(out.read_text()) if out.exists() else {}
    results.setdefault("paper_table1_newstest2014", PAPER_TABLE1)
    models = results.setdefault("models", {})
    for spec in args.model:
        name, _, path = spec.partition("=")
        lm = checkpoint.load(path, pick_device(args.device))
        entry = models.setdefault(name, {})
        entry.update({"checkpoint": path, "config": lm.config.to_dict(),
                      "training": {k: lm.meta.get(k) for k in ("device", "train_seconds", "train_tokens_per_s",
                                                                "updates", "epochs", "train_data")}})
        for test in args.test:
            sub, _, split = test.rpartition("/")
            src, ref = read_parallel(Path(args.data) / sub, split, lm.src_tok.lang, lm.tgt_tok.lang, args.limit)
            t0 = time.time()
            res = score_test_set(lm, src, ref, beam=args.beam, n_bootstrap=args.bootstrap)
            res["seconds"] = round(time.time() - t0, 1)
            entry.setdefault(tests_key(args.beam), {})[test] = res
            no_unk = f"{res['no_unk']['score']:6.2f}" if res["no_unk"] else "   n/a"
            print(f"{name:14s} {test:30s} BLEU {res['all']['score']:6.2f} ± {res['all'].get('ci95', 0):.2f}  "
                  f"no-UNK {no_unk} ({res['no_unk_sentences']} sents)", file=sys.stderr)
        atomic.write_text(out, json.dumps(results, indent=1))
    return 0


if __name__ == "__main__":
    sys.exit(cli.run(main))
