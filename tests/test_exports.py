"""CSV downloads never hand a spreadsheet a formula: user text that starts like one stays text."""

from __future__ import annotations

import re
from pathlib import Path

import pandas as pd

from tests.traces import make_trace
from ui.figures.common import csv_text
from ui.figures.stepper import trace_csv

ROOT = Path(__file__).resolve().parent.parent


def test_formula_cells_are_defused_and_numbers_kept() -> None:
    frame = pd.DataFrame({
        "text": ['=HYPERLINK("http://x.example","click")', "=cmd|' /C calc'!A0", "@SUM(1+1)", "+33 1 23",
                 "-2 dogs", "\t=1", "a dog = a pet"],
        "score": [-2.5, 0.0, 1.0, 2.0, 3.0, 4.0, 5.0]})
    assert csv_text(frame).splitlines() == [
        "text,score",
        "\"'=HYPERLINK(\"\"http://x.example\"\",\"\"click\"\")\",-2.5",
        "'=cmd|' /C calc'!A0,0.0",
        "'@SUM(1+1),1.0",
        "'+33 1 23,2.0",
        "'-2 dogs,3.0",
        "'\t=1,4.0",
        "a dog = a pet,5.0",
    ]


def test_trace_export_defuses_a_typed_word() -> None:
    trace = make_trace([[0.9, 0.1]], tokens=["=1+1"])
    rows = trace_csv(trace).splitlines()
    assert rows[1].split(",")[3] == "'=1+1"  # context_mode, i, j, target: the target word stays text
    assert "'=1+1" not in trace_csv(make_trace([[0.9, 0.1]], tokens=["chien"]))


def test_every_csv_export_goes_through_csv_text() -> None:
    """No page or builder writes CSV by itself (a new export would skip the defusing)."""
    offenders = []
    for f in [ROOT / "app.py", *sorted((ROOT / "pages").glob("*.py")), *sorted((ROOT / "ui").rglob("*.py"))]:
        for n, line in enumerate(f.read_text(encoding="utf-8").splitlines(), 1):
            if re.search(r"\.to_csv\(", line) and "def csv_text" not in line and "frame.map(csv_cell)" not in line:
                offenders.append(f"{f.relative_to(ROOT)}:{n}")
    assert not offenders, offenders
