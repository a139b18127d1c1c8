"""A reader for the plain YAML a toolkit's ``config.yaml`` is written in, without a YAML library.

The project does not depend on a YAML package, and an importer must never run what a file names, so
this reads only the block style toolkit configs use and refuses the rest in one line (``ValueError``
naming the line):

* nested mappings by indentation (``key: value``, ``key:`` opening a deeper block);
* block lists of scalars (``- item``) and one-line flow lists of scalars (``[a, "b", 3]``);
* scalars: quoted strings (no escapes), ``true``/``false`` (any case), ``null``/``~``, integers,
  floats, anything else as a plain string; ``#`` comments (outside quotes).

Anchors, aliases, tags, flow mappings, multi-line strings and documents are refused, and so are tables
nested deeper than :data:`MAX_DEPTH` (a config of thousands of nested tables is refused in one line, not
by Python's recursion limit).
"""

from __future__ import annotations

import re
from typing import Any

_INT = re.compile(r"[-+]?\d+")
_FLOAT = re.compile(r"[-+]?(\d+\.\d*|\.\d+|\d+)([eE][-+]?\d+)?")
_KEY = re.compile(r"([A-Za-z_][\w.-]*|\"[^\"]*\"|'[^']*')\s*:(\s+|$)(.*)")
_REFUSED = ("&", "*", "!", "{", "|", ">", "%", "@", "`")
MAX_DEPTH = 16  # toolkit configs nest 4 levels (model.encoder.embeddings.…)


def _strip_comment(line: str) -> str:
    """The line without a ``#`` comment (a ``#`` inside quotes is text)."""
    quote = ""
    for k, ch in enumerate(line):
        if quote:
            quote = "" if ch == quote else quote
        elif ch in "\"'":
            quote = ch
        elif ch == "#" and (k == 0 or line[k - 1] in " \t"):
            return line[:k].rstrip()
    return line.rstrip()


def scalar(text: str) -> Any:
    """A YAML scalar: quoted string, bool, null, int, float or plain string."""
    t = text.strip()
    if len(t) >= 2 and t[0] == t[-1] and t[0] in "\"'":
        if "\\" in t and t[0] == '"':
            raise ValueError(f"escaped string {t[:40]!r}")
        return t[1:-1]
    if t[:1] in _REFUSED or t.startswith(("---", "...")):
        raise ValueError(f"unsupported YAML value {t[:40]!r}")
    if t.lower() in ("true", "yes", "on"):
        return True
    if t.lower() in ("false", "no", "off"):
        return False
    if t in ("null", "Null", "NULL", "~", ""):
        return None
    if _INT.fullmatch(t):
        return int(t)
    if _FLOAT.fullmatch(t):
        return float(t)
    return t


def _value(text: str) -> Any:
    """A one-line value: a flow list of scalars or a scalar."""
    t = text.strip()
    if t.startswith("["):
        if not t.endswith("]") or "[" in t[1:] or "{" in t:
            raise ValueError(f"unsupported list {t[:40]!r}")
        inner = t[1:-1].strip()
        return [scalar(x) for x in inner.split(",")] if inner else []
    return scalar(t)


def _lines(text: str) -> list[tuple[int, int, str]]:
    """(line number, indent, content) of every line that holds something."""
    out = []
    for no, raw in enumerate(text.splitlines(), 1):
        if "\t" in raw[: len(raw) - len(raw.lstrip())]:
            raise ValueError(f"line {no}: tab indentation")
        line = _strip_comment(raw)
        if line.strip():
            out.append((no, len(line) - len(line.lstrip()), line.strip()))
    return out


def loads(text: str) -> dict[str, Any]:
    """The mapping a config file holds; ``ValueError`` ("line N: what") for anything outside the subset."""
    lines = _lines(text)
    value, end = _block(lines, 0, lines[0][1] if lines else 0, 1)
    if end != len(lines):
        raise ValueError(f"line {lines[end][0]}: indentation does not fit the lines above")
    if not isinstance(value, dict):
        raise ValueError("the file does not hold a mapping of settings")
    return value


def _block(lines: list[tuple[int, int, str]], i: int, indent: int, depth: int) -> tuple[Any, int]:
    """The mapping or list starting at line ``i`` with ``indent`` (``depth`` tables deep), and the index after it."""
    if depth > MAX_DEPTH and i < len(lines):
        raise ValueError(f"line {lines[i][0]}: tables nested deeper than {MAX_DEPTH} levels")
    if i < len(lines) and _is_item(lines[i][2]):
        return _list(lines, i, indent)
    out: dict[str, Any] = {}
    while i < len(lines) and lines[i][1] == indent:
        no, _, content = lines[i]
        m = _KEY.fullmatch(content)
        if not m:
            raise ValueError(f"line {no}: not a 'key: value' line")
        key, rest = scalar(m.group(1)), m.group(3)
        if key in out:
            raise ValueError(f"line {no}: {key!r} is set twice")
        try:
            if rest:
                out[key], i = _value(rest), i + 1
            elif i + 1 < len(lines) and lines[i + 1][1] > indent:
                out[key], i = _block(lines, i + 1, lines[i + 1][1], depth + 1)
            elif i + 1 < len(lines) and lines[i + 1][1] == indent and _is_item(lines[i + 1][2]):
                out[key], i = _list(lines, i + 1, indent)
            else:
                out[key], i = None, i + 1
        except ValueError as err:
            raise ValueError(err if str(err).startswith("line ") else f"line {no}: {err}") from None
    if i < len(lines) and lines[i][1] > indent:
        raise ValueError(f"line {lines[i][0]}: indentation does not fit the lines above")
    return out, i


def _is_item(content: str) -> bool:
    """Whether a line is a block-list item (``- x`` or ``-``)."""
    return content == "-" or content.startswith("- ")


def _list(lines: list[tuple[int, int, str]], i: int, indent: int) -> tuple[list[Any], int]:
    """The block list of plain values starting at line ``i``, and the index after it."""
    out = []
    while i < len(lines) and lines[i][1] == indent and _is_item(lines[i][2]):
        no, _, content = lines[i]
        item = content[1:].strip()
        if _KEY.fullmatch(item) or _is_item(item):
            raise ValueError(f"line {no}: only lists of plain values are read")
        out.append(_value(item))
        i += 1
    return out, i
