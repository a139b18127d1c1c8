"""Debian's Chromium through Playwright for the browser tests: where it is, how it starts, where shots go.

Importing this module skips the importing test module when Playwright or Chromium is missing (never
``playwright install``: Debian's ``chromium`` package is the browser).
"""

from __future__ import annotations

import contextlib
import os
import shutil
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

ROOT = Path(__file__).resolve().parent.parent
ARTIFACTS = ROOT / "test-artifacts"  # screenshots and server logs, git-ignored
CHROMIUM = os.environ.get("CHROMIUM_PATH") or shutil.which("chromium") or "/usr/bin/chromium"
CHROMIUM_ARGS = ["--no-sandbox", "--disable-gpu", "--disable-background-networking",
                 "--disable-component-update", "--disable-sync"]

sync_api = pytest.importorskip("playwright.sync_api", reason="playwright is not installed")
if not Path(CHROMIUM).exists():
    pytest.skip(f"Chromium not found at {CHROMIUM}", allow_module_level=True)


@contextlib.contextmanager
def launched() -> Iterator[Any]:
    """A headless Chromium, closed afterwards."""
    with sync_api.sync_playwright() as p:
        b = p.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS, headless=True)
        try:
            yield b
        finally:
            b.close()


@pytest.fixture(scope="module")
def browser() -> Iterator[Any]:
    """Headless Debian Chromium, shared by a module's tests (import it into the test module)."""
    with launched() as b:
        yield b


@pytest.fixture(scope="module")
def shipped_app_url() -> Iterator[str]:
    """The app on the shipped checkpoints (the models a class sees), stopped after the module's tests."""
    from scripts import app_server

    ARTIFACTS.mkdir(exist_ok=True)
    env = {"RNNSEARCH_CHECKPOINTS": str(ROOT / "checkpoints"), "OMP_NUM_THREADS": "1"}
    with app_server.running_app(env=env, log_dir=ARTIFACTS, timeout=120) as app:
        yield app.url
