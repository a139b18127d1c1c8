"""Every page opened from a link, in AppTest (the checks the browser tier used to make with a server each).

1. Deep links: each shared link of ``tests.deep_links.LINKS`` (every page and its URL keys, the stepper's
   step and forced words, the lesson's stops and views, the vote page), opened first thing (Streamlit's data
   cache emptied, as on a server just started), shows the texts recorded for it with no exception and no error
   box, and keeps the link's query (the stepper's links from before its prefix under today's names ``sp_…``;
   the address bar's path and "Page not found" are the browser's: tests/test_browser.py), and leaves in the
   session only keys its page's ``ui/<page>/state.py`` lists (issue 49).
2. A fresh clone: no corpus configured (``RNNSEARCH_DATA`` an empty folder, the committed
   ``configs/data_roots.toml`` naming no root), only the shipped checkpoints and ``evalsets/``: every page of
   the frame's list (``app.PAGES``) draws with no error, no "not found", every picker holding a value, and the corpus
   pickers start on a built-in set (the alignment and bottleneck ones offering all eight).
"""

from __future__ import annotations

import re
import tomllib
from pathlib import Path
from typing import Any

import pytest
import streamlit as st
from streamlit.testing.v1 import AppTest

from app import PAGES
from tests.conftest import ROOT, plain
from tests.deep_links import LINKS, Link
from tests.page_app import open_link, page_file, shown
from tests.state_keys import unlisted
from tests.test_layout_ui import PAGE_FILES
from tests.test_state_keys import STATES
from ui.common import models

TIMEOUT = 300  # seconds: a first run loads the shipped models
CKPT = ROOT / "checkpoints"


NOT_FOUND = re.compile(r"\bnot found\b|\bno\b[^\n]{0,120}\bfound\b|\bno readable\b|\bcannot read\b", re.IGNORECASE)
BUILTIN_EN_FR = ["alignment/hansards-naacl2003-en-fr/test", "alignment/hansards-naacl2003-en-fr/trial",
                 "europarl-v7-fr-en/test2000q4", "multi30k/test_2016_flickr", "multi30k/test_2017_flickr",
                 "multi30k/test_2017_mscoco", "tatoeba-fr-en/test", "wmt/newstest2014-fren"]
CORPUS_PICKERS = {  # page file: (widget key, the value it starts on, its options when checked, else None)
    "pages/alignment_browser.py": ("al_split", "multi30k/test_2016_flickr", BUILTIN_EN_FR),
    "pages/bottleneck_compare.py": ("bn_split", "multi30k/test_2016_flickr", BUILTIN_EN_FR),
    "pages/length_quality.py": ("lq_rtest", "multi30k/test_2016_flickr", None),
}
EXTRA = [("pages/bottleneck_compare.py", {"bn_from": "corpus by length"})]  # the length slider's corpus sentence
FRESH = [(page.source, {}) for page in PAGES] + EXTRA


@pytest.fixture(autouse=True)
def shipped(monkeypatch: pytest.MonkeyPatch) -> None:
    """The shipped checkpoints; Streamlit's data cache empty, as on a server just started (the loaded models,
    ``st.cache_resource``, are kept: loading them again for each link would only cost time)."""
    if not (CKPT / "m30k-en-fr-rnnsearch.pt").exists():
        pytest.skip("the shipped checkpoints are not in checkpoints/")
    monkeypatch.setenv(models.ENV_VAR, str(CKPT))
    st.cache_data.clear()


def opened(file: str, query: dict[str, str]) -> AppTest:
    """A fresh session of the app opened on the page ``file`` with the URL's ``query``, run once: no exception,
    no error box."""
    return open_link(file, **query)


@pytest.mark.parametrize("link", LINKS, ids=[f"{lk.path}?{'&'.join(lk.query)}" for lk in LINKS])
def test_deep_link_opens_its_view_first_thing_and_keeps_its_query(link: Link) -> None:
    at = open_link(link.path, **link.query)
    texts = shown(at)
    assert [want for want in link.shows if not any(want in t for t in texts)] == [], texts
    kept = {k: v if isinstance(v, list) else [v] for k, v in at.query_params.items()}  # the URL after the run
    for key, value in link.query.items():
        key = written(link.path, key)
        assert kept.get(key) == (value if isinstance(value, list) else [value]), (key, kept.get(key))
    page = PAGE_FILES[Path(page_file(link.path) if link.path.startswith("/") else link.path).stem]
    assert unlisted(at, STATES[page].KEYS) == []  # every key the view made is its page's (issue 49)


def written(path: str, key: str) -> str:
    """The parameter a link's ``key`` is kept under: the stepper moves a link's names from before its prefix
    (``text``) to today's (``sp_text``); every other page keeps its names."""
    return f"sp_{key}" if path == "/" and not key.startswith("sp_") else key


def alerts(at: AppTest) -> list[str]:
    """The texts of every alert box (error, warning, info, success) the page shows."""
    return [plain(a.value) for kind in ("error", "warning", "info", "success") for a in getattr(at, kind)]


def problems(at: AppTest) -> list[str]:
    """What a visitor should never see here: "not found" messages, pickers with nothing chosen or nothing
    to choose (errors and exceptions fail :func:`opened` already)."""
    out = [f"not found: {t}" for t in alerts(at) if NOT_FOUND.search(t)]
    out += [f"empty picker: {b.label}" for b in at.selectbox if b.value in (None, "")]
    out += [f"empty multiselect: {m.label}" for m in at.multiselect if not m.value]
    return out


def shown_text(at: AppTest) -> str:
    """Every text the page writes (Markdown, captions, plain text) and its pickers' labels and values."""
    parts: list[Any] = [e.value for kind in ("markdown", "caption", "text", "subheader") for e in getattr(at, kind)]
    parts += [f"{b.label} {b.value}" for b in at.selectbox]
    return plain("\n".join(map(str, parts)))


@pytest.fixture
def no_corpus(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """No corpus: RNNSEARCH_DATA an empty folder and no allow-listed root."""
    with open(ROOT / "configs" / "data_roots.toml", "rb") as f:
        assert tomllib.load(f).get("root", []) == [], "configs/data_roots.toml must name no root for this test"
    (tmp_path / "no-corpus").mkdir()
    monkeypatch.setenv("RNNSEARCH_DATA", str(tmp_path / "no-corpus"))


@pytest.mark.parametrize(("file", "query"), FRESH, ids=[Path(f).stem + ("-extra" if q else "") for f, q in FRESH])
def test_every_page_works_with_no_corpus_configured(no_corpus: None, file: str, query: dict[str, str]) -> None:
    at = opened(file, query)
    assert problems(at) == [], file
    if file in CORPUS_PICKERS:
        key, value, options = CORPUS_PICKERS[file]
        assert at.selectbox(key=key).value == value
        if options is not None:
            assert list(at.selectbox(key=key).options) == options
    if query:
        assert "Sentence #" in shown_text(at)  # a corpus sentence picked by its length
