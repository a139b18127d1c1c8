"""More models trained by the toolkits themselves decode through ``python -m nmt translate`` exactly as the toolkits
do: greedy and beam 5 with each toolkit's default settings, on the fixtures' 100 test lines and the 100 short inputs
(issue 46).

Each fixture folder holds a model the toolkit trained (the commands are in tests/fixtures/joeynmt/README.md and
tests/fixtures/onmt/README.md) and the toolkit's own output: ``test.greedy``, ``test.beam5``, ``short.greedy``,
``short.beam5`` (JoeyNMT 2.3.0's ``translate``, OpenNMT-py 3.5.1's ``onmt_translate``, one sentence a batch). The
models are imported through the command line reading text split at spaces and are fed the Moses tokens the
toolkits read (tests/fixtures/joeynmt/test.en, tests/fixtures/short.en), so this app's output is the toolkit's
tokens joined by spaces.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from nmt.__main__ import main as nmt_main
from tests.tool_run import run_main

FIX = Path(__file__).parent / "fixtures"
# name: the import command's arguments (the model as the toolkit wrote it)
MODELS = {
    "joeynmt/lstm2_luong_cased": ["joeynmt", str(FIX / "joeynmt" / "lstm2_luong_cased" / "model")],
    "joeynmt/tied": ["joeynmt", str(FIX / "joeynmt" / "tied" / "model")],
    "onmt/gru_dot_bridge": ["onmt", str(FIX / "onmt" / "gru_dot_bridge" / "model" / "model_step_1500.pt")],
    "onmt/shared": ["onmt", str(FIX / "onmt" / "shared" / "model" / "model_step_1500.pt")],
}
SOURCES = {"test": FIX / "joeynmt" / "test.en", "short": FIX / "short.en"}


def _lines(path: Path) -> list[str]:
    """A toolkit's output, one translation a line (OpenNMT-py with -with_score: the text before the tab)."""
    return [line.split("\t")[0] for line in path.read_text(encoding="utf-8").splitlines()]


@pytest.fixture(scope="module")
def imported(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    """Every fixture imported by ``python -m nmt import`` (in process), text split at spaces."""
    out = tmp_path_factory.mktemp("imported")
    for name, args in MODELS.items():
        dest = out / f"{name.replace('/', '-')}.pt"
        ran = run_main(nmt_main, ["import", *args, "--out", str(dest), "--split", "spaces"])
        assert ran.returncode == 0, ran.stderr
        assert ran.stdout.startswith(str(dest))
        assert "Traceback" not in ran.stderr
    return {name: out / f"{name.replace('/', '-')}.pt" for name in MODELS}


@pytest.mark.parametrize("source", SOURCES)
@pytest.mark.parametrize("name", MODELS)
def test_translate_equals_the_toolkit_greedy_and_beam5(name: str, source: str, imported: dict[str, Path]) -> None:
    text = SOURCES[source].read_text(encoding="utf-8")
    for flags, mode in (([], "greedy"), (["--beam", "5"], "beam5")):
        ran = run_main(nmt_main, ["translate", "--checkpoint", str(imported[name]), *flags], stdin=text)
        assert ran.returncode == 0, ran.stderr
        assert ran.stderr.startswith("note: decoding as ")  # whose rules: the toolkit's
        got, want = ran.stdout.splitlines(), _lines(FIX / name / f"{source}.{mode}")
        assert len(want) == 100 and len(got) == 100
        differ = [k for k, (g, w) in enumerate(zip(got, want, strict=True)) if g != w]
        assert not differ, f"{name} {source}.{mode}: {len(differ)} lines differ, first {differ[0]}: " \
                           f"{got[differ[0]]!r} vs {want[differ[0]]!r}"
