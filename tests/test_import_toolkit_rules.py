"""An imported model decodes exactly as its toolkit does through ``python -m nmt translate``: greedy and
beam 5 with each toolkit's default settings, on the fixtures' test lines and on 100 short inputs.

The expected files are the toolkits' own output, made in side environments (tests/fixtures/joeynmt/README.md,
tests/fixtures/onmt/README.md: JoeyNMT 2.3.0's ``translate``, OpenNMT-py 3.5.1's ``onmt_translate``, one sentence
a batch). The models are imported with ``--split spaces`` and fed the text the toolkits read (Moses tokens), so
this app's output is the toolkit's tokens joined by spaces, as the toolkits write them: equal line for line.
"""

from __future__ import annotations

import io
import os
import subprocess
import sys
from pathlib import Path

import pytest

from nmt.__main__ import main as nmt_main
from nmt.decoding.toolkit import SearchRules
from nmt.tools.importers import joeynmt, onmt

FIX = Path(__file__).parent / "fixtures"
ROOT = FIX.parent.parent
MODELS = {"joeynmt": ["joeynmt", str(FIX / "joeynmt" / "model")],
          "onmt": ["onmt", str(FIX / "onmt" / "model" / "model_step_1500.pt")]}
# (toolkit, input file the toolkit read, its output for greedy, for beam 5)
CASES = [("joeynmt", "joeynmt/test.en", "joeynmt/joeynmt.test", "joeynmt/joeynmt.test.beam5"),
         ("joeynmt", "short.en", "joeynmt/joeynmt.short.greedy", "joeynmt/joeynmt.short.beam5"),
         ("onmt", "onmt/test.en", "onmt/onmt.test", "onmt/onmt.test.beam5"),
         ("onmt", "short.en", "onmt/onmt.short.greedy", "onmt/onmt.short.beam5")]


def _lines(name: str) -> list[str]:
    """A toolkit's output file, one translation a line (onmt.test: then a tab and its score)."""
    return [line.split("\t")[0] for line in (FIX / name).read_text(encoding="utf-8").splitlines()]


@pytest.fixture(scope="module")
def imported(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    """Both fixtures imported through the command line, reading text split at spaces."""
    out = tmp_path_factory.mktemp("imported")
    for name, args in MODELS.items():
        assert nmt_main(["import", *args, "--out", str(out / f"{name}.pt"), "--split", "spaces"]) == 0
    return {name: out / f"{name}.pt" for name in MODELS}


def _translate(checkpoint: Path, source: str, *flags: str, monkeypatch: pytest.MonkeyPatch,
               capsys: pytest.CaptureFixture[str]) -> tuple[list[str], str]:
    """``python -m nmt translate`` in this process: (output lines, stderr)."""
    capsys.readouterr()
    monkeypatch.setattr(sys, "stdin", io.StringIO((FIX / source).read_text(encoding="utf-8")))
    assert nmt_main(["translate", "--checkpoint", str(checkpoint), *flags]) == 0
    captured = capsys.readouterr()
    return captured.out.splitlines(), captured.err


@pytest.mark.parametrize(("toolkit", "source", "greedy_file", "beam_file"), CASES)
def test_translate_equals_the_toolkit(toolkit: str, source: str, greedy_file: str, beam_file: str,
                                      imported: dict[str, Path], monkeypatch: pytest.MonkeyPatch,
                                      capsys: pytest.CaptureFixture[str]) -> None:
    for flags, want_file in (((), greedy_file), (("--beam", "5"), beam_file)):
        got, err = _translate(imported[toolkit], source, *flags, monkeypatch=monkeypatch, capsys=capsys)
        want = _lines(want_file)
        assert len(want) == 100 and len(got) == 100
        differ = [k for k, (g, w) in enumerate(zip(got, want, strict=True)) if g != w]
        assert not differ, f"{want_file}: {len(differ)} lines differ, first {differ[0]}: {got[differ[0]]!r} vs " \
                           f"{want[differ[0]]!r}"
        assert err.startswith("note: decoding as ") and "--app-rules" in err


def test_app_rules_switch_changes_what_joeynmt_models_write(imported: dict[str, Path],
                                                            monkeypatch: pytest.MonkeyPatch,
                                                            capsys: pytest.CaptureFixture[str]) -> None:
    """With --app-rules (this app's limit min(2n + 10, 250), </s> allowed at once) the short inputs come out
    unlike JoeyNMT's: its limit int(1.5 · 2) = 3 tokens stops « a » at « un <unk> . », this app's does not."""
    got, err = _translate(imported["joeynmt"], "short.en", "--app-rules", monkeypatch=monkeypatch, capsys=capsys)
    want = _lines("joeynmt/joeynmt.short.greedy")
    assert "note:" not in err
    assert sum(g != w for g, w in zip(got, want, strict=True)) > 50
    assert want[0] == "un <unk> ." and got[0].startswith("un <unk> . ")


def test_recorded_rules_are_the_toolkits(imported: dict[str, Path]) -> None:
    """The rules travel in the checkpoint's meta, as data; their limits by hand."""
    from nmt.models import checkpoint

    joey = SearchRules.from_meta(checkpoint.load(imported["joeynmt"]).meta["search_rules"])
    assert joey.never_write == ("<s>", "<pad>") and joey.min_len == 1 and joey.beam == "joeynmt"
    assert (joey.length_penalty, joey.alpha) == ("none", -1.0)  # JoeyNMT's beam_alpha default -1
    assert [joey.max_len(n) for n in (1, 2, 3, 7, 20)] == [1, 3, 4, 10, 30]  # int(1.5 · n)
    assert [joey.max_len(n) for n in (2, 7)] == [joeynmt.max_output_length(n) for n in (2, 7)]
    o = SearchRules.from_meta(checkpoint.load(imported["onmt"]).meta["search_rules"])
    assert (o.length_penalty, o.alpha, o.min_len, o.never_write) == ("avg", 1.0, 0, ())
    assert [o.max_len(n) for n in (1, 2, 5, 197, 300)] == [5, 6, 10, 250, 250]  # int(min(250, 1.25 · (n−1) + 5))
    assert [o.max_len(n) for n in (2, 5, 300)] == [onmt.max_output_length(n) for n in (2, 5, 300)]


def test_config_testing_section_sets_joeynmt_rules() -> None:
    rules = joeynmt.search_rules({"testing": {"max_output_length": 7, "min_output_length": 2, "beam_alpha": 1.0,
                                              "generate_unk": False}})
    assert [rules.max_len(n) for n in (2, 40)] == [7, 7] and rules.min_len == 2
    assert rules.never_write == ("<s>", "<pad>", "<unk>") and (rules.length_penalty, rules.alpha) == ("gnmt", 1.0)


def test_real_cli_beam_equals_joeynmt(imported: dict[str, Path]) -> None:
    """One run of the real command line: JoeyNMT's beam 5 on the short inputs."""
    done = subprocess.run([sys.executable, "-m", "nmt", "translate", "--checkpoint", str(imported["joeynmt"]),
                           "--beam", "5"], cwd=ROOT, input=(FIX / "short.en").read_text(encoding="utf-8"),
                          capture_output=True, text=True, timeout=300, env={**os.environ, "OMP_NUM_THREADS": "1"})
    assert done.returncode == 0, done.stderr[-500:]
    assert done.stdout.splitlines() == _lines("joeynmt/joeynmt.short.beam5")
