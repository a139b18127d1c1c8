"""Writing a file so that a kill at any moment leaves the old file or the new one, never half of one.

Every writer of a file another run reads (checkpoints and their seal, dictionaries, timelines, exports)
writes through :func:`atomic_path`: the new content goes to a temporary file in the same folder
(``NAME.<pid>-<random>.tmp``), which is flushed to disk (``fsync``) and then renamed over ``NAME``
(``os.replace``, atomic on one file system), and the folder is synced so that the rename itself lasts.
A writer killed midway (``kill -9``: no ``finally`` runs) leaves its temporary file behind; the next
write of the same name removes those whose process is gone, and no reader ever opens a ``.tmp`` file.
"""

from __future__ import annotations

import contextlib
import glob
import os
import secrets
from collections.abc import Iterator
from pathlib import Path

SUFFIX = ".tmp"


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:  # someone else's process: alive
        return True
    return True


def stale_temporaries(path: Path) -> list[Path]:
    """The temporary files of earlier writes of ``path`` whose writer is no longer running."""
    out = []
    for tmp in path.parent.glob(f"{glob.escape(path.name)}.*{SUFFIX}"):
        pid = tmp.name[len(path.name) + 1:].partition("-")[0]
        if pid.isdigit() and int(pid) != os.getpid() and not _alive(int(pid)):
            out.append(tmp)
    return sorted(out)


def _fsync(path: Path, directory: bool = False) -> None:
    fd = os.open(path, os.O_RDONLY | (os.O_DIRECTORY if directory else 0))
    try:
        os.fsync(fd)
    except OSError:  # some file systems cannot sync a folder; the file itself was synced
        if not directory:
            raise
    finally:
        os.close(fd)


@contextlib.contextmanager
def atomic_path(path: str | Path, mode: int = 0o644) -> Iterator[Path]:
    """A temporary path beside ``path`` for the body to write; when the body ends without an error it is
    synced and renamed over ``path`` (with permissions ``mode``), else removed."""
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    for old in stale_temporaries(path):
        old.unlink(missing_ok=True)
    tmp = path.with_name(f"{path.name}.{os.getpid()}-{secrets.token_hex(4)}{SUFFIX}")
    try:
        yield tmp
        _fsync(tmp)
        os.chmod(tmp, mode)
        os.replace(tmp, path)
        _fsync(path.parent, directory=True)
    finally:
        tmp.unlink(missing_ok=True)


def write_bytes(path: str | Path, data: bytes) -> None:
    """``Path.write_bytes``, atomically."""
    with atomic_path(path) as tmp:
        tmp.write_bytes(data)


def write_text(path: str | Path, text: str, encoding: str = "utf-8") -> None:
    """``Path.write_text``, atomically."""
    with atomic_path(path) as tmp:
        tmp.write_text(text, encoding=encoding)
