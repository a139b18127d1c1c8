"""The layout shows the architecture: nmt/ is sub-packages by role, ui/ one package per page.

nmt/, low to high: text → models → decoding → explanation → training → tools. A module may import
from its own sub-package and from lower ones, never from a higher one, at the top of the file or inside
a function. Only the old entry points (``python -m nmt.translate`` …, forwarded for one release) and
the package's own ``__init__`` / ``__main__`` stay flat.

ui/ (issue 49): its rules are in tests/test_layout_ui.py.

No import circles in the whole tree (nmt/, ui/, app.py and pages/), a function's own imports counted too:
a module that "builds on" another imports it, never the other way round. Each rule is shown to catch a
planted violation.
"""

from __future__ import annotations

import ast
import functools
from collections.abc import Iterable
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
NMT = ROOT / "nmt"
LAYERS = ["text", "models", "decoding", "explanation", "training", "tools"]
OLD_ENTRY_POINTS = {"align", "evaluate", "experiment", "export", "faithfulness", "paired", "seal", "timeline",
                    "translate"}


def nmt_imports(path: Path) -> list[tuple[int, str]]:
    """(line, dotted module) of every ``nmt…`` import in a file, nested ones included."""
    out = []
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.ImportFrom) and node.module and node.module.split(".")[0] == "nmt":
            if node.module == "nmt":
                out += [(node.lineno, f"nmt.{a.name}") for a in node.names]
            else:
                out.append((node.lineno, node.module))
        elif isinstance(node, ast.Import):
            out += [(node.lineno, a.name) for a in node.names if a.name.split(".")[0] == "nmt"]
    return out


def upward(path: Path) -> list[str]:
    """This file's imports of a sub-package above its own, as 'line: module' strings."""
    layer = LAYERS.index(path.relative_to(NMT).parts[0])
    bad = []
    for line, module in nmt_imports(path):
        parts = module.split(".")
        if len(parts) > 1 and parts[1] in LAYERS and LAYERS.index(parts[1]) > layer:
            bad.append(f"{line}: {module}")
    return bad


@pytest.mark.parametrize("layer", LAYERS)
def test_no_upward_imports(layer: str) -> None:
    found = {str(p.relative_to(ROOT)): upward(p) for p in sorted((NMT / layer).rglob("*.py"))}
    assert {k: v for k, v in found.items() if v} == {}


def test_upward_import_is_caught(tmp_path: Path) -> None:
    """The check itself can fail: a text module importing from decoding is reported, with its line."""
    fake = NMT / "text" / "_layout_probe.py"
    fake.write_text("def f():\n    from nmt.decoding.trace import DecodeTrace\n    return DecodeTrace\n")
    try:
        assert upward(fake) == ["2: nmt.decoding.trace"]
    finally:
        fake.unlink()


def test_flat_modules_are_only_the_old_entry_points() -> None:
    flat = {p.stem for p in NMT.glob("*.py")} - {"__init__", "__main__"}
    assert flat == OLD_ENTRY_POINTS
    for name in OLD_ENTRY_POINTS:  # each forwards to the one tool and imports nothing of the library
        text = (NMT / f"{name}.py").read_text()
        assert f'main(["{name}", *sys.argv[1:]])' in text
        assert [m for _, m in nmt_imports(NMT / f"{name}.py")] == ["nmt.__main__"]


def test_every_module_is_in_a_role_package() -> None:
    dirs = {p.name for p in NMT.iterdir() if p.is_dir() and p.name != "__pycache__"}
    assert dirs == set(LAYERS)
    for layer in LAYERS:
        assert (NMT / layer / "__init__.py").is_file()


# ----------------------------------------------------------------------------------------------
# No import circles: nmt/, ui/, app.py and pages/
# ----------------------------------------------------------------------------------------------

