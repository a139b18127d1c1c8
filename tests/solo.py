"""Tests that cannot share the machine with another pytest-xdist worker: ``@pytest.mark.solo``.

A test marked ``solo`` (a real kill -9 or SIGTERM with a deadline, DDP ranks, a timing bound) runs while
no other worker runs a test: every worker holds a shared lock on one file for each test it runs, a solo
test holds it exclusively, so the other worker finishes its current test and waits until the solo one
is done. A second "gate" lock, taken briefly before the main one, keeps a waiting solo test from being
starved by the other worker's stream of shared locks. Without xdist (or off POSIX) it does nothing.
Registered in tests/conftest.py.
"""

from __future__ import annotations

import tempfile
from collections.abc import Iterator
from pathlib import Path

import pytest

try:
    import fcntl
except ImportError:  # not POSIX: no exclusion (the suite runs on Linux)
    fcntl = None  # type: ignore[assignment]

_FILES: dict[str, object] = {}


def pytest_configure(config: pytest.Config) -> None:
    config.addinivalue_line("markers", "solo: cannot share the machine with another xdist worker (tests/solo.py)")
    worker = getattr(config, "workerinput", None)
    if worker is None or fcntl is None:
        return
    base = Path(tempfile.gettempdir()) / f"pytest-solo-{worker['testrunuid']}"
    _FILES["gate"] = open(f"{base}.gate", "a")  # held for the whole run
    _FILES["main"] = open(f"{base}.lock", "a")


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_protocol(item: pytest.Item) -> Iterator[None]:
    if not _FILES:
        yield
        return
    gate, main = _FILES["gate"].fileno(), _FILES["main"].fileno()  # type: ignore[attr-defined]
    fcntl.flock(gate, fcntl.LOCK_EX)
    try:
        fcntl.flock(main, fcntl.LOCK_EX if item.get_closest_marker("solo") else fcntl.LOCK_SH)
    finally:
        fcntl.flock(gate, fcntl.LOCK_UN)
    try:
        yield
    finally:
        fcntl.flock(main, fcntl.LOCK_UN)
