"""The Lesson's stops as fixed for a class (values worked out by hand on made-up traces): the energies
stop draws the trace's own e_ij, the first row's note, stop 8's real <unk> on the everyday model, and
*Length vs quality* opening on the file and test set that show Fig. 2."""

from __future__ import annotations

import dataclasses
from pathlib import Path

import pandas as pd
import pytest

from nmt.decoding.trace import DecodeTrace
from tests.page_app import app_at
from tests.traces import make_trace
from ui.figures.length import FIG2_FILE, FIG2_TEST, opening_results, opening_test
from ui.lesson import views as L
from ui.lesson import views_similarity as S
from ui.lesson.content import EVERYDAY, STOPS, TOASTER

ROOT = Path(__file__).resolve().parent.parent
EVERYDAY_CKPT = ROOT / "checkpoints" / "europarl-tatoeba-en-fr-rnnsearch-30k.pt"


def energetic() -> DecodeTrace:
    """Three steps over two words and </s>, with energies unlike their α (so a chart of α cannot pass)."""
    t = make_trace([[0.7, 0.2, 0.1], [0.1, 0.8, 0.1], [0.2, 0.2, 0.6]], tokens=["a", "b", "c"])
    for i, e in enumerate([[3.0, 1.0, -2.0], [0.5, 4.5, 1.5], [-1.0, 2.0, 2.5]]):
        t.steps[i] = dataclasses.replace(t.steps[i], energies=e)
    return t


def _layers(chart: object) -> list[pd.DataFrame]:
    return [layer.data for layer in chart.layer]  # type: ignore[attr-defined]


def test_energy_chart_draws_the_recorded_energies_with_the_row_to_predict_hidden() -> None:
    layers = _layers(L.lesson_alpha_chart(energetic(), 1, revealed=False, quantity="energy"))
    cells = layers[0]
    assert list(cells["alpha"]) == [3.0, 1.0, -2.0]  # row 0's energies, not its α
    assert list(layers[-1]["alpha"]) == [3.0, 1.0, -2.0]  # its numbers written in the cells, last (on top)
    assert any("q" in d.columns and list(d["q"]) == ["?"] * 3 for d in layers)  # row 1 still hidden


def test_energy_chart_revealed_marks_the_highest_energy() -> None:
    chart = L.lesson_alpha_chart(energetic(), 2, revealed=True, guess=1, quantity="energy")
    layers = _layers(chart)
    assert list(layers[0][layers[0]["i"] == 2]["alpha"]) == [-1.0, 2.0, 2.5]
    marks = {d["what"][0]: int(d["j"][0]) for d in layers if "what" in d.columns}
    assert marks == {"model's argmax": 2, "your guess": 1}
    spec = chart.to_dict()
    colours = [layer["encoding"]["color"] for layer in spec["layer"] if "scale" in layer["encoding"].get("color", {})]
    assert colours[0]["scale"]["domain"] == [-2.0, 4.5]  # over the energies shown, not α's 0–1


def test_energy_verdict_names_the_highest_energy() -> None:
    t = energetic()
    assert L.energy_verdict_text(t, 1, 1) == ("Before “b” the highest energy is “s1” (e = 4.50). "
                                              "Your guess “s1” is right.")
    assert L.energy_verdict_text(t, 2, 0) == ("Before “c” the highest energy is “</s>” (e = 2.50). "
                                              "Your guess “s0” has e = -1.00.")
    assert L.energy_verdict_text(t, 0, None).endswith("No guess was made.")
    with pytest.raises(ValueError):
        L.lesson_alpha_chart(t, 0, True, quantity="beta")


def test_first_row_note_only_when_the_first_row_is_drawn_off_the_first_word() -> None:
    off = make_trace([[0.1, 0.2, 0.7], [0.5, 0.4, 0.1]], tokens=["Deux", "chiens"])
    note = L.first_row_note(off, 1)
    assert note is not None and "« </s> »" in note and "« Deux »" in note
    assert L.first_row_note(off, 0) is None  # the first row still hidden: nothing to explain yet
    assert L.first_row_note(make_trace([[0.6, 0.3, 0.1]], tokens=["Un"]), 1) is None  # on the first word
    assert L.first_row_note(make_trace([None], context="fixed"), 1) is None  # no α


def test_the_length_page_opens_on_fig2() -> None:
    with_rows = {"models": {"m": {"scores": {FIG2_TEST: {"greedy": {"by_length": [
        {"lo": 0, "hi": 10, "n": 5, "score": 60.0}]}}}}}}
    files = {"a-fusion.results.json": {"models": {}}, "b.results.json": with_rows, FIG2_FILE: with_rows}
    assert opening_results(files) == 2
    assert opening_results({"a.results.json": {"models": {}}, "b.results.json": with_rows}) == 1
    assert opening_results({"a.results.json": {"error": "x"}}) == 0
    assert opening_test(["other", FIG2_TEST]) == 1 and opening_test(["other"]) == 0


def test_the_shipped_results_open_on_a_file_with_fig2() -> None:
    from ui.figures.length import length_rows, load_results

    files = load_results(sorted((ROOT / "checkpoints").glob("*.results.json")))
    if FIG2_FILE not in files:
        pytest.skip("no Europarl results shipped")
    name = list(files)[opening_results(files)]
    rows = length_rows(files[name])
    assert name == FIG2_FILE and {"RNNsearch-50", "RNNencdec-50"} <= set(rows[rows["test"] == FIG2_TEST]["model"])


