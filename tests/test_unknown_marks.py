"""Issue 34 item 2 on the pages other than the stepper: a translation is shown with each ``<unk>`` the
model wrote replaced (Jean et al. 2015) and marked "from the dictionary" or "copied"
(:mod:`ui.figures.unknown`), while BLEU, scores and the raw columns keep the translation as written.

The builder is tested on hand-made traces with a hand-made dictionary; the pages under AppTest on the
shipped Multi30k pair (skipped without it), where "A man plays the xylophone in a gondola." gives
« … dans une <unk>. » with α on 'gondola', a word its dictionary lacks: copied.
"""

from __future__ import annotations

import dataclasses
from pathlib import Path

import pytest

from nmt.decoding.search import beam_search
from nmt.decoding.trace import COPIED, DICTIONARY, DecodeTrace, NBestEntry, Replacement, StepRecord
from nmt.text.metrics import sentence_scores
from nmt.text.tokenize import Tokenizer
from nmt.text.truecase import detruecase
from nmt.text.vocab import EOS, UNK
from tests.page_app import open_page as run
from ui.common import models
from ui.explanation.views import target_strip
from ui.figures import unknown as U
from ui.figures.common import md

ROOT = Path(__file__).resolve().parent.parent
FR = Tokenizer("fr").detokenize  # Moses' French detokeniser, as the models use it
NOTE = md(U.NOTE)

SRC = ["the", "Zorblax", "ate", "cheese", EOS]
ON_THE, ON_ZORBLAX, ON_CHEESE = [0.7, 0.1, 0.1, 0.05, 0.05], [0.1, 0.6, 0.1, 0.1, 0.1], [0.05, 0.05, 0.1, 0.7, 0.1]
END = [0.0, 0.0, 0.0, 0.0, 1.0]


def _step(i: int, token: str, alpha: list[float] | None, forced: bool = False) -> StepRecord:
    return StepRecord(i=i, token=token, token_id=0, logprob=-0.1, forced=forced, energies=None, alpha=alpha,
                      topk=[], state_norm=1.0, context_norm=1.0)


def _trace(tokens: list[str], alphas: list[list[float] | None], dictionary: dict[str, str] | None = None,
           src: list[str] = SRC, method: str = "greedy") -> DecodeTrace:
    """A trace that wrote ``tokens`` (then ``</s>``) with these α rows; its translation detokenised as written."""
    steps = [_step(i, t, a, forced=method == "forced") for i, (t, a) in enumerate(zip(tokens, alphas))]
    steps.append(_step(len(tokens), EOS, None if alphas and alphas[0] is None else END, forced=method == "forced"))
    return DecodeTrace(source=" ".join(src[:-1]), src_tokens=src, src_unk=[w == "Zorblax" for w in src],
                       method=method, context="attention" if alphas and alphas[0] is not None else "fixed",
                       steps=steps, translation=FR(tokens), dictionary=dictionary or {})


# ----------------------------------------------------------------------------------------------
# The builder, one mark at a time
# ----------------------------------------------------------------------------------------------


def test_a_word_in_the_dictionary_becomes_its_translation_marked_from_the_dictionary() -> None:
    t = _trace(["le", "chat", "a", "mangé", "le", UNK, "."], [ON_THE] * 5 + [ON_CHEESE, END],
               {"cheese": "fromage", "the": "le"})
    s = U.shown(t, FR)
    assert t.translation == "le chat a mangé le <unk>."
    assert s.text == "le chat a mangé le fromage."
    assert s.markdown == r"le chat a mangé le fromage :green[(from the dictionary\: \'cheese\')]\."
    assert s.note == NOTE and s.swaps == {5: Replacement(3, "cheese", "fromage", DICTIONARY)}
    assert s.labelled == "le chat a mangé le fromage. («fromage» from the dictionary: 'cheese')"


