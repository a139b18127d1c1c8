"""The alignment browser's session state lives in ui/alignment/state.py (issue 49, phase 2): every key the page
file and its package spell out, and every key a run leaves in the session (the default view, and a gold set's
link with its AER computed), is listed in ``state.KEYS``, and each carries the page's prefix ``al_``.
"""

from __future__ import annotations

import pytest

from tests.page_app import app_at
from tests.state_keys import not_listed, page_files, source_keys, unlisted
from tests.test_pages_analysis import GOLD, TIMEOUT, data_dir, env  # noqa: F401 (the page's tiny models and data)
from ui.alignment import state


def test_every_key_the_page_and_its_package_spell_out_is_listed() -> None:
    found = source_keys(page_files("alignment_browser", "alignment"), state.PREFIX)
    assert {"al_model", "al_pick", "al_table_ids", "al_dl_own"} <= found  # the search sees keys of every kind
    assert not_listed(found, state.KEYS) == []


@pytest.mark.usefixtures("env")
def test_every_key_a_run_leaves_is_listed() -> None:
    at = app_at("pages/alignment_browser.py", TIMEOUT)
    at.run()
    assert not at.exception and at.selectbox(key="al_pick").value == 0
    assert {"al_pick", "al_pick_for", "al_table_ids", "al_dl_own_0"} <= set(at.session_state)
    assert unlisted(at, state.KEYS) == []
    at = app_at("pages/alignment_browser.py", TIMEOUT)
    at.query_params.update(al_split=GOLD, al_pick="1")
    at.run()
    at.button(key="al_aer").click().run()
    assert not at.exception and at.toggle(key="al_gold").value and "al_aer_done" in at.session_state
    assert unlisted(at, state.KEYS) == []
