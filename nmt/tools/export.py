"""Score a finished training run and ship it as an fp16 checkpoint with its scores inside.

    python -m nmt export --run runs/m30k-en-fr-rnnsearch --name rnnsearch \
        --data data/multi30k --splits val test_2016_flickr test_2017_flickr test_2017_mscoco \
        --out checkpoints/m30k-en-fr-rnnsearch.pt --results checkpoints/m30k-en-fr.results.json

For every split it decodes greedily and with beam 5, and records the three BLEU variants of
:mod:`nmt.text.metrics`, BLEU by source-length bucket and decoding speed. The scores go into the
checkpoint's ``meta["scores"]`` and under ``models[NAME]`` of the results JSON (other models in
that file are kept). A checkpoint is only replaced by one that scores better on the first split
(``--force`` overrides): every replaced checkpoint stays in git history.
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path
from typing import Any

import torch

from nmt.models.checkpoint import (
    LoadedModel,
    atomic_save,
    loaded_from,
    make_checkpoint,
    model_from_checkpoint,
    read_checkpoint,
    truecasers,
)
from nmt.models.device import pick_device
from nmt.models.quantize import all_matrices
from nmt.text import atomic
from nmt.text.data import read_parallel
from nmt.tools import cli
from nmt.tools.evaluate import evaluate


def score_splits(lm: LoadedModel, data: str, splits: list[str], beams: list[int]) -> dict[str, Any]:
    """Scores per split and decoding setting, hypotheses left out."""
    scores: dict[str, Any] = {}
    for split in splits:
        src, ref = read_parallel(data, split, lm.src_tok.lang, lm.tgt_tok.lang)
        scores[split] = {}
        for beam in beams:
            res = evaluate(lm, src, ref, beam=beam)
            res.pop("hypotheses")
            key = "greedy" if beam == 1 else f"beam{beam}"
            scores[split][key] = res
            print(f"{split:18s} {key:7s} BLEU {res['bleu']['score']:6.2f}  lc {res['bleu_lc']['score']:6.2f}  "
                  f"tok-lc {res['bleu_tok_lc']['score']:6.2f}  ({res['sentences_per_s']} sent/s)", file=sys.stderr)
    return scores


def quantise_scored(lm: LoadedModel, args: argparse.Namespace) -> dict[str, Any]:
    """Put the int8 matrices into ``lm`` (dequantised as loading does), after scoring its fp16 weights on
    the first split; returns the matrices and each decoding's BLEU before and after, for the results file."""
    names = set(all_matrices(lm.model.state_dict()))
    unknown = sorted(set(args.int8_also) - names)
    if unknown:
        raise SystemExit(f"--int8-also {' '.join(unknown)}: not a 2-D weight matrix of this model")
    first = args.splits[0]
    fp16 = score_splits(lm, args.data, [first], args.beams)[first]
    stored = make_checkpoint(lm.model, lm.src_vocab, lm.tgt_vocab, "", "", {}, half=True, int8=True,
                             int8_also=args.int8_also)
    lm.model.load_state_dict(model_from_checkpoint(stored).state_dict())
    return {"matrices": stored["meta"]["storage"]["int8"], "split": first,
            "bleu_fp16": {k: v["bleu"]["score"] for k, v in fp16.items()}}


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--run", required=True, help="training run directory (reads best.pt and metrics.jsonl)")
    p.add_argument("--name", required=True, help="model name in the results JSON")
    p.add_argument("--data", required=True)
    p.add_argument("--splits", nargs="+", required=True)
    p.add_argument("--beams", nargs="+", type=int, default=[1, 5])
    p.add_argument("--out", required=True)
    cli.add_unsealed_flag(p)
    p.add_argument("--results", required=True)
    p.add_argument("--force", action="store_true", help="replace even if the old checkpoint scores better")
    cli.device_option(p)
    p.add_argument("--int8", action="store_true",
                   help="store the embedding and output matrices as int8 (nmt.models.quantize), scored as stored; the "
                        "fp16 weights are scored on the first split too and the change is recorded")
    p.add_argument("--int8-also", nargs="+", default=[], metavar="NAME",
                   help="with --int8: more 2-D matrices (state-dict names) stored as int8")
    args = p.parse_args(argv)
    if args.int8_also and not args.int8:
        p.error("--int8-also needs --int8")

    run = Path(args.run)
    ckpt = read_checkpoint(run / "best.pt")
    lm = loaded_from(ckpt, pick_device(args.device))
    # Score the weights as shipped (fp16), not the fp32 originals; saving them as fp16 again is exact.
    lm.model.load_state_dict({k: v.half().float() if v.is_floating_point() else v
                              for k, v in lm.model.state_dict().items()})
    int8_record = quantise_scored(lm, args) if args.int8 else None
    t0 = time.time()
    scores = score_splits(lm, args.data, args.splits, args.beams)
    if int8_record:
        int8_record["bleu_int8"] = {k: v["bleu"]["score"] for k, v in scores[int8_record["split"]].items()}
        int8_record["bleu_change"] = {k: round(int8_record["bleu_int8"][k] - b, 2)
                                      for k, b in int8_record["bleu_fp16"].items()}
    first, best_key = args.splits[0], "beam5" if 5 in args.beams else "greedy"
    new_score = scores[first][best_key]["bleu"]["score"]
    out = Path(args.out)
    if out.exists() and not args.force:
        old = read_checkpoint(out)["meta"].get("scores", {}).get(first, {}).get(best_key, {})
        old_score = old.get("bleu", {}).get("score", -1.0)
        if old_score >= new_score:
            print(f"kept {out}: it scores {old_score} ≥ {new_score} on {first}", file=sys.stderr)
            return 1
    meta = dict(ckpt["meta"])
    meta["torch"] = str(meta.get("torch", torch.__version__))
    meta.update({"scores": scores, "exported_from": str(run),
                 "weights": ("fp16, embedding and output matrices int8" + "".join(f", {n} int8" for n in args.int8_also)
                             if args.int8 else "fp16")})
    metrics_file = run / "metrics.jsonl"
    truecase = {side: tc for side, tc in truecasers(ckpt).items() if tc is not None}  # kept for truecased runs
    atomic_save(make_checkpoint(lm.model, lm.src_vocab, lm.tgt_vocab, ckpt["src_lang"], ckpt["tgt_lang"], meta,
                                half=True, truecase=truecase or None, int8=args.int8, int8_also=args.int8_also), out)

    results_path = Path(args.results)
    results = json.loads(results_path.read_text()) if results_path.exists() else {"models": {}}
    results["models"][args.name] = {
        "checkpoint": str(out), "config": ckpt["config"],
        "training": {k: meta.get(k) for k in ("device", "train_seconds", "train_tokens", "train_tokens_per_s",
                                              "updates", "epochs", "best_valid_bleu", "train_data", "segments")},
        "args": meta.get("args"), "scores": scores, **({"int8": int8_record} if int8_record else {}),
        "curve": [json.loads(line) for line in metrics_file.read_text().splitlines()
                  if '"valid"' in line] if metrics_file.exists() else [],
    }
    atomic.write_text(results_path, json.dumps(results, indent=1, ensure_ascii=False))
    print(f"wrote {out} ({out.stat().st_size / 1e6:.1f} MB) and {results_path} in {time.time() - t0:.0f}s",
          file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(cli.run(main))
