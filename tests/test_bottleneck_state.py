"""The bottleneck page's session state lives in ui/bottleneck/state.py (issue 49, phase 2): every key the page
file and its package spell out, and every key a run leaves in the session (the default view, and a link to a
corpus sentence by its length with the sweep run), is listed in ``state.KEYS``, and each carries the page's
prefix ``bn_``.
"""

from __future__ import annotations

import pytest

from tests.page_app import app_at
from tests.state_keys import not_listed, page_files, source_keys, unlisted
from tests.test_pages_analysis import TIMEOUT, data_dir, env  # noqa: F401 (the page's tiny models and data)
from ui.bottleneck import state

PAGE = "pages/bottleneck_compare.py"


def test_every_key_the_page_and_its_package_spell_out_is_listed() -> None:
    found = source_keys(page_files("bottleneck_compare", "bottleneck"), state.PREFIX)
    assert {"bn_model", "bn_text", "bn_default", "bn_chart_*", "bn_dl_*"} <= found  # keys of every kind are seen
    assert not_listed(found, state.KEYS) == []


@pytest.mark.usefixtures("env")
def test_every_key_a_run_leaves_is_listed() -> None:
    at = app_at(PAGE, TIMEOUT).run()
    assert not at.exception and {"bn_text", "bn_default", "bn_dl_summary_0"} <= set(at.session_state)
    assert unlisted(at, state.KEYS) == []
    at = app_at(PAGE, TIMEOUT)
    at.query_params.update(bn_from="corpus by length", bn_len="8", bn_per="2")
    at.run()
    at.button(key="bn_sweep").click().run()
    assert not at.exception and {"bn_len", "bn_var", "bn_sweep_done", "bn_dl_sweep_0"} <= set(at.session_state)
    assert unlisted(at, state.KEYS) == []
