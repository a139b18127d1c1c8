"""A symbolic-link loop in the checkpoint folder, the Your-models folder or a data root is named once and
left out, and every page that lists the folder draws (``Path.resolve`` raises RuntimeError for a loop on
Python 3.11 and 3.12, which took every such page down with "Something went wrong (RuntimeError)").
"""

from __future__ import annotations

import os
from pathlib import Path

import pytest
from streamlit.testing.v1 import AppTest

from nmt.text import corpora
from tests import hostile_checkpoints as hc
from tests.conftest import plain
from tests.page_app import app_at
from ui.common import checkpoint_files, models, user_models

ROOT = Path(__file__).resolve().parent.parent
PAIR = hc.PAIR
TIMEOUT = 300
LOOP_NOTES = ["left out: a-en-fr-rnnsearch.pt is a symbolic link that leads back to itself (a loop)",
              "left out: self-en-fr-rnnsearch.pt is a symbolic link that leads back to itself (a loop)"]


def _loops(d: Path) -> None:
    """A link to itself, and two links to each other, named like checkpoints."""
    os.symlink(d / "self-en-fr-rnnsearch.pt", d / "self-en-fr-rnnsearch.pt")
    os.symlink(d / "b-en-fr-rnnsearch.pt", d / "a-en-fr-rnnsearch.pt")
    os.symlink(d / "a-en-fr-rnnsearch.pt", d / "b-en-fr-rnnsearch.pt")


@pytest.fixture(scope="module")
def loop_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The shipped Multi30k pair (copied) and three links that loop."""
    d = hc.shipped_pair_copy(tmp_path_factory, "loops")
    _loops(d)
    return d


def test_resolve_raises_for_a_loop_here(loop_dir: Path) -> None:
    """What the listing must survive (RuntimeError on 3.11/3.12, OSError later)."""
    with pytest.raises((RuntimeError, OSError)):
        (loop_dir / "self-en-fr-rnnsearch.pt").resolve()


def test_the_listing_names_each_loop_once_and_offers_the_pair(loop_dir: Path) -> None:
    groups = checkpoint_files.scan(loop_dir)
    assert [(g.name, g.search and g.search.name, g.encdec and g.encdec.name) for g in groups] == [
        ("m30k-en-fr", *PAIR)]
    assert checkpoint_files.notes(loop_dir) == [  # a→b and b→a: the first found names the loop, b is the rest of it
        LOOP_NOTES[0], "left out: b-en-fr-rnnsearch.pt is a symbolic link that leads back to itself (a loop)",
        LOOP_NOTES[1]]


def test_the_stepper_draws_beside_a_loop(loop_dir: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv(models.ENV_VAR, str(loop_dir))
    at = AppTest.from_file(str(ROOT / "app.py"), default_timeout=TIMEOUT).run()
    assert not at.exception and not at.error, [e.value for e in [*at.exception, *at.error]]
    assert at.selectbox(key="sp_model").options == ["m30k-en-fr"]
    notes = [plain(c.value) for c in at.caption if plain(c.value).startswith("left out: ")]
    assert notes == [plain(n) for n in checkpoint_files.notes(loop_dir)]


def test_the_lesson_draws_beside_a_loop(loop_dir: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv(models.ENV_VAR, str(loop_dir))
    at = app_at("pages/lesson.py", TIMEOUT)
    at.query_params["ls_stop"] = "2"  # both models of the pair translate
    at.run()
    assert not at.exception and not at.error, [e.value for e in [*at.exception, *at.error]]
    assert any(plain(m.value).startswith("**RNNsearch** writes: Un chien noir") for m in at.markdown)


def test_a_loop_in_your_models_folder_and_as_the_folder(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    yours = tmp_path / "yours"
    yours.mkdir()
    _loops(yours)
    monkeypatch.setenv(user_models.ENV_VAR, str(yours))
    assert user_models.folder() == yours and checkpoint_files.notes(yours, "Your models")[0] == LOOP_NOTES[0]
    os.symlink(tmp_path / "folder-loop", tmp_path / "folder-loop")
    monkeypatch.setenv(user_models.ENV_VAR, str(tmp_path / "folder-loop"))
    assert user_models.folder() == tmp_path / "folder-loop"  # named as given; it lists nothing
    assert checkpoint_files.listed(tmp_path / "folder-loop") == [] and checkpoint_files.notes(
        tmp_path / "folder-loop") == []
    assert [g.name for g in user_models.all_groups()][:1] == ["europarl-en-fr-50"]  # the shipped folder's, sorted


def test_a_loop_in_a_data_root_and_as_a_root(tmp_path: Path) -> None:
    """A split beside a looping file is found; the looping file (named like a split's side) is not; a root
    that is a loop lists nothing."""
    root = tmp_path / "data"
    root.mkdir()
    (root / "good.en").write_text("a dog .\n")
    (root / "good.fr").write_text("un chien .\n")
    os.symlink(root / "bad.fr", root / "bad.en")
    os.symlink(root / "bad.en", root / "bad.fr")
    os.symlink(root / "sub", root / "sub")
    roots = corpora.configured_roots(env={corpora.ENV_VAR: str(root)}, config=tmp_path / "none.toml")
    assert [s.label for s in corpora.find_splits(roots[:1], "en", "fr")] == ["good"]
    os.symlink(tmp_path / "root-loop", tmp_path / "root-loop")
    roots = corpora.configured_roots(env={corpora.ENV_VAR: str(tmp_path / "root-loop")}, config=tmp_path / "none.toml")
    assert roots[0].path == tmp_path / "root-loop" and corpora.find_splits(roots[:1], "en", "fr") == []
    assert corpora.shown(root / "sub") == "…/sub"


def test_a_page_that_lists_data_draws_with_a_looping_root(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    os.symlink(tmp_path / "root-loop", tmp_path / "root-loop")
    monkeypatch.setenv(corpora.ENV_VAR, str(tmp_path / "root-loop"))
    at = app_at("pages/alignment_browser.py", TIMEOUT).run()
    assert not at.exception and not at.error, [e.value for e in [*at.exception, *at.error]]
