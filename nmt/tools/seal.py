"""``python -m nmt seal``: seal checkpoint files written before the seal existed (:mod:`nmt.models.seal`).

The old form ``python -m nmt.seal`` still works for one release.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from nmt.models import checkpoint
from nmt.models.checkpoint import CheckpointError
from nmt.models.digests import shipped_names
from nmt.tools import cli


def reseal(path: Path) -> str:
    """Seal one checkpoint file in place (after checking its weights); what was done, in words."""
    ckpt = checkpoint.read_checkpoint(path, verify=False, allow_unsealed=True)
    if checkpoint.seal_of(ckpt) != "none":
        return f"{path.name}: already sealed ({checkpoint.seal_of(ckpt)}), left as it is"
    if path.name in shipped_names():  # an edited copy would pass for the shipped file wherever it went
        raise CheckpointError(f"{path.name} is named like a shipped checkpoint but is not that file "
                              "(nmt/models/shipped.sha256): it will not be sealed under that name")
    verified = checkpoint.check_weights(ckpt, path)
    checkpoint.atomic_save(ckpt, path)
    checkpoint.read_checkpoint(path)  # read back: sealed and intact
    how = "its weights matched their recorded digest" if verified else "it recorded no weights digest"
    return f"{path.name}: sealed ({how})"


def main(argv: list[str] | None = None) -> int:
    """Seal each named checkpoint once; a file that cannot be sealed is one ``error:`` line."""
    p = argparse.ArgumentParser(prog="python -m nmt seal", description="Seal checkpoints written before the "
                                "seal existed (once; sealed and shipped files are left as they are).")
    p.add_argument("files", nargs="+", type=Path, help="checkpoint files to seal in place")
    args = p.parse_args(argv)

    def go() -> int:
        status = 0
        for f in args.files:  # each file on its own: one that cannot be sealed does not stop the rest
            try:
                print(reseal(f))
            except CheckpointError as err:
                print(f"error: {err}", file=sys.stderr)
                status = 2
        return status

    return cli.run(go)


if __name__ == "__main__":
    sys.exit(cli.run(main))
