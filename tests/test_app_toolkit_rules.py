"""The pages decode an imported model by its toolkit's search rules by default, beam explorer and stepper
included, and the switch under the model picker decodes it by this app's (issue 46).

Expected outputs are the toolkits' own, committed with the fixtures (tests/fixtures/joeynmt/README.md,
tests/fixtures/onmt/README.md: JoeyNMT 2.3.0's ``translate`` and OpenNMT-py 3.5.1's ``onmt_translate``, beam 5
and greedy, default settings, one sentence a batch). The models are imported reading text split at spaces and
are fed the Moses tokens the toolkits read, so a translation is the toolkit's tokens joined by spaces.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from nmt.models import checkpoint
from nmt.tools.importers import joeynmt, onmt
from tests.conftest import plain
from tests.page_app import open_page
from tests.stepper_app import click, start
from ui import models
from ui import widgets as W

FIX = Path(__file__).parent / "fixtures"
# file in the checkpoint folder: (how it is made, its test lines, the toolkit's beam 5 and greedy outputs)
MODELS = {
    "joey-en-fr": (lambda: joeynmt.convert(FIX / "joeynmt" / "model", split="spaces"), "joeynmt/test.en",
                   "joeynmt/joeynmt.test.beam5", "joeynmt/joeynmt.test"),
    "onmt-en-fr": (lambda: onmt.convert(FIX / "onmt" / "model" / "model_step_1500.pt", "en", "fr", split="spaces"),
                   "onmt/test.en", "onmt/onmt.test.beam5", "onmt/onmt.test"),
}
LINE = 1  # the second test line: this app's own beam (length normalisation) ends it unlike either toolkit


def _lines(name: str) -> list[str]:
    """A committed file's lines (onmt.test: the translation before its tab)."""
    return [line.split("\t")[0] for line in (FIX / name).read_text(encoding="utf-8").splitlines()]


@pytest.fixture(scope="module")
def folder(tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("ckpts")
    for name, (make, *_) in MODELS.items():
        checkpoint.atomic_save(make(), out / f"{name}.pt")
    return out


@pytest.fixture(autouse=True)
def only_these(folder: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv(models.ENV_VAR, str(folder))


@pytest.mark.parametrize("name", MODELS)
def test_the_beam_explorers_beam_is_the_toolkits(name: str, folder: Path) -> None:
    """The explorer's own decoding job (n-best 5, its default "length" normalisation, every step recorded) on the
    first 25 test lines and 25 short inputs: its best hypothesis is the toolkit's beam 5 output on every line,
    while this app's beam on the same lines ends differently on some."""
    _, source, beam_file, _ = MODELS[name]
    ckpt = next(c for g in models.scan(folder) for c in g.members if c.path.stem == name)
    short_beam = beam_file.replace("test.beam5", "short.beam5")
    for src, want_file in ((source, beam_file), ("short.en", short_beam)):
        lines = _lines(src)[:25]
        want = _lines(want_file)[:25]
        keep = [k for k, s in enumerate(lines) if s.strip()]
        job = W.Job(str(ckpt.path), ckpt.mtime, "beam", beam=5, n_best=5, topk=5)
        got = W.decode_now(job, [lines[k] for k in keep])
        assert [t.translation for t in got] == [want[k] for k in keep], src
        assert all(t.nbest[0].tokens == t.target_tokens and t.beam_steps for t in got)
        app = W.decode_now(W.Job(str(ckpt.path), ckpt.mtime, "beam", beam=5, n_best=5, toolkit_rules=False),
                           [lines[k] for k in keep])
        assert sum(a.translation != w for a, w in zip(app, [want[k] for k in keep], strict=True)) >= 5, src


@pytest.mark.parametrize("name", MODELS)
def test_the_beam_explorer_page_searches_as_the_toolkit_and_switches(name: str) -> None:
    """The page on test line 2: the n-best table's first row is the toolkit's beam 5 output and the sidebar says
    whose rules; with ``bx_app_rules=true`` in the URL this app's beam writes another translation."""
    _, source, beam_file, _ = MODELS[name]
    text, want = _lines(source)[LINE], _lines(beam_file)[LINE]
    at = open_page("beam_explorer.py", bx_model=f"{name}.pt", bx_text=text, bx_tab="N-best and α")
    assert at.dataframe[0].value["translation"][0] == want
    captions = [plain(c.value) for c in at.sidebar.caption]
    assert any(c.startswith(("Decodes as joeynmt 2.3 does", "Decodes as opennmt-py 3.5.1 does")) for c in captions)
    assert any(c.startswith("Searched as ") for c in captions) and at.radio(key="bx_norm").disabled
    at = open_page("beam_explorer.py", bx_model=f"{name}.pt", bx_text=text, bx_tab="N-best and α", bx_app_rules="true")
    assert at.toggle(key="bx_app_rules").value is True
    assert at.dataframe[0].value["translation"][0] != want
    assert "Decodes by this app's search rules." in [plain(c.value) for c in at.sidebar.caption]


def test_the_stepper_beam_is_joeynmts() -> None:
    """The stepper's beam mode runs JoeyNMT's beam on the imported model: its best hypothesis is JoeyNMT's beam 5
    output of test line 2; with ``app_rules=true`` this app's beam ends elsewhere."""
    _, source, beam_file, _ = MODELS["joey-en-fr"]
    text, want = _lines(source)[LINE], _lines(beam_file)[LINE]
    for app_rules, same in (("false", True), ("true", False)):
        at = start({"text": text, "model": "joey-en-fr", "mode": "beam", "beam": "5", "app_rules": app_rules})
        click(at, "btn_run")
        assert (at.session_state["_beam"][1].translation == want) is same


def test_the_comparison_page_says_whose_rules_decode_an_imported_model() -> None:
    at = open_page("compare_attention.py", cmp_text="a")
    box = at.multiselect(key="cmp_models")
    box.set_value([o for o in box.options if o.endswith("joey-en-fr.pt")]).run()
    assert not at.exception and not at.error
    assert any("joey-en-fr.pt: Decodes as joeynmt 2.3 does: at most int(1.5 × source ids" in plain(c.value)
               for c in at.caption)


def test_the_paired_comparison_offers_the_switch_for_an_imported_model() -> None:
    at = open_page("paired_compare.py", pr_a="joey-en-fr.pt", pr_b="onmt-en-fr.pt", pr_b_app_rules="true")
    assert at.toggle(key="pr_a_app_rules").value is False and at.toggle(key="pr_b_app_rules").value is True
    captions = [plain(c.value) for c in at.caption]
    assert any(c.startswith("Decodes as joeynmt 2.3 does") for c in captions)
    assert "Decodes by this app's search rules." in captions
