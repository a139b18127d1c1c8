"""CI runs what the README tells a new user to run, in a fresh environment, on two xdist workers, and says
where the time went; the server is set up for a class.

The plugins the suite's speed rests on are run here too, in a pytest of their own (``pytester``): the
per-tier times (tests/tier_times.py) and the solo marker's lock between workers (tests/solo.py).
"""

from __future__ import annotations

import json
import re
import subprocess
import tomllib
from pathlib import Path

import pytest

from tests import tier_times

ROOT = Path(__file__).resolve().parent.parent
CI = (ROOT / ".ci" / "run").read_text(encoding="utf-8")
README_TESTS = "pip install -r requirements.txt -r requirements-dev.txt && python -m pytest -q -n 2 --dist loadfile"
pytest_plugins = ["pytester"]


def _ci_test_command() -> str:
    m = re.search(r"^TEST_COMMAND='([^']+)'$", CI, re.M)
    assert m, ".ci/run names no TEST_COMMAND"
    return m.group(1)


def test_ci_runs_the_readme_test_command() -> None:
    command = _ci_test_command()
    assert command == README_TESTS
    assert command in (ROOT / "README.md").read_text(encoding="utf-8")
    assert 'eval "$TEST_COMMAND" || status=$?' in CI.splitlines()
    assert "pytest-xdist==3.8.0" in (ROOT / "requirements-dev.txt").read_text(encoding="utf-8").split()


def test_ci_uses_a_fresh_virtual_environment() -> None:
    lines = [ln.strip() for ln in CI.splitlines() if ln.strip() and not ln.lstrip().startswith("#")]
    venv = next(i for i, ln in enumerate(lines) if "-m venv" in ln)
    activate = next(i for i, ln in enumerate(lines) if ln.startswith(". ") and "activate" in ln)
    check = lines.index("pip check")
    run = lines.index('eval "$TEST_COMMAND" || status=$?')
    assert "--system-site-packages" not in lines[venv]
    assert venv < activate < check < run  # installs and tests happen inside the new environment
    assert 'VENV_DIR=$(mktemp -d)' in lines  # a new folder each run, never a cached environment


def test_server_config_for_a_classroom() -> None:
    cfg = tomllib.loads((ROOT / ".streamlit" / "config.toml").read_text(encoding="utf-8"))
    assert cfg["server"]["showEmailPrompt"] is False  # no "Email:" prompt on a new desktop
    assert cfg["client"]["toolbarMode"] == "viewer"  # no Deploy button or developer menu for visitors
    assert cfg["client"]["showErrorDetails"] == "none"
    assert cfg["browser"]["gatherUsageStats"] is False


def _ci_tail() -> str:
    """The lines of .ci/run from the test run on: the run, its wall time, the per-tier table, the exit."""
    return CI[CI.index("mkdir -p test-artifacts"):]


@pytest.mark.parametrize(("command", "status"), [("true", 0), ("false", 1), ("(exit 3)", 3)])
def test_ci_prints_the_wall_time_and_exits_with_the_runs_status(tmp_path: Path, command: str, status: int) -> None:
    """.ci/run's tail run by bash with a stand-in test command: its exit status is the command's (a failing
    suite fails CI), and the wall time is printed either way."""
    script = f"set -euo pipefail\nTEST_COMMAND={command!r}\n{_ci_tail()}"
    res = subprocess.run(["bash", "-c", script], cwd=tmp_path, capture_output=True, text=True, timeout=60)
    assert res.returncode == status, res.stderr
    assert re.search(rf"^ci: test run wall time \d+ s \(exit status {status}\)$", res.stdout, re.M), res.stdout


def test_ci_asks_for_the_slowest_tests_and_the_per_tier_times() -> None:
    """And for a JUnit report, from which tests/file_order.py's record of seconds per file is refreshed."""
    assert ('export PYTEST_ADDOPTS="--durations=15 --junitxml=test-artifacts/junit.xml" '
            'CI_TIMES_JSON=test-artifacts/ci-times.json') in CI.splitlines()
    assert 'if [ -f "$CI_TIMES_JSON" ]; then python -m tests.tier_times "$CI_TIMES_JSON"; fi' in CI.splitlines()


TIER_MODULES = {  # a module of the made-up suite per rule of tests/tier_times.py, and its tests' tier
    "test_plain.py": ("def test_a():\n    pass\n\ndef test_b():\n    pass\n", "unit"),
    "test_ckpt.py": ('D = "checkpoints"\n\ndef test_c():\n    pass\n', "checkpoint"),
    "test_proc.py": ("import subprocess\n\ndef test_d():\n    pass\n", "subprocess"),
    "test_pages.py": ("from streamlit.testing.v1 import AppTest\nimport subprocess\n\ndef test_e():\n    pass\n",
                      "apptest"),
    "test_web.py": ("import pytest\nimport subprocess\n\n@pytest.mark.browser\ndef test_f():\n    pass\n\n"
                    "@pytest.mark.tier('unit')\ndef test_g():\n    pass\n", "browser"),
}


