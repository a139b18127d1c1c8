"""A hostile model folder stays bounded: ``python -m nmt import`` refuses it in at most two lines, exit
status 2, within seconds and a bounded amount of memory (issue 46's Bar and its fuzz test).

The hostile folders are made from the committed fixtures (tests/fixtures/joeynmt/model,
tests/fixtures/onmt/model); huge files are sparse (``truncate``), so they take no disk.
"""

from __future__ import annotations

import argparse
import json
import os
import random
import shutil
import subprocess
import sys
import time
from pathlib import Path

import pytest

from nmt.tools.importers import files, onmt_opt
from nmt.tools.importers.yaml_subset import loads
from tests import import_fuzz

ROOT = Path(__file__).resolve().parent.parent


def _cli(*args: str, timeout: float = 10.0) -> tuple[int, list[str], float]:
    """``python -m nmt import …`` as a user runs it: (exit status, output lines, seconds); a run longer than
    ``timeout`` fails the test."""
    t0 = time.perf_counter()
    try:
        done = subprocess.run([sys.executable, "-m", "nmt", "import", *args], cwd=ROOT, capture_output=True,
                              text=True, timeout=timeout, env={**os.environ, "OMP_NUM_THREADS": "1"})
    except subprocess.TimeoutExpired:
        pytest.fail(f"python -m nmt import {' '.join(args)} ran past {timeout} s")
    return done.returncode, (done.stdout + done.stderr).splitlines(), time.perf_counter() - t0


def _joey_folder(tmp_path: Path) -> Path:
    folder = tmp_path / "model"
    shutil.copytree(import_fuzz.JOEY, folder)
    return folder


def _assert_refused(code: int, lines: list[str], seconds: float, words: str) -> None:
    assert code == 2 and 1 <= len(lines) <= 2, lines
    assert all(len(line) <= 200 for line in lines) and words in lines[-1], lines
    assert seconds <= 10


def test_bar_fifo_checkpoint(tmp_path: Path) -> None:
    """best.ckpt a named pipe with no writer: opening it for reading would wait for ever."""
    folder = _joey_folder(tmp_path)
    (folder / "best.ckpt").unlink()
    os.mkfifo(folder / "best.ckpt")
    code, lines, secs = _cli("joeynmt", str(folder), "--out", str(tmp_path / "x.pt"))
    _assert_refused(code, lines, secs, "best.ckpt is a named pipe, not a regular file")


def test_bar_config_of_3000_nested_tables(tmp_path: Path) -> None:
    """3,000 nested tables (one space of indentation each: 4.5 MB) are refused by size before a byte is read;
    400 within the size cap are refused by the nesting cap (Python's recursion limit is 1,000)."""
    folder = _joey_folder(tmp_path)
    (folder / "config.yaml").write_text(import_fuzz._deep_yaml(3000, 1))
    code, lines, secs = _cli("joeynmt", str(folder), "--out", str(tmp_path / "x.pt"))
    _assert_refused(code, lines, secs, "config.yaml is 4.3 MB, over the 1.0 MB such a file may have")
    (folder / "config.yaml").write_text(import_fuzz._deep_yaml(400, 1))  # 80 kB
    code, lines, secs = _cli("joeynmt", str(folder), "--out", str(tmp_path / "x.pt"))
    _assert_refused(code, lines, secs, "config.yaml: line 17: tables nested deeper than 16 levels")


def test_bar_vocabulary_of_one_2gb_word(tmp_path: Path) -> None:
    """A 2 GB sparse file of NULs: one "word" the old refusal quoted whole."""
    folder = _joey_folder(tmp_path)
    with (folder / "src_vocab.txt").open("wb") as f:
        f.truncate(2 << 30)
    code, lines, secs = _cli("joeynmt", str(folder), "--out", str(tmp_path / "x.pt"))
    _assert_refused(code, lines, secs, "src_vocab.txt is 2.0 GB, over the 4.0 MB such a file may have")


