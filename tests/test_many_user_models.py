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
from ui.common import checkpoint_files, user_models

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


def test_the_pickers_label_200_models_from_one_index(many: tuple[Path, Counter[str]],
                                                      monkeypatch: pytest.MonkeyPatch) -> None:
    """A picker's labels (its format_func) come from one index of the groups: each name's label reads one file's
    direction at most, not all 200 groups per option (200 × 200 look-ups a picker before)."""
    from ui.common import models

    d, _ = many
    yours = [models.ModelGroup(f"m{i:03d}-en-fr", models.CheckpointInfo(
        d / f"m{i:03d}-en-fr-rnnsearch.pt", f"m{i:03d}-en-fr", "rnnsearch", 0.0, True), None) for i in range(N)]
    shipped = models.ModelGroup("m30k-en-fr", models.CheckpointInfo(
        d / "m000-en-fr-rnnsearch.pt", "m30k-en-fr", "rnnsearch", 0.0, False), None)  # a file of the right pair
    groups = [shipped, *yours]
    asked: list[str] = []  # whose direction a label reads (each file's own record: not read here, all en→fr)
    monkeypatch.setattr(models, "direction", lambda c: (asked.append(c.path.name) if c else None) or "en→fr")
    walked = Counter[str]()
    owner = models.ModelGroup.yours.fget
    monkeypatch.setattr(models.ModelGroup, "yours", property(lambda g: walked.update(["g"]) or owner(g)))
    label = user_models.labeller(groups)
    assert label("m007-en-fr") == "Your models › m007-en-fr"
    assert label("m199-en-fr-rnnsearch.pt") == "Your models › m199-en-fr-rnnsearch.pt"
    assert label("m30k-en-fr") == "m30k-en-fr"  # the checkpoint folder's: bare
    assert label("no-such-model") == "no-such-model"
    assert asked == ["m007-en-fr-rnnsearch.pt", "m199-en-fr-rnnsearch.pt", "m000-en-fr-rnnsearch.pt"]
    assert walked["g"] <= 2 * len(groups)  # four labels: the groups walked twice in all (an index per label: 1,608)
    assert user_models.label("m007-en-fr", groups) == "Your models › m007-en-fr"