@pytest.mark.parametrize("workers", [[], ["-n", "2"]], ids=["one process", "two xdist workers"])
def test_tier_times_counts_each_test_in_its_tier(pytester: pytest.Pytester, monkeypatch: pytest.MonkeyPatch,
                                                 workers: list[str]) -> None:
    """A made-up suite of seven tests, one module per rule: the JSON counts them by the rules (the
    explicit mark first, then browser, AppTest, subprocess, checkpoints), with or without xdist."""
    for name, (source, _) in TIER_MODULES.items():
        pytester.makepyfile(**{name.removesuffix(".py"): source})
    out = pytester.path / "times.json"
    monkeypatch.setenv(tier_times.ENV, str(out))
    monkeypatch.setenv("PYTHONPATH", str(ROOT))
    res = pytester.runpytest_subprocess("-p", "tests.tier_times", "-m", "", *workers)
    res.assert_outcomes(passed=7)
    times = json.loads(out.read_text(encoding="utf-8"))
    assert {t: v["tests"] for t, v in times.items()} == {
        "unit": 3, "checkpoint": 1, "subprocess": 1, "apptest": 1, "browser": 1}


@pytest.mark.parametrize(("n", "code"), [(25, pytest.ExitCode.OK), (26, pytest.ExitCode.USAGE_ERROR)])
def test_at_most_25_browser_tests(pytester: pytest.Pytester, monkeypatch: pytest.MonkeyPatch, n: int,
                                  code: pytest.ExitCode) -> None:
    """25 browser tests run; a 26th stops the run at collection, before any test runs."""
    pytester.makepyfile(test_web="import pytest\n\n@pytest.mark.browser\n@pytest.mark.parametrize('k', range("
                        f"{n}))\ndef test_page(k):\n    pass\n")
    monkeypatch.setenv("PYTHONPATH", str(ROOT))
    res = pytester.runpytest_subprocess("-p", "tests.tier_times")
    assert res.ret == code, res.stdout.str()[-500:]
    if code != pytest.ExitCode.OK:
        assert "26 tests are marked browser, at most 25 may be" in res.stderr.str(), res.stderr.str()[-500:]


def test_tier_times_sums_setup_and_call_seconds_per_tier() -> None:
    """Hand-made reports: setup and call seconds are summed, teardown's are not; each test counts once."""
    def report(tier: str, when: str, seconds: float) -> pytest.TestReport:
        return pytest.TestReport("t.py::x", ("t.py", 1, "x"), {}, "passed", None, when, [], seconds,
                                 user_properties=[("tier", tier)])

    times = tier_times.TierTimes()
    for r in [report("browser", "setup", 4.0), report("browser", "call", 6.5), report("browser", "teardown", 9.0),
              report("unit", "setup", 0.25), report("unit", "call", 0.5), report("browser", "setup", 1.0)]:
        times.add(r)
    got = times.as_json()
    assert got["browser"] == {"tests": 2, "seconds": 11.5} and got["unit"] == {"tests": 1, "seconds": 0.75}
    assert tier_times.table(got).splitlines()[-1].split() == ["all", "3", "12.2", "0.20"]  # 12.25 s rounds to 12.2


SOLO_SUITE = {  # each test appends "<name> start|end <time>" to the log named by SOLO_LOG
    "conftest": """
import os, time
import pytest

@pytest.fixture
def log(request):
    def write(what):
        with open(os.environ["SOLO_LOG"], "a") as f:
            f.write(f"{request.node.name} {what} {time.monotonic()}\\n")
    write("start")
    yield
    write("end")
""",
    "test_many": "import time\n\n" + "".join(
        f"def test_busy{i}(log):\n    time.sleep(0.4)\n\n" for i in range(8)),
    "test_alone": "import time\nimport pytest\n\n@pytest.mark.solo\ndef test_solo(log):\n    time.sleep(1.5)\n",
}


def test_a_solo_test_runs_while_the_other_worker_waits(pytester: pytest.Pytester,
                                                       monkeypatch: pytest.MonkeyPatch) -> None:
    """Two workers, one file each: while the solo test runs, no other test starts or runs."""
    pytester.makepyfile(**SOLO_SUITE)
    log = pytester.path / "log.txt"
    monkeypatch.setenv("SOLO_LOG", str(log))
    monkeypatch.setenv("PYTHONPATH", str(ROOT))
    res = pytester.runpytest_subprocess("-p", "tests.solo", "-n", "2", "--dist", "loadfile", "-m", "")
    res.assert_outcomes(passed=9)
    spans: dict[str, list[float]] = {}
    for line in log.read_text().splitlines():
        name, _, at = line.split()
        spans.setdefault(name, []).append(float(at))
    solo_start, solo_end = spans.pop("test_solo")
    overlapping = [n for n, (start, end) in spans.items() if start < solo_end and end > solo_start]
    assert len(spans) == 8 and not overlapping, (overlapping, solo_start, solo_end, spans)


