"""Issue 47 item 3: French→English in the app. The language pair comes from the checkpoint: every picker
lists a model with its direction, a source box is labelled with the language its model reads, a sentence
typed in French goes to the fr→en everyday pair and one in English to the en→fr pair, and the French
preset is offered only when its pair is in the folder. (en→fr models keep their bare labels: a bound
picker's URL holds its label, and every link shared so far names an en→fr model.)

Checkpoint folder: the tiny en→fr and fr→en RNNsearch models (the 20 fixture pairs, read both ways) under
the everyday pairs' names. Which pair a typed sentence goes to, worked by hand from tests/fixtures/tiny:
"Un homme fait du vélo ." has 6 tokens; the fr→en model's source (French) vocabulary holds all 6, the en→fr
model's source (English) vocabulary only "." → fr→en. "A man is riding a bike ." : 7 of 7 in the English
vocabulary, only "." in the French one → en→fr.
"""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from tests.conftest import plain
from tests.page_app import open_page
from tests.stepper_app import click, set_text, start, trace
from ui.common import models
from ui.common.presets import EVERYDAY_FR, listed

EN_FR, FR_EN = models.TYPED_GROUPS
FRENCH = "Un homme fait du vélo."


@pytest.fixture
def both_ways(tiny_ckpt: Path, tiny_rev_ckpt: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    folder = tmp_path / "ckpts"
    folder.mkdir()
    shutil.copy(tiny_ckpt, folder / "europarl-tatoeba-en-fr-rnnsearch-30k.pt")
    shutil.copy(tiny_rev_ckpt, folder / "europarl-tatoeba-fr-en-rnnsearch-30k.pt")
    monkeypatch.setenv(models.ENV_VAR, str(folder))
    return folder


def test_french_typed_in_the_stepper_goes_to_the_fr_en_pair_and_back(both_ways: Path) -> None:
    at = start()
    assert at.session_state["sp_model"] == EN_FR  # the first pair with an RNNsearch (no Multi30k pair here)
    assert at.selectbox(key="sp_model").options == [EN_FR, f"{FR_EN} · fr→en"]  # en→fr: bare, as every old URL
    assert at.text_area(key="sp_text").label == "Source sentence (English)"
    set_text(at, FRENCH)
    assert at.session_state["sp_model"] == FR_EN
    assert at.text_area(key="sp_text").label == "Source sentence (French)"
    click(at, "sp_btn_run")
    t = trace(at)
    assert t.src_tokens[:2] == ["Un", "homme"] and t.target_tokens[:2] == ["A", "man"], t.target_tokens
    set_text(at, "A man is riding a bike.")
    assert at.session_state["sp_model"] == EN_FR
    assert at.text_area(key="sp_text").label == "Source sentence (English)"


def test_french_typed_on_the_beam_page_goes_to_the_fr_en_model(both_ways: Path) -> None:
    at = open_page("beam_explorer.py")
    assert at.selectbox(key="bx_model").options == [
        "europarl-tatoeba-en-fr-rnnsearch-30k.pt", "europarl-tatoeba-fr-en-rnnsearch-30k.pt · fr→en"]
    at.text_area(key="bx_text").set_value(FRENCH).run()
    assert not at.exception
    assert at.session_state["bx_model"] == "europarl-tatoeba-fr-en-rnnsearch-30k.pt"
    assert at.text_area(key="bx_text").label == "Source sentence (French)"
    assert any(FR_EN in plain(c.value) for c in at.caption)  # the note names the pair it moved to


def test_the_french_preset_is_listed_only_beside_its_pair() -> None:
    name = "Phrase de tous les jours (fr→en)"
    assert name not in listed({EN_FR, "m30k-en-fr"})
    assert name in listed({EN_FR, EVERYDAY_FR}) and EVERYDAY_FR == FR_EN
    assert "Everyday sentence" in listed(set())  # English presets stay whatever the folder holds


def test_french_typed_on_the_compare_page_keeps_only_fr_en_models_side_by_side(both_ways: Path) -> None:
    at = open_page("compare_attention.py")
    assert any(o.endswith(" · europarl-tatoeba-fr-en-rnnsearch-30k.pt · fr→en") for o in
               at.multiselect(key="cmp_models").options)
    at.text_area(key="cmp_text").set_value(FRENCH).run()
    assert not at.exception
    chosen = at.session_state["cmp_models"]
    assert len(chosen) == 1 and chosen[0].endswith("europarl-tatoeba-fr-en-rnnsearch-30k.pt · fr→en"), chosen
    assert at.text_area(key="cmp_text").label == "Source sentence (French)"
