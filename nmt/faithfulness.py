"""The old entry point ``python -m nmt.faithfulness``: kept for one release; use ``python -m nmt faithfulness``."""

import sys

if __name__ == "__main__":
    from nmt.__main__ import main

    print("note: `python -m nmt.faithfulness` is now `python -m nmt faithfulness`;"
          " the old form goes in the next release.", file=sys.stderr)
    sys.exit(main(["faithfulness", *sys.argv[1:]]))
