"""Convert a checkpoint to int8 storage and report its size and how its greedy translations change.

    python scripts/int8_checkpoint.py checkpoints/m30k-en-fr-luong-global-general.pt /tmp/luong-int8.pt \\
        --data ../shared/data/multi30k --split test_2016_flickr [--matrices all] [--limit 200]

``--matrices vocab`` (default) stores the embedding and output matrices as int8 with one fp32 scale
per row (:mod:`nmt.models.quantize`), ``--also NAME…`` more of them; ``all`` every 2-D weight matrix.
Both checkpoints decode the split greedily; the JSON report (stdout) gives both file sizes, cased
BLEU of each (sacreBLEU, as :mod:`nmt.text.metrics`), and how many greedy outputs differ, with the
first few that do.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from nmt.decoding.search import translate
from nmt.models import checkpoint, quantize
from nmt.text.data import read_parallel
from nmt.text.metrics import corpus_bleu
from nmt.tools import cli


def convert(src: Path, dst: Path, matrices: str, also: list[str]) -> dict[str, Any]:
    """Write the int8 copy of ``src`` to ``dst``; returns what was converted and the sizes."""
    ckpt = checkpoint.read_checkpoint(src)
    if matrices == "all":
        names = quantize.all_matrices(ckpt["model"])
    else:
        names = quantize.vocabulary_matrices(ckpt["model"], ckpt["config"])
        for name in also:
            if name not in quantize.all_matrices(ckpt["model"]):
                raise SystemExit(f"--also {name}: not a 2-D weight matrix of {src.name}")
        names = sorted(set(names) | set(also))
    out = checkpoint.int8_storage(ckpt, names)
    out["meta"]["storage"]["converted_from"] = {"file": src.name, "weights_sha256": ckpt.get("weights_sha256")}
    checkpoint.atomic_save(out, dst)
    return {"int8_matrices": out["meta"]["storage"]["int8"], "bytes_before": os.path.getsize(src),
            "bytes_after": os.path.getsize(dst)}


def compare(src: Path, dst: Path, data: str, split: str, limit: int | None) -> dict[str, Any]:
    """Greedy translations of both checkpoints on a split: BLEU of each and the outputs that differ."""
    before, after = checkpoint.load(src), checkpoint.load(dst)
    sources, refs = read_parallel(data, split, before.src_tok.lang, before.tgt_tok.lang, limit)
    hyp_before, hyp_after = translate(before, sources), translate(after, sources)
    changed = [i for i, (a, b) in enumerate(zip(hyp_before, hyp_after, strict=True)) if a != b]
    return {
        "split": split, "sentences": len(sources),
        "bleu_before": round(corpus_bleu(hyp_before, refs)["score"], 2),
        "bleu_after": round(corpus_bleu(hyp_after, refs)["score"], 2),
        "greedy_outputs_changed": len(changed),
        "examples": [{"source": sources[i], "before": hyp_before[i], "after": hyp_after[i]} for i in changed[:5]],
    }


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("checkpoint", type=Path)
    p.add_argument("out", type=Path)
    p.add_argument("--matrices", choices=("vocab", "all"), default="vocab")
    p.add_argument("--also", nargs="*", default=[], help="more matrices (state-dict names) to store as int8")
    p.add_argument("--data", help="corpus folder with SPLIT.{src,tgt}[.gz|.xz]; no comparison without it")
    p.add_argument("--split", default="test")
    p.add_argument("--limit", type=int, default=None, help="first N sentence pairs only")
    args = p.parse_args(argv)
    report: dict[str, Any] = {"checkpoint": args.checkpoint.name, "out": args.out.name,
                              **convert(args.checkpoint, args.out, args.matrices, args.also)}
    report["mb_before"] = round(report["bytes_before"] / 1e6, 2)
    report["mb_after"] = round(report["bytes_after"] / 1e6, 2)
    if args.data:
        report.update(compare(args.checkpoint, args.out, args.data, args.split, args.limit))
    print(json.dumps(report, indent=1, ensure_ascii=False))
    return 0


if __name__ == "__main__":
    sys.exit(cli.refusing(main))  # a bad checkpoint or corpus: one line, exit status 2
