"""The paired page's session state lives in ui/paired/state.py (issue 49, phase 2): every key the page file and
its package spell out, and every key a run leaves in the session (the default view, and a link naming both
models and the test set, run, a sentence picked and α compared over the set), is listed in ``state.KEYS``,
and each carries the page's prefix ``pr_``.
"""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from nmt.text import corpora
from tests.conftest import FIXTURES
from tests.page_app import app_at
from tests.state_keys import not_listed, page_files, source_keys, unlisted
from ui.common import models
from ui.paired import state

PAGE = "pages/paired_compare.py"


def test_every_key_the_page_and_its_package_spell_out_is_listed() -> None:
    found = source_keys(page_files("paired_compare", "paired"), state.PREFIX)
    assert {"pr_a", "pr_row", "pr_table_lines", "pr_ng_*", "pr_chart_*"} <= found  # keys of every kind are seen
    assert not_listed(found, state.KEYS) == []


def test_every_key_a_run_leaves_is_listed(tiny_checkpoint_dir: Path, tmp_path: Path,
                                          monkeypatch: pytest.MonkeyPatch) -> None:
    shutil.copytree(FIXTURES / "tiny", tmp_path / "tiny")
    monkeypatch.setenv(models.ENV_VAR, str(tiny_checkpoint_dir))
    monkeypatch.setenv(corpora.ENV_VAR, str(tmp_path))
    at = app_at(PAGE, 300).run()
    assert not at.exception and {"pr_a", "pr_split", "pr_split_default"} <= set(at.session_state)
    assert unlisted(at, state.KEYS) == []
    at = app_at(PAGE, 300)
    at.query_params.update({"pr_a": "tiny-en-fr-rnnencdec.pt", "pr_b": "tiny-en-fr-rnnsearch.pt",
                            "pr_split": "tiny/test"})
    at.run()
    at.button(key="pr_go").click().run()
    at.selectbox(key="pr_row").set_value(at.selectbox(key="pr_row").options[0]).run()
    assert not at.exception and {"pr_table_lines", "pr_ng_b_not_a", "pr_go_done"} <= set(at.session_state)
    assert unlisted(at, state.KEYS) == []