TREE = ["nmt", "ui"]  # packages; app.py and pages/*.py are added as modules "app" and "pages.NAME"
def module_files(root: Path = ROOT) -> dict[str, Path]:
    """Every module of the tree by its dotted name (a package by its ``__init__``)."""
    out = {}
    for package in TREE:
        for p in sorted((root / package).rglob("*.py")):
            parts = p.relative_to(root).with_suffix("").parts
            out[".".join(parts[:-1] if parts[-1] == "__init__" else parts)] = p
    out["app"] = root / "app.py"
    out |= {f"pages.{p.stem}": p for p in sorted((root / "pages").glob("*.py"))}
    return out


def import_graph(files: dict[str, Path]) -> dict[str, set[str]]:
    """Each module's imports of other modules of the tree (``from a.b import c`` counts as a.b.c when c is a
    module, else as a.b), at the top of the file or inside a function."""
    def known(name: str) -> str | None:
        while name and name not in files:
            name = name.rpartition(".")[0]
        return name or None

    graph: dict[str, set[str]] = {}
    for name, path in files.items():
        found: set[str | None] = set()
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
                found |= {f"{node.module}.{a.name}" if f"{node.module}.{a.name}" in files else known(node.module)
                          for a in node.names}
            elif isinstance(node, ast.Import):
                found |= {known(a.name) for a in node.names}
        graph[name] = {m for m in found if m is not None and m != name}
    return graph


def circles(graph: dict[str, set[str]]) -> list[list[str]]:
    """The import circles: each set of modules that reach one another (Tarjan's strongly connected
    components of more than one module), sorted."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    out: list[list[str]] = []

    def visit(v: str) -> None:
        index[v] = low[v] = len(index)
        stack.append(v)
        for w in sorted(graph[v]):
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in stack:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            component = []
            while True:
                w = stack.pop()
                component.append(w)
                if w == v:
                    break
            if len(component) > 1:
                out.append(sorted(component))

    for v in sorted(graph):
        if v not in index:
            visit(v)
    return sorted(out)


def names(found: Iterable[list[str]]) -> list[str]:
    return [" ↔ ".join(c) for c in found]


@functools.cache
def today_files() -> dict[str, Path]:
    """This checkout's modules (read once for all the tests below)."""
    return module_files()


@functools.cache
def today_graph() -> dict[str, set[str]]:
    """This checkout's import graph (built once for all the tests below)."""
    return import_graph(today_files())


def test_no_import_circles_in_the_tree() -> None:
    """nmt/, ui/, app.py and pages/: no circle (the last two, nmt checkpoint ↔ seal and ui checkpoint_files ↔
    models ↔ twins, were broken by moving code, issue 49)."""
    assert names(circles(today_graph())) == []


def tree(root: Path, modules: dict[str, str]) -> dict[str, Path]:
    """A small tree under ``root`` for the planted violations: each ``path: source``, every package its
    ``__init__``, an empty ``app.py`` unless given; its modules by dotted name."""
    (root / "nmt").mkdir(exist_ok=True)
    (root / "pages").mkdir(exist_ok=True)
    modules = {"app.py": "", **modules}
    for rel, source in modules.items():
        path = root / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(source)
        for folder in path.relative_to(root).parents:
            if folder.parts and folder.parts[0] in TREE and not (root / folder / "__init__.py").exists():
                (root / folder / "__init__.py").write_text("")
    return module_files(root)


def test_an_import_circle_is_caught(tmp_path: Path) -> None:
    """The check itself can fail: ui/figures/a.py importing ui.figures.b inside a function, and b importing a."""
    files = tree(tmp_path, {"app.py": "from ui.common import shell\n", "ui/common/shell.py": "import streamlit\n",
                            "ui/figures/a.py": "def f():\n    from ui.figures import b\n    return b\n",
                            "ui/figures/b.py": "from ui.figures.a import f\n",
                            "pages/p.py": "from ui.figures import a\n"})
    assert circles(import_graph(files)) == [["ui.figures.a", "ui.figures.b"]]
