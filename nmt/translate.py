"""The old entry point ``python -m nmt.translate``: kept for one release; use ``python -m nmt translate``."""

import sys

if __name__ == "__main__":
    from nmt.__main__ import main

    print("note: `python -m nmt.translate` is now `python -m nmt translate`;"
          " the old form goes in the next release.", file=sys.stderr)
    sys.exit(main(["translate", *sys.argv[1:]]))
