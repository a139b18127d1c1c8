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
from streamlit.testing.v1 import AppTest

from nmt.models import checkpoint
from nmt.tools.importers import joeynmt, onmt
from tests.conftest import plain
from tests.page_app import open_page
from tests.stepper_app import click, start
from ui.common import checkpoint_files, models
from ui.common import widgets as W

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
    ckpt = next(c for g in checkpoint_files.scan(folder) for c in g.members if c.path.stem == name)
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
        click(at, "sp_btn_run")
        assert (at.session_state["sp__beam"][1].translation == want) is same


WOMAN = 7  # short.en's « woman »: JoeyNMT's greedy limit, int(1.5 × 2 ids) = 3, stops it at « une femme en »


def _comparison(text: str, **url: str) -> tuple[AppTest, list[str]]:
    """The comparison page opened on ``text`` (and ``url``) with the JoeyNMT model alone: the page and its captions."""
    at = open_page("compare_attention.py", cmp_text=text, **url)
    box = at.multiselect(key="cmp_models")
    box.set_value([o for o in box.options if o.endswith("joey-en-fr.pt")]).run()
    assert not at.exception and not at.error
    return at, [plain(c.value) for c in at.caption]


def test_the_comparison_page_decodes_by_the_toolkits_rules_and_switches() -> None:
    """« woman » on the comparison page: the JoeyNMT model's translation is JoeyNMT's own greedy output (its length
    limit); with the switch clicked, or ``cmp_app_rules=true`` in the URL, this app's limit lets it run on."""
    text, want = _lines("short.en")[WOMAN], _lines("joeynmt/joeynmt.short.greedy")[WOMAN]
    assert (text, want) == ("woman", "une femme en")
    at, captions = _comparison(text)
    assert at.dataframe[0].value["translation"].tolist() == [want] and not at.toggle(key="cmp_app_rules").value
    assert any("joey-en-fr.pt: Decodes as joeynmt 2.3 does: at most int(1.5 × source ids" in c for c in captions)
    assert at.toggle(key="cmp_app_rules").proto.query_param_key == "cmp_app_rules"  # Streamlit writes it to the URL
    at.toggle(key="cmp_app_rules").set_value(True).run()  # the switch, clicked
    app = at.dataframe[0].value["translation"].tolist()
    assert app[0].startswith(want + " ")
    assert any(plain(c.value).endswith("joey-en-fr.pt: Decodes by this app's search rules.") for c in at.caption)
    at, captions = _comparison(text, cmp_app_rules="true")  # a shared link with the switch on
    assert at.toggle(key="cmp_app_rules").value and at.dataframe[0].value["translation"].tolist() == app


def test_the_length_page_scores_by_the_toolkits_rules_and_switches(tmp_path: Path,
                                                                   monkeypatch: pytest.MonkeyPatch) -> None:
    """Recompute on a test set whose references are JoeyNMT's own greedy output of its 30 short sources: scored by
    JoeyNMT's rules (the default) every line equals its reference, BLEU 100.00; with ``lq_app_rules=true`` in the
    URL this app's longer translations score less, and the line says whose rules. The switch is bound to the URL."""
    (tmp_path / "short").mkdir()
    (tmp_path / "short" / "test.en").write_text("\n".join(_lines("short.en")[:30]) + "\n", encoding="utf-8")
    (tmp_path / "short" / "test.fr").write_text("\n".join(_lines("joeynmt/joeynmt.short.greedy")[:30]) + "\n",
                                                encoding="utf-8")
    monkeypatch.setenv("RNNSEARCH_DATA", str(tmp_path))
    for url, same in (({}, True), ({"lq_app_rules": "true"}, False)):
        at = open_page("length_quality.py", lq_ckpt="joey-en-fr.pt", lq_rtest="short/test", **url)
        assert at.toggle(key="lq_app_rules").value is not same
        at.button(key="lq_go").click().run()
        assert not at.exception and not at.error
        done = plain(at.success[0].value)
        assert done.startswith("joey-en-fr.pt on short/test: BLEU 100.00 " if same else
                               "joey-en-fr.pt (this app's search rules) on short/test: BLEU "), done
        assert ("BLEU 100.00" in done) is same
    at = open_page("length_quality.py", lq_ckpt="joey-en-fr.pt", lq_rtest="short/test")
    assert at.toggle(key="lq_app_rules").proto.query_param_key == "lq_app_rules"  # Streamlit writes it to the URL


def test_the_lesson_says_whose_rules_decode_an_imported_model() -> None:
    """A checkpoint folder of imported models only: the lesson falls back to one of them (JoeyNMT's, the first by
    name) and says it decodes by its toolkit's rules, or by this app's after the switch on another page."""
    at = open_page("lesson.py")
    captions = [plain(c.value) for c in at.caption]
    assert "joey-en-fr.pt: Decodes as joeynmt 2.3 does: at most int(1.5 × source ids" in " ".join(captions), captions
    at = open_page("beam_explorer.py", bx_model="joey-en-fr.pt", bx_app_rules="true")  # switched on another page
    at.switch_page("pages/lesson.py").run()
    assert "joey-en-fr.pt: Decodes by this app's search rules." in [plain(c.value) for c in at.caption]


def test_the_paired_comparison_offers_the_switch_for_an_imported_model() -> None:
    at = open_page("paired_compare.py", pr_a="joey-en-fr.pt", pr_b="onmt-en-fr.pt", pr_b_app_rules="true")
    assert at.toggle(key="pr_a_app_rules").value is False and at.toggle(key="pr_b_app_rules").value is True
    captions = [plain(c.value) for c in at.caption]
    assert any(c.startswith("Decodes as joeynmt 2.3 does") for c in captions)
    assert "Decodes by this app's search rules." in captions
