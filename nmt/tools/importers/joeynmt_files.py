"""The text files of a JoeyNMT model folder, read bounded and without torch (:mod:`nmt.tools.importers.files`).

``config.yaml`` (by :mod:`nmt.tools.importers.yaml_subset`), ``src_vocab.txt`` and ``trg_vocab.txt``, and
which checkpoint file the weights are in (checked, not read). :mod:`nmt.tools.importers.joeynmt` reads the
folder through :func:`read_text_files`; :func:`nmt.tools.importers.precheck` runs it before torch is imported,
so a hostile folder is refused at once.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

from nmt.tools.importers import files
from nmt.tools.importers.yaml_subset import loads

TEXT_FILES = ("config.yaml", "src_vocab.txt", "trg_vocab.txt")
TABLES = (("model",), ("model", "encoder"), ("model", "decoder"), ("data",), ("data", "src"), ("data", "trg"))


def read_config(text: str) -> dict[str, Any]:
    """The config's settings, with ``model``, ``model.encoder``, ``model.decoder`` and ``data.src/trg`` tables
    (``ValueError`` naming what is missing)."""
    cfg = loads(text)
    for path in TABLES:
        node: Any = cfg
        for key in path:
            node = node.get(key) if isinstance(node, dict) else None
        if not isinstance(node, dict):
            raise ValueError(f"{'.'.join(path)}: missing or not a table")
    return cfg


def checkpoint_file(folder: Path, ckpt: str | None) -> Path:
    """The checkpoint asked for, else best.ckpt, else the highest-numbered N.ckpt (whatever kind of file it
    is: :func:`files.check_file` decides whether it is read)."""
    if ckpt:
        return Path(ckpt) if Path(ckpt).is_absolute() or os.path.lexists(ckpt) else folder / ckpt
    if os.path.lexists(folder / "best.ckpt"):
        return folder / "best.ckpt"
    numbered = sorted((p for p in folder.glob("*.ckpt") if p.stem.isdigit()), key=lambda p: (len(p.stem), p.stem))
    if not numbered:
        raise files.FileRefused(f"{files.short(folder.name)}: no best.ckpt or N.ckpt in the folder (is it a JoeyNMT "
                                "model_dir?)")
    return numbered[-1]


def read_text_files(folder: Path, ckpt: str | None = None) -> tuple[dict[str, Any], list[str], list[str], Path]:
    """(config, source words, target words, checkpoint path) of a JoeyNMT model folder: every file checked by
    ``os.stat`` (a regular file within its cap) before any is read; the checkpoint is checked, not read."""
    if not folder.is_dir():
        raise FileNotFoundError(f"{files.short(str(folder), 80)} is not a folder (a JoeyNMT model_dir is)")
    for name in TEXT_FILES:
        if not os.path.lexists(folder / name):
            raise files.FileRefused(f"{files.short(folder.name)}: no {name} (JoeyNMT writes it into the model folder)")
        files.check_file(folder / name, files.MAX_CONFIG if name == "config.yaml" else files.MAX_VOCAB)
    ckpt_path = checkpoint_file(folder, ckpt)
    files.check_file(ckpt_path, files.MAX_CHECKPOINT)
    text = files.read_text(folder / "config.yaml", files.MAX_CONFIG)
    try:
        config = read_config(text)
    except ValueError as err:
        raise files.FileRefused(f"config.yaml: {err}") from None
    src, trg = (files.read_vocab(folder / name) for name in TEXT_FILES[1:])
    return config, src, trg, ckpt_path
