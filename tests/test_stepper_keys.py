"""The stepper driven by a presenter's clicker (AppTest on the tiny pair): PageDown steps and PageUp
steps back as → / ← do (hidden buttons with those shortcuts), and Esc leaves presentation mode; the
visible Step, Back and Play buttons carry the shortcuts →, ← and P."""

from __future__ import annotations

from pathlib import Path

from tests.stepper_app import SENTENCE, click, start


def shortcut(at: object, key: str) -> str:
    """The keyboard shortcut a button was given (its protobuf's field)."""
    return at.button(key=key).proto.shortcut  # type: ignore[attr-defined]


def test_clicker_keys_step_back_and_play(ckpt_dir: Path) -> None:
    at = start({"text": SENTENCE})
    keys = (shortcut(at, "sp_btn_step"), shortcut(at, "sp_btn_back"), shortcut(at, "sp_btn_play"))
    assert keys == ("right", "left", "p")
    assert (shortcut(at, "sp_btn_pgdn"), shortcut(at, "sp_btn_pgup")) == ("pagedown", "pageup")
    click(at, "sp_btn_pgdn")
    click(at, "sp_btn_pgdn")
    assert at.session_state["sp_pos"] == 2
    click(at, "sp_btn_pgup")
    assert at.session_state["sp_pos"] == 1
    assert not [b for b in at.button if b.key == "sp_btn_esc"]  # not presenting: nothing for Esc to leave


def test_esc_leaves_presentation(ckpt_dir: Path) -> None:
    at = start({"text": SENTENCE, "present": "true"})
    assert at.session_state["sp_present"] and shortcut(at, "sp_btn_esc").lower() in ("esc", "escape")
    click(at, "sp_btn_esc")
    assert not at.session_state["sp_present"] and at.toggle(key="sp_present").value is False
