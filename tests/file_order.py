"""The heaviest test files first, so the two pytest-xdist workers end together (a pytest plugin).

``--dist loadfile`` hands whole files to whichever worker runs short of work, in the order of the
collection; pytest-xdist would first sort the files by their number of tests, which puts the browser
files (one to three tests each, a minute or more apiece) last, and the run ended with one worker on a
long browser file while the other sat idle. This plugin turns that sort off and orders the files by
their seconds instead, longest first (the longest-processing-time rule of scheduling): each file's
setup + call seconds as recorded in :data:`RECORD` on a clean-clone run, or, for a file not recorded
yet, its number of tests times its tier's seconds per test (:data:`PER_TEST`). A file holding a ``solo`` test
(tests/solo.py) goes last: a solo test waits for the other worker's running test to end, which early in the
run is a minute-long browser test; at the end the other worker has nothing long left. Tests keep their order
within a file; nothing is deselected.

``python -m tests.file_order JUNIT_XML`` rewrites :data:`RECORD` from a run's JUnit XML report
(``pytest --junitxml``), per file the sum of its tests' times.
"""

from __future__ import annotations

import json
import sys
import xml.etree.ElementTree as ET
from collections import defaultdict
from pathlib import Path

import pytest

from tests.tier_times import tier_of

RECORD = Path(__file__).with_name("file_seconds.json")
# Seconds per test of a file not yet in RECORD, by tier (bench/ci-times.json's clean-clone averages, rounded up).
PER_TEST = {"browser": 30.0, "subprocess": 1.5, "apptest": 0.9, "checkpoint": 0.6, "unit": 0.2}


def recorded() -> dict[str, float]:
    """The recorded seconds per test file (path relative to the repository, as in node ids)."""
    try:
        return {str(k): float(v) for k, v in json.loads(RECORD.read_text(encoding="utf-8")).items()}
    except (OSError, ValueError):
        return {}


def file_of(item: pytest.Item) -> str:
    """The test file of ``item`` as its node id names it (``tests/test_x.py``)."""
    return item.nodeid.split("::", 1)[0]


def file_seconds(items: list[pytest.Item], record: dict[str, float]) -> dict[str, float]:
    """Each file's expected seconds: recorded, or estimated from its tests' tiers."""
    estimate: dict[str, float] = defaultdict(float)
    for item in items:
        estimate[file_of(item)] += PER_TEST.get(tier_of(item), PER_TEST["unit"])
    return {f: record.get(f, s) for f, s in estimate.items()}


def pytest_configure(config: pytest.Config) -> None:
    if hasattr(config.option, "loadscopereorder"):  # pytest-xdist's sort by number of tests: off
        config.option.loadscopereorder = False


@pytest.hookimpl(trylast=True)  # after deselection: the files as they will run
def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    seconds = file_seconds(items, recorded())
    solo = {file_of(item) for item in items if item.get_closest_marker("solo") is not None}

    def rank(item: pytest.Item) -> tuple[bool, float]:
        name = file_of(item)
        return name in solo, -seconds[name]

    items.sort(key=rank)  # stable: a file's tests keep their order


def from_junit(xml_path: Path) -> dict[str, float]:
    """Per test file, the summed ``time`` of its test cases in a JUnit XML report, longest first."""
    totals: dict[str, float] = defaultdict(float)
    for case in ET.parse(xml_path).getroot().iter("testcase"):
        module = case.get("classname", "").split(".")
        # "tests.test_x" or "tests.test_x.TestClass": the file is the longest prefix that is a module file
        for n in range(len(module), 0, -1):
            path = "/".join(module[:n]) + ".py"
            if (RECORD.parent.parent / path).is_file():
                totals[path] += float(case.get("time", 0.0))
                break
    return {f: round(s, 1) for f, s in sorted(totals.items(), key=lambda kv: -kv[1])}


if __name__ == "__main__":
    RECORD.write_text(json.dumps(from_junit(Path(sys.argv[1])), indent=1) + "\n", encoding="utf-8")
    print(f"wrote {RECORD}")
