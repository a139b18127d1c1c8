"""The layout shows the architecture: nmt/ is sub-packages by role, each importing only from those below it.

Order (low to high): text → models → decoding → explanation → training → tools. A module may import
from its own sub-package and from lower ones, never from a higher one, at the top of the file or inside
a function. Only the old entry points (``python -m nmt.translate`` …, forwarded for one release) and
the package's own ``__init__`` / ``__main__`` stay flat.
"""

from __future__ import annotations

import ast
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
