"""The Lesson page: its content, its pure builders on hand-made traces (values worked out by hand),
its handout, and the page itself under AppTest on the shipped Multi30k pair."""

from __future__ import annotations

import base64
import dataclasses
import html
import math
import re
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from streamlit.testing.v1 import AppTest

from nmt.decoding.trace import DecodeTrace
from tests.conftest import plain
from tests.page_app import app_at
from tests.traces import make_trace
from ui.lesson import views as L
from ui.lesson import views_similarity as S
from ui.lesson.content import DOGS, GROUP, LEVELS, STOPS, Stop
from ui.lesson.views_handout import handout_html

ROOT = Path(__file__).resolve().parent.parent
SEARCH = ROOT / "checkpoints" / "m30k-en-fr-rnnsearch.pt"
ENCDEC = ROOT / "checkpoints" / "m30k-en-fr-rnnencdec.pt"
shipped = pytest.mark.skipif(not (SEARCH.exists() and ENCDEC.exists()), reason="no shipped Multi30k pair")


def with_energies(trace: DecodeTrace, i: int, energies: list[float]) -> DecodeTrace:
    """``trace`` with the energies of step ``i`` set."""
    trace.steps[i] = dataclasses.replace(trace.steps[i], energies=energies)
    return trace


# ----------------------------------------------------------------------------------------------
# Content


def test_ten_stops_from_an_intro_to_a_wrap_up_each_narrated_at_every_level() -> None:
    assert [s.key for s in STOPS] == ["intro", "bottleneck", "annotations", "energies", "softmax", "context",
                                      "reorder", "length", "unknown", "wrapup"]
    assert [s.title.split(".")[0] for s in STOPS] == [str(n) for n in range(1, len(STOPS) + 1)]  # numbered in order
    assert len(LEVELS) >= 3
    for s in STOPS:
        assert set(s.narration) == set(LEVELS), s.key
        assert all(len(t.split()) >= 15 for t in s.narration.values()), s.key
        assert s.question.strip().endswith("?") or "reveal" in s.question, s.key
        if s.predict is not None:  # the row the class predicts is one the content vouches for
            assert s.predict in {i for i, _, _ in s.expect}, s.key
        assert s.asks == (s.predict is not None or s.like is not None), s.key
    annotations = next(s for s in STOPS if s.key == "annotations")  # stop 3 asks for the word most like "dogs"
    assert annotations.like == (1, "dogs", "are") and annotations.predict is None and annotations.asks


# ----------------------------------------------------------------------------------------------
# URL values


@pytest.mark.parametrize(("value", "index"), [("3", 2), (" 8 ", 7), ("1", 0), ("9", 0), ("0", 0), ("-2", 0),
                                              ("abc", 0), (None, 0), ("2.5", 0)])
def test_stop_index_falls_back_to_the_first_stop(value: object, index: int) -> None:
    assert L.stop_index(value, 8) == index


def test_level_of() -> None:
    assert L.level_of("phd") == "phd" and L.level_of("school") == "school"
    assert L.level_of("professor") == L.level_of(None) == "undergrad"


# ----------------------------------------------------------------------------------------------
# Predict, then reveal


def test_verdict_marks_a_right_and_a_wrong_guess() -> None:
    t = make_trace([[0.5, 0.3, 0.2], [0.1, 0.7, 0.2]], tokens=["x", "y"])
    right = L.verdict(t, 1, 1)
    assert (right.argmax, right.argmax_word, right.matched, right.guess_word) == (1, "s1", True, "s1")
    wrong = L.verdict(t, 1, 2)
    assert (wrong.argmax, wrong.matched, wrong.guess_word, wrong.guess_alpha) == (1, False, "</s>", 0.2)
    assert L.verdict_text(wrong) == "For “y” the model looks most at “s1” (α = 0.70). Your guess “</s>” got α = 0.20."
    assert L.verdict_text(right).endswith("Your guess “s1” is right.")
    none = L.verdict(t, 0, None)
    assert none.guess is None and not none.matched and L.verdict_text(none).endswith("No guess was made.")
    assert L.verdict(t, 0, 7).guess is None  # a position outside the sentence is no guess


