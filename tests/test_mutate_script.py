"""scripts/mutate.py's mutant list stays applicable, and a mutant is applied to a copy and undone."""

from __future__ import annotations

from pathlib import Path

from scripts.mutants import MUTANTS, Mutant
from scripts.mutate import apply, summary
from tests.conftest import ROOT


def test_every_mutant_applies_exactly_once_and_names_existing_tests() -> None:
    assert len(MUTANTS) >= 80 and len({m.name for m in MUTANTS}) == len(MUTANTS)
    for m in MUTANTS:
        text = (ROOT / m.file).read_text(encoding="utf-8")
        assert text.count(m.old) == 1 and m.old != m.new, m.name
        for t in m.tests:
            assert (ROOT / t.split("::")[0]).is_file(), (m.name, t)
            if "::" in t:
                assert f"def {t.split('::')[1]}(" in (ROOT / t.split("::")[0]).read_text(), (m.name, t)


def test_apply_edits_the_copy_and_reports_a_missing_snippet(tmp_path: Path) -> None:
    (tmp_path / "a.py").write_text("x = 1\ny = x + 1\n")
    original = apply(tmp_path, Mutant("plus", "a.py", "x + 1", "x - 1", (), ""))
    assert original == "x = 1\ny = x + 1\n" and (tmp_path / "a.py").read_text() == "x = 1\ny = x - 1\n"
    assert apply(tmp_path, Mutant("gone", "a.py", "z * 2", "z", (), "")) is None


def test_summary_counts_by_hand() -> None:
    rows = [{"name": "a", "status": "killed"}, {"name": "b", "status": "survived"}, {"name": "c", "status": "killed"},
            {"name": "d", "status": "error"}]
    s = summary(rows)
    assert (s["killed"], s["survived"], s["error"], s["total"]) == (2, 1, 1, 4)
    assert s["killed_rate"] == 0.6667 and s["survivors"] == ["b"]


def test_a_run_records_the_counts_of_the_file_it_replaces() -> None:
    """bench/mutation.json keeps the previous run's counts beside the new ones (the kill count must not drop)."""
    from scripts.mutate import before

    old = {"command": "x", "killed": 171, "survived": 0, "error": 0, "total": 171, "seconds": 464.8, "mutants": []}
    assert before(old) == {"command": "x", "killed": 171, "survived": 0, "error": 0, "total": 171, "seconds": 464.8}
    assert before({}) is None
