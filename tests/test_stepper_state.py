"""The stepper's session keys (issue 49): ``ui/stepper/state.py`` lists every key the page and its package use,
each carries the prefix ``sp_``, and links written before the prefix open the same view.

1. Statically: every key named in ``pages/stepper.py`` and ``ui/stepper/`` (``state.key/get/put/has/pop/
   setdefault("…")``, ``ctl.bound("…")``, the f-string families) is one of ``state.KEYS``.
2. At run time: the stepper opened on its default view and on a deep link (AppTest, the shipped models)
   holds no session key outside ``state.KEYS`` (ui/common adds none on these views: :data:`FROM_COMMON`).
3. An old-format link (``?text=…&step=…&force=…&freeze=1``) and its new-format twin open the same view, and
   the old one's parameters are moved to the new names.
"""

from __future__ import annotations

import ast
from pathlib import Path

import pytest
import streamlit as st

from tests.conftest import ROOT
from tests.page_app import open_link
from ui.common import models
from ui.stepper import state

FILES = [ROOT / "pages" / "stepper.py", *sorted((ROOT / "ui" / "stepper").glob("*.py"))]
ACCESSORS = {"key", "get", "put", "has", "pop", "setdefault", "bound"}
FROM_COMMON: set[str] = set()  # keys ui/common writes on these views without the prefix (none today)
TEXT = "A dog runs."


def named_keys(path: Path) -> list[str]:
    """The keys a file names through the state module (or ``ctl.bound``): plain names, and for an f-string its
    literal head followed by ``*``."""
    out = []
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if not (isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.args
                and node.func.attr in ACCESSORS and isinstance(node.func.value, ast.Name)
                and node.func.value.id in ("state", "ctl")):
            continue
        arg = node.args[0]
        if isinstance(arg, ast.Constant) and isinstance(arg.value, str):
            out.append(arg.value)
        elif isinstance(arg, ast.JoinedStr) and isinstance(arg.values[0], ast.Constant):
            out.append(f"{arg.values[0].value}*")
    return out


def test_every_key_named_in_the_page_and_package_is_listed() -> None:
    named = {n for f in FILES for n in named_keys(f)}
    assert {"_stepper", "text", "w_speed", "btn_step", "force_*", "follow_*"} <= named  # the scan sees them
    unknown = sorted(n for n in named if not (state.PREFIX + n in state.KEYS or state.known(state.PREFIX + n)))
    assert unknown == []


def test_every_key_carries_the_prefix() -> None:
    assert state.PREFIX == "sp_"
    assert [k for k in state.KEYS if not k.startswith("sp_")] == []
    assert state.key("pos") == "sp_pos" and state.known("sp_force_greedy0_3_1_0_2")
    with pytest.raises(KeyError):
        state.key("posx")  # a name not listed is refused


@pytest.fixture
def shipped(monkeypatch: pytest.MonkeyPatch) -> None:
    """The shipped checkpoints, Streamlit's data cache empty (as tests/test_app_links.py opens links)."""
    if not (ROOT / "checkpoints" / "m30k-en-fr-rnnsearch.pt").exists():
        pytest.skip("the shipped checkpoints are not in checkpoints/")
    monkeypatch.setenv(models.ENV_VAR, str(ROOT / "checkpoints"))
    st.cache_data.clear()


def strays(keys: list[str]) -> list[str]:
    """The session keys outside the stepper's list and the ones ui/common is allowed."""
    return sorted(k for k in keys if not state.known(k) and k not in FROM_COMMON)


def test_the_default_view_and_a_deep_link_create_only_listed_keys(shipped: None) -> None:
    default = list(open_link("/").session_state)
    assert {"sp_pos", "sp_text", "sp_btn_step", "sp_w_tab"} <= set(default)  # the session is set up
    linked = list(open_link("/", sp_text=TEXT, sp_step="3", sp_force=["0:Un"]).session_state)
    assert any(k.startswith("sp_force_") for k in linked)  # the candidates' buttons, keyed at run time
    assert (strays(default), strays(linked)) == ([], [])


def test_an_old_link_opens_the_same_view_as_its_new_twin(shipped: None) -> None:
    old = open_link("/", text=TEXT, step="3", force=["0:Un"], freeze="1", mode="greedy")
    new = open_link("/", sp_text=TEXT, sp_step="3", sp_force=["0:Un"], sp_freeze="1", sp_mode="greedy")
    views = [(a.session_state["sp_text"], a.session_state["sp_pos"], a.session_state["sp_plan"],
              a.session_state["sp_freeze"], a.session_state["sp_mode"]) for a in (old, new)]
    assert views[0] == views[1] == (TEXT, 3, {0: "Un"}, True, "greedy")
    translations = [a.session_state["sp__stepper"][1].trace.translation for a in (old, new)]
    assert translations[0] == translations[1]
    query = {k: v if isinstance(v, list) else [v] for k, v in old.query_params.items()}
    assert query == {"sp_text": [TEXT], "sp_step": ["3"], "sp_force": ["0:Un"], "sp_freeze": ["1"],
                     "sp_mode": ["greedy"]}  # moved to the new names, the old ones gone


def test_the_presentation_style_names_the_speed_slider_by_its_prefixed_key() -> None:
    """ui/figures/stepper_html.py styles ``.st-key-w_speed``; the page's style names the slider's own key."""
    from ui.stepper.controls import page_css

    css = page_css(True)
    assert ".st-key-sp_w_speed [data-testid=" in css and ".st-key-w_speed " not in css
