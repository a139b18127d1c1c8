"""The old entry point ``python -m nmt.evaluate``: kept for one release; use ``python -m nmt evaluate``."""

import sys

if __name__ == "__main__":
    from nmt.__main__ import main

    print("note: `python -m nmt.evaluate` is now `python -m nmt evaluate`;"
          " the old form goes in the next release.", file=sys.stderr)
    sys.exit(main(["evaluate", *sys.argv[1:]]))
