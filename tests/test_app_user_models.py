""""Your models": a second folder named by ``$RNNSEARCH_USER_MODELS``, listed after the checkpoint folder's
models under that label, judged by the same hostile-file rules, and the sidebar's line of where each
model came from (trained here on what, or imported from which toolkit)."""

from __future__ import annotations

import os
from pathlib import Path

import pytest
from streamlit.testing.v1 import AppTest

from nmt.models import checkpoint
from nmt.tools.importers import joeynmt
from tests import hostile_checkpoints as hc
from tests.conftest import plain
from tests.page_app import open_page
from tests.stepper_app import SENTENCE, start
from ui.common import user_models

FIX = Path(__file__).parent / "fixtures" / "joeynmt" / "model"


@pytest.fixture
def user_dir(ckpt_dir: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """The tiny pair in the checkpoint folder; the imported JoeyNMT model, a damaged file, a link out of
    the folder and a file named like the tiny pair in the user's folder."""
    folder = tmp_path / "mine"
    folder.mkdir()
    checkpoint.atomic_save(joeynmt.convert(FIX), folder / "joey-en-fr-tiny.pt")
    (folder / "broken.pt").write_bytes(b"not a checkpoint")
    outside = tmp_path / "outside.pt"
    outside.write_bytes(hc._save(hc.tiny_checkpoint()))
    os.symlink(outside, folder / "linked.pt")
    checkpoint.atomic_save(hc.tiny_checkpoint(), folder / "tiny-en-fr-rnnsearch.pt")  # the shipped pair's name
    monkeypatch.setenv(user_models.ENV_VAR, str(folder))
    return folder


def sidebar_captions(at: AppTest) -> list[str]:
    return [plain(c.value) for c in at.sidebar.caption]


def test_your_models_are_listed_after_the_folders_under_their_label(user_dir: Path) -> None:
    at = start()
    box = at.selectbox(key="sp_model")
    assert box.options == ["tiny-en-fr", f"{user_models.LABEL} › joey-en-fr-tiny"]
    assert box.value == "tiny-en-fr"  # the checkpoint folder's model stays the default
    captions = sidebar_captions(at)
    assert any(c.startswith("Trained by this project on tiny (20 pairs), ") for c in captions), captions


def test_hostile_files_in_your_folder_are_named_once_and_never_offered(user_dir: Path) -> None:
    at = start()
    captions = sidebar_captions(at)
    assert sum("broken.pt" in c for c in captions) == 1
    assert "left out: linked.pt is a link to a file outside your models folder" in captions
    clash = [c for c in captions if c.startswith("left out: tiny-en-fr-rnnsearch.pt has the name of a model")]
    assert len(clash) == 1, captions
    assert all("broken" not in o and "linked" not in o for o in at.selectbox(key="sp_model").options)


def test_picking_your_imported_model_says_where_it_came_from_and_decodes(user_dir: Path) -> None:
    at = start({"text": SENTENCE})
    at.selectbox(key="sp_model").set_value("joey-en-fr-tiny").run()
    assert not at.exception, [e.value for e in at.exception]
    digest = joeynmt.sha256(FIX / "best.ckpt")[:12]
    want = f"Imported from JoeyNMT 2.3.0 (word, lower-cased) · best.ckpt sha256 {digest}"
    assert want in sidebar_captions(at)
    assert at.session_state["sp__stepper"][1].trace.src_tokens[0] == "a"  # lower-cased by its tokeniser


def test_without_the_variable_there_is_no_second_group(ckpt_dir: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv(user_models.ENV_VAR, raising=False)
    at = start()
    assert at.selectbox(key="sp_model").options == ["tiny-en-fr"]
    assert not [e for e in at.sidebar.expander if e.label == user_models.LABEL]


def test_a_url_cannot_name_a_model_outside_the_two_folders(user_dir: Path) -> None:
    at = start({"model": str(user_dir.parent / "outside")})
    assert at.selectbox(key="sp_model").value == "tiny-en-fr"


def test_the_pickers_of_other_pages_label_your_models(user_dir: Path) -> None:
    beam = open_page("beam_explorer.py")
    assert beam.selectbox(key="bx_model").options == ["tiny-en-fr-rnnsearch.pt", "tiny-en-fr-rnnencdec.pt",
                                                      f"{user_models.LABEL} › joey-en-fr-tiny.pt"]
    compare = open_page("compare_attention.py")
    labelled = [o for s in compare.multiselect for o in s.options if o.startswith(user_models.LABEL)]
    assert len(labelled) == 1 and labelled[0].endswith(" · joey-en-fr-tiny.pt"), labelled


def test_the_paired_pages_pickers_label_your_models_and_say_where_they_came_from(user_dir: Path) -> None:
    mine = f"{user_models.LABEL} › joey-en-fr-tiny.pt"
    paired = open_page("paired_compare.py", pr_a=mine)  # a URL names a model by its label, as on the other pages
    assert paired.selectbox(key="pr_a").options == ["tiny-en-fr-rnnsearch.pt", "tiny-en-fr-rnnencdec.pt", mine]
    assert paired.selectbox(key="pr_a").value == "joey-en-fr-tiny.pt"
    digest = joeynmt.sha256(FIX / "best.ckpt")[:12]
    captions = [plain(c.value) for c in paired.caption]
    assert f"Imported from JoeyNMT 2.3.0 (word, lower-cased) · best.ckpt sha256 {digest}" in captions
    assert not [c for c in captions if c.startswith("Trained by this project")]  # only your models get the line


def test_the_bottleneck_page_names_your_models_kind_when_it_has_no_rnnencdec(user_dir: Path) -> None:
    """The imported JoeyNMT model is a Luong model: the note says so, not "the RNNsearch side"."""
    page = open_page("bottleneck_compare.py", bn_model=f"{user_models.LABEL} › joey-en-fr-tiny")
    notes = [plain(i.value) for i in page.info if "has no RNNencdec" in i.value]
    assert notes == ["Group “joey-en-fr-tiny” has no RNNencdec checkpoint (joey-en-fr-tiny-rnnencdec.pt); "
                     "only its Luong 2015, global, concat, input feeding model can be shown."], notes


def test_the_length_pages_recompute_picker_labels_your_models(user_dir: Path) -> None:
    page = open_page("length_quality.py")
    assert page.selectbox(key="lq_ckpt").options == ["tiny-en-fr-rnnsearch.pt", "tiny-en-fr-rnnencdec.pt",
                                                     f"{user_models.LABEL} › joey-en-fr-tiny.pt"]