@pytest.mark.skipif(not EVERYDAY_CKPT.exists(), reason="the everyday model is not shipped")
def test_stop_8_is_the_everyday_models_real_unk_with_right_french() -> None:
    from nmt.decoding.search import greedy
    from nmt.models import checkpoint
    from ui.figures import unknown as U

    stop = next(s for s in STOPS if s.key == "unknown")
    assert (stop.sentence, stop.group) == (TOASTER, EVERYDAY)
    lm = checkpoint.load(EVERYDAY_CKPT)
    t = greedy(lm, [TOASTER])[0]
    assert t.translation == "Tom a acheté un nouveau <unk>."
    (i, target, source), = stop.expect
    assert (t.steps[i].token, t.src_tokens[max(range(len(t.src_tokens)), key=t.steps[i].alpha.__getitem__)]) == (
        target, source)
    shown = U.shown(t, lm.tgt_tok.detokenize)
    assert shown.text == "Tom a acheté un nouveau grille-pain."  # correct French once the dictionary fills in
    assert shown.labelled.endswith("(«grille-pain» from the dictionary: 'toaster')")
    held = U.shown(t, lm.tgt_tok.detokenize, hold=(i,))  # before the reveal: the answer stays hidden
    assert "grille-pain" not in held.text


SEARCH = ROOT / "checkpoints" / "m30k-en-fr-rnnsearch.pt"


def lesson(query: dict[str, str]) -> object:

    at = app_at("pages/lesson.py", 120)
    at.query_params.update(query)
    return at.run()


def texts(at: object) -> str:
    """Every piece of text the page wrote (Markdown, captions, alerts), as one string."""
    from tests.conftest import plain

    parts = [*at.markdown, *at.caption, *at.info, *at.success, *at.warning]  # type: ignore[attr-defined]
    return "\n".join(plain(m.value) for m in parts)


@pytest.mark.skipif(not SEARCH.exists(), reason="no shipped Multi30k pair")
@pytest.mark.parametrize("n", [1, 7, 10])
def test_answers_show_in_the_presenter_view_only(n: int) -> None:
    from ui.lesson.teacher import TEACHER

    stop = STOPS[n - 1]
    projected = lesson({"ls_stop": str(n)})
    assert not projected.exception and TEACHER[stop.key].answer not in texts(projected)
    assert TEACHER[stop.key].say not in texts(projected)
    assert not [b for b in projected.get("download_button") if "Answer key" in b.proto.label]
    shown = lesson({"ls_stop": str(n), "ls_view": "presenter"})
    assert not shown.exception
    assert TEACHER[stop.key].answer in texts(shown) and TEACHER[stop.key].say in texts(shown)
    if stop.key == "reorder":  # the model's own numbers, read from its trace
        assert "For “voiture” the model looks most at “car” (α = 1.00)." in texts(shown)


def test_each_heatmap_carries_its_rows_in_words_for_a_screen_reader() -> None:
    t = energetic()  # α rows: s0 0.7 · s1 0.8 · </s> 0.6
    hidden = L.lesson_alpha_chart(t, 1, revealed=False).to_dict()["description"]
    assert hidden == ("Attention weights α of “s0 s1”; columns, the English words: “s0”, “s1”, “</s>”; one row "
                      "per French word written: « a » reads “s0” (α = 0.70); « b »: hidden, to predict.")
    shown = L.lesson_alpha_chart(t, 2, revealed=True, quantity="energy").to_dict()["description"]
    assert shown.startswith("Energies e_ij of") and "« c » reads “</s>” (energy e = 2.50)." in shown


def test_palette_and_log_scale_colour_alpha() -> None:
    t = energetic()

    def scale(**kw: object) -> dict:
        spec = L.lesson_alpha_chart(t, None, True, **kw).to_dict()
        return spec["layer"][0]["encoding"]["color"]

    plain = scale()
    assert plain["scale"] == {"scheme": "blues", "domain": [0, 1], "reverse": False}
    safe = scale(palette="viridis", log=True)
    assert safe["scale"] == {"scheme": "viridis", "domain": [0, 1], "reverse": True, "type": "symlog",
                             "constant": 0.01}
    assert safe["legend"]["values"] == [0, 0.01, 0.1, 1] and safe["legend"]["title"] == "α_ij (log)"
    assert scale(palette="rainbow")["scale"]["scheme"] == "blues"  # not offered: the default


def test_each_answer_names_the_word_the_model_reads() -> None:
    """The teacher's answer of a stop with a row to predict names the source word its content vouches for
    (``expect``, or ``like`` at the annotations stop, which tests/test_lesson.py and this file check against the
    shipped models)."""
    from ui.lesson.teacher import TEACHER

    for s in STOPS:
        if s.predict is not None:
            (source,) = [src for i, _, src in s.expect if i == s.predict]
            assert TEACHER[s.key].answer.startswith(f"“{source}”"), s.key
        if s.like is not None:  # the word whose annotation is most like the asked word's (stop 3: “are”)
            assert TEACHER[s.key].answer.startswith(f"“{s.like[2]}”"), s.key


def test_similarity_and_fig2_charts_are_described_in_words() -> None:
    sim = S.similarity_chart(["a", "b", "c"], [[1.0, 0.0], [1.0, 0.1], [0.0, 1.0]]).to_dict()["description"]
    assert "“a” is most like “b” (1.0)" in sim and "“c” is most like “b” (0.1)" in sim  # cos(c, b) = 0.0995
    frame = pd.DataFrame({"model": ["m", "m"], "bucket": ["0–9", "10–19"], "lo": [0, 10], "n": [20, 20],
                          "bleu": [30.0, 24.5]})
    assert L.fig2_chart(frame, "Multi30k").to_dict()["description"] == (
        "BLEU by source sentence length, Multi30k: m 30.0 BLEU at 0–9 words, 24.5 at 10–19.")
