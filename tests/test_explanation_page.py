"""The "Is attention an explanation?" page (pages/explanation.py over ui/explanation/: controls,
attribution_panel, surgery_panel, state) on the tiny models, through Streamlit's AppTest."""

from __future__ import annotations

import math
import shutil
from pathlib import Path
from typing import Any

import pytest
from streamlit.testing.v1 import AppTest

import train
from nmt.decoding.search import forced, greedy
from nmt.decoding.surgery import Edit, decode_with_surgery
from nmt.decoding.trace import DecodeTrace
from nmt.models.checkpoint import LoadedModel
from tests.conftest import TINY_DATA, plain
from tests.page_app import app_at
from tests.state_keys import unlisted
from ui.explanation import state
from ui.explanation import views as V

ROOT = Path(__file__).resolve().parent.parent
PAGE = "pages/explanation.py"
TIMEOUT = 120
REF_TEXT, REF = "A man is riding a bike.", "Un chien fait du vélo ."  # the tiny model writes "Un homme …"


# ----------------------------------------------------------------------------------------------
# The page on the tiny models
# ----------------------------------------------------------------------------------------------


@pytest.fixture
def env(tiny_checkpoint_dir: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.setenv("RNNSEARCH_CHECKPOINTS", str(tiny_checkpoint_dir))
    return tiny_checkpoint_dir


def run(**params: Any) -> AppTest:
    at = app_at(PAGE, TIMEOUT)
    at.query_params.update(params)
    at.run()
    assert not at.exception, at.exception
    assert not at.warning, [w.value for w in at.warning]
    return at


def markdown(at: AppTest) -> str:
    return "\n".join(plain(m.value) for m in at.markdown)


def downloads(at: AppTest) -> list[str]:
    return [d.label for d in at.get("download_button")]


def test_page_shows_alpha_against_attributions(env: Path) -> None:
    at = run()
    assert [t.value for t in at.title] == ["Is attention an explanation?"]
    assert at.selectbox(key="ex_preset").value == "Point α elsewhere"
    assert at.slider(key="ex_step").value == 5  # the preset's step
    table = at.dataframe[0].value
    assert table["method"].tolist() == list(V.METHOD_LABELS.values())
    assert table["τ"].between(-1, 1).all() and table["JSD"].between(0, math.log(2) + 1e-9).all()
    assert "Writing “" in markdown(at)
    assert len(at.get("vega_lite_chart")) == 1
    assert downloads(at) == ["PNG", "SVG", "Attributions CSV", "Agreement CSV", "JSON"]
    keys = {w.key: w.proto.query_param_key for kind in ("selectbox", "slider") for w in getattr(at, kind)
            if w.key and w.key.startswith("ex_")}
    assert keys == {"ex_model": "ex_model", "ex_preset": "ex_preset", "ex_step": "ex_step"}


def test_surgery_shows_the_edited_translation(env: Path) -> None:
    at = run(ex_tab="Surgery", ex_preset="Your own sentence", ex_text="A man is riding a bike.", ex_step="1",
             ex_edit="one-hot", ex_j="0: A")
    assert at.radio(key="ex_edit").value == "one-hot" and at.pills(key="ex_j").value == 0
    text = markdown(at)
    assert "**Original:**" in text and "**Edited:**" in text
    assert "At step 1 (" in text and "α was changed: one-hot on 'A' (j=0)." in text
    table = at.dataframe[0].value
    assert table.loc[1, "note"].startswith("α edited")
    assert downloads(at) == ["Table CSV", "JSON", "PNG", "SVG"]
    assert len(at.get("vega_lite_chart")) == 2
    for w in (at.radio(key="ex_edit"), at.pills(key="ex_j"), at.selectbox(key="ex_seed")):
        assert w.proto.query_param_key == w.key
    pills = at.pills(key="ex_j")
    assert pills.options == ["0: A", "1: man", "2: is", "3: riding", "4: a", "5: bike", "6: .", "7: </s>"]
    pills.set_value(3).run()  # a click on "riding"
    assert "α was changed: one-hot on 'riding' (j=3)." in markdown(at)
    at.radio(key="ex_edit").set_value("uniform").run()
    assert not at.exception
    assert "uniform α" in markdown(at) and at.pills(key="ex_j").disabled


def test_surgery_copies_another_steps_alpha(env: Path, tiny_lm: LoadedModel) -> None:
    lm = tiny_lm
    at = run(ex_tab="Surgery", ex_preset="Your own sentence", ex_text=REF_TEXT, ex_step="2", ex_edit="copy")
    assert at.selectbox(key="ex_from").value == 1 and not at.selectbox(key="ex_from").disabled  # the previous word
    assert at.selectbox(key="ex_from").proto.query_param_key == "ex_from"
    at.selectbox(key="ex_from").set_value(0).run()
    res = decode_with_surgery(lm, REF_TEXT, {2: Edit("copy", step=0)})
    assert res.trace.steps[2].alpha == pytest.approx(res.original.steps[0].alpha)  # the library agrees: α of step 0
    text = markdown(at)
    assert "α was changed: α copied from step 0." in text and f"**Edited:** {res.trace.translation}" in text
    at.radio(key="ex_edit").set_value("zero").run()
    assert at.selectbox(key="ex_from").disabled


def test_surgery_at_every_later_step(env: Path, tiny_lm: LoadedModel) -> None:
    lm = tiny_lm
    at = run(ex_tab="Surgery", ex_preset="Your own sentence", ex_text=REF_TEXT, ex_step="1", ex_edit="zero",
             ex_j="1: man", ex_every="true")
    assert at.toggle(key="ex_every").value is True and at.toggle(key="ex_every").proto.query_param_key == "ex_every"
    res = decode_with_surgery(lm, REF_TEXT, {k: Edit("zero", j=1) for k in range(1, 60)})
    assert all(s.alpha[1] == 0.0 for s in res.trace.steps[1:])  # the library: 'man' never attended again
    text = markdown(at)
    assert "α was changed: zero 'man' (j=1), renormalised, at every step from 1 on." in text
    assert f"**Edited:** {res.trace.translation}" in text
    notes = at.dataframe[0].value["note"].tolist()
    assert [i for i, n in enumerate(notes) if "α edited" in n] == list(range(1, len(res.trace.steps)))
    at.toggle(key="ex_every").set_value(False).run()
    notes = at.dataframe[0].value["note"].tolist()
    assert [i for i, n in enumerate(notes) if "α edited" in n] == [1]
    at.radio(key="ex_edit").set_value("copy").run()
    assert at.toggle(key="ex_every").disabled


def test_whole_sentence_and_debate_tests(env: Path) -> None:
    at = run(ex_tab="Whole sentence", ex_method="integrated gradients")
    # a URL starts no whole-sentence work (600 characters of it cost 108 s of CPU): the button does
    assert not at.get("vega_lite_chart") and not at.dataframe and at.button(key="ex_all").label.startswith(
        "Explain all ")
    at.button(key="ex_all").click().run()
    assert at.radio(key="ex_method").value == "ig" and at.radio(key="ex_method").proto.query_param_key == "ex_method"
    assert len(at.get("vega_lite_chart")) == 2  # α and the chosen method
    assert at.dataframe[0].value["method"].tolist() == list(V.METHOD_LABELS.values())[1:]
    assert downloads(at) == ["PNG", "SVG", "Cells CSV", "Agreement CSV", "JSON"]
    at = run(ex_tab="Debate tests")
    assert not at.get("vega_lite_chart")  # nothing runs before the button
    at.button(key="ex_tests").click().run()
    assert not at.exception
    text = markdown(at)
    assert "Shuffling α changed the word in " in text and " of 20 trials" in text
    assert "Over the whole sentence" in "\n".join(i.value for i in at.info)
    assert len(at.get("vega_lite_chart")) == 2


def test_a_costly_word_waits_for_its_button_and_the_cost_is_counted_in_gradient_units(
        env: Path, tiny_lm: LoadedModel, monkeypatch: pytest.MonkeyPatch) -> None:
    """The last word of a 600-character sentence cost 6.7 s of CPU and +414 MB on opening a URL (issue 24):
    past AUTO_UNITS a word's attributions wait for a button; a result already kept shows without one."""
    from ui.common import heavy
    from ui.explanation import jobs

    g = greedy(tiny_lm, [REF_TEXT], topk=1)[0]  # "A man is riding a bike ." + </s>: 8 source tokens
    assert len(g.src_tokens) == 8
    assert jobs.cost(g, [0, 2]) == (1 + 3) * 8 * 50  # Σ (i + 1) · Tx · points, IG counted at its first 50 points
    assert jobs.loo_cost(g, [0, 2]) == 9 * (8 + 2 + 1)  # (Tx + 1) copies decoded up to the last word
    assert not jobs.needs_button(g, [2])  # a short sentence: at once
    monkeypatch.setattr(jobs, "AUTO_LOO", 9 * 10)  # steps 0 and 1 run at once, 2 needs the button
    assert jobs.needs_button(g, [2]) and not jobs.needs_button(g, [1])
    monkeypatch.setattr(jobs, "AUTO_LOO", 10**9)
    heavy.store("explanation").clear()
    monkeypatch.setattr(jobs, "AUTO_UNITS", 2 * 8 * 50)  # steps 0 and 1 run at once, 2 on a button
    at = run(ex_preset="Your own sentence", ex_text=REF_TEXT, ex_step="1")
    assert at.dataframe[0].value["method"].tolist() == list(V.METHOD_LABELS.values())
    at = run(ex_preset="Your own sentence", ex_text=REF_TEXT, ex_step="2")
    word = g.steps[2].token
    assert not at.dataframe and at.button(key="ex_one").label == f"Explain “{word}”"
    at.button(key="ex_one").click().run()
    assert at.dataframe[0].value["method"].tolist() == list(V.METHOD_LABELS.values())
    at = run(ex_preset="Your own sentence", ex_text=REF_TEXT, ex_step="2")  # kept: no button needed
    assert at.dataframe and not [b for b in at.button if b.key == "ex_one"]


def _ref_step(lm: LoadedModel) -> tuple[int, DecodeTrace]:
    """A step where the tiny model's greedy translation and the reference differ (so a cache keyed
    by the source alone would show the wrong word's numbers), with the forced trace."""
    g = greedy(lm, [REF_TEXT], topk=1)[0]
    f = forced(lm, [REF_TEXT], [REF], topk=1)[0]
    step = next(i for i, s in enumerate(f.steps) if i >= len(g.steps) or g.steps[i].token_id != s.token_id)
    return step, f


def test_a_reference_translation_is_explained_by_forced_decoding(env: Path, tiny_lm: LoadedModel) -> None:
    lm = tiny_lm
    step, f = _ref_step(lm)
    assert step == 1 and [s.token for s in f.steps] == ["Un", "chien", "fait", "du", "vélo", ".", "</s>"]
    # the greedy translation first, so that the shared store holds its numbers for this source
    at = run(ex_preset="Your own sentence", ex_text=REF_TEXT, ex_step=str(step))
    assert "(greedy)" in markdown(at)
    box = next(e for e in at.expander if e.label.startswith("Explain a translation of your own"))
    assert not box.proto.expanded
    at = run(ex_preset="Your own sentence", ex_text=REF_TEXT, ex_ref=REF, ex_step=str(step))
    assert at.text_input(key="ex_ref").proto.query_param_key == "ex_ref"
    box = next(e for e in at.expander if e.label.startswith("Explain a translation of your own"))
    assert box.proto.expanded  # a shared link with a translation shows it
    text = markdown(at)
    assert "**Translation** (yours, forced):" in text
    assert f"(log p = {f.steps[step].logprob:.3f})" in text  # the reference's word, not the greedy one's
    assert at.slider(key="ex_step").max == 6

    ids = [s.token_id for s in f.steps]
    for i in (1, 2):  # the model's own word after "Un" is "homme", not "chien"; after "Un chien" it is "fait"
        at = run(ex_tab="Surgery", ex_preset="Your own sentence", ex_text=REF_TEXT, ex_ref=REF, ex_step=str(i),
                 ex_edit="one-hot", ex_j="0: A")
        edited = decode_with_surgery(lm, REF_TEXT, {i: Edit("onehot", j=0)}, target=ids).trace.steps[i].logprob
        mine = decode_with_surgery(lm, REF_TEXT, {i: Edit("onehot", j=0)}, prefix=ids[:i]).trace
        text = markdown(at)
        assert f"**Edited:** {mine.translation}" in text and mine.target_tokens[:i] == ["Un", "chien"][:i]
        line = (f"Your word “{f.steps[i].token}” at step {i}: log p {f.steps[i].logprob:.3f} with the model's α, "
                f"{edited:.3f} with the edit ({edited - f.steps[i].logprob:+.3f} nats")
        assert (line in text) == (i == 1), text  # said only where the model's own word differs from yours
        words = "word" if i == 1 else "2 words"
        assert f"after your translation's first {words} (forced)" in "\n".join(c.value for c in at.caption)
    at = run(ex_tab="Debate tests", ex_preset="Your own sentence", ex_text=REF_TEXT, ex_ref=REF, ex_step="1")
    at.button(key="ex_tests").click().run()
    best = f.steps[1].topk[0][0]  # the model's own most likely word there: what a shuffle can change
    assert not at.exception and best != "chien"
    assert f"the model's most likely word is “{best}”, not your “chien”" in "\n".join(c.value for c in at.caption)
    assert "Shuffling α changed the word in " in markdown(at) and f"“{best}”" in markdown(at)
    at = run(ex_preset="Your own sentence", ex_text=REF_TEXT, ex_ref="Un zorglub fait du zorglub .")
    assert any("Not in the model's French vocabulary: zorglub. The model" in plain(i.value) for i in at.info)


def test_copy_menu_with_a_reference_lists_the_unedited_decoding(env: Path, tiny_lm: LoadedModel) -> None:
    """With your translation, copy takes α from your first words and then the model's own continuation."""
    lm = tiny_lm
    _, f = _ref_step(lm)
    at = run(ex_tab="Surgery", ex_preset="Your own sentence", ex_text=REF_TEXT, ex_ref="Un chien fait du vélo rouge .",
             ex_step="1", ex_edit="copy")
    own = decode_with_surgery(lm, REF_TEXT, None, prefix=[f.steps[0].token_id]).original.target_tokens
    assert own[0] == "Un" and len(own) != 8  # the model's continuation, not the 8 words of the typed translation
    assert at.selectbox(key="ex_from").options == [f"{k}: {w}" for k, w in enumerate(own)]
    assert "**Original (your first words, then the model's own):**" in markdown(at)


def test_a_new_source_clears_the_translation_but_keeps_its_box_open(env: Path) -> None:
    at = run(ex_preset="Your own sentence", ex_text=REF_TEXT, ex_ref=REF)
    assert "(yours, forced)" in markdown(at)
    at.text_area(key="ex_text").input("A dog is sleeping on the bench.").run()
    assert at.text_input(key="ex_ref").value == "" and "(greedy)" in markdown(at)
    box = next(e for e in at.expander if e.label.startswith("Explain a translation of your own"))
    assert box.proto.expanded  # still open for the next translation
    at.text_input(key="ex_ref").input(REF).run()
    at.selectbox(key="ex_preset").set_value("Point α elsewhere").run()
    assert at.text_input(key="ex_ref").value == "" and "(greedy)" in markdown(at) and not at.warning


def test_a_preset_loads_its_step_and_edit(env: Path) -> None:
    at = run(ex_tab="Surgery")
    at.selectbox(key="ex_preset").set_value("Uniform α on a function word").run()
    assert not at.exception and not at.warning
    assert at.slider(key="ex_step").value == 3 and at.radio(key="ex_edit").value == "uniform"
    at.selectbox(key="ex_preset").set_value("Zero the aligned word, lose the word").run()
    assert not at.exception and not at.warning
    assert at.radio(key="ex_edit").value == "zero" and at.pills(key="ex_j").value == 6


def test_bad_input_gets_a_plain_message(env: Path) -> None:
    at = run(ex_model="tiny-en-fr-rnnencdec.pt")
    infos = [plain(i.value) for i in at.info]
    assert any(i.startswith("RNNencdec has no α") and "tiny-en-fr-rnnsearch.pt" in i for i in infos), infos
    assert not at.dataframe and not at.tabs
    at = run(ex_preset="Your own sentence", ex_text="   ")
    assert any("Type an English sentence" in i.value for i in at.info)
    at = run(ex_preset="Your own sentence", ex_text="A camel is eating *zorgs*.")
    assert any("Not in the model's vocabulary: camel" in plain(i.value) for i in at.info)
    assert at.dataframe  # still explained: unknown words are read as <unk>


def test_numbers_no_widget_can_hold_fall_back_to_defaults(env: Path) -> None:
    at = run(ex_tab="Surgery", ex_step="999", ex_edit="scalpel", ex_j="1e309", ex_seed="1e309", ex_preset="nope")
    assert at.selectbox(key="ex_preset").value == "Point α elsewhere"
    assert at.slider(key="ex_step").value == 5 and at.radio(key="ex_edit").value == "one-hot"
    assert at.pills(key="ex_j").value == 2 and at.selectbox(key="ex_seed").value == 0
    assert "**Edited:**" in markdown(at)


def test_a_luong_model_is_named_and_refused_plainly(env: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
                                                    ) -> None:
    run_dir = tmp_path / "luong"
    train.main(["--data", str(TINY_DATA), "--arch", "luong", "--score", "general", "--emb-dim", "16",
                "--hidden-dim", "24", "--epochs", "1", "--batch-size", "10", "--valid-every", "100000",
                "--max-updates", "2", "--no-progress", "--threads", "1", "--amp", "off", "--out", str(run_dir)])
    folder = tmp_path / "ckpts"
    folder.mkdir()
    shutil.copy(run_dir / "best.pt", folder / "tiny-en-fr-luong-global.pt")
    monkeypatch.setenv("RNNSEARCH_CHECKPOINTS", str(folder))
    at = run()
    infos = [plain(i.value) for i in at.info]
    assert infos == ["This page explains RNNsearch (Bahdanau et al. 2015) only; tiny-en-fr-luong-global.pt is a "
                     "Luong 2015, global, general, input feeding model, which the attribution and surgery library "
                     "does not support. There is no RNNsearch checkpoint in the checkpoint folder."], infos




def test_every_session_key_the_page_writes_is_listed_in_its_state_module(env: Path) -> None:
    """Issue 49: ui/explanation/state.py lists every key of the page (prefixed ``ex_``), on each tab and after
    each button."""
    assert state.PREFIX == "ex_" and all(k.startswith(state.PREFIX) for k in state.KEYS)
    at = run()
    assert unlisted(at, state.KEYS) == []
    assert {"ex_model", "ex_preset", "ex_step", "ex_tab", "ex_dl_step_0"} <= set(at.session_state.keys())
    at = run(ex_tab="Surgery", ex_preset="Your own sentence", ex_text=REF_TEXT, ex_ref=REF, ex_edit="copy")
    assert unlisted(at, state.KEYS) == []
    assert {"ex_text", "ex_ref", "ex_ref_used", "ex_edit", "ex_from"} <= set(at.session_state.keys())
    at = run(ex_tab="Whole sentence")
    at.button(key="ex_all").click().run()
    assert unlisted(at, state.KEYS) == [] and "ex_method" in at.session_state
    at = run(ex_tab="Debate tests")
    at.button(key="ex_tests").click().run()
    assert unlisted(at, state.KEYS) == [] and "ex_dl_debate_0" in at.session_state
    at = run(ex_tab="Why this word?")
    assert unlisted(at, state.KEYS) == [] and "ex_why_alt" in at.session_state
