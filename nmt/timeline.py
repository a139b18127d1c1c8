"""The old entry point ``python -m nmt.timeline``: kept for one release; use ``python -m nmt timeline``."""

import sys

if __name__ == "__main__":
    from nmt.__main__ import main

    print("note: `python -m nmt.timeline` is now `python -m nmt timeline`;"
          " the old form goes in the next release.", file=sys.stderr)
    sys.exit(main(["timeline", *sys.argv[1:]]))
