"""Re-score the models of an ``nmt.tools.export`` results file with today's evaluation code.

    python -m scripts.rescore_results checkpoints/m30k-en-fr.results.json --data data/multi30k [--write]

For every model with a shipped checkpoint, every split and decoding recorded under
``models[NAME].scores`` it decodes again with the recorded settings (:func:`nmt.tools.evaluate.evaluate`)
and compares the quality fields (the three BLEU variants and the per-length buckets) with the file.
It prints every difference; with ``--write`` it puts the new values in, keeps the recorded decoding
times (they describe the machine of the original run), and appends what changed, with the command,
the date and the library versions, to the file's ``rescored`` list.
"""

from __future__ import annotations

import argparse
import datetime as dt
import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import sacrebleu
import sacremoses
import torch

from nmt.models import checkpoint
from nmt.text.data import read_parallel
from nmt.tools import cli
from nmt.tools.evaluate import evaluate

QUALITY = ("bleu", "bleu_lc", "bleu_tok_lc", "by_length")


def rescore_model(name: str, entry: dict[str, Any], data: str) -> list[dict[str, Any]]:
    """Decode every recorded split and setting of one model again; returns the changed fields.

    Changed fields are also written into ``entry`` (the caller decides whether to save it)."""
    lm = checkpoint.load(entry["checkpoint"])
    changes: list[dict[str, Any]] = []
    for split, by_dec in entry["scores"].items():
        src, ref = read_parallel(data, split, lm.src_tok.lang, lm.tgt_tok.lang)
        for dec, old in by_dec.items():
            new = evaluate(lm, src, ref, beam=old["beam"], length_norm=old["length_norm"],
                           context=old["context"], unk_replace=old["unk_replace"])
            for field in QUALITY:
                if new[field] != old[field]:
                    changes.append({"model": name, "split": split, "decoding": dec, "field": field,
                                    "old": old[field], "new": new[field]})
                    old[field] = new[field]
            print(f"{name:10s} {split:18s} {dec:7s} " + "  ".join(
                f"{k} {new[k]['score']:6.2f}" for k in QUALITY[:3]), file=sys.stderr)
    return changes


def provenance(argv: list[str]) -> dict[str, Any]:
    """When, how and with which libraries the file was re-scored."""
    commit = subprocess.run(["git", "rev-parse", "--short", "HEAD"], capture_output=True, text=True,
                            check=False).stdout.strip()
    return {
        "date": dt.datetime.now(dt.UTC).strftime("%Y-%m-%d %H:%M UTC"),
        "command": "python -m scripts.rescore_results " + " ".join(argv),
        "commit": commit, "torch": torch.__version__, "sacrebleu": sacrebleu.__version__,
        "sacremoses": getattr(sacremoses, "__version__", "?"),
        "kept": "decoding settings and recorded decoding times (seconds, sentences_per_s)",
    }


def summary(change: dict[str, Any]) -> str:
    """One line for a changed field: its overall score before and after."""
    def score(v: Any) -> str:
        """A BLEU entry's score, or the size of a bucket list."""
        return str(v["score"]) if isinstance(v, dict) else f"{len(v)} buckets"
    return (f"{change['model']} {change['split']} {change['decoding']} {change['field']}: "
            f"{score(change['old'])} -> {score(change['new'])}")


def main(argv: list[str] | None = None) -> int:
    """Parse the arguments, re-score, print the differences and write them if asked."""
    argv = sys.argv[1:] if argv is None else argv
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("results", help="an nmt.tools.export results JSON (models[NAME].scores)")
    p.add_argument("--data", required=True, help="the corpus folder the splits were scored on")
    p.add_argument("--models", nargs="*", help="only these models (default: all with a checkpoint)")
    p.add_argument("--reason", default="", help="why the file was re-scored (recorded with the values)")
    p.add_argument("--write", action="store_true", help="write the new values into the results file")
    args = p.parse_args(argv)
    path = Path(args.results)
    results = json.loads(path.read_text(encoding="utf-8"))
    changes: list[dict[str, Any]] = []
    for name, entry in results["models"].items():
        if entry.get("checkpoint") and "scores" in entry and (not args.models or name in args.models):
            changes += rescore_model(name, entry, args.data)
    for c in changes:
        print(summary(c))
    print(f"{len(changes)} field(s) differ", file=sys.stderr)
    if args.write and changes:
        record = {**provenance(argv), "reason": args.reason, "changed": [summary(c) for c in changes],
                  "old": [{k: c[k] for k in ("model", "split", "decoding", "field", "old")} for c in changes]}
        results.setdefault("rescored", []).append(record)
        path.write_text(json.dumps(results, indent=1, ensure_ascii=False), encoding="utf-8")
        print(f"wrote {path}", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(cli.run(main))
