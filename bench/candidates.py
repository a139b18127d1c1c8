"""BLEU with per-sentence candidate lists against the full softmax (Jean et al. 2015 §3.2; issue 20, item 2).

    python bench/candidates.py --checkpoint checkpoints/europarl-en-fr-rnnsearch-50.pt \
        --data data/tatoeba-fr-en --split test --beam 5 --k 0 100 1000 3000 --json bench/candidates.json

One decode over the whole vocabulary, then one per K: each sentence may write only the K most
frequent target words plus the K′ (``--k-translations``, the paper's 10) likeliest translations of
each of its source words from the checkpoint's dictionary (``PREFIX.lexicon.tsv.xz`` beside it). For
each: cased detokenised sacreBLEU (:func:`nmt.text.metrics.all_bleu`, ``<unk>`` kept), the mean list size,
how many of the reference's in-vocabulary words the list holds (the list's *coverage*, the paper's
reason for adding the dictionary's words), and how many written words came in only through a
source word. The JSON gets one entry per checkpoint, split and decoding (a rerun replaces it).
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path
from typing import Any

import torch

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from bench.entries import upsert  # noqa: E402
from nmt.decoding.search import translate_traces  # noqa: E402
from nmt.decoding.trace import DecodeTrace  # noqa: E402
from nmt.models import checkpoint  # noqa: E402
from nmt.models.candidates import CandidateSpec, build  # noqa: E402
from nmt.text.data import read_parallel  # noqa: E402
from nmt.text.metrics import all_bleu  # noqa: E402
from nmt.tools import cli  # noqa: E402


def coverage(lm: checkpoint.LoadedModel, src: list[str], ref: list[str], spec: CandidateSpec) -> dict[str, float]:
    """Mean list size and the share of reference words (those in the target vocabulary) in their list."""
    sizes, held, total = [], 0, 0
    for s, r in zip(src, ref, strict=True):
        ids, made = build(lm.src_tok.tokenize(s), lm.translations, lm.tgt_vocab, spec)
        sizes.append(made.size)
        listed = set(ids)
        words = [lm.tgt_vocab.stoi[w] for w in lm.tgt_tok.tokenize(r) if w in lm.tgt_vocab.stoi]
        held += sum(w in listed for w in words)
        total += len(words)
    return {"mean_size": round(sum(sizes) / len(sizes), 1), "reference_coverage": round(held / max(total, 1), 4)}


def scored(lm: checkpoint.LoadedModel, traces: list[DecodeTrace | None], ref: list[str]) -> dict[str, Any]:
    """BLEU of the traces (``<unk>`` kept) and how many written words came in through a source word."""
    hyps = ["" if t is None else t.translation for t in traces]
    scores = all_bleu(hyps, ref, lm.tgt_tok.lang)
    via = sum(bool(t.came_in_via(s.i)) for t in traces if t is not None for s in t.steps)
    return {"bleu": scores["bleu"]["score"], "bleu_lc": scores["bleu_lc"]["score"], "words_via_dictionary": via,
            "signature": scores["bleu"]["signature"]}


def run(args: argparse.Namespace) -> dict[str, Any]:
    """Decode with the full softmax and with each K; score each."""
    lm = checkpoint.load(args.checkpoint)
    src, ref = read_parallel(Path(args.data), args.split, lm.src_tok.lang, lm.tgt_tok.lang, args.limit)
    entry: dict[str, Any] = {
        "checkpoint": Path(args.checkpoint).name, "data": Path(args.data).name, "split": args.split,
        "sentences": len(src), "decoding": "greedy" if args.beam <= 1 else f"beam{args.beam}",
        "vocab_size": len(lm.tgt_vocab), "k_translations": args.k_translations,
        "dictionary": Path(lm.dictionary_file).name if lm.dictionary_file else None,
        "threads": torch.get_num_threads(), "date": time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime()),
        "runs": [],
    }
    for k in [None, *args.k]:
        spec = None if k is None else CandidateSpec(k, args.k_translations)
        t0 = time.perf_counter()
        traces = translate_traces(lm, src, beam=args.beam, candidates=spec)
        row: dict[str, Any] = {"k_frequent": k, "decode_seconds": round(time.perf_counter() - t0, 1)}
        row.update(scored(lm, traces, ref))
        row.update(coverage(lm, src, ref, spec or CandidateSpec(len(lm.tgt_vocab), 0)))
        entry["signature"] = row.pop("signature")
        entry["runs"].append(row)
        print(json.dumps(row), file=sys.stderr)
    return entry


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--checkpoint", required=True)
    p.add_argument("--data", required=True, help="folder with SPLIT.SRC[.gz] and SPLIT.TGT[.gz]")
    p.add_argument("--split", required=True)
    p.add_argument("--beam", type=int, default=1)
    p.add_argument("--k", type=int, nargs="+", default=[0, 100, 1000, 3000], help="the K values to try")
    p.add_argument("--k-translations", type=int, default=10, help="K′ (default: 10, as in the paper)")
    p.add_argument("--limit", type=int, default=None)
    p.add_argument("--json", default=str(ROOT / "bench" / "candidates.json"))
    args = p.parse_args(argv)
    entry = run(args)
    upsert(args.json, entry, ("checkpoint", "data", "split", "decoding"))
    return 0


if __name__ == "__main__":
    sys.exit(cli.refusing(main))  # a bad checkpoint or corpus: one line, exit status 2
