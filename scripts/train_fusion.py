"""Train deep fusion's controller (Gülçehre et al. 2015 §4.2) on parallel text, TM and LM frozen.

    nice -n 10 python -m scripts.train_fusion --tm checkpoints/europarl-en-fr-rnnsearch-50.pt \\
        --lm checkpoints/fusion/tatoeba-fr-lm.pt --data ../shared/data/tatoeba-fr-en \\
        --out checkpoints/fusion/europarl-en-fr-deep-fusion.pt --minutes 15 --threads 1

Only the gate (v_g, b_g) and W_f of :class:`nmt.decoding.fusion.DeepFusionController` learn, in the one
training loop (:mod:`nmt.training.loop`) as a task (:mod:`nmt.training.fusion_training`: batches, the fused loss, the
checkpoint). Training stops after ``--minutes`` of training or ``--max-updates``, or at Ctrl-C. The
checkpoint is small (the controller only) and records which TM and LM it belongs to, the data hash,
device, time, and the held-out loss per token before (= the TM alone, W_f = 0) and after. With
``--state FILE`` the resumable state is written there (every ``--save-minutes`` and when stopping),
and ``--resume`` continues from it.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from nmt.tools import cli
from nmt.training.fusion_training import fused_loss, held_out, train_fusion  # noqa: F401  (imported from here by tests)


def parse(argv: list[str] | None) -> argparse.Namespace:
    """The command line's options."""
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--tm", type=Path, required=True)
    p.add_argument("--lm", type=Path, required=True)
    p.add_argument("--data", type=Path, required=True)
    p.add_argument("--out", type=Path, required=True)
    p.add_argument("--train-pairs", type=int, default=40000)
    p.add_argument("--valid-pairs", type=int, default=300)
    p.add_argument("--batch-size", type=int, default=64)
    p.add_argument("--lr", type=float, default=1e-3)
    p.add_argument("--minutes", type=float, default=15.0)
    p.add_argument("--threads", type=int, default=1)
    p.add_argument("--seed", type=int, default=1234)
    p.add_argument("--max-updates", type=int, default=0, help="stop after this many updates (0: no limit)")
    p.add_argument("--state", type=Path, default=None, help="file for the resumable training state")
    p.add_argument("--save-minutes", type=float, default=5.0, help="minutes between writes of --state")
    p.add_argument("--resume", action="store_true", help="continue from --state (same models, data and recipe)")
    p.add_argument("--progress", action=argparse.BooleanOptionalAction, default=True, help="a progress bar")
    return p.parse_args(argv)


def main(argv: list[str] | None = None) -> int:
    """Train as the options say and write the controller's checkpoint."""
    train_fusion(parse(argv))
    return 0


if __name__ == "__main__":
    sys.exit(cli.refusing(main))  # a bad checkpoint or corpus: one line, exit status 2
