"""Checks that a page's session-state keys are all listed in its ``ui/<page>/state.py`` (issue 49: one state
module per page package, every key of the page prefixed and listed there).

Two views of the same rule: the keys the page file and its package name in their source (:func:`literal_keys`,
:func:`source_keys`), and the keys a page run in AppTest left in the session (:func:`unlisted`). A key that
ui/common makes for a page is the page's too: it starts with the page's widget key and ends in one of
:data:`ui.common.state.DERIVED_SUFFIXES`, or is one of :func:`ui.common.state.made_for` the page's prefix; a key
of the whole app is in :data:`ui.common.state.KEYS`.
"""

from __future__ import annotations

import ast
import re
from collections.abc import Iterable
from fnmatch import fnmatchcase
from pathlib import Path

from streamlit.testing.v1 import AppTest

from tests.conftest import ROOT
from ui.common import state as common


def listed(key: str, keys: Iterable[str]) -> bool:
    """Whether ``key`` is one of ``keys`` (itself, or matched by a pattern ending in ``*``)."""
    return any(key == k or (k.endswith("*") and fnmatchcase(key, k)) for k in keys)


def prefix_of(keys: Iterable[str]) -> str:
    """The one prefix (up to its first ``_``) that every key of a page's ``keys`` begins with."""
    found = {k.split("_", 1)[0] + "_" for k in keys}
    assert len(found) == 1, f"a page's keys share one prefix: {sorted(found)}"
    return found.pop()


def the_pages(key: str, keys: Iterable[str], prefix: str) -> bool:
    """Whether ``key`` is the page's: listed in ``keys``, made for it by a shared panel, or derived by
    ui/common from one of its keys (a picker's ``…_by_hand``, a run button's ``…_done``)."""
    keys = list(keys)
    if listed(key, keys) or listed(key, common.made_for(prefix)):
        return True
    return any(key.endswith(s) and the_pages(key[: -len(s)], keys, prefix) for s in common.DERIVED_SUFFIXES)


def session_keys(at: AppTest) -> set[str]:
    """The keys a run left in the session state (widgets with a key included; Streamlit's own ids left out)."""
    return {str(k) for k in at.session_state.keys()}


created = session_keys  # the name the lesson's and the timeline's tests read best with


def unlisted(at: AppTest, keys: Iterable[str], others: Iterable[str] = ()) -> list[str]:
    """The run's keys that are neither the page's (see :func:`the_pages`), nor the whole app's
    (:data:`ui.common.state.KEYS`), nor in ``others`` (keys the test names)."""
    keys, others = list(keys), [*others, *common.KEYS]
    prefix = prefix_of(keys)
    return sorted(k for k in session_keys(at) if not the_pages(k, keys, prefix) and not listed(k, others))


def literal_keys(path: Path) -> list[str]:
    """The keys a file names literally in a call of a method (``st.button(key=…)``, ``col.pills(key=…)``; a
    ``Stop(key=…)`` is a stop's name): each ``key=`` string, and each f-string ``key=`` as its fixed start
    followed by ``x`` (a key of the family it builds)."""
    out = []
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if not isinstance(node, ast.Call) or not isinstance(node.func, ast.Attribute):
            continue
        for value in (k.value for k in node.keywords if k.arg == "key"):
            if isinstance(value, ast.Constant) and isinstance(value.value, str):
                out.append(value.value)
            elif isinstance(value, ast.JoinedStr):
                head = value.values[0]
                out.append((head.value if isinstance(head, ast.Constant) else "") + "x")
    return out


def constants(module: object) -> set[str]:
    """The key names a state module defines (its upper-case strings, its prefix left out)."""
    return {v for k, v in vars(module).items() if k.isupper() and isinstance(v, str) and k != "PREFIX"}


def source_keys(files: Iterable[Path], prefix: str) -> set[str]:
    """The keys ``files`` spell out: each string literal shaped like a key of ``prefix`` (``al_pick``), and each
    f-string starting with one (``f"bn_dl_{stem}"`` -> ``bn_dl_*``)."""
    shape = re.compile(rf"{re.escape(prefix)}[a-z0-9_]+")
    out: set[str] = set()
    for path in files:
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.Constant) and isinstance(node.value, str) and shape.fullmatch(node.value):
                out.add(node.value)
            elif isinstance(node, ast.JoinedStr) and node.values and isinstance(node.values[0], ast.Constant):
                head = str(node.values[0].value)
                if shape.fullmatch(head) and len(node.values) > 1:
                    out.add(head + "*")
    return out


def not_listed(found: Iterable[str], keys: Iterable[str]) -> list[str]:
    """The keys of ``found`` that ``keys`` neither lists nor matches (a pattern of ``found`` must be one of
    ``keys`` itself)."""
    keys = list(keys)
    return sorted(k for k in found if k not in keys and (k.endswith("*") or not listed(k, keys)))


def page_files(page: str, package: str) -> list[Path]:
    """``pages/<page>.py`` and every module of ``ui/<package>/``."""
    return [ROOT / "pages" / f"{page}.py", *sorted((ROOT / "ui" / package).glob("*.py"))]
