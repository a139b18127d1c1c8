"""The old entry point ``python -m nmt.align``: kept for one release; use ``python -m nmt align``."""

import sys

if __name__ == "__main__":
    from nmt.__main__ import main

    print("note: `python -m nmt.align` is now `python -m nmt align`;"
          " the old form goes in the next release.", file=sys.stderr)
    sys.exit(main(["align", *sys.argv[1:]]))
