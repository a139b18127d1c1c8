"""Bounded reading of another toolkit's model folder: every file is checked before it is read.

A model folder comes from someone else, so the importers read it as hostile input: a file is opened
only when ``os.stat`` says it is a regular file no larger than its cap (a named pipe, device or
socket is refused at once and never opened, so it cannot block; a sparse 2 GB file is refused by
its size without reading a byte), the open is non-blocking and checked again on the open file
(a file swapped for a pipe between the two checks is still refused), text must be UTF-8, and every
refusal is one line of at most :data:`MAX_MESSAGE` characters that quotes at most a short prefix of
what the file held (:func:`short`).

This module imports neither torch nor the model code, so ``python -m nmt import`` refuses a hostile
folder (:func:`nmt.tools.importers.precheck`) before those are loaded: in well under a second, not after
the seconds torch takes to import on a loaded machine.
"""

from __future__ import annotations

import io
import os
import re
import stat
from pathlib import Path

KIB, MIB, GIB = 1 << 10, 1 << 20, 1 << 30
MAX_CONFIG = 1 * MIB  # a toolkit's config.yaml is a few kilobytes
MAX_VOCAB = 4 * MIB  # a 100,000-word vocabulary is about 1 MB
MAX_CODES = 16 * MIB  # BPE codes / a sentencepiece model: a few megabytes at most
MAX_CHECKPOINT = 2 * GIB  # recurrent models this app can show are far smaller
MAX_MESSAGE = 190  # a refusal, so that "error: " + it stays within 200 characters
MAX_QUOTE = 40  # characters of a file's content a message may quote
_CONTROL = re.compile("[\x00-\x09\x0b-\x1f\x7f]")  # control characters other than the newline


class FileRefused(ValueError):
    """A file or model this importer will not read or convert: one line saying what and why, at most
    :data:`MAX_MESSAGE` characters (longer text is cut, newlines become spaces)."""

    def __init__(self, message: str) -> None:
        line = " ".join(str(message).split())
        super().__init__(line if len(line) <= MAX_MESSAGE else line[: MAX_MESSAGE - 1] + "…")


def short(value: object, limit: int = MAX_QUOTE) -> str:
    """``repr(value)`` cut to ``limit`` characters: how a message quotes what a file held."""
    text = repr(value)
    return text if len(text) <= limit else text[: limit - 1] + "…"


def _kind(mode: int) -> str:
    """What a file that is not a regular file is, in words."""
    for test, word in ((stat.S_ISDIR, "a folder"), (stat.S_ISFIFO, "a named pipe"), (stat.S_ISSOCK, "a socket"),
                       (stat.S_ISCHR, "a character device"), (stat.S_ISBLK, "a block device")):
        if test(mode):
            return word
    return "not a regular file"


def _size(n: int) -> str:
    """A byte count in words (``2.0 GB``)."""
    return f"{n / GIB:.1f} GB" if n >= GIB else f"{n / MIB:.1f} MB" if n >= MIB else f"{n} bytes"


def check_file(path: Path, cap: int, what: str = "") -> int:
    """The size of ``path`` after checking, by ``os.stat`` alone, that it is a regular file of at most ``cap``
    bytes; :class:`FileRefused` otherwise (``FileNotFoundError`` when it does not exist)."""
    name = what or path.name
    st = os.stat(path)
    if not stat.S_ISREG(st.st_mode):
        raise FileRefused(f"{name} is {_kind(st.st_mode)}, not a regular file; only regular files are read")
    if st.st_size > cap:
        raise FileRefused(f"{name} is {_size(st.st_size)}, over the {_size(cap)} such a file may have; it is not read")
    return st.st_size


def open_bytes(path: Path, cap: int, what: str = "") -> io.BufferedReader:
    """``path`` opened for reading after :func:`check_file`: non-blocking (a pipe cannot hold it up) and
    checked again on the open file."""
    check_file(path, cap, what)
    fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK | getattr(os, "O_CLOEXEC", 0))
    try:
        st = os.fstat(fd)
        if not stat.S_ISREG(st.st_mode) or st.st_size > cap:
            raise FileRefused(f"{what or path.name} changed while it was read (not a regular file of at most "
                          f"{_size(cap)}); it is not read")
        os.set_blocking(fd, True)
        return os.fdopen(fd, "rb")
    except BaseException:
        os.close(fd)
        raise


def read_bytes(path: Path, cap: int, what: str = "") -> bytes:
    """The bytes of a regular file of at most ``cap`` bytes (never more than ``cap`` + 1 are read)."""
    with open_bytes(path, cap, what) as f:
        data = f.read(cap + 1)
    if len(data) > cap:
        raise FileRefused(f"{what or path.name} grew over {_size(cap)} while it was read; it is not read")
    return data


def read_text(path: Path, cap: int, what: str = "") -> str:
    """The UTF-8 text of a regular file of at most ``cap`` bytes; binary content is refused in one line."""
    data = read_bytes(path, cap, what)
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as err:
        raise FileRefused(f"{what or path.name} is not UTF-8 text (byte {data[err.start]:#04x} at offset {err.start}); "
                      "a toolkit writes it as UTF-8") from None


def read_vocab(path: Path, cap: int = MAX_VOCAB) -> list[str]:
    """One token a line, as JoeyNMT's ``Vocabulary.to_file`` writes them; a token holding NUL or another
    control character (a binary file that happens to be UTF-8) is refused."""
    text = read_text(path, cap)
    bad = _CONTROL.search(text)
    if bad:
        no = text.count("\n", 0, bad.start()) + 1
        line = text[text.rfind("\n", 0, bad.start()) + 1:][:MAX_QUOTE]
        raise FileRefused(f"{path.name}: line {no} {short(line)} holds a control character (a binary file, not a "
                          "vocabulary of one token a line)")
    words = text.split("\n")
    return words[:-1] if words and words[-1] == "" else words
