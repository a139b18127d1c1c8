"""Length vs quality's session state lives in ui/length/state.py (issue 49, phase 2): every key the page file and
its package spell out, and every key a run leaves in the session (the default view, and a results file's link
with a recomputed test set), is listed in ``state.KEYS``, and each carries the page's prefix ``lq_`` (the
downloads' keys too: ``lq_dl_*``, once ``dl_lq_*``).
"""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.conftest import FIXTURES
from tests.page_app import app_at
from tests.state_keys import not_listed, page_files, source_keys, unlisted
from ui.length import state

PAGE = "pages/length_quality.py"


def test_every_key_the_page_and_its_package_spell_out_is_listed() -> None:
    found = source_keys(page_files("length_quality", "length"), state.PREFIX)
    assert {"lq_results", "lq_dl_csv", "lq_recomputed", "lq_go"} <= found  # keys of every kind are seen
    assert not_listed(found, state.KEYS) == []


def test_every_key_a_run_leaves_is_listed(tiny_checkpoint_dir: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("RNNSEARCH_CHECKPOINTS", str(tiny_checkpoint_dir))
    monkeypatch.setenv("RNNSEARCH_DATA", str(FIXTURES))
    at = app_at(PAGE, 120).run()
    assert not at.exception and {"lq_ckpt", "lq_recomputed"} <= set(at.session_state)
    assert unlisted(at, state.KEYS) == []
    at = app_at(PAGE, 120)
    at.query_params.update(lq_rtest="tiny/test")
    at.run()
    at.button(key="lq_go").click().run()
    assert not at.exception and at.session_state["lq_test"] == "tiny/test" and at.session_state["lq_recomputed"]
    assert {"lq_dl_csv", "lq_dl_html"} <= set(at.session_state)
    assert unlisted(at, state.KEYS) == []
