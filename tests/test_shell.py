"""The error boundary covers a page's imports: a package missing on the server shows a short message
below the navigation, never Streamlit's own error box, and nothing of the page runs half set up."""

from __future__ import annotations

import ast
import sys
from collections.abc import Iterable, Iterator
from pathlib import Path
from typing import Any

import pytest
from streamlit.testing.v1 import AppTest

ROOT = Path(__file__).resolve().parent.parent

BROKEN = """
import streamlit as st
from ui import shell

with shell.page("Broken page"):
    import rnnsearch_no_such_module  # noqa: F401

st.write("the page body ran")
"""


def _texts(elements: Iterable[Any]) -> list[str]:
    """The shown text of each element."""
    return [str(e.value) for e in elements]


def test_failing_import_shows_the_boundary_and_stops() -> None:
    at = AppTest.from_string(BROKEN, default_timeout=30).run()
    assert not at.exception  # Streamlit's own error box
    errors = _texts(at.error)
    assert len(errors) == 1 and "“rnnsearch_no_such_module”" in errors[0]
    assert "pip install -r requirements.txt" in errors[0]
    assert "**RNNsearch Explorer**" in _texts(at.sidebar.markdown)  # the navigation was drawn first
    assert "the page body ran" not in _texts(at.markdown)


@pytest.fixture
def fresh_project_modules() -> Iterator[None]:
    """Let the project's modules be imported anew inside the test, then put every module back."""
    saved = dict(sys.modules)
    for name in list(sys.modules):
        if name.startswith(("nmt.", "ui.")) and name != "ui.shell":
            del sys.modules[name]
    try:
        yield
    finally:
        sys.modules.clear()
        sys.modules.update(saved)


@pytest.mark.usefixtures("fresh_project_modules")
def test_real_page_without_scipy_shows_the_boundary(monkeypatch: pytest.MonkeyPatch) -> None:
    """The explanation page on a server without scipy (Kendall's τ): the case a new machine once hit."""
    monkeypatch.setitem(sys.modules, "scipy.stats", None)  # `from scipy.stats import …` now fails
    at = AppTest.from_file(str(ROOT / "pages" / "explanation.py"), default_timeout=60).run()
    assert not at.exception
    errors = _texts(at.error)
    assert len(errors) == 1 and "“scipy.stats”" in errors[0]
    assert "**RNNsearch Explorer**" in _texts(at.sidebar.markdown)
    assert not at.title  # the page's own layout never started


def test_error_in_the_body_is_caught_too() -> None:
    script = BROKEN.replace("import rnnsearch_no_such_module  # noqa: F401", "pass").replace(
        'st.write("the page body ran")', 'with shell.error_boundary("Broken page"):\n    raise ValueError("x")')
    at = AppTest.from_string(script, default_timeout=30).run()
    assert not at.exception
    errors = _texts(at.error)
    assert len(errors) == 1 and "(ValueError)" in errors[0] and "reference" in errors[0]


PAGE_FILES = ["app.py", *(f"pages/{p.name}" for p in sorted((ROOT / "pages").glob("*.py")))]


@pytest.mark.parametrize("page", PAGE_FILES)
def test_page_imports_sit_inside_the_boundary(page: str) -> None:
    """A page's own imports are inside ``with shell.page(…)``; only ``__future__`` and the shell come before it."""
    tree = ast.parse((ROOT / page).read_text(encoding="utf-8"))
    outside = [ast.unparse(n) for n in tree.body if isinstance(n, ast.Import | ast.ImportFrom)]
    assert outside == ["from __future__ import annotations", "from ui import shell"]
    first_with = next(n for n in tree.body if isinstance(n, ast.With))
    assert ast.unparse(first_with.items[0].context_expr).startswith("shell.page(")
    assert all(isinstance(n, ast.Import | ast.ImportFrom) for n in first_with.body)


def test_guarded_function_shows_the_boundary() -> None:
    """What a fragment's own rerun runs (the guarded view alone) still ends in the boundary's message."""
    script = ('import streamlit as st\nfrom ui import shell\n\ndef view(n: int) -> None:\n'
              '    st.write(f"drawn {n}")\n    raise KeyError(n)\n\nshell.guarded("Frag", view)(3)\n'
              'st.write("after the fragment")\n')
    at = AppTest.from_string(script, default_timeout=30).run()
    assert not at.exception
    errors = _texts(at.error)
    assert len(errors) == 1 and "(KeyError)" in errors[0]
    assert _texts(at.markdown) == ["drawn 3", "after the fragment"]


def test_the_stepper_fragment_is_guarded() -> None:
    calls = [n for n in ast.walk(ast.parse((ROOT / "app.py").read_text(encoding="utf-8")))
             if isinstance(n, ast.Call) and isinstance(n.func, ast.Call) and ast.unparse(n.func.func) == "st.fragment"]
    assert calls and all(ast.unparse(c.args[0]).startswith("shell.guarded(") for c in calls)
