"""The old entry point ``python -m nmt.paired``: kept for one release; use ``python -m nmt paired``."""

import sys

if __name__ == "__main__":
    from nmt.__main__ import main

    print("note: `python -m nmt.paired` is now `python -m nmt paired`;"
          " the old form goes in the next release.", file=sys.stderr)
    sys.exit(main(["paired", *sys.argv[1:]]))
