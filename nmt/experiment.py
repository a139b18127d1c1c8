"""The old entry point ``python -m nmt.experiment``: kept for one release; use ``python -m nmt experiment``."""

import sys

if __name__ == "__main__":
    from nmt.__main__ import main

    print("note: `python -m nmt.experiment` is now `python -m nmt experiment`;"
          " the old form goes in the next release.", file=sys.stderr)
    sys.exit(main(["experiment", *sys.argv[1:]]))
