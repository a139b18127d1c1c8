"""Issue 34 item 4: a sentence typed on the bottleneck, compare-attention, explanation and beam pages is
translated by the pair trained for everyday sentences (``ui.common.models.TYPED_GROUP``), through the one rule
of ``ui.common.typed.on_typed``, unless a model was chosen by hand or named in the URL.

The pages run on the shipped ``checkpoints/`` folder (the test is skipped without the 30k RNNsearch): the
Multi30k models turn "Where is the station?" into word salad, the 30k RNNsearch writes « Où est la gare ? »
(« gare » alone proves nothing: it is in the Multi30k vocabulary, and Luong's local-p writes
« <unk> la gare »).
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from streamlit.testing.v1 import AppTest

from tests.conftest import plain
from tests.page_app import open_page as run
from ui.beam.views import DEFAULT_SENTENCE
from ui.common import models
from ui.common.presets import PRESETS, long_sentence

ROOT = Path(__file__).resolve().parent.parent
CHECKPOINTS = ROOT / "checkpoints"
TYPED_FILE = "europarl-tatoeba-en-fr-rnnsearch-30k.pt"
EVERYDAY = "Where is the station?"
FRENCH = "Où est la gare"  # the 30k RNNsearch's translation; no Multi30k model writes it
NOTE = "Your own sentence: translated by the pair trained for everyday sentences (europarl-tatoeba-en-fr-30k)"

pytestmark = pytest.mark.skipif(not (CHECKPOINTS / TYPED_FILE).is_file(), reason=f"{TYPED_FILE} is not shipped")


@pytest.fixture(autouse=True)
def shipped(monkeypatch: pytest.MonkeyPatch) -> None:
    """The real checkpoint folder (``RNNSEARCH_CHECKPOINTS`` unset)."""
    monkeypatch.delenv(models.ENV_VAR, raising=False)


def type_in(at: AppTest, key: str, text: str) -> AppTest:
    """Type ``text`` into the text box ``key`` (its on_change runs, as in a browser)."""
    at.text_area(key=key).set_value(text).run()
    assert not at.exception and not at.error and not at.warning, [e.value for e in [*at.error, *at.warning]]
    return at


def param(at: AppTest, key: str) -> list[str]:
    """The values of a query parameter of the page's URL after the last run (AppTest gives str or list)."""
    v = at.query_params.get(key, [])
    return [v] if isinstance(v, str) else list(v)


def shown(at: AppTest) -> str:
    """Every Markdown text and caption of the page, as a visitor reads them."""
    return "\n".join(plain(e.value) for e in [*at.markdown, *at.caption])


def noted(at: AppTest) -> bool:
    """Whether the page says that a typed sentence moved the model."""
    return any(plain(c.value).startswith(NOTE) for c in at.caption)


# ----------------------------------------------------------------------------------------------
# Bottleneck side by side
# ----------------------------------------------------------------------------------------------


def test_bottleneck_sends_a_typed_sentence_to_the_30k_pair() -> None:
    at = run("bottleneck_compare.py")
    assert at.session_state["bn_model"] == models.DEFAULT_GROUP
    assert at.text_area(key="bn_text").value == long_sentence(models.DEFAULT_GROUP) and not noted(at)
    type_in(at, "bn_text", EVERYDAY)
    assert at.session_state["bn_model"] == models.TYPED_GROUP and param(at, "bn_model") == [models.TYPED_GROUP]
    assert noted(at) and FRENCH in shown(at) and TYPED_FILE in shown(at)
    type_in(at, "bn_text", long_sentence(models.DEFAULT_GROUP))  # the example again: back to its pair
    assert at.session_state["bn_model"] == models.DEFAULT_GROUP and not noted(at)


def test_bottleneck_keeps_a_pair_named_in_the_url() -> None:
    at = run("bottleneck_compare.py", bn_model=models.DEFAULT_GROUP)
    type_in(at, "bn_text", EVERYDAY)
    assert at.session_state["bn_model"] == models.DEFAULT_GROUP and not noted(at) and FRENCH not in shown(at)


def test_bottleneck_labels_the_30k_pairs_three_columns() -> None:
    """RNNsearch, its frozen ablation and the stand-in RNNencdec, each labelled with its data and vocabulary;
    no heading calls the ablation RNNencdec."""
    at = run("bottleneck_compare.py", bn_model=models.TYPED_GROUP, bn_text=EVERYDAY)
    headings = [plain(m.value)[5:] for m in at.markdown if m.value.startswith("#### ")]
    assert headings == ["RNNsearch", "RNNsearch, c_i frozen", "RNNencdec (europarl-en-fr-50)"]
    captions = [plain(c.value) for c in at.caption]
    for file, label in [
        (TYPED_FILE, "RNNsearch (Europarl + Tatoeba, 30k-word vocabularies): a fresh context c_i for every "
                     "target word"),
        (TYPED_FILE, "The same RNNsearch weights (Europarl + Tatoeba, 30k-word vocabularies) with c_i frozen to "
                     "the summary c: an untrained ablation"),
        ("europarl-en-fr-rnnencdec-50.pt", "RNNencdec (Europarl, 16k-word vocabularies): one fixed summary c for "
                                           "every target word; the europarl-en-fr-50 pair's twin, not this pair's")]:
        assert f"{file}: {label}" in captions
    assert not any("RNNencdec" in h for h in headings if "frozen" in h or "ablation" in h)
    assert any("no RNNencdec of its own" in plain(i.value) for i in at.info)


