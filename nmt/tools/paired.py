"""Is model A really better than model B on this test set, or is it noise? A paired comparison.

    python -m nmt paired --data evalsets --test wmt/newstest2014-fren \
        --model RNNencdec-50=checkpoints/europarl-en-fr-rnnencdec-50.pt \
        --model RNNsearch-50=checkpoints/europarl-en-fr-rnnsearch-50.pt --out bench/paired.json

The first ``--model`` is the baseline; each other is compared with it. All translate the same
sentences; sacrebleu's paired bootstrap resampling (Koehn 2004,
``sacrebleu.significance.PairedTest``, ``test_type="bs"``) draws the same resampled test sets for both
and gives, for BLEU and chrF, each system's score, the bootstrap mean and 95 % interval, and the
p-value of the second system's difference from the first (the baseline) under the null hypothesis
that they are equally good; overall and in each source-length bucket of 10 words (Fig. 2's buckets).
The sentences where they differ most (sentence chrF, sacrebleu) are listed, each with its source,
reference and both translations. Nothing here computes a score by hand: sacrebleu does. One caution
written into the result: sacrebleu counts resampled differences strictly above the observed one, so two
systems with the same output get its smallest p, 1 / (resamples + 1); ``identical_outputs`` says so.

Under ``words``, compare-mt's analyses (Neubig et al. 2019; :mod:`nmt.text.word_analysis`) of each system
against the baseline, on the baseline's target tokens: word F-measure by frequency bucket (counted in the
training split the checkpoint records, or ``--freq-corpus``, else in the references) and by third of the
sentence, and the n-grams one matches where the other misses; each with B − A and a 95 % interval over the
very resampled test sets sacrebleu's bootstrap draws.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import sys
import time
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import Any

from sacrebleu.metrics import BLEU, CHRF
from sacrebleu.significance import PairedTest

from nmt.decoding.search import translate
from nmt.models import checkpoint
from nmt.models.device import pick_device
from nmt.text import atomic, word_analysis
from nmt.text.data import corpus_file, read_lines, read_parallel
from nmt.text.metrics import length_buckets
from nmt.tools import cli

RESAMPLES = 1000  # sacrebleu's default for the paired bootstrap
MIN_BUCKET = 30  # a length bucket with fewer sentences is reported without a test (too few to resample)
TOP = 20  # sentences listed with the largest |Δ chrF|


def paired_test(systems: Sequence[tuple[str, Sequence[str]]], refs: Sequence[str],
                resamples: int = RESAMPLES) -> dict[str, Any]:
    """BLEU and chrF of each system with bootstrap means, 95 % intervals and p-values against the first
    (sacrebleu's paired bootstrap; its seed is sacrebleu's own, written in the signatures)."""
    test = PairedTest([(n, list(h)) for n, h in systems], {"BLEU": BLEU(), "chrF": CHRF()}, [list(refs)],
                      test_type="bs", n_samples=resamples)
    signatures, results = test()
    names = results.pop("System")
    def key(metric: str) -> str:  # sacrebleu names chrF "chrF2" (β = 2)
        return "chrF" if metric.startswith("chrF") else metric

    out: dict[str, Any] = {"signatures": {key(m): str(s) for m, s in signatures.items()}}
    for metric, per_system in results.items():
        out[key(metric)] = {name: {"score": round(float(r.score), 2), "mean": round(float(r.mean), 2),
                                   "ci95": round(float(r.ci), 2),
                                   "p_value": None if r.p_value is None else round(float(r.p_value), 4)}
                            for name, r in zip(names, per_system, strict=True)}
    return out


def sentence_differences(src: Sequence[str], refs: Sequence[str], hyp_a: Sequence[str], hyp_b: Sequence[str],
                         top: int = TOP) -> list[dict[str, Any]]:
    """The ``top`` sentences with the largest |chrF(B) − chrF(A)| (sacrebleu's sentence chrF), largest first."""
    chrf = CHRF()
    rows = []
    for k, (s, r, a, b) in enumerate(zip(src, refs, hyp_a, hyp_b, strict=True)):
        ca, cb = chrf.sentence_score(a, [r]).score, chrf.sentence_score(b, [r]).score
        rows.append({"k": k, "source": s, "reference": r, "a": a, "b": b, "chrf_a": round(ca, 2),
                     "chrf_b": round(cb, 2), "delta_chrf": round(cb - ca, 2)})
    rows.sort(key=lambda row: (-abs(row["delta_chrf"]), row["k"]))
    return rows[:top]


def word_analyses(refs: Sequence[str], hyps: Sequence[Sequence[str]], names: Sequence[str], resamples: int,
                  tokenize: Callable[[str], list[str]], freq: Mapping[str, int] | None,
                  freq_source: str) -> dict[str, Any]:
    """compare-mt's word analyses (:mod:`nmt.text.word_analysis`) of each system against the baseline, on
    ``tokenize``'s tokens, each bucket's B − A with an interval over sacrebleu's own resampled test sets.
    ``freq``: the words' counts in ``freq_source``; None: counted in the references (compare-mt's default)."""
    ref_toks = [tokenize(r) for r in refs]
    if freq is None:
        freq, freq_source = word_analysis.word_counts(ref_toks), "the test set's references (compare-mt's default)"
    toks = [[tokenize(h) for h in hyp] for hyp in hyps]
    indices = word_analysis.sacrebleu_indices(len(refs), resamples)
    per_system = {}
    for n, hyp, t in zip(names[1:], hyps[1:], toks[1:], strict=True):
        res = word_analysis.analyse(ref_toks, toks[0], t, freq, indices)
        for row in (r for side in res["ngrams"].values() for r in side):  # each example in words, to read
            row["example_text"] = [{"k": k, "reference": refs[k], "a": hyps[0][k], "b": hyp[k]}
                                   for k in row["examples"]]
        per_system[n] = res
    return {"method": "compare-mt (Neubig et al. 2019) word F-measure and n-gram matches; B − A with a 95 % "
                      "interval over sacrebleu's paired-bootstrap resamples (same seed and draws)",
            "frequency_source": freq_source, "frequency_cutoffs": list(word_analysis.FREQ_CUTOFFS),
            "by_system": per_system}


def compare(names: Sequence[str], src: Sequence[str], refs: Sequence[str], hyps: Sequence[Sequence[str]],
            src_lengths: Sequence[int], resamples: int = RESAMPLES,
            tokenize: Callable[[str], list[str]] = str.split, freq: Mapping[str, int] | None = None,
            freq_source: str = "") -> dict[str, Any]:
    """The whole comparison of each system's translations ``hyps`` of ``src`` with the first's, the
    baseline (see the module docstring): sacrebleu tests every other system against it in one run.
    ``tokenize``, ``freq`` and ``freq_source``: the words of :func:`word_analyses`."""
    systems = list(zip(names, hyps, strict=True))
    buckets = []
    for lo, hi in length_buckets(src_lengths):
        idx = [k for k, n in enumerate(src_lengths) if lo <= n < hi]
        if not idx:
            continue
        row: dict[str, Any] = {"lo": lo, "hi": hi, "n": len(idx)}
        if len(idx) >= MIN_BUCKET:
            row |= paired_test([(n, [h[k] for k in idx]) for n, h in systems], [refs[k] for k in idx], resamples)
        buckets.append(row)
    base = hyps[0]
    return {"baseline": names[0], "systems": list(names[1:]), "sentences": len(src), "resamples": resamples,
            "method": "paired bootstrap resampling (Koehn 2004), sacrebleu.significance.PairedTest",
            "overall": paired_test(systems, refs, resamples), "by_length": buckets,
            "min_bucket": MIN_BUCKET,
            # sacrebleu's p for two identical outputs is its smallest, 1 / (resamples + 1): say it plainly
            "identical_outputs": {n: list(h) == list(base) for n, h in systems[1:]},
            "largest_differences": {n: sentence_differences(src, refs, base, h) for n, h in systems[1:]},
            "hypotheses_sha256": {n: hashlib.sha256("\n".join(h).encode()).hexdigest() for n, h in systems},
            "words": word_analyses(refs, hyps, names, resamples, tokenize, freq, freq_source)}


def training_counts(data: Path, lm: checkpoint.LoadedModel, spec: str | None
                    ) -> tuple[dict[str, int] | None, str]:
    """Target words' counts in a training corpus, tokenised by ``lm``'s target tokeniser, and a line naming it.

    Checkpoints record their vocabulary (most frequent first) but no counts, so they are counted again:
    in ``spec`` (SUBDIR/SPLIT under ``data``) if given, else in the training split the checkpoint's
    ``meta["train_data"]`` names, if that is under ``data``; ``(None, "")`` when it is not (then the
    references are counted, compare-mt's default)."""
    recorded = lm.meta.get("train_data") or {}
    if spec:
        sub, _, split = spec.rpartition("/")
    elif recorded.get("dir") and recorded.get("split"):
        sub, split = Path(recorded["dir"]).name, str(recorded["split"])
    else:
        return None, ""
    try:
        path = corpus_file(data / sub, split, lm.tgt_tok.lang)
    except FileNotFoundError:
        if spec:
            raise
        return None, ""
    lines = read_lines(path)
    counts = word_analysis.word_counts(lm.tgt_tok.tokenize(x) for x in lines)
    how = "given by --freq-corpus" if spec else "the training split the baseline's checkpoint records"
    return dict(counts), (f"{sub}/{split}, {len(lines):,} target sentences ({how}; checkpoints keep no word "
                          "counts), tokenised by the baseline's target tokeniser")


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--data", required=True, help="the folder the test set's SUBDIR/SPLIT is under")
    p.add_argument("--test", required=True, help="SUBDIR/SPLIT under --data")
    p.add_argument("--model", action="append", required=True, help="NAME=CHECKPOINT, twice: baseline first")
    p.add_argument("--beam", type=int, default=1, help="beam size (1 = greedy)")
    p.add_argument("--limit", type=int, default=None, help="first N sentences only")
    p.add_argument("--resamples", type=int, default=RESAMPLES)
    p.add_argument("--out", required=True, help="the comparison as JSON")
    p.add_argument("--freq-corpus", default=None,
                   help="SUBDIR/SPLIT under --data whose target side gives the word frequencies (default: the "
                        "baseline's training split if found there, else the references)")
    cli.device_option(p)
    args = p.parse_args(argv)
    if len(args.model) < 2:
        p.error("give two or more --model NAME=CHECKPOINT (the baseline first)")
    specs = [m.partition("=") for m in args.model]
    sub, _, split = args.test.rpartition("/")
    lms = [checkpoint.load(path, pick_device(args.device)) for _, _, path in specs]
    src, refs = read_parallel(Path(args.data) / sub, split, lms[0].src_tok.lang, lms[0].tgt_tok.lang, args.limit)
    t0 = time.time()
    hyps = [translate(lm, src, beam=args.beam) for lm in lms]
    seconds = round(time.time() - t0, 1)
    freq, freq_source = training_counts(Path(args.data), lms[0], args.freq_corpus)
    res = compare([name for name, _, _ in specs], src, refs, hyps, [len(lms[0].src_tok.tokenize(s)) for s in src],
                  args.resamples, lms[0].tgt_tok.tokenize, freq, freq_source)
    res |= {"test": args.test, "beam": args.beam, "checkpoints": {n: Path(path).name for n, _, path in specs},
            "decode_seconds": seconds}
    atomic.write_text(args.out, json.dumps(res, indent=1, ensure_ascii=False) + "\n")
    base = specs[0][0]
    for metric in ("BLEU", "chrF"):
        for name, _, _ in specs[1:]:
            a, b = res["overall"][metric][base], res["overall"][metric][name]
            print(f"{metric}: {base} {a['score']} vs {name} {b['score']} (p = {b['p_value']}, "
                  f"{args.resamples} resamples)", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(cli.run(main))
