"""The everyday model in the stepper (issue 34): typed sentences go to it, presets keep their pairs, and
its freeze view names each model for what it is (its own frozen weights are an ablation, not an RNNencdec)."""

from __future__ import annotations

import re

import pytest

from tests.conftest import ROOT
from tests.stepper_app import click, html_bodies, set_text, start, trace
from ui.common import models

EVERYDAY_CKPT = ROOT / "checkpoints" / "europarl-tatoeba-en-fr-rnnsearch-30k.pt"
pytestmark = pytest.mark.skipif(not EVERYDAY_CKPT.exists(), reason="the everyday model is not shipped")


def compare_labels(at) -> list[str]:
    """The labels above each translation of the bottleneck comparison, in order."""
    body = next(b for b in html_bodies(at) if "bottleneck-compare" in b)
    return [re.sub(r"&#x27;", "'", m) for m in re.findall(r'padding-left:6px">([^<]*)</div>', body)]


def test_a_typed_sentence_on_a_fresh_server_is_translated_by_the_30k_model() -> None:
    at = start()
    assert at.session_state["sp_model"] == "m30k-en-fr"  # the first launch's preset stays on its own pair
    set_text(at, "Where is the train station?")
    assert at.session_state["sp_model"] == models.TYPED_GROUP
    click(at, "sp_btn_run")
    t = trace(at)
    assert t.target_tokens[:4] == ["où", "est", "la", "gare"], t.target_tokens
    assert any("trained for everyday sentences" in e["what"] for e in at.session_state["sp_log"])
    assert any("Your own sentence: translated by the pair trained for everyday sentences" in c.value.replace("\\", "")
               for c in at.caption)  # said on the page, not only in the sidebar's picker
    at.selectbox(key="sp_w_preset").set_value("Adjective swap").run()  # a preset keeps its own pair
    assert at.session_state["sp_model"] == "m30k-en-fr"
    at.selectbox(key="sp_w_preset").set_value("Monotonic copy").run()
    assert at.session_state["sp_model"] == "europarl-en-fr-50"
    at.selectbox(key="sp_w_preset").set_value("Everyday sentence").run()
    assert at.session_state["sp_model"] == models.TYPED_GROUP


def test_the_freeze_view_of_the_30k_pair_labels_the_ablation_and_the_stand_in() -> None:
    at = start({"text": "My brother bought a new bike yesterday.", "model": models.TYPED_GROUP})
    assert at.toggle(key="sp_freeze").label == "Freeze c_i (untrained ablation)"
    at.toggle(key="sp_freeze").set_value(True).run()
    assert not at.exception
    click(at, "sp_btn_run")
    assert not trace(at).has_alignment  # the stepper shows the RNNsearch weights frozen
    labels = compare_labels(at)
    assert labels == [
        "RNNsearch (Europarl + Tatoeba, 30k-word vocabularies): a fresh context c_i for every target word",
        "The same RNNsearch weights (Europarl + Tatoeba, 30k-word vocabularies) with c_i frozen to the summary c: "
        "an untrained ablation",
        "RNNencdec (Europarl, 16k-word vocabularies): one fixed summary c for every target word; the "
        "europarl-en-fr-50 pair's twin, not this pair's"]
    assert "RNNencdec" not in labels[1] and "RNNencdec" not in at.toggle(key="sp_freeze").label
    notice = " ".join(w.value for w in at.warning).replace("\\", "")
    assert "untrained ablation" in notice and "RNNencdec of the europarl-en-fr-50 pair" in notice
    status = next(line for c in at.caption for line in c.value.split("\n\n")  # the caption's status paragraph
                  if "target words written" in line).replace("\\", "")
    assert "untrained ablation" in status and "RNNencdec" not in status


def test_a_pair_with_its_own_twin_keeps_the_rnnencdec_label_and_two_sides() -> None:
    at = start({"text": "She read the old letter slowly.", "model": "europarl-en-fr-50"})
    assert at.toggle(key="sp_freeze").label == "Freeze c_i (RNNencdec)"
    at.toggle(key="sp_freeze").set_value(True).run()
    click(at, "sp_btn_run")
    assert compare_labels(at) == ["RNNsearch: a fresh context c_i for every target word",
                                  "RNNencdec: one fixed summary c for every target word"]


@pytest.mark.parametrize("extra", [{}, {"freeze": "true"}, {"mode": "beam"}, {"cand": "true"}],
                         ids=["greedy", "frozen", "beam", "candidates"])
def test_every_stepper_tab_works_with_the_30k_model(extra: dict[str, str]) -> None:
    """Each tab under the stepper draws for the everyday model, greedy, frozen, beam and with candidate
    lists (features meet: a view offered for a model works with it)."""
    from tests.stepper_app import open_tab

    at = start({"text": "I lost my umbrella on the bus this morning.", "model": models.TYPED_GROUP,
                "step": "4", **extra})
    for tab in ("This step's numbers", "Look · Generate · Update", "Energies e_ij", "Bottleneck", "Event log",
                "Share and export"):
        open_tab(at, tab)
    assert not at.exception and not at.error, [e.value for e in at.error]
    if not extra:
        assert trace(at).target_tokens[:3] == ["j'", "ai", "perdu"]


def test_presentation_mode_keeps_the_comparison_the_warning_promises() -> None:
    """On a projector the stepper drops its secondary panels, but for a pair without a twin the warning and
    the Watch line promise the stand-in's translation under the band: it is drawn there (translations only)."""
    at = start({"text": "Where is the train station?", "model": models.TYPED_GROUP, "freeze": "true",
                "present": "true"})
    click(at, "sp_btn_run")
    labels = compare_labels(at)
    assert len(labels) == 3 and labels[2].startswith("RNNencdec (Europarl")
    at2 = start({"text": "She read the old letter slowly.", "model": "europarl-en-fr-50", "freeze": "true",
                 "present": "true"})
    click(at2, "sp_btn_run")
    assert not any("bottleneck-compare" in b for b in html_bodies(at2))  # a pair with a twin: as before
