"""The stepper page with odd input, bad URLs, no checkpoints, and presets written for another pair."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from tests.stepper_app import SENTENCE, click, link, set_text, start, trace
from ui.common.presets import BY_NAME
from ui.figures.stepper_html import clicker_js
from ui.figures.stepper_state import MAX_TEXT_CHARS


@pytest.mark.parametrize("text", ["", "   \n\t "])
def test_empty_input_gives_a_message(ckpt_dir: Path, text: str) -> None:
    at = start({"text": SENTENCE})
    at.select_slider(key="sp_w_speed").set_value(1.0).run()
    set_text(at, text)
    assert any("empty" in w.value for w in at.warning)
    assert not at.button and not at.select_slider  # no decoding controls without a sentence
    set_text(at, SENTENCE)
    click(at, "sp_btn_play")
    assert at.session_state["sp_playing"] and at.select_slider(key="sp_w_speed").value == 1.0  # kept meanwhile


def test_long_input_is_truncated_with_a_notice(ckpt_dir: Path) -> None:
    at = start({"text": " ".join(["dog"] * 120)})
    assert any("first 80 tokens" in w.value and "120" in w.value for w in at.warning)
    click(at, "sp_btn_step")
    assert len(trace(at).src_tokens) == 81  # 80 tokens and </s>


@pytest.mark.parametrize("text", [
    "A man 😀 is riding a bike 🚲.",
    "Ein Mann fährt Fahrrad. Мужчина едет. 男人骑自行车。",
    '<script>alert("x")</script> <img src=x onerror=alert(1)> **bold** $x$ :red[y]',
])
def test_odd_input_is_shown_as_text(ckpt_dir: Path, text: str) -> None:
    at = start({"text": text})
    click(at, "sp_btn_step")
    assert any("outside the model's vocabulary" in c.value for c in at.caption)
    # the one snippet allowed to run JavaScript is the page's own clicker script, not built from the text
    assert [h.proto.body for h in at.get("html") if h.proto.unsafe_allow_javascript] == [
        clicker_js("sp_btn_step", "sp_btn_back")]
    bodies = " ".join(h.proto.body for h in at.get("html") if not h.proto.unsafe_allow_javascript)
    assert "<script" not in bodies and "<img" not in bodies
    if "<script" in text:
        assert "&lt;" in bodies and "&gt;" in bodies  # Moses splits "<script>" into "<", "script", ">"
        unk_note = next(c.value for c in at.caption if "vocabulary" in c.value)
        assert "\\<" in unk_note and "\\$" in unk_note and "\\*" in unk_note  # markdown escaped: literal


def test_bad_query_params_fall_back(ckpt_dir: Path) -> None:
    at = start({"text": SENTENCE, "step": "abc", "mode": "nonsense", "model": "no-such-model",
                "beam": "999", "force": ["x:y", "3"]})
    assert at.session_state["sp_pos"] == 0 and at.session_state["sp_plan"] == {}
    assert at.radio(key="sp_mode").value == "greedy"
    assert any("no" in w.value and "default" in w.value for w in at.sidebar.warning)
    at2 = start({"text": SENTENCE, "step": "500"})
    assert trace(at2).finished and at2.session_state["sp_pos"] == len(trace(at2).steps)


def test_links_shared_before_the_controls_were_bound_still_open(ckpt_dir: Path) -> None:
    """Old links wrote flags as 1/0; the bound controls write true/false. Both open the same view,
    and an over-long sentence in a hand-made link is cut as the text box would cut it."""
    old = start({"text": SENTENCE, "step": "2", "freeze": "1", "paper": "1", "unk": "0"})
    new = start({"text": SENTENCE, "step": "2", "freeze": "true", "paper": "true", "unk": "false"})
    for at in (old, new):
        assert at.toggle(key="sp_freeze").value is True and at.toggle(key="sp_paper").value is True
        assert at.toggle(key="sp_unk").value is False
        assert trace(at).context == "fixed" and len(trace(at).steps) == 2
    assert link(old) == link(new)
    long = start({"text": "dog " * 600})
    assert len(long.text_area(key="sp_text").value) == MAX_TEXT_CHARS


def test_no_checkpoints_gives_training_instructions(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("RNNSEARCH_CHECKPOINTS", str(tmp_path))
    at = start()
    assert "No checkpoints found" in at.error[0].value
    assert any("train.py" in m.value for m in at.markdown)


def test_a_preset_switches_to_the_pair_it_is_written_for(tiny_checkpoint_dir: Path, tmp_path: Path,
                                                         monkeypatch: pytest.MonkeyPatch) -> None:
    """The paper's sentences need the Europarl pair: picking one switches the checkpoint pair (when the
    folder has it) and says so in the log; a preset whose pair is absent leaves the choice alone."""
    for name in ("tiny-en-fr-rnnsearch.pt", "tiny-en-fr-rnnencdec.pt"):
        shutil.copy(tiny_checkpoint_dir / name, tmp_path / name)
    shutil.copy(tiny_checkpoint_dir / "tiny-en-fr-rnnsearch.pt", tmp_path / "europarl-en-fr-rnnsearch-50.pt")
    shutil.copy(tiny_checkpoint_dir / "tiny-en-fr-rnnencdec.pt", tmp_path / "europarl-en-fr-rnnencdec-50.pt")
    monkeypatch.setenv("RNNSEARCH_CHECKPOINTS", str(tmp_path))
    at = start({"text": SENTENCE, "model": "tiny-en-fr"})
    fig3 = BY_NAME["Reordered phrase"]
    at.selectbox(key="sp_w_preset").set_value(fig3.name).run()
    assert not at.exception
    assert at.session_state["sp_model"] == "europarl-en-fr-50" and at.session_state["sp_text"] == fig3.text
    assert any("europarl-en-fr-50" in e["what"] for e in at.session_state["sp_log"])
    at.selectbox(key="sp_w_preset").set_value("Diagonal walk").run()  # written for m30k-en-fr: not in this folder
    assert at.session_state["sp_model"] == "europarl-en-fr-50"


def _folder_with_typed_pair(tiny_checkpoint_dir: Path, tmp_path: Path) -> None:
    """The tiny pair under the Multi30k pair's names and under the typed-sentence pair's."""
    for prefix, variant in (("m30k-en-fr", ""), ("europarl-tatoeba-en-fr", "-30k")):
        for kind in ("rnnsearch", "rnnencdec"):
            shutil.copy(tiny_checkpoint_dir / f"tiny-en-fr-{kind}.pt", tmp_path / f"{prefix}-{kind}{variant}.pt")


def test_a_typed_sentence_goes_to_the_pair_trained_for_everyday_sentences(
        tiny_checkpoint_dir: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Issue 20 item 7: the first launch shows the Multi30k pair with its preset; a sentence of one's own
    moves to europarl-tatoeba-en-fr-30k (logged); a preset moves back to its pair; a pair chosen by hand
    (or named by a shared link) stays when the sentence is edited."""
    _folder_with_typed_pair(tiny_checkpoint_dir, tmp_path)
    monkeypatch.setenv("RNNSEARCH_CHECKPOINTS", str(tmp_path))
    at = start()
    assert at.session_state["sp_model"] == "m30k-en-fr"
    set_text(at, SENTENCE)
    assert not at.exception and at.session_state["sp_model"] == "europarl-tatoeba-en-fr-30k"
    assert any("switched to the checkpoint pair europarl-tatoeba-en-fr-30k" in e["what"]
               for e in at.session_state["sp_log"])
    at.selectbox(key="sp_w_preset").set_value("Diagonal walk").run()  # written for the Multi30k pair
    assert at.session_state["sp_model"] == "m30k-en-fr"
    at.selectbox(key="sp_model").set_value("m30k-en-fr").run()
    at.selectbox(key="sp_model").set_value("europarl-tatoeba-en-fr-30k").run()
    at.selectbox(key="sp_model").set_value("m30k-en-fr").run()  # chosen by hand
    set_text(at, "a dog .")
    assert at.session_state["sp_model"] == "m30k-en-fr"
    shared = start({"text": SENTENCE, "model": "m30k-en-fr"})
    set_text(shared, "a dog .")
    assert shared.session_state["sp_model"] == "m30k-en-fr"


