"""Where corpora may be read from: the data roots and the parallel splits found there.

The app never opens a path that came from a URL or a text box. An operator names the folders that
may be read (the *data roots*): ``$RNNSEARCH_DATA`` (default ``data/``, relative paths taken from
the project folder) plus the ``[[root]]`` entries of ``configs/data_roots.toml``. Below them, always,
comes the *built-in* root ``evalsets/``: small evaluation sets committed with the project (see
``evalsets/README.md``), so every page has splits to offer on a fresh clone with no corpus set up.
The pages list the splits found under those roots and let a user choose one by its *label*; a label
that names no found split selects nothing. Files and folders reached through a symbolic link that
leads outside their root are not listed, nor is a split any of whose files (plain, ``.gz`` or
``.xz``: a reader opens the first that exists) does so; the walk is bounded in depth and in
folders visited.

Labels are paths relative to their root (``multi30k/test_2016_flickr``); those of the allow-list's
roots start with the root's name and a colon (``shared:wmt/newstest2014-fren``). The built-in sets
keep the bare labels the results files use, so the same label can exist in ``data/`` and in the
built-in root: the configured copy wins (the built-in one is not listed), and a built-in set fills
in only the labels that no configured folder has. Labels stay unique.

A split is ``DIR/NAME.{src}`` beside ``DIR/NAME.{tgt}`` (each plain, ``.gz`` or ``.xz``); a gold
alignment set also has ``NAME.{src}-{tgt}.sure`` (and ``.possible``) beside them, each plain,
``.gz`` or ``.xz`` as well.
"""

from __future__ import annotations

import os
import tomllib
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path

ENV_VAR = "RNNSEARCH_DATA"
PROJECT = Path(__file__).resolve().parents[2]
CONFIG = PROJECT / "configs" / "data_roots.toml"
BUILTIN_DIR = "evalsets"  # the committed evaluation sets (in the project folder), always a data root
BUILTIN_NAME = "built-in"
SUFFIXES = ("", ".gz", ".xz")
MAX_DEPTH = 3
MAX_DIRS = 500


@dataclass(frozen=True)
class DataRoot:
    """A folder the app may read corpora from; ``name`` is how the pages show it."""

    name: str
    path: Path  # absolute, symbolic links resolved
    prefixed: bool = False  # labels start with "NAME:" (the allow-list's roots; not data/, not the built-in)


@dataclass(frozen=True)
class Split:
    """A parallel split ``DIR/NAME.{src,tgt}[.gz|.xz]`` found under a data root."""

    directory: Path
    name: str
    label: str  # what users see and the URL holds, e.g. "multi30k/val" (never a path to open)
    gold: bool = False  # has Sure/Possible alignment files (pre-tokenised text)
    root: str = ""  # the name of the data root it was found under, e.g. "data" or "built-in"


def resolved(path: Path) -> Path | None:
    """``path`` with its symbolic links resolved, or None when they loop (``Path.resolve`` raises
    RuntimeError for a loop on Python 3.11 and 3.12, OSError on later ones) or it cannot be read."""
    try:
        return path.resolve()
    except (OSError, RuntimeError):
        return None


def is_loop(path: Path) -> bool:
    """Whether ``path`` is (or passes through) a symbolic link that leads back to itself."""
    return path.is_symlink() and resolved(path) is None


def _resolve(value: str, base: Path) -> Path:
    """``value`` as an absolute path (relative ones from ``base``), symbolic links resolved (a loop: as
    written, so that it lists nothing)."""
    p = Path(value).expanduser()
    p = p if p.is_absolute() else base / p
    return resolved(p) or p.absolute()


def configured_roots(env: Mapping[str, str] | None = None, config: Path | None = None,
                     project: Path = PROJECT, builtin: Path | None = None) -> list[DataRoot]:
    """The data roots: ``$RNNSEARCH_DATA`` or ``data/`` first, then the config file's allow-list,
    then the built-in evaluation sets (``builtin``, default ``project/evalsets``), always.

    The config file holds ``[[root]]`` tables with ``name`` and ``path``; a missing file adds none,
    and the name ``built-in`` is reserved. Roots that do not exist are kept (they list no split);
    a root whose folder or name an earlier one has is dropped.
    """
    env = os.environ if env is None else env
    config = CONFIG if config is None else config
    roots = [DataRoot("data", _resolve(env.get(ENV_VAR, "").strip() or "data", project))]
    if config.is_file():
        with open(config, "rb") as f:
            entries = tomllib.load(f).get("root", [])
        for e in entries:
            if not isinstance(e, dict) or not isinstance(e.get("path"), str) or not str(e.get("name", "")).strip():
                raise ValueError(f"{config.name}: each [[root]] needs a name and a path")
            if str(e["name"]).strip() == BUILTIN_NAME:
                raise ValueError(f"{config.name}: the root name {BUILTIN_NAME!r} is reserved for evalsets/")
            roots.append(DataRoot(str(e["name"]).strip(), _resolve(e["path"], project), prefixed=True))
    roots.append(DataRoot(BUILTIN_NAME, _resolve(str(builtin or project / BUILTIN_DIR), project)))
    out: list[DataRoot] = []
    for r in roots:
        if all(r.path != o.path and r.name != o.name for o in out):
            out.append(r)
    return out


