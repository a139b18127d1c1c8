"""``python -m nmt seal``: the command line of :mod:`nmt.models.seal`.

The old form ``python -m nmt.seal`` still works for one release.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from nmt.models.checkpoint import CheckpointError
from nmt.models.seal import reseal
from nmt.tools import cli


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
