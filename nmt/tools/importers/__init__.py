"""Importers of models trained with other toolkits: ``python -m nmt import TOOLKIT …``.

Each toolkit has its module (:mod:`nmt.tools.importers.joeynmt`, :mod:`nmt.tools.importers.onmt`) whose ``main`` reads
the toolkit's files without running anything they name, maps its weights onto a model of this project, and writes an
ordinary sealed checkpoint (:func:`nmt.models.checkpoint.make_checkpoint`, :func:`nmt.models.checkpoint.atomic_save`).
"""

from __future__ import annotations

import importlib
import sys

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