def _layers(chart: object) -> list[pd.DataFrame]:
    return [layer.data for layer in chart.layer]  # type: ignore[attr-defined]


def test_hidden_row_is_not_drawn_until_revealed() -> None:
    t = make_trace([[0.8, 0.1, 0.1], [0.2, 0.5, 0.3], [0.1, 0.1, 0.8]], tokens=["a", "b", "c"])
    hidden = _layers(L.lesson_alpha_chart(t, 1, revealed=False, guess=2))
    cells = hidden[0]
    assert sorted(cells["i"].unique()) == [0]  # only the row before the prediction has α
    assert list(cells["alpha"]) == [0.8, 0.1, 0.1]
    assert list(hidden[1]["i"]) == [1, 1, 1] and list(hidden[2]["q"]) == ["?"] * 3  # grey "?" cells
    assert not any("what" in d.columns for d in hidden)  # no guess or argmax mark yet


def test_revealed_row_shows_with_the_guess_and_the_argmax_marked() -> None:
    t = make_trace([[0.8, 0.1, 0.1], [0.2, 0.5, 0.3], [0.1, 0.1, 0.8]], tokens=["a", "b", "c"])
    layers = _layers(L.lesson_alpha_chart(t, 1, revealed=True, guess=2))
    cells = layers[0]
    assert sorted(cells["i"].unique()) == [0, 1]  # row 2 (the future) is never drawn
    assert list(cells[cells["i"] == 1]["alpha"]) == [0.2, 0.5, 0.3]
    marks = {d["what"][0]: (int(d["i"][0]), int(d["j"][0])) for d in layers[1:]}
    assert marks == {"model's argmax": (1, 1), "your guess": (1, 2)}


def test_fixed_context_has_no_alpha_chart() -> None:
    assert L.lesson_alpha_chart(make_trace([None, None], context="fixed"), 1, revealed=True) is None


# ----------------------------------------------------------------------------------------------
# Energies, softmax, context, annotations


def test_energy_table_works_the_softmax_through() -> None:
    t = with_energies(make_trace([[0.25, 0.75]], tokens=["x"]), 0, [0.0, math.log(3.0)])
    df = L.energy_table(t, 0)
    assert list(df["source word"]) == ["s0", "</s>"]
    assert df["e_ij − max"].tolist() == pytest.approx([-math.log(3.0), 0.0])
    assert df["exp(e_ij − max)"].tolist() == pytest.approx([1 / 3, 1.0])
    assert df["α_ij = exp / Σ"].tolist() == pytest.approx([0.25, 0.75])  # (1/3) / (4/3), 1 / (4/3)
    assert df["α_ij (model)"].tolist() == [0.25, 0.75]


def test_context_table_is_the_weighted_sum() -> None:
    h = [[4.0, 8.0, 1.0], [0.0, 4.0, 2.0]]
    df = L.context_table(["s0", "</s>"], [0.25, 0.75], h, dims=2)
    assert list(df.columns) == ["source word", "α_ij", "α·h[0]", "α·h[1]"]
    assert df.iloc[0, 1:].tolist() == [0.25, 1.0, 2.0]
    assert df.iloc[1, 1:].tolist() == [0.75, 0.0, 3.0]
    assert df.iloc[2].tolist() == ["c_i = Σ", 1.0, 1.0, 5.0]
    assert L.context_norm([0.25, 0.75], h) == pytest.approx(math.sqrt(1 + 25 + 1.75**2))  # c = (1, 5, 1.75)


def test_cosine_matrix() -> None:
    sim = S.cosine_matrix([[1.0, 0.0], [1.0, 1.0], [0.0, 2.0], [0.0, 0.0]])
    assert sim[0, 1] == pytest.approx(1 / math.sqrt(2)) and sim[1, 2] == pytest.approx(1 / math.sqrt(2))
    assert sim[0, 2] == 0.0 and sim[2, 2] == pytest.approx(1.0) and sim[3, 3] == 0.0  # a zero vector: 0, not NaN


def test_wide_table_keeps_repeated_words_apart() -> None:
    df = pd.DataFrame({"source word": ["a", "red", "a"], "α_ij": [0.1, 0.2, 0.7]})
    w = L.wide(df)
    assert list(w.columns) == ["quantity", "a (0)", "red", "a (2)"]
    assert w.iloc[0].tolist() == ["α_ij", 0.1, 0.2, 0.7]


