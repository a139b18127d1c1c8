"""scripts/ stays curated: every file in it has its line in scripts/README.md, and every line names a file
that is there (a one-off script goes to docs/recorded/ instead, with its commands)."""

from __future__ import annotations

import re
from collections import Counter
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
SCRIPTS = ROOT / "scripts"
NOT_LISTED = {"README.md", "__init__.py"}  # the list itself, and the package marker


def listed(text: str) -> list[str]:
    """The file names in the first column of the README's table rows (`` | `name.py` | what | ``)."""
    return re.findall(r"^\| `([^`]+)` \|", text, flags=re.MULTILINE)


def present(folder: Path) -> set[str]:
    """The files in ``folder`` that the README must list (caches and the two exceptions left out)."""
    return {p.name for p in folder.iterdir() if p.is_file() and p.name not in NOT_LISTED
            and not p.name.endswith(".pyc")}


def test_listed_reads_the_first_column_only() -> None:
    text = "| file | what |\n|---|---|\n| **Group** | |\n| `a.py` | runs `b.py` |\n| `c.sh` | x |\n"
    assert listed(text) == ["a.py", "c.sh"]


def test_every_script_is_listed_once_and_every_listed_script_exists() -> None:
    names = listed((SCRIPTS / "README.md").read_text(encoding="utf-8"))
    assert not [n for n, k in Counter(names).items() if k > 1], "listed twice in scripts/README.md"
    files = present(SCRIPTS)
    assert sorted(files - set(names)) == [], "in scripts/ but not in scripts/README.md (add a line, or record it " \
        "in docs/recorded/ and delete it)"
    assert sorted(set(names) - files) == [], "in scripts/README.md but not in scripts/"
