"""BLEU of a translation model with and without language-model fusion, written to a results JSON.

    nice -n 10 python scripts/fusion_bleu.py --tm checkpoints/europarl-en-fr-rnnsearch-50.pt \\
        --lm checkpoints/fusion/tatoeba-fr-lm.pt [--controller checkpoints/fusion/europarl-en-fr-deep-fusion.pt] \\
        --data ../shared/data/tatoeba-fr-en --out checkpoints/europarl-en-fr-fusion.results.json

Shallow fusion's β is chosen on the first ``--dev-limit`` sentences of ``dev`` (greedy, cased BLEU),
never on the test set: the best β > 0 (β = 0 is the TM itself; the dev's overall best is recorded
too). Then ``test`` is decoded by the TM alone, shallow fusion at that β and (with ``--controller``)
deep fusion, greedy and with a beam of ``--beam``, and scored exactly as :mod:`nmt.tools.evaluate` scores
(:func:`nmt.tools.evaluate.evaluate`: sacreBLEU cased, lowercased, tokenised).
``--only`` re-runs some systems and merges them into an existing results file (``--only none``: none,
only the file's description is rewritten).
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path
from typing import Any

import torch

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from nmt.decoding.fusion import fuse, load_controller, load_lm
from nmt.models import checkpoint
from nmt.text.data import read_parallel
from nmt.tools import cli
from nmt.tools.evaluate import evaluate
from nmt.training.lm_training import TATOEBA_CREDIT


def scored(res: dict[str, Any], keep: int = 5) -> dict[str, Any]:
    """The numbers of an :func:`evaluate` result, with its first ``keep`` hypotheses as a sample."""
    out = {k: v for k, v in res.items() if k != "hypotheses"}
    out["sample"] = res["hypotheses"][:keep]
    return out


def tune_beta(tm: Any, lm: Any, src: list[str], ref: list[str], betas: list[float]) -> dict[str, Any]:
    """Greedy cased BLEU of shallow fusion at each β on the dev slice, and the best β."""
    rows = []
    for beta in betas:
        res = evaluate(fuse(tm, lm, "shallow", beta), src, ref, beam=1)
        rows.append({"beta": beta, "bleu": res["bleu"]["score"], "seconds": res["seconds"]})
        print(json.dumps(rows[-1]), flush=True)
    best = max(rows, key=lambda r: (r["bleu"], -r["beta"]))
    positive = max((r for r in rows if r["beta"] > 0), key=lambda r: (r["bleu"], -r["beta"]), default=best)
    return {"sentences": len(src), "by_beta": rows, "best_beta": best["beta"], "best_positive_beta": positive["beta"]}


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--tm", type=Path, required=True)
    p.add_argument("--lm", type=Path, required=True)
    p.add_argument("--controller", type=Path, default=None)
    p.add_argument("--data", type=Path, required=True)
    p.add_argument("--out", type=Path, required=True)
    p.add_argument("--betas", type=float, nargs="+", default=[0.0, 0.1, 0.2, 0.3, 0.5])
    p.add_argument("--beta", type=float, default=None, help="skip tuning and use this β")
    p.add_argument("--dev-limit", type=int, default=500)
    p.add_argument("--beam", type=int, default=5)
    p.add_argument("--only", nargs="*", default=None, help="systems to (re)run: tm shallow deep")
    p.add_argument("--threads", type=int, default=1)
    args = p.parse_args(argv)
    torch.set_num_threads(args.threads)
    tm, lm = checkpoint.load(args.tm), load_lm(args.lm)
    results: dict[str, Any] = json.loads(args.out.read_text()) if args.only and args.out.exists() else {}
    if args.beta is None and "beta_tuning" not in results:
        dev_src, dev_ref = read_parallel(args.data, "dev", "en", "fr", args.dev_limit)
        results["beta_tuning"] = {"split": f"{args.data.name}/dev[:{args.dev_limit}]",
                                  **tune_beta(tm, lm, dev_src, dev_ref, args.betas)}
    # β = 0 is the TM itself; the test compares the TM with fusion at the dev's best β > 0
    beta = args.beta if args.beta is not None else results["beta_tuning"]["best_positive_beta"]
    systems = {"tm": fuse(tm, lm, "none"), "shallow": fuse(tm, lm, "shallow", beta)}
    if args.controller:
        systems["deep"] = fuse(tm, lm, "deep", controller=load_controller(args.controller)[0])
    src, ref = read_parallel(args.data, "test", "en", "fr")
    results.setdefault("systems", {})
    for name, model in systems.items():
        if args.only and name not in args.only:
            continue
        for beam in (1, args.beam):
            res = scored(evaluate(model, src, ref, beam=beam))
            results["systems"].setdefault(name, {})[f"beam{beam}"] = res
            print(json.dumps({"system": name, "beam": beam, "bleu": res["bleu"]["score"],
                              "seconds": res["seconds"]}), flush=True)
    lm_meta = load_lm(args.lm).meta
    results.update({
        "what": "BLEU of en→fr translation on Tatoeba test with and without fusion with a French language model "
                "(Gülçehre et al. 2015 §4: shallow log p_TM + β log p_LM, renormalised per step since the p shown "
                "must be probabilities; deep: a gated LM state in the TM's deep output)",
        "test": f"{args.data.name}/test", "tm": args.tm.name, "lm": args.lm.name,
        "lm_scores": lm_meta.get("scores"),
        "lm_training": {k: lm_meta.get(k) for k in ("train_tokens", "train_seconds", "updates", "device", "threads")},
        "controller": args.controller.name if args.controller else None,
        "controller_scores": load_controller(args.controller)[1].get("scores") if args.controller else None,
        "shallow_beta": beta, "device": "cpu", "threads": args.threads,
        "written": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()), "credit": TATOEBA_CREDIT,
    })
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(json.dumps(results, ensure_ascii=False, indent=1) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(cli.refusing(main))  # a bad checkpoint or corpus: one line, exit status 2