# ----------------------------------------------------------------------------------------------
# Fig. 2


def _bucket(lo: int, n: int, score: float) -> dict[str, float]:
    return {"lo": lo, "hi": lo + 10, "n": n, "score": score}


RESULTS = {"models": {
    "rnnsearch": {"scores": {"t": {"greedy": {"by_length": [_bucket(0, 50, 60.0), _bucket(10, 40, 55.0),
                                                            _bucket(20, 12, 45.0), _bucket(30, 2, 68.0)]},
                                   "beam5": {"by_length": [_bucket(0, 50, 99.0)]}}}},
    "rnnencdec": {"scores": {"t": {"greedy": {"by_length": [_bucket(0, 50, 49.0), _bucket(10, 40, 38.5),
                                                            _bucket(20, 12, 21.0), _bucket(30, 2, 18.0)]}}}},
}}


def test_fig2_frame_keeps_one_decoding_and_buckets_of_ten_sentences() -> None:
    f = L.fig2_frame(RESULTS, "t")
    assert f[["model", "bucket", "bleu"]].values.tolist() == [
        ["rnnencdec", "0–9", 49.0], ["rnnencdec", "10–19", 38.5], ["rnnencdec", "20–29", 21.0],
        ["rnnsearch", "0–9", 60.0], ["rnnsearch", "10–19", 55.0], ["rnnsearch", "20–29", 45.0]]
    assert L.bleu_gaps(f, "rnnsearch", "rnnencdec") == {"0–9": 11.0, "10–19": 16.5, "20–29": 24.0}
    assert L.fig2_chart(L.fig2_frame(RESULTS, "no such test")) is None


def test_fig2_names_the_models_as_the_paper_does_with_its_legend_in_two_columns() -> None:
    spec = L.fig2_chart(L.fig2_frame(RESULTS, "t"), "Multi30k").to_dict()
    colour = spec["encoding"]["color"]
    assert colour["scale"]["domain"] == ["RNNencdec", "RNNsearch"]  # the results file's keys are lower case
    assert {v["model"] for v in spec["data"]["values"]} == {"RNNencdec", "RNNsearch"}
    assert (colour["legend"]["direction"], colour["legend"]["columns"]) == ("horizontal", 2)
    assert spec["description"].startswith("BLEU by source sentence length, Multi30k: RNNencdec 49.0 BLEU at 0–9")
    assert [L.paper_name(n) for n in ("rnnsearch", "RNNencdec-50", "luong-local-p")] == \
        ["RNNsearch", "RNNencdec-50", "luong-local-p"]


def test_fig2_colours_encdec_orange_search_blue() -> None:
    assert L.model_colours(["rnnencdec", "rnnsearch"]) == ["#e6550d", "#206fb2"]
    assert L.model_colours(["RNNencdec-30", "RNNencdec-50", "RNNsearch-30", "RNNsearch-50"]) == [
        "#fd8d3c", "#a63603", "#4292c6", "#08306b"]  # -30 light, -50 dark: as on every page (nmt.models.kinds)


# ----------------------------------------------------------------------------------------------
# Handout


def test_handout_has_each_stop_its_question_and_inline_figure_but_no_narration_or_answer() -> None:
    from ui.lesson.teacher import TEACHER

    svg = '<svg xmlns="http://www.w3.org/2000/svg"><text>α</text></svg>'
    evil = Stop(key="x", title="<script>alert(1)</script>", sentence="A & B", question="Why <b>?",
                narration={k: f"narration for {k}" for k in LEVELS})
    page = handout_html([*STOPS[:3], evil], {"bottleneck": svg}, {"x": "RNNsearch: « <i> »"}, {"x": ["one <idea>"]})
    assert page.count('<section class="stop">') == 4 and "grid-template-columns: 1fr 1fr" in page
    assert html.escape(STOPS[2].question) in page
    for s in STOPS[:3]:  # no narration at any level, no answer
        assert not [t for t in s.narration.values() if html.escape(t) in page], s.key
        assert html.escape(TEACHER[s.key].answer) not in page
    assert "<script>" not in page and "&lt;script&gt;alert(1)&lt;/script&gt;" in page
    assert "Why &lt;b&gt;?" in page and "A &amp; B" in page and "« &lt;i&gt; »" in page
    assert "<li>one &lt;idea&gt;</li>" in page
    (data,) = re.findall(r'src="data:image/svg\+xml;base64,([^"]+)"', page)
    assert base64.b64decode(data).decode("utf-8") == svg