def test_a_word_missing_from_the_dictionary_is_copied_and_marked_copied() -> None:
    t = _trace(["l'", UNK, "a", "mangé"], [ON_THE, ON_ZORBLAX, ON_THE, ON_THE], {"cheese": "fromage"})
    s = U.shown(t, FR)
    assert (s.text, s.markdown) == ("l'Zorblax a mangé", r"l\'Zorblax :green[(copied)] a mangé")
    assert s.note == NOTE and s.labelled == "l'Zorblax a mangé («Zorblax» copied)"


def test_an_explicitly_empty_dictionary_copies() -> None:
    t = _trace(["du", UNK], [ON_THE, ON_CHEESE], {})
    s = U.shown(t, FR)
    assert (s.text, s.markdown) == ("du cheese", "du cheese :green[(copied)]")
    assert s.swaps == {1: Replacement(3, "cheese", "cheese", COPIED)}


def test_without_unk_the_text_is_shown_exactly_as_before() -> None:
    t = _trace(["le", "fromage", "!"], [ON_THE, ON_CHEESE, ON_THE], {"cheese": "fromage"})
    s = U.shown(t, FR)
    assert (s.text, s.markdown, s.note, s.swaps) == ("le fromage !", r"le fromage \!", "", {})
    assert s.labelled == t.translation


def test_a_fixed_context_trace_keeps_its_unk_unmarked() -> None:
    """RNNencdec has no α: nothing points at a source word, so <unk> stays as written and unmarked."""
    t = _trace(["le", UNK], [None, None], {"cheese": "fromage"})
    s = U.shown(t, FR)
    assert (s.text, s.markdown, s.note, s.swaps) == ("le <unk>", r"le \<unk\>", "", {})


def test_markdown_and_html_in_a_source_word_or_a_translation_are_escaped() -> None:
    src = ["see", "<b>*x*</b>", "[a](b)", EOS]
    t = _trace(["voir", UNK, UNK], [[0.8, 0.1, 0.05, 0.05], [0.1, 0.8, 0.05, 0.05], [0.1, 0.1, 0.7, 0.1]],
               {"[a](b)": "<img src=x onerror=alert(1)>"}, src=src)
    s = U.shown(t, FR)
    assert s.markdown == (r"voir \<b\>\*x\*\<\/b\> :green[(copied)] \<img src\=x onerror\=alert\(1\)\> "
                          r":green[(from the dictionary\: \'\[a\]\(b\)\')]")
    assert s.text == "voir <b>*x*</b> <img src=x onerror=alert(1)>"


# ----------------------------------------------------------------------------------------------
# Where a replacement is not made, and the places that show one
# ----------------------------------------------------------------------------------------------


def test_a_forced_unk_a_held_step_and_a_tie_stay() -> None:
    """Forced decoding writes the user's words (an <unk> there is a word they typed); a lesson holds the row
    the class predicts; a tie for the largest α points at no one word."""
    forced = _trace(["le", UNK], [ON_THE, ON_CHEESE], {"cheese": "fromage"}, method="forced")
    assert U.shown(forced, FR).markdown == r"le \<unk\>"
    mixed = dataclasses.replace(forced, method="step", steps=list(forced.steps))  # a surgery's original
    mixed.steps[1] = dataclasses.replace(mixed.steps[1], forced=False)
    assert U.shown(mixed, FR).text == "le fromage"
    two = _trace([UNK, UNK], [ON_ZORBLAX, ON_CHEESE], {"cheese": "fromage"})
    assert U.shown(two, FR, hold=(1,)).markdown == r"Zorblax :green[(copied)] \<unk\>"
    tie = _trace([UNK], [[0.3, 0.3, 0.2, 0.1, 0.1]], {"the": "le"})
    assert U.shown(tie, FR).markdown == r"\<unk\>"


def test_a_sentence_initial_replacement_is_capitalised_as_the_detruecaser_does() -> None:
    def detok(words: list[str]) -> str:  # a truecased model's: the first word capitalised, then Moses
        return FR(detruecase(words))

    t = _trace([UNK, "est", "là", "."], [ON_CHEESE, ON_THE, ON_THE, ON_THE], {"cheese": "fromage"})
    s = U.shown(t, detok)
    assert s.text == "Fromage est là."
    assert s.markdown == r"Fromage :green[(from the dictionary\: \'cheese\')] est là\."


