"""Many models in the Your-models folder stay cheap: each file's meta is read once per version of the file,
however many there are (a 64-entry cache thrashed from 55 files on: every page view re-read every file).

Reads are counted (calls of the checkpoint reader per file), not timed.
"""

from __future__ import annotations

import os
from collections import Counter
from pathlib import Path

import pytest
from streamlit.testing.v1 import AppTest

from nmt.models import checkpoint
from tests import hostile_checkpoints as hc
from ui import checkpoint_files, user_models

ROOT = Path(__file__).resolve().parent.parent
N = 200


@pytest.fixture()
def many(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> tuple[Path, Counter[str]]:
    """A Your-models folder of 200 tiny sealed models (each its own group), and a counter of reads per file."""
    d = tmp_path / "yours"
    d.mkdir()
    data = hc._save(hc.tiny_checkpoint())
    for i in range(N):
        (d / f"m{i:03d}-en-fr-rnnsearch.pt").write_bytes(data)
    monkeypatch.setenv(user_models.ENV_VAR, str(d))
    reads: Counter[str] = Counter()
    real = checkpoint.read_checkpoint

    def counted(path, *args, **kw):
        if Path(path).parent == d:
            reads[Path(path).name] += 1
        return real(path, *args, **kw)

    monkeypatch.setattr(checkpoint, "read_checkpoint", counted)
    return d, reads


def _view(d: Path) -> list[str]:
    """What a page view asks of the folders: the groups its pickers offer and the notes under them."""
    checkpoint_files.notes(d, "Your models")
    return [g.name for g in user_models.all_groups()]


def test_200_files_are_read_once_and_not_again_per_view(many: tuple[Path, Counter[str]]) -> None:
    d, reads = many
    names = _view(d)
    assert [n for n in names if n.startswith("m") and n[1:4].isdigit()] == [f"m{i:03d}-en-fr" for i in range(N)]
    assert len(reads) == N and set(reads.values()) == {1}  # every file read, once
    reads.clear()
    for _ in range(3):
        _view(d)
    assert sum(reads.values()) == 0  # three more views: not one read
    f = d / "m007-en-fr-rnnsearch.pt"
    os.utime(f, ns=(f.stat().st_mtime_ns + 10**9,) * 2)  # one file changed: it alone is read again
    _view(d)
    assert dict(reads) == {"m007-en-fr-rnnsearch.pt": 1}


def test_a_second_stepper_view_reads_none_of_them(many: tuple[Path, Counter[str]]) -> None:
    _, reads = many
    at = AppTest.from_file(str(ROOT / "app.py"), default_timeout=300).run()
    assert not at.exception and not at.error, [e.value for e in [*at.exception, *at.error]]
    assert len(reads) == N and max(reads.values()) == 1
    reads.clear()
    at.run()  # the same session again: a rerun, as any click makes
    AppTest.from_file(str(ROOT / "app.py"), default_timeout=300).run()  # and a new visitor's first view
    assert sum(reads.values()) == 0
