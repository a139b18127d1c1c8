"""Command-line entry points: nmt.translate, nmt.evaluate."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

from nmt import evaluate
from tests.conftest import ROOT, TINY_DATA


def test_translate_cli_reads_stdin_writes_one_line_per_input(tiny_ckpt: Path) -> None:
    src = (TINY_DATA / "train.en").read_text().splitlines()
    ref = (TINY_DATA / "train.fr").read_text().splitlines()
    stdin = "\n".join([src[0], "", src[1], " ".join(["dog"] * 150)]) + "\n"
    res = subprocess.run([sys.executable, "-m", "nmt.translate", "--checkpoint", str(tiny_ckpt), "--beam", "3"],
                         input=stdin, capture_output=True, text=True, cwd=ROOT, timeout=120)
    assert res.returncode == 0, res.stderr
    lines = res.stdout.split("\n")[:-1]
    assert len(lines) == 4
    assert lines[0] == ref[0] and lines[1] == "" and lines[2] == ref[1]
    assert "line 4" in res.stderr and "truncated" in res.stderr


def test_evaluate_cli_writes_json(tiny_ckpt: Path, tmp_path: Path, capsys) -> None:
    out = tmp_path / "res.json"
    rc = evaluate.main(["--checkpoint", str(tiny_ckpt), "--data", str(TINY_DATA), "--split", "test",
                        "--beam", "2", "--json", str(out)])
    assert rc == 0
    res = json.loads(out.read_text())
    assert res["bleu"]["score"] == 100.0 and res["beam"] == 2
    assert res["by_length"][0]["n"] == 20 and len(res["hypotheses"]) == 20
    assert "nrefs:1|case:mixed" in capsys.readouterr().out
