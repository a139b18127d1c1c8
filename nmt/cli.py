"""The shared entry point of the command-line tools (``python -m nmt.evaluate`` and the rest).

A problem with what the user gave (a damaged checkpoint, a missing or truncated corpus file, an
unusable input sentence) ends the tool with one plain line on stderr and exit status 2, not a
traceback; anything else is a bug and keeps its traceback.
"""

from __future__ import annotations

import sys
from collections.abc import Callable

from nmt.checkpoint import CheckpointError
from nmt.data import CorpusError
from nmt.decoding import InputError

USER_ERRORS = (CheckpointError, CorpusError, InputError, FileNotFoundError, IsADirectoryError, PermissionError)


def run(main: Callable[[], int | None]) -> int:
    """Run a tool's ``main``; user errors become ``error: …`` on stderr and exit status 2."""
    try:
        return int(main() or 0)
    except USER_ERRORS as err:
        print(f"error: {err}", file=sys.stderr)
        return 2
