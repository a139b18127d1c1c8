"""The stepper driven by a presenter's clicker (AppTest on the tiny pair): the visible Step, Back and Play
buttons carry the shortcuts →, ← and P; PageDown and PageUp are mapped by the page's script onto clicks of the
Step and Back buttons (pressed in Chromium by ``tests/test_browser.py``), and Esc leaves presentation mode."""

from __future__ import annotations

import json
import re
from pathlib import Path

from tests.stepper_app import SENTENCE, click, start


def shortcut(at: object, key: str) -> str:
    """The keyboard shortcut a button was given (its protobuf's field)."""
    return at.button(key=key).proto.shortcut  # type: ignore[attr-defined]


def clicker_map(at: object) -> dict[str, str]:
    """The keys the page's clicker script maps, to the button keys it clicks (from the script's text)."""
    scripts = [h.proto for h in at.get("html") if "keydown" in h.proto.body]
    assert len(scripts) == 1 and scripts[0].unsafe_allow_javascript  # run by the browser, not shown as text
    return json.loads(re.search(r"const keys = (\{.*?\});", scripts[0].body)[1])


def test_clicker_keys_step_back_and_play(ckpt_dir: Path) -> None:
    at = start({"text": SENTENCE})
    keys = (shortcut(at, "sp_btn_step"), shortcut(at, "sp_btn_back"), shortcut(at, "sp_btn_play"))
    assert keys == ("right", "left", "p")
    assert clicker_map(at) == {"PageDown": "sp_btn_step", "PageUp": "sp_btn_back"}
    assert {"sp_btn_step", "sp_btn_back"} <= {b.key for b in at.button}  # the buttons it clicks are drawn
    click(at, "sp_btn_step")
    click(at, "sp_btn_step")
    assert at.session_state["sp_pos"] == 2
    click(at, "sp_btn_back")
    assert at.session_state["sp_pos"] == 1
    assert not [b for b in at.button if b.key == "sp_btn_esc"]  # not presenting: nothing for Esc to leave


def test_esc_leaves_presentation(ckpt_dir: Path) -> None:
    at = start({"text": SENTENCE, "present": "true"})
    assert at.session_state["sp_present"] and shortcut(at, "sp_btn_esc").lower() in ("esc", "escape")
    click(at, "sp_btn_esc")
    assert not at.session_state["sp_present"] and at.toggle(key="sp_present").value is False