def test_answer_key_has_every_answer_and_the_models_numbers() -> None:
    from ui.lesson.teacher import TEACHER
    from ui.lesson.views_handout import answer_key_html

    page = answer_key_html(STOPS, TEACHER, {"reorder": "For “voiture” the model looks most at “car” (α = 1.00)."})
    assert page.count('<section class="stop">') == len(STOPS)
    for s in STOPS:
        assert html.escape(TEACHER[s.key].answer) in page and html.escape(TEACHER[s.key].say) in page, s.key
    assert "looks most at “car” (α = 1.00)." in page
    assert set(TEACHER) == {s.key for s in STOPS}  # one answer and one line to say per stop


# ----------------------------------------------------------------------------------------------
# The content holds on the shipped models


@shipped
def test_the_narrated_alignments_hold_on_the_shipped_model() -> None:
    from nmt.decoding.search import greedy
    from nmt.models import checkpoint

    search, encdec = checkpoint.load(SEARCH), checkpoint.load(ENCDEC)
    for stop in STOPS:
        if not stop.sentence or stop.group != GROUP:  # stop 8's everyday model: tests/test_lesson_stops.py
            continue
        t = greedy(search, [stop.sentence])[0]
        for i, target, source in stop.expect:
            a = t.steps[i].alpha
            assert t.steps[i].token == target, (stop.key, i, t.translation)
            assert t.src_tokens[int(np.argmax(a))] == source, (stop.key, i)
    cat = next(s for s in STOPS if s.key == "bottleneck").sentence
    assert " chat " in greedy(search, [cat])[0].translation
    assert " chat " not in greedy(encdec, [cat])[0].translation  # the white cat became a white dog

    # stop 3: "dogs" is more like its neighbour "are" than like "snow"; annotations are 2 × 512 numbers; "are" is
    # the word whose annotation is most like that of "dogs" (the answer the class predicts)
    import torch

    from nmt.decoding.search import prepare_source
    from nmt.text.data import pad_ids

    src = prepare_source(search, DOGS)
    ids, lengths = pad_ids([src.ids])
    with torch.no_grad():
        h = search.model.encode(ids, lengths).annotations[0].float().numpy()
    words = [*src.tokens, "</s>"]
    sim = S.cosine_matrix(h)
    dogs, are, snow = words.index("dogs"), words.index("are"), words.index("snow")
    assert h.shape[1] == 1024 and sim[dogs, are] > sim[dogs, snow] + 0.2
    (j, word, alike), = [s.like for s in STOPS if s.like is not None]
    assert words[j] == word == "dogs" and words[int(np.argmax(np.where(np.eye(len(words)), -2.0, sim)[j]))] == alike


# ----------------------------------------------------------------------------------------------
# The page


def page(stop: str | None = None, level: str | None = None) -> AppTest:
    at = app_at("pages/lesson.py", 120)
    if stop is not None:
        at.query_params["ls_stop"] = stop
    if level is not None:
        at.query_params["ls_level"] = level
    return at.run()


def heading(at: AppTest) -> str:
    (title,) = at.title
    return title.value


@shipped
def test_page_opens_the_stop_in_the_url() -> None:
    at = page("7")
    assert not at.exception and not at.error
    assert heading(at) == "7. Reordering"
    assert at.query_params["ls_stop"] == "7"


@shipped
@pytest.mark.parametrize("value", ["42", "0", "abc"])
def test_out_of_range_stop_opens_stop_one(value: str) -> None:
    at = page(value)
    assert not at.exception and not at.error
    assert heading(at) == "1. How to read the pictures"
    assert at.query_params["ls_stop"] == "1"


