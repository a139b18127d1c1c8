"""ui/ by page (issue 49), as nmt/ is by role (tests/test_layout.py): ``ui/<page>/`` per page, ``ui/common``
(glue two or more pages share) and ``ui/figures`` (pure builders two or more pages share).

Rules: a page package imports only ui/common, ui/figures, nmt and itself; a page file in pages/ only its own
package (:data:`PAGE_FILES`), ui/common and ui/figures; ui/common no page package; ui/figures (and a page's
``views*.py``) no Streamlit, and ui/figures nothing of ui outside itself; ``st.session_state`` only in
ui/common and ``ui/<page>/state.py``; page files at most :data:`MAX_PAGE_LINES` lines. No
exceptions are listed. Each rule is shown to catch a planted violation; every key's prefix:
tests/test_state_keys.py. Where a new module goes: docs/DEVELOPMENT.md.
"""

from __future__ import annotations

import ast
from pathlib import Path

from tests.test_layout import ROOT, import_graph, today_files, today_graph, tree

UI = ROOT / "ui"
PAGE_PACKAGES = ("stepper", "lesson", "explanation", "beam", "alignment", "paired", "timeline", "bottleneck",
                 "compare", "length")
SHARED = ("common", "figures")
PAGE_FILES = {  # pages/NAME.py -> the ui package behind it
    "stepper": "stepper", "lesson": "lesson", "vote": "lesson", "explanation": "explanation",
    "beam_explorer": "beam", "alignment_browser": "alignment", "paired_compare": "paired",
    "watch_it_learn": "timeline", "bottleneck_compare": "bottleneck", "compare_attention": "compare",
    "length_quality": "length",
}
MAX_PAGE_LINES = 150

def ui_package(module: str) -> str | None:
    """The ui package a module lies in (``ui.stepper.url`` -> "stepper"), None outside ui/ or for ui itself."""
    parts = module.split(".")
    return parts[1] if parts[0] == "ui" and len(parts) > 1 else None


def page_package_imports(graph: dict[str, set[str]]) -> list[str]:
    """A page package's imports of anything but ui/common, ui/figures, nmt and itself ('module -> module')."""
    return sorted(f"{m} -> {w}" for m in graph if ui_package(m) in PAGE_PACKAGES for w in graph[m]
                  if not (w.split(".")[0] == "nmt" or ui_package(w) in (*SHARED, ui_package(m))))


def page_file_imports(graph: dict[str, set[str]], page_files: dict[str, str] = PAGE_FILES) -> list[str]:
    """A page file's imports of anything but its own package, ui/common and ui/figures; a page file with no
    package in ``page_files`` is named too."""
    out = []
    for m in (m for m in graph if m.startswith("pages.")):
        own = page_files.get(m.removeprefix("pages."))
        if own is None:
            out.append(f"{m} -> (no package in PAGE_FILES)")
        out += [f"{m} -> {w}" for w in graph[m] if ui_package(w) not in (*SHARED, own)]
    return sorted(out)


def common_imports(graph: dict[str, set[str]]) -> list[str]:
    """ui/common's imports of a page package, a page file or the frame."""
    return sorted(f"{m} -> {w}" for m in graph if ui_package(m) == "common" for w in graph[m]
                  if ui_package(w) in PAGE_PACKAGES or w == "app" or w.startswith("pages."))


def imports_streamlit(path: Path) -> bool:
    """Whether a file imports Streamlit itself (at the top or inside a function)."""
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Import) and any(a.name.split(".")[0] == "streamlit" for a in node.names):
            return True
        if isinstance(node, ast.ImportFrom) and node.module and node.module.split(".")[0] == "streamlit":
            return True
    return False


def impure_builders(files: dict[str, Path], graph: dict[str, set[str]]) -> list[str]:
    """Pure builders that are not: a ui/figures module, or a page package's ``views*.py``, importing Streamlit
    or (figures) a ui module outside ui/figures."""
    out = []
    for m, path in files.items():
        figure = ui_package(m) == "figures"
        view = ui_package(m) in PAGE_PACKAGES and m.rpartition(".")[2].startswith("views")
        if (figure or view) and imports_streamlit(path):
            out.append(f"{m} -> streamlit")
        if figure:
            out += [f"{m} -> {w}" for w in graph[m] if w.split(".")[0] == "ui" and ui_package(w) != "figures"]
    return sorted(out)


def session_state_users(files: dict[str, Path]) -> set[str]:
    """Modules outside ui/common and ui/*/state.py that touch ``st.session_state`` (read, write or alias)."""
    out = set()
    for m, path in files.items():
        if ui_package(m) == "common" or (ui_package(m) in PAGE_PACKAGES and m.endswith(".state")):
            continue
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if (isinstance(node, ast.Attribute) and node.attr == "session_state") or (
                    isinstance(node, ast.ImportFrom) and any(a.name == "session_state" for a in node.names)):
                out.add(m)
    return out


