"""Where a checkpoint came from, in one line, decided once from its ``meta`` (no model loaded, no Streamlit).

Two kinds of checkpoint exist: those this project trained (``meta["train_data"]``: the corpus folder
and its number of pairs; ``meta["updates"]``) and those converted from another toolkit by
:mod:`nmt.tools.importers` (``meta["imported"]``: toolkit, version, the source files' SHA-256, and
``meta["tokenisation"]``: level, lower-casing, subword kind). :func:`origin` says which, e.g.

    Imported from JoeyNMT 2.3.0 (bpe, lower-cased) · best.ckpt sha256 1a2b3c4d5e6f
    Trained by this project on Multi30k (29,000 pairs), 2,475 updates

:class:`nmt.models.checkpoint.LoadedModel` carries it (``origin``), and the model pickers read the same
function from a checkpoint's meta without loading its weights.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

# Training-data folders (``meta["train_data"]["dir"]``'s last part) in words a class reads.
CORPUS_NAMES = {".gpu-data-tc": "Europarl + Tatoeba", "europarl-v7-fr-en": "Europarl", "multi30k": "Multi30k"}
# ``meta["imported"]["toolkit"]`` → how the toolkit spells its own name
TOOLKIT_NAMES = {"joeynmt": "JoeyNMT", "opennmt-py": "OpenNMT-py", "opennmt": "OpenNMT-py"}
SHA_SHOWN = 12  # hex digits of a file's SHA-256 shown (enough to tell two files apart by eye)
UNKNOWN = "Origin not recorded in the checkpoint"


def data_name(meta: dict[str, Any]) -> str:
    """The training corpus of a checkpoint this project trained, e.g. ``Multi30k (29,000 pairs)``; "" if unknown."""
    td = meta.get("train_data")
    if not isinstance(td, dict):
        return ""
    folder = Path(str(td.get("dir", ""))).name
    name = CORPUS_NAMES.get(folder, folder) or "?"
    pairs = td.get("pairs")
    return f"{name} ({pairs:,} pairs)" if isinstance(pairs, int) and not isinstance(pairs, bool) else name


def subword_kind(meta: dict[str, Any]) -> str | None:
    """The subword kind an imported checkpoint's tokenisation records ("bpe", "sentencepiece"), else None."""
    how = meta.get("tokenisation")
    sub = how.get("subword") if isinstance(how, dict) else None
    kind = sub.get("kind") if isinstance(sub, dict) else None
    return str(kind) if kind else None


def _tokenisation_words(meta: dict[str, Any]) -> str:
    """``bpe, lower-cased`` / ``word`` from ``meta["tokenisation"]``."""
    how = meta.get("tokenisation")
    if not isinstance(how, dict):
        return ""
    level = subword_kind(meta) or str(how.get("level") or "word")
    return level + (", lower-cased" if how.get("lowercase") is True else "")


def _checkpoint_sha(imported: dict[str, Any]) -> str:
    """``best.ckpt sha256 1a2b3c4d5e6f``: the converted checkpoint file and the start of its SHA-256."""
    files, name = imported.get("files_sha256"), imported.get("checkpoint")
    if not isinstance(files, dict) or not isinstance(name, str) or not isinstance(files.get(name), str):
        return ""
    return f"{name} sha256 {files[name][:SHA_SHOWN]}"


def imported(meta: dict[str, Any]) -> bool:
    """Whether the checkpoint was converted from another toolkit's model (``python -m nmt import``)."""
    return isinstance(meta.get("imported"), dict)


def origin(meta: dict[str, Any]) -> str:
    """Where the checkpoint came from, in one line (see the module's examples)."""
    if imported(meta):
        imported_from = meta["imported"]
        toolkit = str(imported_from.get("toolkit") or "another toolkit")
        name = TOOLKIT_NAMES.get(toolkit.lower(), toolkit)
        # a version with a note ("3.x (OpenNMT-py does not record its version; …)") shows its first part:
        # the note stays in the checkpoint's meta, and the line would carry two parentheses one after the other
        version = str(imported_from.get("version") or "").split(" (")[0].strip()
        tok = _tokenisation_words(meta)
        head = f"Imported from {name}" + (f" {version}" if version and version != "unstated" else "")
        head += f" ({tok})" if tok else ""
        sha = _checkpoint_sha(imported_from)
        return head + (f" · {sha}" if sha else "")
    data = data_name(meta)
    if not data:
        return UNKNOWN
    updates = meta.get("updates")
    more = f", {updates:,} updates" if isinstance(updates, int) and not isinstance(updates, bool) else ""
    return f"Trained by this project on {data}{more}"
