"""BLEU with each ``<unk>`` kept, copied, or replaced from the model's dictionary (issue 20, item 3).

    python bench/unk_dictionary.py --checkpoint checkpoints/m30k-en-fr-rnnsearch.pt \
        --data data/multi30k --split test_2016_flickr [--beam 5] [--limit N] --json bench/unk-dictionary.json

One decode of the split; its traces are then written out three ways by the trace's own rule
(:meth:`nmt.decoding.trace.DecodeTrace.unk_replacements`): ``<unk>`` kept, the most-attended source word copied
(an empty dictionary), and that word's translation from the checkpoint's dictionary
(``PREFIX.lexicon.tsv.xz`` beside it, :mod:`nmt.text.lexicon`), else copied. Each is scored with
:func:`nmt.text.metrics.all_bleu` (cased detokenised sacrebleu, as the results files). The JSON gets one
entry per checkpoint and split (a rerun replaces it), with how many ``<unk>`` each way replaced.
"""

from __future__ import annotations

import argparse
import dataclasses
import json
import sys
import time
from collections import Counter
from pathlib import Path
from typing import Any

import torch

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from bench.entries import upsert  # noqa: E402
from nmt.decoding.search import translate_traces  # noqa: E402
from nmt.decoding.trace import DecodeTrace  # noqa: E402
from nmt.models import checkpoint  # noqa: E402
from nmt.text.data import read_parallel  # noqa: E402
from nmt.text.metrics import all_bleu  # noqa: E402
from nmt.text.vocab import UNK  # noqa: E402
from nmt.tools import cli  # noqa: E402


def written(lm: checkpoint.LoadedModel, traces: list[DecodeTrace | None], way: str) -> tuple[list[str], Counter]:
    """Detokenised outputs with ``<unk>`` handled ``way`` (kept | copied | dictionary) and the labels used."""
    labels: Counter = Counter()
    out = []
    for t in traces:
        if t is None:
            out.append("")
            continue
        view = t if way == "dictionary" else dataclasses.replace(t, dictionary={})
        swaps = view.unk_replacements() if way != "kept" else None
        labels.update(r.label for r in (swaps or {}).values())
        out.append(lm.tgt_tok.detokenize(t.output_words(swaps)))
    return out, labels


def run(args: argparse.Namespace) -> dict[str, Any]:
    """Decode once, score three ways."""
    lm = checkpoint.load(args.checkpoint)
    src_lang, tgt_lang = lm.src_tok.lang, lm.tgt_tok.lang
    src, ref = read_parallel(Path(args.data), args.split, src_lang, tgt_lang, args.limit)
    t0 = time.perf_counter()
    traces = translate_traces(lm, src, beam=args.beam)
    seconds = time.perf_counter() - t0
    n_unk = sum(t.target_tokens.count(UNK) for t in traces if t is not None)
    entry: dict[str, Any] = {
        "checkpoint": Path(args.checkpoint).name, "data": Path(args.data).name, "split": args.split,
        "sentences": len(src),
        "decoding": "greedy" if args.beam <= 1 else f"beam{args.beam}",
        "dictionary": Path(lm.dictionary_file).name if lm.dictionary_file else None,
        "dictionary_words": len(lm.dictionary), "unk_written": n_unk,
        "lines_with_unk": sum(1 for t in traces if t is not None and UNK in t.target_tokens),
        "decode_seconds": round(seconds, 1), "threads": torch.get_num_threads(),
        "date": time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime()),
    }
    for way in ("kept", "copied", "dictionary"):
        hyps, labels = written(lm, traces, way)
        scores = all_bleu(hyps, ref, tgt_lang)
        entry[way] = {"bleu": scores["bleu"]["score"], "bleu_lc": scores["bleu_lc"]["score"], "replaced": dict(labels)}
        entry["signature"] = scores["bleu"]["signature"]
    return entry


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--checkpoint", required=True)
    p.add_argument("--data", required=True, help="folder with SPLIT.SRC[.gz] and SPLIT.TGT[.gz]")
    p.add_argument("--split", required=True)
    p.add_argument("--beam", type=int, default=1)
    p.add_argument("--limit", type=int, default=None)
    p.add_argument("--json", default=str(ROOT / "bench" / "unk-dictionary.json"))
    args = p.parse_args(argv)
    entry = run(args)
    upsert(args.json, entry, ("checkpoint", "data", "split", "decoding"))
    print(json.dumps({k: v for k, v in entry.items() if k in ("checkpoint", "split", "kept", "copied", "dictionary")}))
    return 0


if __name__ == "__main__":
    sys.exit(cli.refusing(main))  # a bad checkpoint or corpus: one line, exit status 2
