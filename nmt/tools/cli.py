"""The shared entry point of the command-line tools (``python -m nmt evaluate`` and the rest).

A problem with what the user gave (a damaged checkpoint, a missing or truncated corpus file, an
unusable input sentence) ends the tool with one plain line on stderr and exit status 2, not a
traceback; anything else is a bug and keeps its traceback.

Threads: each tool runs torch on ``$RNNSEARCH_THREADS`` threads, 1 by default (``--threads``
overrides it where a tool has that flag). torch's default, one thread per core, oversubscribes a
machine that runs several decoding processes or the app beside the tool: measured on a loaded
2-core machine, ``nmt.tools.translate`` took 65 s with the default against 7.3 s with one thread. For
more speed on an idle machine, run one process per core on parts of the input, or raise the
variable.
"""

from __future__ import annotations

import argparse
import logging
import os
import sys
from collections.abc import Callable, Sequence
from typing import Any

import torch

from nmt.decoding.search import LENGTH_NORMS, InputError
from nmt.models.checkpoint import CheckpointError
from nmt.models.device import threads_from_env as threads_from_env  # re-exported
from nmt.models.rnnsearch import CONTEXT_MODES
from nmt.models.seal import UNSEALED_ENV
from nmt.text.data import CorpusError
from nmt.tools.importers.files import FileRefused

USER_ERRORS = (CheckpointError, CorpusError, InputError, FileRefused, FileNotFoundError, IsADirectoryError,
               PermissionError)


def run(main: Callable[[], int | None]) -> int:
    """Run a tool's ``main``; user errors become ``error: …`` on stderr and exit status 2."""
    torch.set_num_threads(threads_from_env())
    return refusing(main)


def refusing(main: Callable[[], int | None]) -> int:
    """Run a script's ``main`` as it is (its own thread settings kept); user errors become ``error: …``
    on stderr and exit status 2. For the training, export and benchmark scripts that take checkpoints."""
    logging.basicConfig(level=logging.WARNING, format="warning: %(message)s", stream=sys.stderr)
    try:
        return int(main() or 0)
    except USER_ERRORS as err:
        print(f"error: {err}", file=sys.stderr)
        return 2


class _AllowUnsealed(argparse.Action):
    """``--allow-unsealed``: this process (and its workers) may load checkpoints without a seal."""

    def __call__(self, parser: argparse.ArgumentParser, namespace: argparse.Namespace,
                 values: str | Sequence[Any] | None, option_string: str | None = None) -> None:
        os.environ[UNSEALED_ENV] = "1"
        setattr(namespace, self.dest, True)


def add_unsealed_flag(p: argparse.ArgumentParser) -> None:
    """Give a tool the ``--allow-unsealed`` flag (see :mod:`nmt.models.seal`)."""
    p.add_argument("--allow-unsealed", action=_AllowUnsealed, nargs=0, default=False,
                   help="load a checkpoint that records no seal of its contents (written before seals existed; "
                   "`python -m nmt seal FILE` seals it once)")


# ----------------------------------------------------------------------------------------------
# The options several tools share, written once (python -m nmt SUBCOMMAND --help shows them alike)
# ----------------------------------------------------------------------------------------------


def checkpoint_option(p: argparse.ArgumentParser) -> None:
    """``--checkpoint FILE``: the model a tool decodes with."""
    p.add_argument("--checkpoint", required=True, help="a checkpoint file (.pt) written by train.py")


def corpus_options(p: argparse.ArgumentParser) -> None:
    """``--data DIR --split NAME``: one corpus split, SPLIT.SRC and SPLIT.TGT."""
    p.add_argument("--data", required=True, help="directory with SPLIT.SRC[.gz] and SPLIT.TGT[.gz]")
    p.add_argument("--split", required=True)


def search_options(p: argparse.ArgumentParser, context: bool = True) -> None:
    """``--beam K --length-norm RULE`` and (with ``context``) ``--context MODE``: how to decode."""
    p.add_argument("--beam", type=int, default=1, help="beam size (1 = greedy)")
    p.add_argument("--length-norm", choices=LENGTH_NORMS, default="length",
                   help="beam score normalisation (default: length)")
    if context:
        p.add_argument("--context", choices=CONTEXT_MODES, default=None,
                       help="override the model's context mode (an untrained ablation)")


def device_option(p: argparse.ArgumentParser, default: str = "auto") -> None:
    """``--device``: where to decode."""
    p.add_argument("--device", default=default, help="decode on: auto (the GPU if there is one), cpu, cuda or cuda:N")


def threads_option(p: argparse.ArgumentParser) -> None:
    """``--threads N``: torch threads for this tool (0: ``$RNNSEARCH_THREADS``, see the module docstring)."""
    p.add_argument("--threads", type=int, default=0, help="torch threads (0: $RNNSEARCH_THREADS, default 1)")