def test_onmt_fifo_and_huge_checkpoint(tmp_path: Path) -> None:
    os.mkfifo(tmp_path / "m_step_1.pt")
    code, lines, secs = _cli("onmt", str(tmp_path / "m_step_1.pt"), "--out", str(tmp_path / "x.pt"))
    _assert_refused(code, lines, secs, "m_step_1.pt is a named pipe")
    with (tmp_path / "big_step_1.pt").open("wb") as f:
        f.truncate(3 << 30)
    code, lines, secs = _cli("onmt", str(tmp_path / "big_step_1.pt"), "--out", str(tmp_path / "x.pt"))
    _assert_refused(code, lines, secs, "big_step_1.pt is 3.0 GB, over the 2.0 GB such a file may have")


def test_random_bytes_vocabulary_is_one_line(tmp_path: Path) -> None:
    folder = _joey_folder(tmp_path)
    (folder / "trg_vocab.txt").write_bytes(random.Random(0).randbytes(5000))
    code, lines, secs = _cli("joeynmt", str(folder), "--out", str(tmp_path / "x.pt"))
    _assert_refused(code, lines, secs, "trg_vocab.txt is not UTF-8 text (byte 0xcd at offset 0)")
    (folder / "trg_vocab.txt").write_bytes(b"<unk>\n\0\0\0" + b"x" * 100_000)
    with pytest.raises(files.FileRefused, match=r"^trg_vocab\.txt: line 2 '\\x00\\x00\\x00x{26}… holds a control "):
        files.read_vocab(folder / "trg_vocab.txt")


def test_yaml_nesting_is_capped_not_recursed() -> None:
    """3,000 nested tables read from text (no file, no size cap): one ValueError, not a RecursionError."""
    with pytest.raises(ValueError, match=r"^line 17: tables nested deeper than 16 levels$"):
        loads(import_fuzz._deep_yaml(3000, 1))
    deepest = loads(import_fuzz._deep_yaml(15, 2) + "  " * 15 + "x: 1\n")  # 16 tables deep: read
    for k in range(15):
        deepest = deepest[f"k{k}"]
    assert deepest == {"x": 1}


def test_onmt_option_nesting_is_capped() -> None:
    with pytest.raises(ValueError, match=r"^opt: values nested deeper than 16 levels$"):
        onmt_opt.plain({"data": import_fuzz._nested_list(3000)})
    assert onmt_opt.plain({"data": {"c": {"path": [["a"]]}}}) == {"data": {"c": {"path": [["a"]]}}}


def test_refusals_are_one_short_line() -> None:
    err = files.FileRefused("x" * 10_000 + "\nsecond line")
    assert len(str(err)) == files.MAX_MESSAGE and "\n" not in str(err)
    assert files.short("y" * 1000) == "'" + "y" * 38 + "…"


def test_fuzz_300_hostile_folders(tmp_path: Path) -> None:
    """300 generated folders (seed 46), each run through ``python -m nmt import``'s main in one process
    (tests/import_fuzz.py): every one ends in ≤ 2 lines of ≤ 200 characters, exit status 2, within 5 s, and the
    process's peak memory rises by < 300 MB above what one real import took."""
    done = subprocess.run([sys.executable, "-m", "tests.import_fuzz", "46", "300", str(tmp_path)], cwd=ROOT,
                          capture_output=True, text=True, timeout=600, env={**os.environ, "OMP_NUM_THREADS": "1"})
    assert done.returncode == 0, done.stderr[-2000:]
    report = json.loads(done.stdout)
    cases = report["cases"]
    assert len(cases) == 300
    bad = [c for c in cases if c["rc"] != 2 or not 1 <= len(c["lines"]) <= 2
           or any(len(line) > 200 for line in c["lines"]) or c["seconds"] > 5]
    assert not bad, f"{len(bad)} cases not refused in bounds, first: {bad[0]['kind']} {bad[0]['lines'][-3:]}"
    assert report["peak_above_baseline_mb"] < 300
    kinds = {c["kind"].split(":")[1] for c in cases}
    assert {"deep_config", "deep_config_flow", "sparse", "binary_vocab", "fifo", "socket", "wrong_type",
            "ckpt_object", "spm"} <= kinds and len({c["kind"] for c in cases}) >= 40


def test_fuzz_namespace_mutations_are_all_exercised() -> None:
    """Each OpenNMT-py mutation of the fuzz set applies to the fixture's checkpoint (a guard on the generator)."""
    raw = {"opt": argparse.Namespace(a=1), "vocab": {"src": [], "tgt": []}}
    assert len(import_fuzz._onmt_mutations(raw)) == 27
