"""Check a GPU-trained everyday model against the README beside it, then write its results file (issue 34).

    python scripts/everyday_results.py --checkpoint checkpoints/europarl-tatoeba-en-fr-rnnsearch-30k.pt \\
        --readme ../shared/models/README.md --experiment runs/eval30k-greedy.json runs/eval30k-b5.json \\
        --aer runs/aer30k-test.json --aer-trial runs/aer30k-trial.json --prep .gpu-data-tc/summary.json \\
        --out checkpoints/europarl-tatoeba-en-fr.results.json

First the check, which refuses the file (exit 2, one line) on any mismatch: its SHA-256 and the metadata
the README states (device, the data's SHA-256 prefix, the updates exported, its segments: one, from
scratch). Then the results: ``nmt.tools.experiment`` runs merged per model (greedy ``tests``, ``tests_beam5``),
the Hansards AER of ``nmt.explanation.align --json`` (test, and τ chosen on the trial set), what was checked
(``provenance``), the rebuilt training data's summary (``scripts/prep_large_vocab.py``: its SHA-256 must be
the checkpoint's), and a seeded ``sample`` of built-in Tatoeba test sentences with the greedy and beam-5
translations, which ``tests/test_everyday_model.py`` decodes again.
"""

from __future__ import annotations

import argparse
import json
import random
import re
import sys
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from nmt.decoding.search import translate
from nmt.models import checkpoint
from nmt.text.data import files_sha256, read_parallel
from nmt.tools import cli
from nmt.training.setup import training_data_sha256
from scripts.large_vocab_results import merge_experiments

SAMPLE_SEED, SAMPLE_SIZE = 34, 40
SAMPLE_DATA, SAMPLE_SPLIT = "evalsets/tatoeba-fr-en", "test"  # built in: the test runs on a fresh clone


class Refused(ValueError):
    """The model file does not match what the README beside it says."""


def check(path: Path, readme: str) -> dict[str, Any]:
    """What the README states of the file, each checked against it; raises :class:`Refused`."""
    digest = files_sha256([path])
    stated = re.search(r"sha256 `([0-9a-f]{64})`", readme)
    if stated is None or stated[1] != digest:
        raise Refused(f"{path.name}: its SHA-256 {digest[:12]}… is not the one its README states")
    meta = checkpoint.read_checkpoint(path)["meta"]
    data = meta.get("train_data", {}).get("sha256", "")
    segments = meta.get("segments") or []
    checks = {
        "device": (str(meta.get("device")), "H200" in str(meta.get("device")) and "H200" in readme),
        "train_data_sha256": (data, bool(data) and f"`{data[:8]}" in readme),
        "updates": (meta.get("updates"), f"update {meta.get('updates'):,}" in readme),
        "segments": (segments, len(segments) == 1 and segments[0].get("from") is None and "from scratch" in readme),
    }
    bad = [k for k, (_, ok) in checks.items() if not ok]
    if bad:
        raise Refused(f"{path.name} does not match its README: {', '.join(bad)}")
    return {"file_sha256": digest, **{k: v for k, (v, _) in checks.items()}}


def sample(lm: checkpoint.LoadedModel) -> dict[str, Any]:
    """A seeded sample of built-in Tatoeba test sentences and what the model writes for them."""
    src, _ = read_parallel(SAMPLE_DATA, SAMPLE_SPLIT, "en", "fr")
    rows = sorted(random.Random(SAMPLE_SEED).sample(range(len(src)), SAMPLE_SIZE))
    sources = [src[k] for k in rows]
    return {"data": SAMPLE_DATA, "split": SAMPLE_SPLIT, "seed": SAMPLE_SEED, "rows": rows,
            "greedy": translate(lm, sources), "beam5": translate(lm, sources, beam=5)}


def build(args: argparse.Namespace) -> dict[str, Any]:
    provenance = check(args.checkpoint, args.readme.read_text(encoding="utf-8"))
    lm = checkpoint.load(args.checkpoint)
    prep = json.loads(args.prep.read_text())
    rebuilt = training_data_sha256(argparse.Namespace(data=args.prep.parent, train_split="train.tc",
                                                      src="en", tgt="fr"))
    if rebuilt != provenance["train_data_sha256"]:
        raise Refused(f"the rebuilt training data's SHA-256 {rebuilt[:12]}… is not the checkpoint's")
    models = merge_experiments(args.experiment)
    aer = {k: v for k, v in json.loads(args.aer.read_text()).items() if k != "links"}
    trial = json.loads(args.aer_trial.read_text())
    tau = max(trial["thresholded"], key=lambda t: -trial["thresholded"][t]["aer"])
    for m in models.values():
        m["args"] = {k: lm.meta["args"][k] for k in ("batch_size", "max_len", "sampled_vocab", "lr", "optimizer")}
        m["training"]["segments"] = lm.meta.get("segments")
        m["data"] = {"tatoeba_copies": prep["tatoeba_copies"], "pairs_kept": prep["pairs_kept"],
                     "rebuilt_sha256": rebuilt}  # scripts/prep_large_vocab.py run again here
        m["hansards_aer"] = {**aer, "argmax": {k: aer[k] for k in ("aer", "precision", "recall")},
                             "tau_from_trial": float(tau), "trial_argmax_aer": trial["aer"]}
    return {"what": "the everyday model (issue 34): nmt.tools.experiment greedy and beam 5, Hansards AER, provenance",
            "provenance": {**provenance, "checked_against": str(args.readme)},
            "models": models, "sample": sample(lm)}


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--checkpoint", type=Path, required=True)
    p.add_argument("--readme", type=Path, required=True, help="the README beside the model as it was handed over")
    p.add_argument("--experiment", type=Path, nargs="+", required=True)
    p.add_argument("--aer", type=Path, required=True)
    p.add_argument("--aer-trial", type=Path, required=True)
    p.add_argument("--prep", type=Path, required=True, help="summary.json of the rebuilt training data")
    p.add_argument("--out", type=Path, required=True)
    args = p.parse_args(argv)
    try:
        out = build(args)
    except Refused as err:
        print(f"refused: {err}", file=sys.stderr)
        return 2
    args.out.write_text(json.dumps(out, indent=1, ensure_ascii=False) + "\n", encoding="utf-8")
    return 0


if __name__ == "__main__":
    sys.exit(cli.run(main))
