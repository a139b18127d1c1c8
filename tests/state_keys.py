"""Helpers of the tests that a page's session-state keys are all listed in its ``ui/<page>/state.py`` (issue 49):
the keys its code names (:func:`literal_keys`) and the keys a page run in AppTest made (:func:`created`)."""

from __future__ import annotations

import ast
from pathlib import Path

from streamlit.testing.v1 import AppTest


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


def created(at: AppTest) -> set[str]:
    """The keys in a session's state (widgets with a key included; Streamlit's own ids left out)."""
    return set(at.session_state._state.filtered_state)