def test_a_detokeniser_that_joins_words_otherwise_gets_the_marks_after_the_text() -> None:
    """When the stand-in does not detokenise as the word does, the text is shown whole, the marks after it."""
    def odd(words: list[str]) -> str:
        return "".join(w.upper() if w == "fromage" else w for w in words)

    t = _trace(["le", UNK], [ON_THE, ON_CHEESE], {"cheese": "fromage"})
    assert U.shown(t, odd).markdown == r"leFROMAGE :green[(«fromage» from the dictionary\: \'cheese\')]"


def test_an_nbest_hypothesis_and_the_explanation_strip_are_marked_too() -> None:
    t = _trace(["le", UNK], [ON_THE, ON_CHEESE], {"cheese": "fromage"})
    t.nbest = [NBestEntry(["un", UNK, EOS], "un <unk>", -1.0, -0.5, [ON_THE, ON_ZORBLAX, END])]
    assert U.shown(U.nbest_trace(t, 1), FR).markdown == "un Zorblax :green[(copied)]"
    strip = target_strip(t.target_tokens, 1, U.replacements(t))
    assert strip == r"le :blue-background[**fromage**] :green[(from the dictionary\: \'cheese\')] \<\/s\>"
    assert target_strip(t.target_tokens, 0) == r":blue-background[**le**] \<unk\> \<\/s\>"  # no swaps: as before
    assert U.step_lines(t) == [r"Step 1: \<unk\> → fromage :green[(from the dictionary\: \'cheese\')]"]


# ----------------------------------------------------------------------------------------------
# The pages, on the shipped Multi30k pair
# ----------------------------------------------------------------------------------------------

GONDOLA = "A man plays the xylophone in a gondola."
RAW = "Un homme joue du xylophone dans une <unk>."
SHOWN = r"Un homme joue du xylophone dans une gondola :green[(copied)]\."
REF = "Un homme joue du xylophone dans une gondola."  # BLEU of the replaced text would be 100
SEARCH = "m30k-en-fr-rnnsearch.pt"
needs_pair = pytest.mark.skipif(not (ROOT / "checkpoints" / SEARCH).is_file(), reason=f"{SEARCH} is not shipped")


@pytest.fixture
def shipped(monkeypatch: pytest.MonkeyPatch) -> None:
    """The real checkpoint folder (``RNNSEARCH_CHECKPOINTS`` unset)."""
    monkeypatch.delenv(models.ENV_VAR, raising=False)


@needs_pair
@pytest.mark.usefixtures("shipped")
def test_beam_explorer_shows_the_replacement_and_keeps_the_scores() -> None:
    at = run("beam_explorer.py", bx_model=SEARCH, bx_text=GONDOLA, bx_tab="N-best and α", bx_hyp="1")
    lm = models.load_model(str(ROOT / "checkpoints" / SEARCH), (ROOT / "checkpoints" / SEARCH).stat().st_mtime)
    beam = beam_search(lm, [GONDOLA], beam=5, n_best=5, length_norm="length")[0]
    assert beam.translation == RAW  # the search itself is untouched
    texts = [m.value for m in at.markdown]
    assert texts[1] == SHOWN and texts[3] == SHOWN  # the beam's best and the greedy output
    assert f"**1.** {SHOWN}" in texts
    assert NOTE in [c.value for c in at.caption]
    assert f"log p = {beam.logprob:.3f} · {len(beam.steps)} words with </s> · score {beam.nbest[0].score:.3f}" in [
        c.value for c in at.caption]
    nbest = at.dataframe[0].value
    assert list(nbest["translation"]) == [e.translation for e in beam.nbest]  # raw, as scored
    assert nbest["translation, <unk> replaced"][0] == REF
    assert list(nbest["score"]) == pytest.approx([e.score for e in beam.nbest])


