"""The old entry point ``python -m nmt.seal``: kept for one release; use ``python -m nmt seal``."""

import sys

if __name__ == "__main__":
    from nmt.__main__ import main

    print("note: `python -m nmt.seal` is now `python -m nmt seal`;"
          " the old form goes in the next release.", file=sys.stderr)
    sys.exit(main(["seal", *sys.argv[1:]]))
