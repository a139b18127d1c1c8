"""Train the target-side GRU language model of :mod:`nmt.models.lm` on monolingual text, in a translation
model's target vocabulary, and write a small checkpoint for fusion (:mod:`nmt.decoding.fusion`).

    nice -n 10 python -m scripts.train_lm --tm checkpoints/europarl-en-fr-rnnsearch-50.pt \\
        --data ../shared/data/tatoeba-fr-en --split train --valid dev \\
        --out checkpoints/fusion/tatoeba-fr-lm.pt --minutes 35 --threads 1

The LM trains in the one training loop (:mod:`nmt.training.loop`) as a task (:mod:`nmt.training.lm_training`: batches,
loss over the words the text holds, checkpoint). Training stops after ``--epochs``, ``--minutes`` of
training or ``--max-updates``, whichever comes first, or at Ctrl-C (the update finishes and is
saved); every ``--save-minutes`` and at the end the checkpoint (fp16, embedding int8 per row) is
written with its config, vocabulary reference, data hash, device, time and held-out perplexity.
With ``--state FILE`` the resumable state (fp32 weights, optimiser, RNGs, position) is written
there too, and ``--resume`` continues from it.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from nmt.tools import cli
from nmt.training.lm_training import (  # noqa: F401  (the names tests and scripts import from here)
    TATOEBA_CREDIT,
    lm_batches,
    lm_checkpoint,
    perplexity,
    restricted_loss,
    shortlist,
    train_lm,
    vocab_digest,
)


def parse(argv: list[str] | None) -> argparse.Namespace:
    """The command line's options."""
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--tm", type=Path, required=True, help="translation model whose target vocabulary the LM reads")
    p.add_argument("--data", type=Path, required=True)
    p.add_argument("--split", default="train")
    p.add_argument("--valid", default="dev")
    p.add_argument("--out", type=Path, required=True)
    p.add_argument("--emb-dim", type=int, default=256)
    p.add_argument("--hidden-dim", type=int, default=512)
    p.add_argument("--dropout", type=float, default=0.1)
    p.add_argument("--batch-size", type=int, default=64)
    p.add_argument("--lr", type=float, default=2e-3)
    p.add_argument("--epochs", type=int, default=3)
    p.add_argument("--minutes", type=float, default=40.0, help="training time budget")
    p.add_argument("--max-updates", type=int, default=0, help="stop after this many updates (0: no limit)")
    p.add_argument("--save-minutes", type=float, default=5.0)
    p.add_argument("--max-len", type=int, default=50)
    p.add_argument("--limit", type=int, default=None, help="first N training sentences only")
    p.add_argument("--threads", type=int, default=1)
    p.add_argument("--seed", type=int, default=1234)
    p.add_argument("--state", type=Path, default=None, help="file for the resumable training state")
    p.add_argument("--resume", action="store_true", help="continue from --state (same data, model and recipe)")
    p.add_argument("--progress", action=argparse.BooleanOptionalAction, default=True, help="a progress bar")
    return p.parse_args(argv)


def main(argv: list[str] | None = None) -> int:
    """Train as the options say and write the checkpoint."""
    train_lm(parse(argv))
    return 0


if __name__ == "__main__":
    sys.exit(cli.refusing(main))  # a bad checkpoint or corpus: one line, exit status 2