@needs_pair
@pytest.mark.usefixtures("shipped")
def test_bottleneck_shows_the_replacement_and_scores_the_raw_translation() -> None:
    at = run("bottleneck_compare.py", bn_model="m30k-en-fr", bn_text=GONDOLA, bn_ref=REF)
    texts = [m.value for m in at.markdown]
    search = texts.index("#### RNNsearch")
    assert texts[search + 1] == SHOWN
    encdec = texts[texts.index("#### RNNencdec") + 1]
    assert r"\<unk\>" in encdec and ":green[" not in encdec  # no α: nothing replaced, nothing marked
    raw_bleu, shown_bleu = sentence_scores(RAW, REF)["bleu"], sentence_scores(REF, REF)["bleu"]
    assert round(shown_bleu, 1) == 100.0 and round(raw_bleu, 1) < 100.0
    assert at.metric[1].label == "sentence BLEU" and at.metric[1].value == f"{raw_bleu:.1f}"
    summary = at.dataframe[0].value
    row = summary[summary["model"] == "RNNsearch"].iloc[0]
    assert (row["translation"], row["translation, <unk> replaced"]) == (RAW, REF)
    assert row["BLEU"] == pytest.approx(raw_bleu)
    assert NOTE in [c.value for c in at.caption]


@needs_pair
@pytest.mark.usefixtures("shipped")
def test_compare_attention_shows_the_replacement_and_scores_the_raw_translation() -> None:
    at = run("compare_attention.py", cmp_text=GONDOLA, cmp_ref=REF)
    assert any(SEARCH in label for label in at.multiselect(key="cmp_models").value)
    assert SHOWN in [m.value for m in at.markdown]
    summary = at.dataframe[0].value
    row = summary[summary["translation"] == RAW].iloc[0]
    assert row["translation, <unk> replaced"] == REF
    assert row["BLEU"] == pytest.approx(sentence_scores(RAW, REF)["bleu"])


@needs_pair
@pytest.mark.usefixtures("shipped")
def test_alignment_browser_shows_the_replacement_and_its_table_keeps_the_raw_translation() -> None:
    at = run("alignment_browser.py", al_model=SEARCH, al_from="my own pairs", al_upload="paste")
    at.text_area(key="al_paste").set_value(f"{GONDOLA}\t{REF}").run()
    assert not at.exception and not at.error
    assert f"**Model:** {SHOWN}" in [m.value for m in at.markdown]
    table = at.dataframe[0].value
    assert table["translation"][0] == RAW and table["BLEU"][0] == pytest.approx(sentence_scores(RAW, REF)["bleu"])
    assert at.metric[0].label == "sentence BLEU" and at.metric[0].value == f"{table['BLEU'][0]:.1f}"


@needs_pair
@pytest.mark.usefixtures("shipped")
def test_explanation_strip_and_surgery_show_the_replacement_once_explained() -> None:
    at = run("explanation.py", ex_model=SEARCH, ex_preset="Your own sentence", ex_text=GONDOLA, ex_step="7",
             ex_tab="Surgery")
    texts = [m.value for m in at.markdown]
    assert (r"**Translation** (greedy): Un homme joue du xylophone dans une :blue-background[**gondola**] "
            r":green[(copied)] \. \<\/s\>") in texts
    assert f"**Original:** {SHOWN}" in texts
    assert sum(c.value.startswith(NOTE) for c in at.caption) == 1  # said once, under the translation


@needs_pair
@pytest.mark.usefixtures("shipped")
def test_lesson_keeps_the_unk_to_predict_until_it_is_revealed() -> None:
    """Stop 9 asks which word the <unk> reads: its replacement would give the answer away before B."""
    if not (ROOT / "checkpoints" / "europarl-tatoeba-en-fr-rnnsearch-30k.pt").exists():
        pytest.skip("stop 9 is the everyday model's")
    at = run("lesson.py", ls_stop="9")
    before = [m.value for m in at.markdown]
    assert r"The model writes: **Tom a acheté un nouveau \<unk\>\.**" in before
    assert not any("grille" in m for m in before)
    at.button(key="ls_reveal").click().run()
    after = [m.value for m in at.markdown]
    assert [m for m in after if m.startswith("The model writes: **Tom a acheté un nouveau grille")
            and "from the dictionary" in m and "toaster" in m], after
