"""Checks of a page's session-state keys against its ``ui/<page>/state.py`` (issue 49, phase 2): every key the
page file and its package name in their source, and every key a run of the page leaves in the session, is
listed in the state module's ``KEYS`` (a pattern ending in ``*`` stands for a family built at run time).
"""

from __future__ import annotations

import ast
import fnmatch
import re
from collections.abc import Iterable
from pathlib import Path

from streamlit.testing.v1 import AppTest

from tests.conftest import ROOT


def listed(key: str, keys: Iterable[str]) -> bool:
    """Whether ``key`` is one of ``keys`` or matched by one of its ``*`` patterns."""
    return any(fnmatch.fnmatchcase(key, k) for k in keys)


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


def session_keys(at: AppTest) -> set[str]:
    """The keys of the session state after a run (widget keys included, Streamlit's internal widget ids not)."""
    return {str(k) for k in at.session_state}


def unlisted(at: AppTest, keys: Iterable[str], common: Iterable[str]) -> list[str]:
    """Session keys after a run that are neither the page's (``keys``) nor in ``common``, the keys the frame and
    ui/common make (each named by the test that passes it)."""
    return sorted(k for k in session_keys(at) if not listed(k, keys) and not listed(k, common))