ORDER_SUITE = {
    "conftest": """
import os

import pytest


@pytest.fixture(autouse=True)
def log(request):
    with open(os.environ["ORDER_LOG"], "a") as f:
        f.write(os.environ["PYTEST_XDIST_WORKER"] + " " + request.node.nodeid + "\\n")
""",
    **{f"test_many{k}": "".join(f"def test_quick{i}():\n    pass\n\n" for i in range(6)) for k in range(4)},
    "test_web": "import pytest\n\n@pytest.mark.browser\ndef test_page():\n    pass\n",
    "test_alone": "import pytest\n\n@pytest.mark.solo\n@pytest.mark.browser\ndef test_kill():\n    pass\n",
}


def test_the_heaviest_file_starts_first_on_two_workers(pytester: pytest.Pytester,
                                                       monkeypatch: pytest.MonkeyPatch) -> None:
    """tests/file_order.py: a one-test browser file (30 s estimated) against four files of six unit tests
    (1.2 s each): it is the first test of one of the two workers, where pytest-xdist's own order (files by
    number of tests) would have started it last; a file with a solo test, as heavy, is the last of its worker's.
    (Each worker's own order: under load one worker may start two tests before the other starts any.)"""
    pytester.makepyfile(**ORDER_SUITE)
    log = pytester.path / "order.txt"
    monkeypatch.setenv("ORDER_LOG", str(log))
    monkeypatch.setenv("PYTHONPATH", str(ROOT))
    res = pytester.runpytest_subprocess("-p", "tests.file_order", "-n", "2", "--dist", "loadfile", "-m", "",
                                        "-W", "ignore::pytest.PytestUnknownMarkWarning")
    res.assert_outcomes(passed=26)
    by_worker: dict[str, list[str]] = {}
    for line in log.read_text().splitlines():
        worker, test = line.split()
        by_worker.setdefault(worker, []).append(test)
    assert len(by_worker) == 2 and sum(map(len, by_worker.values())) == 26, by_worker
    # the first test of one worker, whichever worker starts sooner; the last test of its worker
    assert any(tests[0] == "test_web.py::test_page" for tests in by_worker.values()), by_worker
    assert any(tests[-1] == "test_alone.py::test_kill" for tests in by_worker.values()), by_worker


def test_file_seconds_from_a_junit_report(tmp_path: Path) -> None:
    """Per file, the summed times of its cases (classes inside a module too), longest first."""
    from tests import file_order

    xml = tmp_path / "junit.xml"
    xml.write_text('<testsuites><testsuite>'
                   '<testcase classname="tests.test_ci" name="a" time="1.25"/>'
                   '<testcase classname="tests.test_ci" name="b" time="0.5"/>'
                   '<testcase classname="tests.test_corpus.TestX" name="c" time="3.0"/>'
                   '<testcase classname="tests.no_such_file" name="d" time="9.0"/>'
                   '</testsuite></testsuites>')
    assert list(file_order.from_junit(xml).items()) == [("tests/test_corpus.py", 3.0), ("tests/test_ci.py", 1.8)]


def test_apptest_scans_the_installed_packages_once_per_process() -> None:
    """tests/conftest.py caches Streamlit's component scan (every installed distribution's metadata, read
    again by each new AppTest): a second scan is the first one's result, not a new reading."""
    from streamlit.components.v2 import manifest_scanner

    assert manifest_scanner.scan_component_manifests() is manifest_scanner.scan_component_manifests()


def test_apptest_compiles_a_script_once_until_the_file_changes(tmp_path: Path) -> None:
    """tests/conftest.py keeps the compiled page scripts for the process (AppTest compiled them at every run):
    a second run of an unchanged file reuses the code, and a file written again runs its new text."""
    import os

    from streamlit.runtime.scriptrunner.script_cache import ScriptCache
    from streamlit.testing.v1 import AppTest

    page = tmp_path / "page.py"
    page.write_text('import streamlit as st\nst.markdown("first")\n')
    at = AppTest.from_file(str(page)).run()
    assert [m.value for m in at.markdown] == ["first"]
    assert ScriptCache().get_bytecode(str(page)) is ScriptCache().get_bytecode(str(page))
    before = ScriptCache().get_bytecode(str(page))
    page.write_text('import streamlit as st\nst.markdown("second")\n')
    os.utime(page, ns=(page.stat().st_atime_ns, page.stat().st_mtime_ns + 10**9))  # a later write, even within a tick
    assert ScriptCache().get_bytecode(str(page)) is not before
    assert [m.value for m in at.run().markdown] == ["second"]
