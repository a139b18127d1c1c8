"""The paired page's whole-split run (ui/paired/run.py, issue 52): it streams traces to translations (no trace
outlives its chunk: weak references tell), its chunks and estimate are the numbers written here by hand, and a
Stop keeps every finished chunk: the stopped page compares the sentences both models finished, and Run again
translates only the rest (AppTest on the tiny pair, the run stopped between two chunks as a click would)."""

from __future__ import annotations

import gc
import shutil
import weakref
from pathlib import Path
from typing import Any

import pytest
import streamlit as st
from streamlit.testing.v1 import AppTest

from nmt.text import corpora
from nmt.tools import paired
from tests.conftest import FIXTURES, ROOT, plain
from ui.common import heavy, models
from ui.common import widgets as W
from ui.paired import run as paired_run
from ui.paired import views as V

PAGE = ROOT / "pages" / "paired_compare.py"


class FakeTrace:
    """Stands in for a DecodeTrace (~245 KB each on a real beam-5 run)."""

    def __init__(self, text: str) -> None:
        self.translation = text.upper()


@pytest.fixture(autouse=True)
def fresh_stores() -> None:
    heavy.clear_all()


def test_the_chunks_the_estimate_and_the_stopped_line() -> None:
    assert V.chunk_bounds(40) == [(0, 8), (8, 24), (24, 40)]
    assert V.chunk_bounds(5) == [(0, 5)] and V.chunk_bounds(0) == [] and V.chunk_bounds(24) == [(0, 8), (8, 24)]
    assert [V.duration_text(s) for s in (9.9, 44, 89, 175, 3540, 3570, 6600)] == [
        "under 10 s", "about 40 s", "about 90 s", "about 3 min", "about 59 min", "about 1 h", "about 1 h 50 min"]
    # 20,000 words; A measured 2 s for 40 words (50 ms a word), B 1 s for 40: 1,000 s + 500 s
    assert V.estimated_seconds(20000, [(40, 2.0), (40, 1.0)]) == 1500.0
    assert V.estimate_text(1000, 20000, [(40, 2.0), (40, 1.0)]).startswith(
        "Estimated time: about 25 min for 1,000 sentences (20,000 source words) × 2 models, measured on this server "
        "now: 50.0 ms and 25.0 ms a source word on the first 8 lines.")
    assert V.time_left(100, 20.0, 400) == 80.0 and V.time_left(0, 0.0, 400) is None
    assert V.stopped_text(24, 40) == ("Stopped after 24 of 40 sentences: the comparison below covers those 24. "
                                      "Press Run to continue from there; the sentences done are kept.")
    assert V.stopped_text(8, 40).startswith("Stopped after 8 of 40 sentences: a paired test needs at least 10.")


def test_the_run_keeps_translations_only_and_what_a_stop_finished(monkeypatch: pytest.MonkeyPatch) -> None:
    made: list[weakref.ref] = []
    calls: list[tuple[str, int]] = []

    def decode_now(job: Any, part: tuple[str, ...], refs: Any = None) -> list[FakeTrace]:
        calls.append((job, len(part)))
        if len(calls) == 5:  # the click on Stop: the script ends here, between two chunks
            raise KeyboardInterrupt
        out = [FakeTrace(s) for s in part]
        made.extend(weakref.ref(t) for t in out)
        return out

    monkeypatch.setattr(W, "decode_now", decode_now)
    sources = [f"s{i}" for i in range(40)]
    with pytest.raises(KeyboardInterrupt):
        paired_run.translate(["A", "B"], sources, "x")  # type: ignore[list-item]
    gc.collect()
    assert calls == [("A", 8), ("B", 8), ("A", 16), ("B", 16), ("A", 16)]  # A then B within each chunk
    assert len(made) == 48 and sum(r() is not None for r in made) == 0  # not one trace kept
    a, b = paired_run.done(["A", "B"], sources)  # type: ignore[list-item]
    assert a == b == [f"S{i}" for i in range(24)]  # the two finished chunks, both models
    whole = paired_run.translate(["A", "B"], sources, "x")  # type: ignore[list-item]
    assert calls[5:] == [("A", 16), ("B", 16)]  # Run again: only the last chunk, for both models
    assert whole == [[f"S{i}" for i in range(40)]] * 2


