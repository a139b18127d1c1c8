"""Which session-state keys a page run in AppTest left that its ``state.KEYS`` does not list (issue 49: one
``ui/<page>/state.py`` per page, every key of the page listed there and prefixed)."""

from __future__ import annotations

from collections.abc import Iterable
from fnmatch import fnmatchcase

from streamlit.testing.v1 import AppTest


def matches(key: str, patterns: Iterable[str]) -> bool:
    """Whether ``key`` is one of ``patterns`` (a pattern ending in ``*`` stands for a family of keys)."""
    return any(fnmatchcase(key, p) if p.endswith("*") else key == p for p in patterns)


def session_keys(at: AppTest) -> set[str]:
    """The keys a run left in the session state (Streamlit's own widget ids left out)."""
    return set(at.session_state.keys())


def unlisted(at: AppTest, keys: Iterable[str], others: Iterable[str]) -> list[str]:
    """The run's keys matched neither by the page's ``keys`` nor by ``others`` (the keys ui/common and the
    frame write, named by the test)."""
    keys, others = list(keys), list(others)
    return sorted(k for k in session_keys(at) if not matches(k, keys) and not matches(k, others))
