"""Every control labelled (issue 21), without a browser: on the stepper in presentation mode and
out of it, every widget has a label and shows it (``label_visibility`` left "visible").

The browser's view of the same (labels drawn, not covered, not cut off) is
``tests/test_browser_back_row.py``; this one runs wherever AppTest does.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from streamlit.proto.LabelVisibility_pb2 import LabelVisibility

from tests.stepper_app import SENTENCE, start

KINDS = ("selectbox", "multiselect", "text_area", "text_input", "number_input", "select_slider", "slider",
         "toggle", "checkbox", "radio")


@pytest.mark.parametrize("present", [True, False], ids=["presenting", "normal"])
def test_every_widget_of_the_stepper_shows_its_label(ckpt_dir: Path, present: bool) -> None:
    at = start({"text": SENTENCE, **({"present": "true"} if present else {})})
    assert bool(at.session_state["sp_present"]) is present
    widgets = [(kind, w) for kind in KINDS for w in getattr(at, kind)]
    assert {w.key for _, w in widgets} >= {"sp_w_preset", "sp_text", "sp_w_speed", "sp_freeze", "sp_present"}, widgets
    hidden = [(kind, w.key, w.label) for kind, w in widgets
              if not str(w.label).strip() or w.proto.label_visibility.value != LabelVisibility.VISIBLE]
    assert not hidden, hidden
