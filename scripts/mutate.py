"""Mutation testing: do the tests notice realistic mistakes in the code they guard?

    python -m scripts.mutate                     # every mutant in scripts/mutants.py -> bench/mutation.json
    python -m scripts.mutate --only beam_eos_rank_k,ig_steps_ignored --json OUT
    python -m scripts.mutate --list              # the mutants, one a line

Each mutant (:data:`scripts.mutants.MUTANTS`) is one exact source edit (file, old snippet, new snippet)
and the tests that should catch it. The repository's tracked and untracked (not ignored) files are
copied once into a temporary folder (checkpoints hard-linked, ``data`` linked to the corpora); each
mutant is applied there, its tests run (``pytest -x``, one torch thread, a timeout), and the file
is put back. The working tree is never edited. A mutant is *killed* when its tests fail or time
out, *survived* when they pass; a snippet that is not found exactly once is an *error* (the list is
out of date). Each mutant's pytest runs in a forked child of a process that has imported torch, pandas,
Captum … once (``--no-fork``: a fresh interpreter each time). Run it niced:
``OMP_NUM_THREADS=1 nice -n 15 python -m scripts.mutate``.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

from scripts.mutants import EXPLAINED, MUTANTS, Mutant

ROOT = Path(__file__).resolve().parents[1]
LINKED = ("checkpoints",)  # large files: hard-linked (or copied) into the copy, never edited


def repo_files(root: Path) -> list[str]:
    """Tracked and untracked-but-not-ignored files of the repository (``git ls-files``)."""
    out = subprocess.run(["git", "ls-files", "-z", "--cached", "--others", "--exclude-standard"], cwd=root,
                         capture_output=True, check=True).stdout.decode()
    return sorted({f for f in out.split("\0") if f and (root / f).is_file()})


def make_copy(root: Path, dest: Path) -> Path:
    """A copy of the repository at ``dest/repo`` (checkpoints hard-linked where possible, ``data``
    linked to the real corpora when they are found)."""
    repo = dest / "repo"
    for rel in repo_files(root):
        src, dst = root / rel, repo / rel
        dst.parent.mkdir(parents=True, exist_ok=True)
        if rel.split("/", 1)[0] in LINKED:
            try:
                os.link(src, dst)
                continue
            except OSError:
                pass
        shutil.copy2(src, dst)
    for cand in (root / "data", root.parent / "shared" / "data"):
        if (cand / "multi30k").is_dir():
            (repo / "data").symlink_to(cand.resolve(), target_is_directory=True)
            break
    return repo


PRELOAD = ("torch", "numpy", "pandas", "altair", "scipy.stats", "captum.attr", "sacrebleu", "sacremoses",
           "streamlit", "pytest")  # third-party only: the project's own modules are imported by each child


def preload() -> None:
    """Import the heavy third-party packages once, so that each forked child starts in a second (on
    the loaded 2-core machine a fresh interpreter spends over a minute importing them)."""
    import importlib

    for name in PRELOAD:
        try:
            importlib.import_module(name)
        except ImportError:
            pass
    import torch

    torch.set_num_threads(1)


def run_forked(repo: Path, tests: tuple[str, ...], timeout: float) -> tuple[str, float, str]:
    """:func:`run_tests` in a forked child of this process (third-party packages already imported;
    the project's modules are not, so the child imports the mutated copy)."""
    t0 = time.perf_counter()
    log = repo.parent / "pytest.log"
    pid = os.fork()
    if pid == 0:  # the child: run pytest in the copy, exit with its status
        code = 3
        try:
            fd = os.open(log, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o644)
            os.dup2(fd, 1)
            os.dup2(fd, 2)
            os.chdir(repo)
            sys.path.insert(0, str(repo))
            for name in [n for n in sys.modules if n == "scripts" or n.startswith("scripts.")]:
                del sys.modules[name]  # this runner's own package: the copy's scripts/ are the ones under test
            import pytest

            code = int(pytest.main(["-x", "-q", "-p", "no:cacheprovider", *tests]))
        finally:
            os._exit(code)
    while True:
        done, status = os.waitpid(pid, os.WNOHANG)
        if done:
            break
        if time.perf_counter() - t0 > timeout:
            os.kill(pid, 9)
            os.waitpid(pid, 0)
            return "timeout", time.perf_counter() - t0, ""
        time.sleep(0.2)
    code = os.waitstatus_to_exitcode(status)
    tail = "\n".join(log.read_text(errors="replace").strip().splitlines()[-3:])
    return ("passed" if code == 0 else "failed"), time.perf_counter() - t0, tail


def run_tests(repo: Path, tests: tuple[str, ...], timeout: float) -> tuple[str, float, str]:
    """("passed" | "failed" | "timeout", seconds, the last lines of pytest's output), in a fresh interpreter."""
    env = {**os.environ, "OMP_NUM_THREADS": "1", "MKL_NUM_THREADS": "1", "PYTHONDONTWRITEBYTECODE": "1"}
    cmd = [sys.executable, "-m", "pytest", "-x", "-q", "-p", "no:cacheprovider", *tests]
    t0 = time.perf_counter()
    try:
        res = subprocess.run(cmd, cwd=repo, env=env, capture_output=True, text=True, timeout=timeout)
    except subprocess.TimeoutExpired:
        return "timeout", time.perf_counter() - t0, ""
    tail = "\n".join((res.stdout + res.stderr).strip().splitlines()[-3:])
    return ("passed" if res.returncode == 0 else "failed"), time.perf_counter() - t0, tail


def apply(repo: Path, m: Mutant) -> str | None:
    """Apply ``m`` in the copy; the original text, or None when its snippet is not there exactly once."""
    path = repo / m.file
    text = path.read_text(encoding="utf-8")
    if text.count(m.old) != 1:
        return None
    path.write_text(text.replace(m.old, m.new), encoding="utf-8")
    return text


def mutate(repo: Path, mutants: list[Mutant], timeout: float, log: bool = True,
           fork: bool = True) -> list[dict[str, Any]]:
    """Run every mutant in ``repo`` (restoring each file after), one result dict per mutant."""
    results = []
    runner = run_forked if fork else run_tests
    for k, m in enumerate(mutants, 1):
        original = apply(repo, m)
        if original is None:
            row = {"name": m.name, "file": m.file, "status": "error", "why": "snippet not found exactly once"}
        else:
            try:
                outcome, seconds, tail = runner(repo, m.tests, timeout)
            finally:
                (repo / m.file).write_text(original, encoding="utf-8")
            row = {"name": m.name, "file": m.file, "status": "survived" if outcome == "passed" else "killed",
                   "by": outcome, "seconds": round(seconds, 1), "tests": list(m.tests), "what": m.what}
            if outcome == "failed":
                row["output"] = tail
        results.append(row)
        if log:
            print(f"[{k}/{len(mutants)}] {row['status']:8s} {m.name} ({row.get('seconds', 0)} s)", flush=True)
    return results


def summary(results: list[dict[str, Any]]) -> dict[str, Any]:
    """Counts and the kill rate over the mutants that could be applied."""
    n = {s: sum(r["status"] == s for r in results) for s in ("killed", "survived", "error")}
    applied = n["killed"] + n["survived"]
    return {**n, "total": len(results), "killed_rate": round(n["killed"] / applied, 4) if applied else None,
            "survivors": [r["name"] for r in results if r["status"] == "survived"]}


def before(previous: dict[str, Any]) -> dict[str, Any] | None:
    """The counts of the results file this run replaces (its command and counts), or None for a new file."""
    if "killed" not in previous:
        return None
    return {k: previous[k] for k in ("command", "killed", "survived", "error", "total", "seconds") if k in previous}


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--only", help="comma-separated mutant names")
    p.add_argument("--json", default=str(ROOT / "bench" / "mutation.json"))
    p.add_argument("--timeout", type=float, default=600.0, help="seconds per mutant's tests")
    p.add_argument("--list", action="store_true")
    p.add_argument("--merge", action="store_true", help="update the mutants' rows of an existing --json")
    p.add_argument("--no-fork", action="store_true", help="a fresh interpreter per mutant (slower; no preload)")
    args = p.parse_args(argv)
    names = [m.name for m in MUTANTS]
    if len(set(names)) != len(names):
        raise SystemExit("mutant names must be unique")
    chosen = MUTANTS if not args.only else [m for m in MUTANTS if m.name in set(args.only.split(","))]
    if args.list:
        for m in chosen:
            print(f"{m.name:32s} {m.file:28s} {m.what}")
        return 0
    t0 = time.perf_counter()
    if not args.no_fork:
        preload()
    with tempfile.TemporaryDirectory(prefix="mutate-", dir=ROOT / "runs" if (ROOT / "runs").is_dir() else None) as d:
        results = mutate(make_copy(ROOT, Path(d)), chosen, args.timeout, fork=not args.no_fork)
    out = Path(args.json)
    previous = json.loads(out.read_text()) if out.exists() else {}
    if args.merge and out.exists():
        by_name = {r["name"]: r for r in json.loads(out.read_text())["mutants"]}
        by_name.update({r["name"]: r for r in results})
        results = [by_name[n] for n in names if n in by_name]
    doc = {"what": "Mutation testing (scripts/mutate.py, mutants in scripts/mutants.py): each mutant is one "
                   "realistic source edit; killed = its tests fail.",
           "command": "OMP_NUM_THREADS=1 nice -n 15 python -m scripts.mutate", **summary(results),
           "seconds": round(time.perf_counter() - t0, 1), "before": before(previous), "explained": EXPLAINED,
           "mutants": results}
    out.write_text(json.dumps(doc, ensure_ascii=False, indent=1) + "\n", encoding="utf-8")
    s = summary(results)
    print(f"{s['killed']} of {s['killed'] + s['survived']} killed ({s['killed_rate']}); errors {s['error']}; "
          f"survivors: {', '.join(s['survivors']) or 'none'}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
