"""The frame (``app.py``, :func:`ui.common.shell.frame`) lists every page once and runs each inside the error
boundary, its imports included: a package missing on the server shows a short message below the
navigation, never Streamlit's own error box, and nothing of the page runs half set up."""

from __future__ import annotations

import ast
import sys
from collections.abc import Iterable, Iterator
from pathlib import Path
from typing import Any

import pytest
from streamlit.testing.v1 import AppTest

from tests.page_app import app_at

ROOT = Path(__file__).resolve().parent.parent

BROKEN = """
import streamlit as st
from ui.common import shell

def broken() -> None:
    import rnnsearch_no_such_module  # noqa: F401

    st.write("the page body ran")

shell.frame([shell.Page(broken, "Broken page", ":material/error:", default=True)])
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
        if name.startswith(("nmt.", "ui.")) and name != "ui.common.shell":
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
    at = app_at("pages/explanation.py", 60).run()  # through the frame, as a link opens it
    assert not at.exception
    errors = _texts(at.error)
    assert len(errors) == 1 and "“scipy.stats”" in errors[0]
    assert "**RNNsearch Explorer**" in _texts(at.sidebar.markdown)
    assert not at.title  # the page's own layout never started


def test_error_in_the_body_is_caught_too() -> None:
    script = BROKEN.replace("import rnnsearch_no_such_module  # noqa: F401", 'raise ValueError("x")')
    at = AppTest.from_string(script, default_timeout=30).run()
    assert not at.exception
    errors = _texts(at.error)
    assert len(errors) == 1 and "(ValueError)" in errors[0] and "reference" in errors[0]


PAGE_FILES = sorted(f"pages/{p.name}" for p in (ROOT / "pages").glob("*.py"))


def test_the_frame_lists_every_page_once_at_its_address() -> None:
    """Every file in pages/ is in app.PAGES once, at its own address; the stepper alone at ``/``."""
    from app import PAGES

    assert sorted(p.source for p in PAGES) == PAGE_FILES
    addresses = [p.address for p in PAGES]
    assert len(set(addresses)) == len(addresses)
    assert [p.source for p in PAGES if p.address == "/"] == ["pages/stepper.py"]
    assert all(p.address == "/" + Path(str(p.source)).stem for p in PAGES if not p.default)
    assert [p.source for p in PAGES if not p.menu] == ["pages/vote.py"]  # the phone's page: a code opens it


def test_a_page_streamlit_starts_on_its_own_runs_inside_the_frame() -> None:
    """A fresh server's first request for ``/vote`` (Streamlit runs the pages/ file itself; AppTest does so on
    every run): the page draws inside the frame, with the menu, once."""
    at = app_at("pages/vote.py", 30).run()
    assert not at.exception and not at.error
    assert _texts(at.sidebar.markdown).count("**RNNsearch Explorer**") == 1
    assert len(at.get("page_link")) == 10  # the menu's pages: all but the phone's
    assert _texts(at.title) == ["Class vote"]


@pytest.mark.parametrize("page", PAGE_FILES)
def test_a_page_file_leaves_setup_and_the_boundary_to_the_frame(page: str) -> None:
    """A page file configures nothing and wraps nothing: the frame's one ``set_page_config`` and boundary."""
    text = (ROOT / page).read_text(encoding="utf-8")
    calls = {ast.unparse(n.func) for n in ast.walk(ast.parse(text)) if isinstance(n, ast.Call)}
    assert not calls & {"st.set_page_config", "shell.configure", "shell.error_boundary", "st.navigation"}, page


def test_guarded_function_shows_the_boundary() -> None:
    """What a fragment's own rerun runs (the guarded view alone) still ends in the boundary's message."""
    script = ('import streamlit as st\nfrom ui.common import shell\n\ndef view(n: int) -> None:\n'
              '    st.write(f"drawn {n}")\n    raise KeyError(n)\n\nshell.guarded("Frag", view)(3)\n'
              'st.write("after the fragment")\n')
    at = AppTest.from_string(script, default_timeout=30).run()
    assert not at.exception
    errors = _texts(at.error)
    assert len(errors) == 1 and "(KeyError)" in errors[0]
    assert _texts(at.markdown) == ["drawn 3", "after the fragment"]


def test_the_stepper_fragment_is_guarded() -> None:
    calls = [n for n in ast.walk(ast.parse((ROOT / "pages" / "stepper.py").read_text(encoding="utf-8")))
             if isinstance(n, ast.Call) and isinstance(n.func, ast.Call) and ast.unparse(n.func.func) == "st.fragment"]
    assert calls and all(ast.unparse(c.args[0]).startswith("shell.guarded(") for c in calls)