def _stem(name: str, lang: str) -> str | None:
    """``NAME`` of a file ``NAME.{lang}[.gz|.xz]``, else ``None``."""
    for suffix in (f".{lang}{s}" for s in SUFFIXES):
        if name.endswith(suffix) and len(name) > len(suffix):
            return name[: -len(suffix)]
    return None


def inside(path: Path, root: Path) -> bool:
    """Whether ``path``, symbolic links resolved, lies in ``root`` (itself resolved): the one rule for
    links in the data folders and the checkpoint folder (:mod:`ui.common.checkpoint_files`)."""
    real = resolved(path)  # a link loop leads nowhere: not inside
    return real is not None and real.is_relative_to(root)


def _walk(root: DataRoot, max_depth: int, max_dirs: int) -> list[tuple[Path, list[Path], set[str]]]:
    """(folder, its files, the names in it that lead out of the root) under a root, depth-first,
    bounded; folders outside the root are skipped."""
    try:
        if not root.path.is_dir():
            return []
    except OSError:  # a loop where the root should be, on some Pythons
        return []
    out = []
    stack = [(root.path, 0)]
    while stack and len(out) < max_dirs:
        d, depth = stack.pop()
        try:
            entries = sorted(d.iterdir())
        except OSError:
            continue
        files: list[Path] = []
        outside: set[str] = set()
        for p in entries:
            if not inside(p, root.path):
                outside.add(p.name)
            elif p.is_dir():
                if depth < max_depth and p.name != "orig" and not p.name.startswith("."):
                    stack.append((p, depth + 1))
            elif p.is_file():
                files.append(p)
        out.append((d, files, outside))
    return out


def _variants(*bases: str) -> set[str]:
    """Each name plain, ``.gz`` and ``.xz``: the files a reader may open for it (the first that exists)."""
    return {b + s for b in bases for s in SUFFIXES}


def find_splits(roots: Sequence[DataRoot], src: str, tgt: str, max_depth: int = MAX_DEPTH,
                max_dirs: int = MAX_DIRS) -> list[Split]:
    """Every ``src``→``tgt`` split under the roots: gold alignment sets first, then by label.

    Labels are paths relative to their root, with ``NAME:`` before them for a ``prefixed`` root
    (``shared:wmt/newstest2014-fren``). Where two roots give the same label, the earlier root's
    split is kept: a configured folder's copy wins over the built-in one.
    """
    out: dict[str, Split] = {}
    for root in roots:
        for d, files, outside in _walk(root, max_depth, max_dirs):
            names = {p.name for p in files}
            for p in files:
                stem = _stem(p.name, src)
                if (stem is None or not _variants(f"{stem}.{tgt}") & names
                        or _variants(f"{stem}.{src}", f"{stem}.{tgt}") & outside):
                    continue  # no target side, or a file of it leads out of the root
                rel = d.relative_to(root.path).as_posix()
                label = stem if rel == "." else f"{rel}/{stem}"
                if root.prefixed:
                    label = f"{root.name}:{label}"
                links = _variants(*(f"{stem}.{a}-{b}.{k}" for a, b in ((src, tgt), (tgt, src))
                                    for k in ("sure", "possible")))
                gold = bool(_variants(f"{stem}.{src}-{tgt}.sure", f"{stem}.{tgt}-{src}.sure") & names) \
                    and not links & outside  # an en-fr gold set serves a fr→en model too, turned round
                out.setdefault(label, Split(d, stem, label, gold=gold, root=root.name))
    return sorted(out.values(), key=lambda s: (not s.gold, s.label))


def by_label(splits: Sequence[Split], label: str | None) -> Split | None:
    """The split called ``label`` among those found (``None`` for any other string)."""
    return next((s for s in splits if s.label == label), None)


def link_file(prefix: Path, src: str, tgt: str, kind: str) -> Path:
    """``PREFIX.{src}-{tgt}.{kind}`` (``kind`` = ``sure`` or ``possible``): the plain, ``.gz`` or
    ``.xz`` file that exists, in that order, else the plain name."""
    base = prefix.with_name(f"{prefix.name}.{src}-{tgt}.{kind}")
    return next((c for c in (base.with_name(base.name + s) for s in SUFFIXES) if c.exists()), base)


def gold_files(split: Split, src: str, tgt: str) -> tuple[Path, Path]:
    """The Sure and Possible link files of a gold split (each plain, ``.gz`` or ``.xz``): ``{src}-{tgt}``,
    else the other direction's ``{tgt}-{src}`` (see :func:`gold_turned`)."""
    prefix = split.directory / split.name
    a, b = (tgt, src) if gold_turned(split, src, tgt) else (src, tgt)
    return link_file(prefix, a, b, "sure"), link_file(prefix, a, b, "possible")


def gold_turned(split: Split, src: str, tgt: str) -> bool:
    """Whether a gold split's links are stored for the other direction (``{tgt}-{src}``, target index first
    for this model): a fr→en model on the en-fr Hansards set reads each link turned round."""
    prefix = split.directory / split.name
    return not link_file(prefix, src, tgt, "sure").exists() and link_file(prefix, tgt, src, "sure").exists()


def shown(path: Path) -> str:
    """A path as the pages may show it: relative to the project, else only its last part."""
    try:
        return (resolved(path) or path).relative_to(PROJECT).as_posix() or "."
    except ValueError:
        return f"…/{path.name}"