@shipped
def test_guess_then_reveal_shows_the_row_and_marks_the_guess() -> None:
    at = page("7")
    at.pills(key="ls_guess_reorder").set_value(1).run()  # "red": the English order
    assert not [m for m in [*at.info, *at.success] if "looks most at" in m.value]  # still hidden
    at.button(key="ls_reveal").click().run()
    (info,) = [plain(m.value) for m in at.info if "looks most at" in m.value]
    assert "“car”" in info and "Your guess “red” got α = 0.00" in info
    at.pills(key="ls_guess_reorder").set_value(2).run()  # "car"
    (ok,) = [plain(m.value) for m in at.success if "looks most at" in m.value]
    assert "Your guess “car” is right" in ok
    assert at.button(key="ls_reveal").label == "Hide row"
    at.button(key="ls_reveal").click().run()  # hidden again, for the next class
    assert not [m for m in [*at.info, *at.success] if "looks most at" in m.value]


@shipped
def test_next_and_back_move_the_url() -> None:
    at = page("3")
    at.button(key="ls_next").click().run()
    assert at.query_params["ls_stop"] == "4" and heading(at).startswith("4. Energies")
    at.button(key="ls_pgdn").click().run()  # the clicker's PageDown
    assert at.query_params["ls_stop"] == "5"
    at.button(key="ls_back").click().run()
    at.button(key="ls_pgup").click().run()
    assert at.query_params["ls_stop"] == "3" and heading(at).startswith("3. Annotations")
    at = page("10")
    assert at.button(key="ls_next").disabled


@shipped
def test_level_changes_the_narration() -> None:
    at = page("8")  # Fig. 2: nothing to predict, so the narration shows at once
    at.radio(key="ls_level").set_value("phd").run()
    texts = [plain(m.value) for m in at.markdown]
    assert STOPS[7].narration["phd"] in texts and STOPS[7].narration["undergrad"] not in texts
    assert at.query_params["ls_level"] == "phd"


@shipped
@pytest.mark.parametrize(("value", "level"), [("school", "school"), ("nonsense", "undergrad")])
def test_level_from_the_url(value: str, level: str) -> None:
    at = page("8", value)
    assert not at.exception and at.radio(key="ls_level").value == level
    assert STOPS[7].narration[level] in [plain(m.value) for m in at.markdown]


@shipped
def test_narration_of_a_prediction_waits_for_the_reveal() -> None:
    """Stop 7's narration names the answer (“car”), so it shows only with the model's row."""
    at = page("7")
    texts = [plain(m.value) for m in at.markdown]
    assert STOPS[6].narration["undergrad"] not in texts
    assert "Guess first: the explanation appears with the model's row (B)." in [c.value for c in at.caption]
    at.button(key="ls_reveal").click().run()
    assert STOPS[6].narration["undergrad"] in [plain(m.value) for m in at.markdown]


@pytest.mark.skipif(not (ROOT / "checkpoints" / "europarl-en-fr.results.json").exists(), reason="no results")
def test_the_fig2_narration_matches_the_shipped_results() -> None:
    """“RNNsearch-50 stays near 24 BLEU up to 79 words while RNNencdec-50 falls from 21 to 9”, and
    the Multi30k gap widens."""
    import json

    from ui.lesson.content import FIG2

    (ep_file, ep_test, *_), (m_file, m_test, *_) = FIG2
    ep = L.fig2_frame(json.loads((ROOT / "checkpoints" / ep_file).read_text(encoding="utf-8")), ep_test)
    search = ep[(ep["model"] == "RNNsearch-50") & (ep["lo"] < 80)]["bleu"]
    encdec = ep[ep["model"] == "RNNencdec-50"].set_index("bucket")["bleu"]
    assert len(search) == 8 and search.between(23.0, 25.0).all()
    assert round(encdec["0–9"]) == 21 and round(encdec["60–69"]) == 9
    m30k = L.fig2_frame(json.loads((ROOT / "checkpoints" / m_file).read_text(encoding="utf-8")), m_test)
    gaps = list(L.bleu_gaps(m30k, "rnnsearch", "rnnencdec").values())
    assert len(gaps) == 3 and gaps == sorted(gaps)


def test_lesson_is_near_the_top_of_the_navigation() -> None:
    from app import PAGES

    assert [p.source for p in PAGES][:2] == ["pages/stepper.py", "pages/lesson.py"]
