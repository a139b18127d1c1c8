"""The stepper opens on models imported from JoeyNMT (tests/fixtures/joeynmt) and OpenNMT-py
(tests/fixtures/onmt) and steps as they decode."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

from nmt.decoding import search as decoding
from nmt.models import checkpoint
from nmt.tools.importers import joeynmt, onmt
from tests.conftest import plain
from tests.stepper_app import SENTENCE, click, start, trace

FIX = Path(__file__).parent / "fixtures" / "joeynmt" / "model"


@pytest.fixture
def imported_dir(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A checkpoints folder holding only the imported fixture, read by the app through the environment."""
    folder = tmp_path / "ckpts"
    folder.mkdir()
    checkpoint.atomic_save(joeynmt.convert(FIX), folder / "joey-en-fr-tiny.pt")
    monkeypatch.setenv("RNNSEARCH_CHECKPOINTS", str(folder))
    return folder


def test_stepper_opens_on_an_imported_model_and_steps_its_greedy_path(imported_dir: Path) -> None:
    at = start({"text": SENTENCE})
    assert at.selectbox(key="sp_model").value == "joey-en-fr-tiny"
    for _ in range(3):
        click(at, "sp_btn_step")
    lm = checkpoint.load(imported_dir / "joey-en-fr-tiny.pt")
    want = decoding.greedy(lm, [SENTENCE])[0].steps[:3]
    got = trace(at).steps
    assert [(s.token, round(s.logprob, 5)) for s in got] == [(s.token, round(s.logprob, 5)) for s in want]
    assert got[0].alpha is not None and abs(sum(got[0].alpha) - 1.0) < 1e-5


ONMT = Path(__file__).parent / "fixtures" / "onmt"


def test_stepper_opens_on_an_imported_onmt_model_and_steps_onmt_greedy_path(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The OpenNMT-py fixture (tests/fixtures/onmt) on its first test sentence: the stepper's first steps are
    onmt_translate's words with OpenNMT-py's own log p (onmt.test, onmt.test.scores); its source has no
    </s>, so α on the </s> column is 0."""
    folder = tmp_path / "ckpts"
    folder.mkdir()
    checkpoint.atomic_save(onmt.convert(ONMT / "model" / "model_step_1500.pt", "en", "fr"),
                           folder / "onmt-en-fr-tiny.pt")
    monkeypatch.setenv("RNNSEARCH_CHECKPOINTS", str(folder))
    sentence = (ONMT / "test.raw.en").read_text(encoding="utf-8").splitlines()[0]
    words = (ONMT / "onmt.test").read_text(encoding="utf-8").splitlines()[0].split("\t")[0].split(" ")
    scores = ast.literal_eval((ONMT / "onmt.test.scores").read_text(encoding="utf-8").splitlines()[0])
    at = start({"text": sentence})
    assert at.selectbox(key="sp_model").value == "onmt-en-fr-tiny"
    for _ in range(4):
        click(at, "sp_btn_step")
    got = trace(at).steps
    assert [s.token for s in got] == words[:4]
    assert max(abs(s.logprob - b) for s, b in zip(got, scores, strict=False)) <= 1e-4
    assert abs(sum(got[0].alpha) - 1.0) < 1e-5 and got[0].alpha[-1] == 0.0  # the last column is </s>


def test_stepper_shows_sentencepiece_pieces_of_an_imported_onmt_model(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The sentencepiece fixture (tests/fixtures/onmt/sentencepiece): the stepper's source row is OpenNMT-py's
    pieces of the sentence, and its steps are onmt_translate's pieces."""
    pytest.importorskip("sentencepiece")  # pinned in requirements.txt
    sp = ONMT / "sentencepiece"
    folder = tmp_path / "ckpts"
    folder.mkdir()
    checkpoint.atomic_save(onmt.convert(sp / "model_step_1500.pt", "en", "fr"), folder / "onmt-sp.pt")
    monkeypatch.setenv("RNNSEARCH_CHECKPOINTS", str(folder))
    at = start({"text": (ONMT / "test.raw.en").read_text(encoding="utf-8").splitlines()[0]})
    for _ in range(4):
        click(at, "sp_btn_step")
    tr = trace(at)
    assert tr.src_tokens == [*(sp / "test.pieces.en").read_text(encoding="utf-8").splitlines()[0].split(" "), "</s>"]
    want = (sp / "onmt.pieces.test").read_text(encoding="utf-8").splitlines()[0].split("\t")[0].split(" ")
    assert [s.token for s in tr.steps] == want[:4]


def test_stepper_decodes_an_imported_model_by_its_toolkit_rules_and_the_url_switches_them(imported_dir: Path) -> None:
    """« a »: JoeyNMT writes « un <unk> . » (its limit int(1.5 · 2) = 3 tokens, tests/fixtures/joeynmt/
    joeynmt.short.greedy); the stepper runs to the same three words and says which rules it follows. With
    ``app_rules=true`` in the URL it decodes by this app's rules: the limit min(2 · 2 + 10, 250) lets it run on."""
    want = (FIX.parent / "joeynmt.short.greedy").read_text(encoding="utf-8").splitlines()[0].split(" ")
    at = start({"text": "a"})
    click(at, "sp_btn_run")
    assert [s.token for s in trace(at).steps] == want == ["un", "<unk>", "."]
    assert any(plain(c.value).startswith("Decodes as joeynmt 2.3 does: at most int(1.5 × source ids")
               for c in at.sidebar.caption)
    at = start({"text": "a", "app_rules": "true"})
    click(at, "sp_btn_run")
    assert len(trace(at).steps) > 3 and [s.token for s in trace(at).steps[:3]] == want
    assert any(plain(c.value) == "Decodes by this app's search rules." for c in at.sidebar.caption)
    assert at.toggle(key="sp_app_rules").value is True
