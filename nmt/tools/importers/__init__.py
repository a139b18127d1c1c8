"""Importers of models trained with other toolkits: ``python -m nmt import TOOLKIT …``.

Each toolkit has its module (:mod:`nmt.tools.importers.joeynmt`, :mod:`nmt.tools.importers.onmt`) whose ``main`` reads
the toolkit's files without running anything they name, maps its weights onto a model of this project, and writes an
ordinary sealed checkpoint (:func:`nmt.models.checkpoint.make_checkpoint`, :func:`nmt.models.checkpoint.atomic_save`).
"""

from __future__ import annotations

import argparse
import importlib
import sys
from pathlib import Path

TOOLKITS: dict[str, str] = {"joeynmt": "nmt.tools.importers.joeynmt", "onmt": "nmt.tools.importers.onmt"}


def main(argv: list[str] | None = None) -> int:
    """Run the importer named by ``argv[0]`` with the rest of ``argv``."""
    args = sys.argv[1:] if argv is None else list(argv)
    if not args or args[0] in ("-h", "--help"):
        print("usage: python -m nmt import TOOLKIT SOURCE --out NAME.pt   (TOOLKIT: " + ", ".join(TOOLKITS) + ")")
        return 0
    if args[0] not in TOOLKITS:
        print(f"error: unknown toolkit {args[0]!r}; one of: {', '.join(TOOLKITS)}", file=sys.stderr)
        return 2
    return importlib.import_module(TOOLKITS[args[0]]).main(args[1:])


def precheck(argv: list[str]) -> int | None:
    """Refuse a hostile model folder or file before torch and the model code are imported (``python -m nmt``
    runs this first): 2 after one ``error: …`` line, None to go on. Reads only through
    :mod:`nmt.tools.importers.files`, which imports neither; the importer reads the folder again in full."""
    from nmt.tools.importers import files, joeynmt_files

    if not argv or argv[0] not in TOOLKITS:
        return None
    p = argparse.ArgumentParser(add_help=False)
    p.add_argument("source", type=Path)
    p.add_argument("--ckpt", default=None)
    known, _ = p.parse_known_args([a for a in argv[1:] if a not in ("-h", "--help")] or ["-"])
    if str(known.source) == "-" or {"-h", "--help"} & set(argv):
        return None  # the importer's own parser answers
    try:
        if argv[0] == "joeynmt":
            joeynmt_files.read_text_files(known.source, known.ckpt)
        elif known.source.exists() or known.source.is_symlink():
            files.check_file(known.source, files.MAX_CHECKPOINT)
    except (files.FileRefused, FileNotFoundError) as err:
        print(f"error: {err}", file=sys.stderr)
        return 2
    return None