@pytest.fixture
def forty(tiny_checkpoint_dir: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """The tiny pair and one split, tiny/test twice over (40 pairs: chunks 0–8, 8–24, 24–40)."""
    (tmp_path / "tiny").mkdir()
    for lang in ("en", "fr"):
        text = (FIXTURES / "tiny" / f"test.{lang}").read_text(encoding="utf-8")
        (tmp_path / "tiny" / f"test.{lang}").write_text(text + text, encoding="utf-8")
    shutil.copy(FIXTURES / "tiny" / "train.en", tmp_path / "tiny" / "train.en")
    shutil.copy(FIXTURES / "tiny" / "train.fr", tmp_path / "tiny" / "train.fr")
    monkeypatch.setenv(models.ENV_VAR, str(tiny_checkpoint_dir))
    monkeypatch.setenv(corpora.ENV_VAR, str(tmp_path))
    return tmp_path


def test_the_page_estimates_stops_and_continues(forty: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    ticks = iter(range(0, 10**6, 30))  # a clock that moves 30 s at every reading
    monkeypatch.setattr(paired_run, "clock", lambda: float(next(ticks)))
    translated: list[int] = []
    real = paired_run.translations

    def translations(job: W.Job, part: tuple[str, ...]) -> list[str]:
        translated.append(len(part))
        if len(translated) == 5 and not getattr(translations, "stopped", False):
            translations.stopped = True  # type: ignore[attr-defined]
            st.stop()  # where a click on Stop ends the running script: between two chunks
        return real(job, part)

    monkeypatch.setattr(paired_run, "translations", translations)
    monkeypatch.setattr(paired, "RESAMPLES", 100)  # the page's bootstrap, smaller: this test is about the run
    at = AppTest.from_file(str(PAGE), default_timeout=300)
    at.query_params.update({"pr_split": "tiny/test"})
    at.run()
    at.selectbox(key="pr_limit").set_value(0).run()  # all 40: a long run, estimated before it starts
    said = [plain(i.value) for i in at.info]
    # 8 first lines: 6 + 7 + 6 + 7 + 5 + 5 + 5 + 7 = 48 words in 30 s each model; 40 lines: 2 × 139 = 278 words
    # 278 × 30 / 48 = 173.75 s a model, 347.5 s for both: about 6 min; 30 / 48 s = 625 ms a word
    assert said[0].startswith("Estimated time: about 6 min for 40 sentences (278 source words) × 2 models, measured "
                              "on this server now: 625.0 ms and 625.0 ms a source word on the first 8 lines."), said
    assert translated == [8, 8] and not at.dataframe  # the measure only: nothing compared before Run
    at.button(key="pr_go").click().run()  # stopped during A's third chunk
    assert translated == [8, 8, 16, 16, 16] and not at.exception and not at.dataframe
    at.button(key="pr_stop").click().run()
    assert not at.exception and not at.error
    assert translated == [8, 8, 16, 16, 16]  # stopped: nothing translated again
    assert "Stopped after 24 of 40 sentences: the comparison below covers those 24." in " ".join(
        plain(i.value) for i in at.info)
    lengths = next(d.value for d in at.dataframe if "source words" in d.value.columns)
    assert lengths["sentences"].sum() == 24
    at.button(key="pr_go").click().run()  # Run again: the last chunk of both, nothing before it
    assert not at.exception and not at.error and translated == [8, 8, 16, 16, 16, 16, 16]
    assert not any("Stopped" in plain(i.value) for i in at.info)
    lengths = next(d.value for d in at.dataframe if "source words" in d.value.columns)
    assert lengths["sentences"].sum() == 40 and "pr_stop" not in [b.key for b in at.button]
