"""A command-line tool run in the test process, as ``python -m nmt SUBCOMMAND …`` would run it.

Starting a fresh interpreter costs seconds on a loaded machine (importing torch, pandas …), so the
tests call ``nmt.__main__.main`` (what ``python -m nmt`` runs) here instead, with stdin given as text
and stdout / stderr captured. What a tool changes for its own process is put back after each call:
torch's thread count, the environment (``--allow-unsealed`` sets ``RNNSEARCH_ALLOW_UNSEALED``),
``sys.argv``, the root logger's handlers and level, and the working directory. One real
``python -m nmt`` start stays in tests/test_cli.py (the smoke test of the entry point itself).
"""

from __future__ import annotations

import io
import logging
import os
import sys
from collections.abc import Callable, Sequence
from dataclasses import dataclass

import pytest
import torch


@dataclass(frozen=True)
class Ran:
    """What a tool run gave: its exit status and what it wrote (as ``subprocess.run`` reports it)."""

    returncode: int
    stdout: str
    stderr: str


def run_main(main: Callable[[list[str]], int | None], argv: Sequence[str], stdin: str = "") -> Ran:
    """``main(argv)`` with ``stdin`` as standard input; its exit status (a returned int or a
    ``SystemExit``'s code, as the interpreter would give it) and its output. Process-wide state the
    tool touches is restored afterwards (see the module docstring)."""
    out, err = io.StringIO(), io.StringIO()
    root = logging.getLogger()
    handlers, level, threads, cwd = list(root.handlers), root.level, torch.get_num_threads(), os.getcwd()
    with pytest.MonkeyPatch.context() as mp:
        saved_env = dict(os.environ)
        mp.setattr(sys, "argv", [sys.argv[0], *argv])
        mp.setattr(sys, "stdin", io.StringIO(stdin))
        mp.setattr(sys, "stdout", out)
        mp.setattr(sys, "stderr", err)
        root.handlers = []  # so that the tool's logging.basicConfig writes to this run's stderr
        try:
            code = main(list(argv))
        except SystemExit as stop:
            code = stop.code if isinstance(stop.code, int) else (0 if stop.code is None else 1)
            if stop.code is not None and not isinstance(stop.code, int):
                err.write(f"{stop.code}\n")
        finally:
            root.handlers, root.level = handlers, level
            torch.set_num_threads(threads)
            os.chdir(cwd)
            for name in set(os.environ) - set(saved_env):
                del os.environ[name]
            os.environ.update({k: v for k, v in saved_env.items() if os.environ.get(k) != v})
    return Ran(int(code or 0), out.getvalue(), err.getvalue())


def run_nmt(argv: Sequence[str], stdin: str = "") -> Ran:
    """``python -m nmt ARGV`` in this process (see :func:`run_main`)."""
    from nmt.__main__ import main

    return run_main(main, argv, stdin)
