"""Every page with every model it offers, on the shipped checkpoints (AppTest; the stepper's own matrix
is tests/test_app_matrix.py).

The beam explorer and the explanation page offer every checkpoint in their picker, the bottleneck page
every pair, the comparison page every model with α: each one is opened from a URL as a shared link would
open it. Every page draws without an exception or an error box; the beam explorer translates with the
model picked; the explanation page explains the models whose α can be edited (RNNsearch with attention)
and says plainly why it does not for the others (RNNencdec, Luong), as the model's capabilities decide.
"""

from __future__ import annotations

import pytest

from tests.conftest import ROOT, plain
from tests.page_app import open_page as run
from ui.common import models

CKPT = ROOT / "checkpoints"
SENTENCE = "A dog runs on the beach."
STEMS = ("m30k-en-fr-rnnsearch", "m30k-en-fr-rnnencdec", "m30k-en-fr-luong-global-dot", "m30k-en-fr-luong-local-m",
         "m30k-en-fr-luong-local-p", "europarl-en-fr-rnnencdec-50", "europarl-tatoeba-en-fr-rnnsearch-30k")
EXPLAINED = {"m30k-en-fr-rnnsearch", "europarl-tatoeba-en-fr-rnnsearch-30k"}  # α editable: RNNsearch, attention
GROUPS = ("m30k-en-fr", "europarl-en-fr-50", "europarl-tatoeba-en-fr-30k", "m30k-en-fr-luong-local-p")


@pytest.fixture(autouse=True)
def shipped(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv(models.ENV_VAR, raising=False)
    missing = [s for s in STEMS if not (CKPT / f"{s}.pt").exists()]
    if missing:
        pytest.skip(f"shipped checkpoints missing: {missing}")


@pytest.mark.parametrize("stem", STEMS)
def test_the_beam_explorer_translates_with_every_checkpoint(stem: str) -> None:
    at = run("beam_explorer.py", bx_model=f"{stem}.pt", bx_text=SENTENCE, bx_beam="3")
    assert at.selectbox(key="bx_model").value == f"{stem}.pt"
    heads = [m.value for m in at.markdown]
    assert any("Beam search (k = 3), best hypothesis" in h for h in heads), heads[:5]


@pytest.mark.parametrize("stem", STEMS)
def test_the_explanation_page_explains_or_says_why_not_for_every_checkpoint(stem: str) -> None:
    at = run("explanation.py", ex_model=f"{stem}.pt", ex_text=SENTENCE)
    said = " ".join(plain(i.value) for i in at.info)
    if stem in EXPLAINED:
        assert "explains RNNsearch" not in said and "has no α" not in said
        assert at.get("vega_lite_chart") or at.get("plotly_chart"), "no α heatmap drawn"
    else:
        assert ("RNNencdec has no α" if "rnnencdec" in stem else "explains RNNsearch (Bahdanau et al. 2015) only") \
            in said, said


@pytest.mark.parametrize("group", GROUPS)
def test_the_bottleneck_page_draws_every_pair(group: str) -> None:
    at = run("bottleneck_compare.py", bn_model=group, bn_text=SENTENCE)
    assert at.selectbox(key="bn_model").value == group


def test_the_comparison_page_draws_every_attending_model() -> None:
    at = run("compare_attention.py", cmp_text=SENTENCE)
    labels = at.multiselect(key="cmp_models").options
    assert not any("RNNencdec" in label for label in labels)  # no α, not offered
    for k in range(0, len(labels), 2):  # two at a time, as the page lays them out
        at.multiselect(key="cmp_models").set_value(labels[k : k + 2]).run()
        assert not at.exception and not at.error, (labels[k : k + 2], [e.value for e in [*at.exception, *at.error]])


def test_the_explanation_page_asks_why_this_word_too() -> None:
    """The stepper's "why not" on the explanation page: the chosen word's alternatives from its top-k, and
    the contrast explained on a click, its completeness gap under 0.05 nats."""
    import re

    at = run("explanation.py", ex_model="m30k-en-fr-rnnsearch.pt", ex_text="A woman is holding a red umbrella.",
             ex_step="1", ex_tab="Why this word?")
    alt = at.selectbox(key="ex_why_alt")
    assert len(alt.options) == 4  # the top-5 without the written word
    at.button(key="ex_why_run").click().run()
    assert not at.exception and not at.error
    said = " ".join(plain(c.value) for c in at.caption)
    assert float(re.search(r"completeness gap ([0-9.]+) nats", said).group(1)) < 0.05
    assert any(f"over « {alt.value} »" in plain(m.value) for m in at.markdown)