def long_pages(files: dict[str, Path]) -> set[str]:
    """Page files over :data:`MAX_PAGE_LINES` lines."""
    return {m for m, p in files.items() if m.startswith("pages.")
            and len(p.read_text(encoding="utf-8").splitlines()) > MAX_PAGE_LINES}


def test_ui_is_one_package_per_page_plus_common_and_figures() -> None:
    flat = {p.name for p in UI.glob("*.py")}
    assert flat == {"__init__.py"}, "a ui module lives in a page's package, ui/common or ui/figures"
    dirs = {p.name for p in UI.iterdir() if p.is_dir() and p.name != "__pycache__"}
    assert dirs == {*PAGE_PACKAGES, *SHARED}
    assert all((UI / d / "__init__.py").is_file() for d in dirs)
    assert {p.stem for p in (ROOT / "pages").glob("*.py")} == set(PAGE_FILES)
    assert set(PAGE_FILES.values()) == set(PAGE_PACKAGES)


def test_a_page_package_imports_only_common_figures_nmt_and_itself() -> None:
    assert page_package_imports(today_graph()) == []


def test_a_page_file_imports_only_its_package_common_and_figures() -> None:
    assert page_file_imports(today_graph()) == []


def test_common_imports_no_page_package() -> None:
    assert common_imports(today_graph()) == []


def test_figures_and_views_are_pure() -> None:
    """ui/figures imports no Streamlit and no ui module outside ui/figures; a page's views*.py no Streamlit."""
    assert impure_builders(today_files(), today_graph()) == []


def test_session_state_only_in_common_and_state_modules() -> None:
    assert sorted(session_state_users(today_files())) == []


def test_page_files_are_thin() -> None:
    assert sorted(long_pages(today_files())) == []


# Planted violations: each rule above reports one, named by its line of the graph.

def test_a_page_package_importing_another_is_caught(tmp_path: Path) -> None:
    files = tree(tmp_path, {"ui/stepper/a.py": "def f():\n    from ui.lesson import b\n    return b\n",
                            "ui/lesson/b.py": "from ui.common import c\nfrom ui.figures import d\nimport nmt.x\n",
                            "ui/common/c.py": "", "ui/figures/d.py": "", "nmt/x.py": ""})
    assert page_package_imports(import_graph(files)) == ["ui.stepper.a -> ui.lesson.b"]


def test_a_page_file_importing_another_package_is_caught(tmp_path: Path) -> None:
    files = tree(tmp_path, {"pages/stepper.py": "from ui.stepper import a\nfrom ui.lesson import b\nimport nmt.x\n",
                            "pages/unlisted.py": "from ui.common import c\n", "ui/stepper/a.py": "",
                            "ui/lesson/b.py": "", "ui/common/c.py": "", "nmt/x.py": ""})
    assert page_file_imports(import_graph(files)) == [
        "pages.stepper -> nmt.x", "pages.stepper -> ui.lesson.b", "pages.unlisted -> (no package in PAGE_FILES)"]


def test_common_importing_a_page_package_is_caught(tmp_path: Path) -> None:
    files = tree(tmp_path, {"ui/common/c.py": "from ui.figures import d\n\ndef f():\n    from ui.paired import e\n",
                            "ui/figures/d.py": "", "ui/paired/e.py": ""})
    assert common_imports(import_graph(files)) == ["ui.common.c -> ui.paired.e"]


def test_streamlit_in_figures_or_views_is_caught(tmp_path: Path) -> None:
    files = tree(tmp_path, {"ui/figures/d.py": "def f():\n    import streamlit as st\n    return st\n",
                            "ui/figures/g.py": "from ui.common import c\n", "ui/common/c.py": "import streamlit\n",
                            "ui/beam/views_x.py": "from streamlit import session_state\n",
                            "ui/beam/panel.py": "import streamlit\n"})
    assert impure_builders(files, import_graph(files)) == [
        "ui.beam.views_x -> streamlit", "ui.figures.d -> streamlit", "ui.figures.g -> ui.common.c"]


def test_session_state_outside_state_modules_is_caught(tmp_path: Path) -> None:
    files = tree(tmp_path, {"ui/beam/panel.py": "import streamlit as st\nss = st.session_state\n",
                            "ui/beam/state.py": "import streamlit as st\nst.session_state['bx_k'] = 1\n",
                            "ui/common/w.py": "import streamlit as st\nst.session_state.clear()\n",
                            "pages/beam_explorer.py": "from streamlit import session_state\n",
                            "ui/beam/views.py": '"""Reads nothing of st.session_state."""\n'})
    assert session_state_users(files) == {"ui.beam.panel", "pages.beam_explorer"}


def test_a_long_page_file_is_caught(tmp_path: Path) -> None:
    files = tree(tmp_path, {"pages/a.py": "x = 1\n" * (MAX_PAGE_LINES + 1), "pages/b.py": "x = 1\n" * MAX_PAGE_LINES})
    assert long_pages(files) == {"pages.a"}
