"""A new machine gets what the code imports: every module imports, and every package it imports is pinned.

`.ci/run` runs the suite in a fresh virtual environment holding only the requirement files, so a
missing requirement fails here, by module name, before anything else; and the pin check fails even
on a machine where the package happens to be installed by hand (scipy once was).
"""

from __future__ import annotations

import ast
import importlib
import importlib.metadata
import importlib.util
import re
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
PACKAGES = ("nmt", "ui", "scripts")  # importable by their dotted names
SCRIPTS = ("train.py", *(f"bench/{p.name}" for p in sorted((ROOT / "bench").glob("*.py"))))  # import-safe files
PAGES = ("app.py", *(f"pages/{p.name}" for p in sorted((ROOT / "pages").glob("*.py"))))  # run by Streamlit only
SOURCES = ("app.py", "train.py", "pages", "nmt", "ui", "scripts", "bench", "tests")
LOCAL = {"nmt", "ui", "scripts", "bench", "tests", "pages", "app", "train", "pretokenize", "stepper_app", "traces",
         "conftest"}
REQUIREMENTS = ("requirements.txt", "requirements-dev.txt")


def _modules() -> list[str]:
    """Dotted names of every module in the importable packages."""
    out = []
    for pkg in PACKAGES:
        for path in sorted((ROOT / pkg).rglob("*.py")):
            parts = path.relative_to(ROOT).with_suffix("").parts
            out.append(".".join(parts[:-1] if parts[-1] == "__init__" else parts))
    return out


def imported_names(tree: ast.AST) -> set[str]:
    """Every module an ``import`` or ``from … import`` names anywhere in ``tree`` (relative ones left out)."""
    names: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            names.update(a.name for a in node.names)
        elif isinstance(node, ast.ImportFrom) and node.module and not node.level:
            names.add(node.module)
    return names


def _source_files() -> list[Path]:
    """The project's Python files."""
    out: list[Path] = []
    for s in SOURCES:
        p = ROOT / s
        out.extend([p] if p.is_file() else sorted(p.rglob("*.py")))
    return out


def third_party(files: list[Path]) -> dict[str, str]:
    """Top-level third-party module → a file importing it (not the standard library, not the project's)."""
    out: dict[str, str] = {}
    for f in files:
        for name in imported_names(ast.parse(f.read_text(encoding="utf-8"))):
            top = name.split(".")[0]
            if top not in sys.stdlib_module_names and top not in LOCAL and top != "__future__":
                out.setdefault(top, str(f.relative_to(ROOT)))
    return out


def _normalise(dist: str) -> str:
    """A distribution name as PEP 503 compares them."""
    return re.sub(r"[-_.]+", "-", dist).lower()


def pinned(text: str) -> dict[str, str]:
    """``name == version`` lines of a requirements file (comments, ``-r`` lines and blanks skipped)."""
    out = {}
    for line in text.splitlines():
        line = line.split("#")[0].strip()
        m = re.fullmatch(r"([A-Za-z0-9][A-Za-z0-9._-]*)\s*==\s*([^\s;]+)", line)
        if m:
            out[_normalise(m.group(1))] = m.group(2)
    return out


@pytest.mark.parametrize("module", _modules())
def test_module_imports(module: str) -> None:
    importlib.import_module(module)


@pytest.mark.parametrize("script", SCRIPTS)
def test_script_imports(script: str, monkeypatch: pytest.MonkeyPatch) -> None:
    name = f"_import_check_{Path(script).stem}"
    spec = importlib.util.spec_from_file_location(name, ROOT / script)
    assert spec and spec.loader
    module = importlib.util.module_from_spec(spec)
    monkeypatch.setitem(sys.modules, name, module)  # dataclasses look their module up while it runs
    spec.loader.exec_module(module)


@pytest.mark.parametrize("page", PAGES)
def test_page_imports(page: str) -> None:
    """A page is a Streamlit script (running it draws the page), so what it imports is imported instead."""
    names = imported_names(ast.parse((ROOT / page).read_text(encoding="utf-8")))
    assert "ui.common" in names  # the frame, or a page's first call: from ui.common import shell
    for name in sorted(names - {"__future__"}):
        importlib.import_module(name)


def test_every_imported_package_is_pinned() -> None:
    """Each third-party package the code imports is installed by a distribution pinned in a requirements file."""
    provides = importlib.metadata.packages_distributions()
    pins: dict[str, str] = {}
    for r in REQUIREMENTS:
        pins.update(pinned((ROOT / r).read_text(encoding="utf-8")))
    missing = []
    for module, where in sorted(third_party(_source_files()).items()):
        dists = {_normalise(d) for d in provides.get(module, [])}
        if not dists:
            missing.append(f"{module} (imported in {where}) is installed by no distribution")
        elif not dists & pins.keys():
            missing.append(f"{module} (imported in {where}) comes from {sorted(dists)}, pinned in no requirements file")
    assert not missing, "\n".join(missing)


def test_pin_reading_and_import_finding() -> None:
    """The two readers above, on hand-written text."""
    assert pinned("# c\n-r requirements.txt\ntorch==2.13.0\nvl_convert-python == 1.9.0.post1  # x\npandas\n") == {
        "torch": "2.13.0", "vl-convert-python": "1.9.0.post1"}
    tree = ast.parse("import a.b, c\nfrom d.e import f\nfrom . import g\nwith x:\n    import h\n")
    assert imported_names(tree) == {"a.b", "c", "d.e", "h"}
