"""CI runs what the README tells a new user to run, in a fresh environment; the server is set up for a class."""

from __future__ import annotations

import re
import tomllib
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
CI = (ROOT / ".ci" / "run").read_text(encoding="utf-8")


def _ci_test_command() -> str:
    m = re.search(r"^TEST_COMMAND='([^']+)'$", CI, re.M)
    assert m, ".ci/run names no TEST_COMMAND"
    return m.group(1)


def test_ci_runs_the_readme_test_command() -> None:
    command = _ci_test_command()
    assert command == "pip install -r requirements.txt -r requirements-dev.txt && python -m pytest -q"
    assert command in (ROOT / "README.md").read_text(encoding="utf-8")
    assert 'eval "$TEST_COMMAND"' in CI


def test_ci_uses_a_fresh_virtual_environment() -> None:
    lines = [ln.strip() for ln in CI.splitlines() if ln.strip() and not ln.lstrip().startswith("#")]
    venv = next(i for i, ln in enumerate(lines) if "-m venv" in ln)
    activate = next(i for i, ln in enumerate(lines) if ln.startswith(". ") and "activate" in ln)
    check = lines.index("pip check")
    run = lines.index('eval "$TEST_COMMAND"')
    assert "--system-site-packages" not in lines[venv]
    assert venv < activate < check < run  # installs and tests happen inside the new environment
    assert 'VENV_DIR=$(mktemp -d)' in lines  # a new folder each run, never a cached environment


def test_server_config_for_a_classroom() -> None:
    cfg = tomllib.loads((ROOT / ".streamlit" / "config.toml").read_text(encoding="utf-8"))
    assert cfg["server"]["showEmailPrompt"] is False  # no "Email:" prompt on a new desktop
    assert cfg["client"]["toolbarMode"] == "viewer"  # no Deploy button or developer menu for visitors
    assert cfg["client"]["showErrorDetails"] == "none"
    assert cfg["browser"]["gatherUsageStats"] is False
