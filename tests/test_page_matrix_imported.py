"""Every page that offers single models, with each imported kind under "Your models" (AppTest).

The user's folder holds the four toolkit fixtures converted as a user would (JoeyNMT word level and BPE,
OpenNMT-py word level and sentencepiece). The beam explorer translates with each, the explanation page
says plainly that it explains RNNsearch only (each import is a Luong-shaped model, as its capabilities
say), and the comparison page draws each beside the others. A shared link names a user's model by its
label in the picker ("Your models › NAME"), as Streamlit binds a select box to the URL.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from nmt.models import checkpoint
from nmt.tools.importers import joeynmt, onmt
from tests.conftest import plain
from tests.page_app import open_page as run
from ui.common import models, user_models

FIX = Path(__file__).parent / "fixtures"
SENTENCE = "A dog runs on the beach."
IMPORTED = {  # file name in the user's folder: how it is made from the committed fixtures
    "joey-word-en-fr.pt": lambda: joeynmt.convert(FIX / "joeynmt" / "model"),
    "joey-bpe-en-fr.pt": lambda: joeynmt.convert(FIX / "joeynmt_bpe" / "model"),
    "onmt-word-en-fr.pt": lambda: onmt.convert(FIX / "onmt" / "model" / "model_step_1500.pt", "en", "fr"),
    "onmt-spm-en-fr.pt": lambda: onmt.convert(FIX / "onmt" / "sentencepiece" / "model_step_1500.pt", "en", "fr"),
}


@pytest.fixture(scope="module")
def folder(tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("mine")
    for name, make in IMPORTED.items():
        checkpoint.atomic_save(make(), out / name)
    return out


@pytest.fixture(autouse=True)
def yours(folder: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv(models.ENV_VAR, raising=False)  # the shipped checkpoints, then the user's
    monkeypatch.setenv(user_models.ENV_VAR, str(folder))


@pytest.mark.parametrize("name", IMPORTED)
def test_the_beam_explorer_translates_with_every_imported_model(name: str) -> None:
    at = run("beam_explorer.py", bx_model=f"{user_models.LABEL} › {name}", bx_text=SENTENCE, bx_beam="3")
    assert at.selectbox(key="bx_model").value == name
    heads = [m.value for m in at.markdown]
    assert any("Beam search (k = 3), best hypothesis" in h for h in heads), heads[:5]
    assert any(plain(c.value).startswith("Imported from ") for c in at.sidebar.caption)


@pytest.mark.parametrize("name", IMPORTED)
def test_the_explanation_page_says_why_not_for_every_imported_model(name: str) -> None:
    at = run("explanation.py", ex_model=f"{user_models.LABEL} › {name}", ex_text=SENTENCE)
    assert at.selectbox(key="ex_model").value == name
    assert "explains RNNsearch (Bahdanau et al. 2015) only" in " ".join(plain(i.value) for i in at.info)


def test_the_comparison_page_draws_every_imported_model_side_by_side() -> None:
    at = run("compare_attention.py", cmp_text=SENTENCE)
    box = at.multiselect(key="cmp_models")
    mine = [o for o in box.options if o.startswith(f"{user_models.LABEL} › ")]
    assert sorted(o.rsplit(" · ", 1)[1] for o in mine) == sorted(IMPORTED)
    box.set_value(mine).run()
    assert not at.exception and not at.error, [e.value for e in [*at.exception, *at.error]]
    assert len(at.get("vega_lite_chart") + at.get("plotly_chart")) >= len(IMPORTED)