def test_without_the_typed_pair_a_typed_sentence_stays_on_the_shown_pair(
        tiny_checkpoint_dir: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    for kind in ("rnnsearch", "rnnencdec"):
        shutil.copy(tiny_checkpoint_dir / f"tiny-en-fr-{kind}.pt", tmp_path / f"m30k-en-fr-{kind}.pt")
    monkeypatch.setenv("RNNSEARCH_CHECKPOINTS", str(tmp_path))
    at = start()
    set_text(at, SENTENCE)
    assert not at.exception and at.session_state["sp_model"] == "m30k-en-fr"
    assert not any("switched to the checkpoint pair" in e["what"] for e in at.session_state["sp_log"])


def test_typed_group_needs_the_pairs_rnnsearch() -> None:
    """Only a typed-sentence pair with an RNNsearch takes typed sentences (the RNNencdec alone has no α)."""
    from ui.common import models

    info = object()  # the slot's content is not read
    name = models.TYPED_GROUP
    both = [models.ModelGroup("m30k-en-fr", info, info), models.ModelGroup(name, info, info)]
    assert models.typed_group(both) == name
    assert models.typed_group([models.ModelGroup(name, None, info)]) is None
    assert models.typed_group([models.ModelGroup("m30k-en-fr", info, info)]) is None
