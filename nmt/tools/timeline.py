"""``python -m nmt timeline``: the command line of :mod:`nmt.training.timeline`.

The old form ``python -m nmt.timeline`` still works for one release.
"""

from __future__ import annotations

import sys
from pathlib import Path

from nmt.tools import cli
from nmt.training.timeline import MAX_BYTES, read, summary, write


def main(argv: list[str] | None = None) -> int:
    """``python -m nmt timeline RUN/timeline.npz [--ship checkpoints/NAME.timeline.npz] [--note TEXT]``:
    print a timeline's entries; with ``--ship``, copy it (with ``--note`` as its note) for the page."""
    import argparse

    p = argparse.ArgumentParser(description=main.__doc__)
    p.add_argument("timeline")
    p.add_argument("--ship", help="write a copy here (NAME-rnnsearch… / NAME-rnnencdec….timeline.npz)")
    p.add_argument("--note", help="replace the note the page shows under the run")
    p.add_argument("--up-to", type=int, help="keep the entries up to this update (two models cut alike)")
    args = p.parse_args(argv)
    tl = read(args.timeline)
    if args.up_to is not None:
        tl.drop(lambda e: e["update"] > args.up_to)
    print(summary(tl))
    if args.ship:
        if args.note is not None:
            tl.header["note"] = args.note
        write(tl, args.ship)
        size = Path(args.ship).stat().st_size
        print(f"wrote {args.ship} ({size / 1e6:.2f} MB)")
        if size > MAX_BYTES:
            print(f"warning: over the {MAX_BYTES / 2**20:.0f} MiB budget of a run's timeline")
    return 0


if __name__ == "__main__":
    sys.exit(cli.run(main))
