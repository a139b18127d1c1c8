"""The old entry point ``python -m nmt.export``: kept for one release; use ``python -m nmt export``."""

import sys

if __name__ == "__main__":
    from nmt.__main__ import main

    print("note: `python -m nmt.export` is now `python -m nmt export`;"
          " the old form goes in the next release.", file=sys.stderr)
    sys.exit(main(["export", *sys.argv[1:]]))
