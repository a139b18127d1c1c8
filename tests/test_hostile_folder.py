"""A checkpoint folder with one bad file of each kind beside the shipped Multi30k pair: every page draws.

Each bad file is named once, "unreadable: <why>", under the stepper's folder listing; a link that
leads out of the folder is left out and said so; the pickers offer the good pair only.
"""

from __future__ import annotations

import os
from pathlib import Path

import pytest
from streamlit.testing.v1 import AppTest

from tests import hostile_checkpoints as hc
from tests.conftest import plain
from tests.page_app import app_at
from ui.common import checkpoint_files, models

ROOT = Path(__file__).resolve().parent.parent
PAIR = hc.PAIR
PAGES = sorted(p.name for p in (ROOT / "pages").glob("*.py"))
TIMEOUT = 300


@pytest.fixture(scope="module")
def hostile_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The shipped pair (copied), each kind of bad file, a folder named like a checkpoint and a link out."""
    d = hc.shipped_pair_copy(tmp_path_factory, "hostile")
    good = hc.tiny_checkpoint()
    for name, data in hc.kinds(good).items():  # named like pairs: each would form a group if it were read
        (d / f"{name[:-3]}-en-fr-rnnsearch.pt").write_bytes(data)
    (d / "folder.pt").mkdir()
    outside = tmp_path_factory.mktemp("outside") / "tiny-en-fr-rnnsearch.pt"
    outside.write_bytes(hc._save(good))
    os.symlink(outside, d / "linked-en-fr-rnnsearch.pt")
    return d


def _notes(at: AppTest) -> list[str]:
    return [plain(c.value) for c in at.caption if plain(c.value).startswith(("unreadable: ", "left out: "))]


def test_the_listing_names_each_bad_file_once(hostile_dir: Path) -> None:
    groups = checkpoint_files.scan(hostile_dir)
    assert [(g.name, g.search and g.search.name, g.encdec and g.encdec.name) for g in groups] == [
        ("m30k-en-fr", *PAIR)]
    notes = checkpoint_files.notes(hostile_dir)
    assert len(notes) == len(hc.kinds(hc.tiny_checkpoint())) + 1  # every kind, and the link out
    assert "left out: linked-en-fr-rnnsearch.pt is a link to a file outside the checkpoint folder" in notes
    assert all("\n" not in n for n in notes)


def test_the_stepper_draws_and_says_what_it_left_out(hostile_dir: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv(models.ENV_VAR, str(hostile_dir))
    at = AppTest.from_file(str(ROOT / "app.py"), default_timeout=TIMEOUT).run()
    assert not at.exception and not at.error, [e.value for e in at.error]
    assert _notes(at) == [plain(n) for n in checkpoint_files.notes(hostile_dir)]  # each once, in folder order
    assert at.selectbox(key="sp_model").options == ["m30k-en-fr"]
    at.button(key="sp_btn_run").click().run()  # decode the default preset to its end with the shipped RNNsearch
    assert not at.exception and not at.error
    decoded = at.session_state["sp__stepper"][1].trace
    assert decoded.steps and decoded.steps[-1].token == "</s>"


@pytest.mark.parametrize("page", PAGES)
def test_every_page_draws_beside_bad_files(page: str, hostile_dir: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv(models.ENV_VAR, str(hostile_dir))
    at = app_at(f"pages/{page}", TIMEOUT).run()
    assert not at.exception and not at.error, [e.value for e in at.error]


def test_the_lesson_decodes_with_the_shipped_pair(hostile_dir: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv(models.ENV_VAR, str(hostile_dir))
    at = app_at("pages/lesson.py", TIMEOUT)
    at.query_params["ls_stop"] = "2"  # the bottleneck: both models of the pair translate (stop 1 is the intro)
    at.run()
    assert not at.exception and not at.error
    shown = [plain(m.value) for m in at.markdown]
    assert any(m.startswith("**RNNsearch** writes: Un chien noir") for m in shown), shown
    assert any(m.startswith("**RNNencdec** writes: Un chien noir") for m in shown), shown


def test_links_are_followed_only_inside_the_folder(tmp_path: Path) -> None:
    """The data folders' rule (nmt.text.corpora.inside): a link to a file in the folder is listed, one that
    leads out is not, nor is the folder reached through a link itself any different."""
    d = tmp_path / "ckpts"
    d.mkdir()
    (d / "tiny-en-fr-rnnsearch.pt").write_bytes(hc._save(hc.tiny_checkpoint()))
    os.symlink(d / "tiny-en-fr-rnnsearch.pt", d / "again-en-fr-rnnsearch.pt")
    (tmp_path / "elsewhere.pt").write_bytes(hc._save(hc.tiny_checkpoint()))
    os.symlink(tmp_path / "elsewhere.pt", d / "away-en-fr-rnnsearch.pt")
    os.symlink(d, tmp_path / "via-link")
    for folder in (d, tmp_path / "via-link"):
        assert [p.name for p, _ in checkpoint_files.listed(folder)] == ["again-en-fr-rnnsearch.pt",
                                                                        "tiny-en-fr-rnnsearch.pt"]
        assert [g.name for g in checkpoint_files.scan(folder)] == ["again-en-fr", "tiny-en-fr"]
        assert checkpoint_files.notes(folder) == [
            "left out: away-en-fr-rnnsearch.pt is a link to a file outside the checkpoint folder"]
