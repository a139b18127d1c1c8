"""Score an ensemble against its members on Multi30k test sets, greedy and beam 5.

    nice -n 10 python -m scripts.ensemble_results \\
        checkpoints/m30k-en-fr-rnnsearch.pt checkpoints/m30k-en-fr-luong-global-general.pt \\
        checkpoints/m30k-en-fr-luong-local-p.pt [--data DIR] [--splits test_2016_flickr test_2017_flickr] \\
        [--out bench/m30k-en-fr-ensemble.json]

The members are the checkpoint files given (add a newly trained model by naming it too). Every
member and the ensemble of all of them (:mod:`nmt.decoding.ensemble`: the members' log p averaged per step and
renormalised)
decode every split greedily and with beam 5 (length-normalised, as ``nmt.tools.export`` scores the
shipped models), scored by :func:`nmt.tools.evaluate.evaluate`: the same sacrebleu settings (cased
detokenised BLEU with its signature, lowercased, tokenised lowercased) as the ``scores`` of
``checkpoints/m30k-en-fr*.results.json``, so the numbers compare with those. Greedy runs come first,
and the file is rewritten after every run, so an interrupted run keeps what it finished. Decoding
times describe the machine of the run (recorded with the thread count). ``--data`` defaults to
``data/multi30k`` when it holds the splits, else the built-in ``evalsets/multi30k``.
"""

from __future__ import annotations

import argparse
import datetime as dt
import hashlib
import json
import platform
import sys
from pathlib import Path
from typing import Any

import torch

from nmt.decoding.ensemble import ensemble_of
from nmt.models import checkpoint
from nmt.models.checkpoint import LoadedModel
from nmt.models.registry import describe_model, short_name
from nmt.text.data import corpus_file, read_parallel
from nmt.tools import cli
from nmt.tools.evaluate import evaluate

ROOT = Path(__file__).resolve().parent.parent
SPLITS = ("test_2016_flickr", "test_2017_flickr")
DECODINGS = {"greedy": 1, "beam5": 5}
OUT = "bench/m30k-en-fr-ensemble.json"  # not checkpoints/*.results.json: pages read those as nmt.tools.export files


def default_data(splits: list[str]) -> Path:
    """``data/multi30k`` if it has every split's English side, else the built-in copies."""
    configured = ROOT / "data" / "multi30k"
    for split in splits:
        try:
            corpus_file(configured, split, "en")
        except (FileNotFoundError, ValueError, OSError):
            return ROOT / "evalsets" / "multi30k"
    return configured


def text_sha256(lines: list[str]) -> str:
    """SHA-256 of the sentences joined by newlines (independent of gzip's bytes)."""
    return hashlib.sha256("\n".join(lines).encode()).hexdigest()


def score(lm: LoadedModel, src: list[str], ref: list[str], beam: int) -> dict[str, Any]:
    """One decoding's scores, hypotheses and per-length buckets left out (as ``nmt.tools.export`` keeps them)."""
    res = evaluate(lm, src, ref, beam=beam)
    res.pop("hypotheses")
    res.pop("by_length")
    return res


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("members", nargs="+", help="checkpoint files sharing vocabularies (two or more)")
    p.add_argument("--data", default=None, help="folder with SPLIT.en[.gz] and SPLIT.fr[.gz]")
    p.add_argument("--splits", nargs="+", default=list(SPLITS))
    p.add_argument("--decodings", nargs="+", default=list(DECODINGS), choices=list(DECODINGS))
    p.add_argument("--out", default=OUT)
    p.add_argument("--only", nargs="+", default=None,
                   help="systems to (re)run (member file stems, 'ensemble'), merged into an existing --out")
    args = p.parse_args(argv)
    lms = [checkpoint.load(m) for m in args.members]
    names = [Path(m).stem for m in args.members]
    ens = ensemble_of(lms, [Path(m).name for m in args.members])
    systems = {**dict(zip(names, lms, strict=True)), "ensemble": ens}
    if args.only:
        systems = {k: v for k, v in systems.items() if k in args.only}
    data = Path(args.data) if args.data else default_data(args.splits)
    out: dict[str, Any] = {
        "corpus": "Multi30k task 1, en→fr",
        "ensemble": {"name": describe_model(ens.config.to_dict()).name,
                     "rule": "log p_ens(y_i | y_<i, x) = (1/M) Σ_m log p_m(y_i | y_<i, x) − log Z_i, renormalised "
                             "over the vocabulary (nmt/decoding/ensemble.py)",
                     "members": {n: {"checkpoint": str(m), "model": short_name(lm.config.to_dict())}
                                 for n, m, lm in zip(names, args.members, lms, strict=True)}},
        "data": {"dir": data.name if data.parent == ROOT / "evalsets" else str(args.data or "data/multi30k"),
                 "built_in": data.parent == ROOT / "evalsets"},
        "run": {"date": dt.datetime.now(dt.UTC).strftime("%Y-%m-%d %H:%M UTC"), "threads": torch.get_num_threads(),
                "machine": platform.machine(), "torch": torch.__version__,
                "command": "python -m scripts.ensemble_results " + " ".join(sys.argv[1:] if argv is None else argv)},
        "scores": {},
    }
    texts = {s: read_parallel(data, s, "en", "fr") for s in args.splits}
    out["data"]["sha256"] = {s: {"en": text_sha256(src), "fr": text_sha256(ref)} for s, (src, ref) in texts.items()}
    if args.only and Path(args.out).exists():  # keep the other systems' rows and the first run's record
        old = json.loads(Path(args.out).read_text(encoding="utf-8"))
        if old["data"]["sha256"] != out["data"]["sha256"]:
            raise ValueError(f"{args.out} was scored on other test sentences than {data}")
        rerun = {**out["run"], "systems": list(systems), "decodings": list(args.decodings)}
        out = {**old, "ensemble": out["ensemble"], "reruns": [*old.get("reruns", []), rerun]}
    for dec in args.decodings:
        for split, (src, ref) in texts.items():
            for name, lm in sorted(systems.items(), key=lambda kv: kv[0] != "ensemble"):
                res = score(lm, src, ref, DECODINGS[dec])
                out["scores"].setdefault(split, {}).setdefault(name, {})[dec] = res
                print(f"{split:18s} {dec:6s} {name:32s} BLEU {res['bleu']['score']:6.2f}  "
                      f"({res['seconds']:.0f} s)", flush=True)
                Path(args.out).write_text(json.dumps(out, indent=1, ensure_ascii=False) + "\n", encoding="utf-8")
    return 0


if __name__ == "__main__":
    sys.exit(cli.run(main))
