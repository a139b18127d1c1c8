"""Where the suite's time goes, by tier: a pytest plugin (registered in tests/conftest.py).

Each test gets one tier, the first rule that matches:

1. an explicit ``@pytest.mark.tier("name")``;
2. ``browser``: marked ``browser`` (Playwright and Chromium against a server);
3. ``apptest``: its module runs pages in Streamlit's AppTest (it holds ``streamlit.testing``'s ``AppTest``,
   or ``tests.page_app`` / ``tests.stepper_app`` or something taken from them);
4. ``subprocess``: its module holds ``subprocess``, ``multiprocessing`` or ``scripts.app_server``
   (or something taken from them);
5. ``checkpoint``: its module's source names the shipped ``"checkpoints"`` folder;
6. ``unit``: the rest.

The browser tier is capped: a run that selects more than :data:`BROWSER_CAP` browser tests stops at
collection (issue 50: what only a browser sees fits in that many; the rest is AppTest's).

Rules 3 to 5 look at the whole module, so a module's every test is in its heaviest tier. When
``CI_TIMES_JSON`` names a file, the run (the controller, under pytest-xdist) writes there, per tier, the
summed setup + call seconds and the number of tests; ``python -m tests.tier_times FILE`` prints the table
(``.ci/run`` does, after the run).
"""

from __future__ import annotations

import inspect
import json
import os
import sys
from pathlib import Path
from types import ModuleType

import pytest

TIERS = ("unit", "checkpoint", "subprocess", "apptest", "browser")
BROWSER_CAP = 25
ENV = "CI_TIMES_JSON"
APPTEST_MODULES = ("streamlit.testing", "tests.page_app", "tests.stepper_app")
SUBPROCESS_MODULES = ("subprocess", "multiprocessing", "torch.multiprocessing", "scripts.app_server")


def _origins(module: ModuleType) -> set[str]:
    """The names of the modules that a test module's globals are, or come from."""
    out = set()
    for value in vars(module).values():
        name = value.__name__ if inspect.ismodule(value) else getattr(value, "__module__", None)
        if isinstance(name, str):
            out.add(name)
    return out


def _from(origins: set[str], prefixes: tuple[str, ...]) -> bool:
    return any(o == p or o.startswith(p + ".") for o in origins for p in prefixes)


def module_tier(module: ModuleType) -> str:
    """Rules 3 to 6 of the module docstring for ``module``."""
    origins = _origins(module)
    if _from(origins, APPTEST_MODULES):
        return "apptest"
    if _from(origins, SUBPROCESS_MODULES):
        return "subprocess"
    try:
        source = inspect.getsource(module)
    except (OSError, TypeError):
        source = ""
    return "checkpoint" if '"checkpoints"' in source else "unit"


def tier_of(item: pytest.Item) -> str:
    """The tier of one collected test (the module docstring's rules, in order)."""
    mark = item.get_closest_marker("tier")
    if mark is not None:
        return str(mark.args[0])
    if item.get_closest_marker("browser") is not None:
        return "browser"
    module = getattr(item, "module", None)
    return module_tier(module) if module is not None else "unit"


class TierTimes:
    """Sums the reports' setup and call seconds per tier; counts each test once (its setup)."""

    def __init__(self) -> None:
        self.seconds = dict.fromkeys(TIERS, 0.0)
        self.tests = dict.fromkeys(TIERS, 0)

    def add(self, report: pytest.TestReport) -> None:
        tier = dict(report.user_properties).get("tier", "unit")
        if report.when in ("setup", "call"):
            self.seconds[tier] = self.seconds.get(tier, 0.0) + report.duration
        if report.when == "setup":
            self.tests[tier] = self.tests.get(tier, 0) + 1

    def as_json(self) -> dict[str, dict[str, float]]:
        return {t: {"tests": self.tests[t], "seconds": round(self.seconds[t], 2)} for t in self.seconds}


def table(times: dict[str, dict[str, float]]) -> str:
    """The per-tier table: tests, summed seconds and minutes, and a total line."""
    rows = [f"{'tier':<11} {'tests':>6} {'seconds':>9} {'minutes':>8}"]
    for tier, v in times.items():
        rows.append(f"{tier:<11} {v['tests']:>6} {v['seconds']:>9.1f} {v['seconds'] / 60:>8.2f}")
    n, s = sum(v["tests"] for v in times.values()), sum(v["seconds"] for v in times.values())
    rows.append(f"{'all':<11} {n:>6} {s:>9.1f} {s / 60:>8.2f}")
    return "\n".join(rows)


_CONFIG: dict[str, pytest.Config] = {}  # the running session's config (reports do not carry it)


def pytest_configure(config: pytest.Config) -> None:
    config.addinivalue_line("markers", "tier(name): the test's tier for CI_TIMES_JSON (tests/tier_times.py)")
    config._tier_times = TierTimes()  # type: ignore[attr-defined]
    _CONFIG["config"] = config


@pytest.hookimpl(trylast=True)  # after -m and -k have deselected
def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    for item in items:
        item.user_properties.append(("tier", tier_of(item)))
    browser = [i.nodeid for i in items if i.get_closest_marker("browser") is not None]
    if len(browser) > BROWSER_CAP:
        raise pytest.UsageError(f"{len(browser)} tests are marked browser, at most {BROWSER_CAP} may be (issue 50): "
                                "move what AppTest can see to AppTest, merge the rest")


def pytest_runtest_logreport(report: pytest.TestReport) -> None:
    config = _CONFIG.get("config")
    if config is not None and not hasattr(config, "workerinput"):  # the controller (or a run without xdist)
        config._tier_times.add(report)  # type: ignore[attr-defined]


def pytest_terminal_summary(terminalreporter: pytest.TerminalReporter, config: pytest.Config) -> None:
    path = os.environ.get(ENV)
    if not path or hasattr(config, "workerinput"):
        return
    times = config._tier_times.as_json()  # type: ignore[attr-defined]
    Path(path).parent.mkdir(parents=True, exist_ok=True)
    Path(path).write_text(json.dumps(times, indent=1) + "\n", encoding="utf-8")
    terminalreporter.write_line(f"time per tier (setup + call, summed over workers) written to {path}")


if __name__ == "__main__":
    print(table(json.loads(Path(sys.argv[1]).read_text(encoding="utf-8"))))
