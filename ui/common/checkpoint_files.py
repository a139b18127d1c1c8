"""Which files of the checkpoint folder the app lists, and a one-line reason for each one it leaves out.

Every ``*.pt`` file directly in the folder is a candidate. One reached through a symbolic link that
leads outside the folder is never read (the data folders' rule, :func:`nmt.text.corpora.inside`). One
that is not an intact, sealed checkpoint of ours, or whose description cannot be drawn, is left out
of every picker and listed once as "unreadable: <why>" (:func:`notes`), so a bad file beside good
ones never takes a page down.
"""

from __future__ import annotations

import functools
import re
from pathlib import Path

from nmt.models.registry import describe_model
from nmt.text import corpora
from ui.common import models
from ui.common.meta_cache import UNREADABLE as UNREADABLE  # the key under which read_meta keeps why a file is unread


def _pt_files(directory: Path) -> tuple[list[Path], list[Path], list[Path]]:
    """The ``*.pt`` files of ``directory`` whose path, links resolved, stays inside it, those that lead
    out, and those that are symbolic-link loops (none of a folder that is itself a loop)."""
    root = corpora.resolved(directory)
    try:
        found = sorted(directory.glob("*.pt")) if root is not None else []
    except (OSError, RuntimeError):
        return [], [], []
    inside = [p for p in found if corpora.inside(p, root)]
    kept = set(inside)  # sets: 200 files in lists were 200 × 200 path comparisons a listing (issue 52)
    loops = [p for p in found if p not in kept and corpora.is_loop(p)]
    gone = kept | set(loops)
    return inside, [p for p in found if p not in gone], loops


def listed(directory: Path) -> list[tuple[Path, float]]:
    """The checkpoint files of ``directory`` to read, with their modification times: ``*.pt`` files
    in it whose path, links resolved, stays inside it."""
    out = []
    for p in _pt_files(directory)[0]:
        try:
            if p.is_file():
                out.append((p, p.stat().st_mtime))
        except OSError:
            continue
    return out


def problem(path: Path, mtime: float) -> str | None:
    """Why the checkpoint at ``path`` cannot be listed (one line naming it), or None when it can."""
    return _problem(str(path), mtime)


@functools.lru_cache(maxsize=100_000)  # every page run lists the folder several times: each file is judged once
def _problem(name: str, mtime: float) -> str | None:
    path = Path(name)

    reason = models.read_meta(str(path), mtime, ()).get(UNREADABLE)  # () copies only why it is unreadable
    if reason:
        return str(reason)
    try:  # everything the pickers and the catalogue draw from the file
        info = models.CheckpointInfo(path, _kind_of(path)[0], "rnnsearch", mtime)
        models.describe(info)
        models.score_phrase(models.read_meta(str(path), mtime, ("scores",)).get("scores"))
    except Exception as err:  # a sealed file written with odd values: left out, not a broken page
        return f"{path.name} cannot be described ({type(err).__name__})"
    return None


def notes(directory: Path, folder: str = "the checkpoint folder") -> list[str]:
    """One line per file of ``directory`` (named ``folder`` in the lines) the app leaves out, and why."""
    _, leads_out, loops = _pt_files(directory)
    out = [f"left out: {p.name} is a link to a file outside {folder}" for p in leads_out]
    out += [f"left out: {p.name} is a symbolic link that leads back to itself (a loop)" for p in loops]
    for p, mtime in listed(directory):
        reason = problem(p, mtime)
        if reason:
            out.append(f"unreadable: {reason}")
    return out


# <prefix>-rnnsearch[-<variant>].pt: the paper's RNNsearch-50 is europarl-en-fr-rnnsearch-50.pt
_PAIR_NAME = re.compile(r"^(?P<prefix>.+)-(?P<kind>rnnsearch|rnnencdec)(?:-(?P<variant>[A-Za-z0-9]+))?$")


def _kind_of(path: Path) -> tuple[str, str]:
    """(group, kind) from a file name ``<prefix>-rnnsearch.pt`` / ``<prefix>-rnnencdec.pt``, or with a
    variant, ``<prefix>-rnnsearch-50.pt`` / ``<prefix>-rnnencdec-50.pt`` (group ``<prefix>-50``)."""
    m = _PAIR_NAME.match(path.stem)
    if m is None:
        return path.stem, "other"
    group = m["prefix"] + (f"-{m['variant']}" if m["variant"] else "")
    return group, m["kind"]


def scan(directory: Path, yours: bool = False) -> list[models.ModelGroup]:
    """The model groups in ``directory`` (sorted by name); an unreadable folder gives none. ``yours``:
    the folder is the user's own models' (:mod:`ui.common.user_models`), and its checkpoints say so.

    A file that follows neither naming pattern forms a group of its own; whether it fills the
    attending or the fixed-context slot is read from its description (whether it has α). Every
    file's ``kind`` is its description's (a Luong model is "luong", whichever slot it fills). Links
    out of the folder and files that cannot be read are left out (:func:`problem`).
    """
    slots: dict[str, dict[str, models.CheckpointInfo]] = {}
    for p, mtime in listed(directory):
        if problem(p, mtime):
            continue
        group, slot = _kind_of(p)
        described = describe_model(models.saved_config(str(p), mtime))
        info = models.CheckpointInfo(p, group, described.kind, mtime, yours)
        if slot == "other":
            slot = "rnnsearch" if described.has_alpha else "rnnencdec"
        slots.setdefault(group, {}).setdefault(slot, info)
    return [models.ModelGroup(name, s.get("rnnsearch"), s.get("rnnencdec")) for name, s in sorted(slots.items())]