# ----------------------------------------------------------------------------------------------
# Compare attention
# ----------------------------------------------------------------------------------------------


def test_compare_attention_adds_the_30k_rnnsearch_as_the_first_column() -> None:
    at = run("compare_attention.py")
    first = list(at.multiselect(key="cmp_models").value)
    assert not any(TYPED_FILE in label for label in first) and at.text_area(key="cmp_text").value == PRESETS[0].text
    type_in(at, "cmp_text", EVERYDAY)
    now = list(at.multiselect(key="cmp_models").value)
    assert TYPED_FILE in now[0] and now[1:] == first  # added in front; the Multi30k set stays for comparison
    assert param(at, "cmp_models") == now
    assert noted(at) and FRENCH in shown(at)
    assert plain(at.caption[[plain(c.value) for c in at.caption].index(TYPED_FILE)].value) == TYPED_FILE


def test_compare_attention_keeps_models_named_in_the_url() -> None:
    at = run("compare_attention.py")
    chosen = list(at.multiselect(key="cmp_models").value)[:2]
    shared = run("compare_attention.py", cmp_models=chosen)
    type_in(shared, "cmp_text", EVERYDAY)
    assert list(shared.multiselect(key="cmp_models").value) == chosen and not noted(shared)
    assert FRENCH not in shown(shared)


# ----------------------------------------------------------------------------------------------
# Is attention an explanation?
# ----------------------------------------------------------------------------------------------


def test_explanation_explains_a_typed_sentence_with_the_30k_rnnsearch() -> None:
    at = run("explanation.py")
    default = at.session_state["ex_model"]
    assert default == "m30k-en-fr-rnnsearch.pt" and at.selectbox(key="ex_preset").value != "Your own sentence"
    at.selectbox(key="ex_preset").set_value("Your own sentence").run()
    assert at.session_state["ex_model"] == default and not noted(at)
    type_in(at, "ex_text", EVERYDAY)
    assert at.session_state["ex_model"] == TYPED_FILE and param(at, "ex_model") == [TYPED_FILE] and noted(at)
    strip = re.sub(r"\*\*|:blue-background\[|\]", "", shown(at))  # the words as tokens, the chosen one marked
    assert f"Translation (greedy): {FRENCH.lower()} ?" in strip
    at.selectbox(key="ex_preset").set_value(at.selectbox(key="ex_preset").options[0]).run()  # a preset: back
    assert at.session_state["ex_model"] == default and not noted(at)
    at.selectbox(key="ex_preset").set_value("Your own sentence").run()  # the sentence typed before, again
    assert at.text_area(key="ex_text").value == EVERYDAY and at.session_state["ex_model"] == TYPED_FILE


def test_explanation_keeps_a_model_named_in_the_url() -> None:
    at = run("explanation.py", ex_model="m30k-en-fr-rnnsearch.pt", ex_preset="Your own sentence")
    type_in(at, "ex_text", EVERYDAY)
    assert at.session_state["ex_model"] == "m30k-en-fr-rnnsearch.pt" and not noted(at) and FRENCH not in shown(at)


# ----------------------------------------------------------------------------------------------
# Beam search explorer
# ----------------------------------------------------------------------------------------------


def test_beam_explorer_searches_a_typed_sentence_with_the_30k_rnnsearch() -> None:
    at = run("beam_explorer.py")
    assert at.session_state["bx_model"] == "m30k-en-fr-rnnsearch.pt"
    assert at.text_area(key="bx_text").value == DEFAULT_SENTENCE and not noted(at)
    type_in(at, "bx_text", EVERYDAY)
    assert at.session_state["bx_model"] == TYPED_FILE and param(at, "bx_model") == [TYPED_FILE]
    assert noted(at) and FRENCH in shown(at)
    assert f"{TYPED_FILE} (RNNsearch)" in [c.value for c in at.sidebar.caption]
    link = run("beam_explorer.py", bx_model=TYPED_FILE, bx_text=EVERYDAY)  # the view's URL (the text from the browser)
    assert FRENCH in shown(link) and not noted(link)  # the link names the model: nothing was moved


def test_beam_explorer_keeps_a_model_chosen_by_hand_or_in_the_url() -> None:
    at = run("beam_explorer.py")
    at.selectbox(key="bx_model").set_value("europarl-en-fr-rnnsearch-50.pt").run()
    at.selectbox(key="bx_model").set_value("m30k-en-fr-rnnsearch.pt").run()  # chosen by hand
    type_in(at, "bx_text", EVERYDAY)
    assert at.session_state["bx_model"] == "m30k-en-fr-rnnsearch.pt" and not noted(at) and FRENCH not in shown(at)
    shared = run("beam_explorer.py", bx_model="m30k-en-fr-rnnsearch.pt")
    type_in(shared, "bx_text", EVERYDAY)
    assert shared.session_state["bx_model"] == "m30k-en-fr-rnnsearch.pt" and not noted(shared)
