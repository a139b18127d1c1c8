"""The Lesson's concept check: the normalised gain on tallies made by hand (values worked out by hand), each
form's answer checked on the shipped models, and the page asking it before and after (AppTest) with phones
and hands, ending on the wrap-up's before/after and the class's gain."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
from streamlit.testing.v1 import AppTest

from tests.conftest import plain
from ui.lesson import views_concept_check as C
from ui.lesson import vote_panel
from ui.lesson.check import CHECK, PHASES, ballot_key
from ui.lesson.content import EVERYDAY, GROUP

ROOT = Path(__file__).resolve().parent.parent
CKPT = ROOT / "checkpoints"
SEARCH, ENCDEC = CKPT / f"{GROUP}-rnnsearch.pt", CKPT / f"{GROUP}-rnnencdec.pt"
EVERYDAY_CKPT = CKPT / "europarl-tatoeba-en-fr-rnnsearch-30k.pt"
shipped = pytest.mark.skipif(not (SEARCH.exists() and ENCDEC.exists() and EVERYDAY_CKPT.exists()),
                             reason="no shipped models")


# ----------------------------------------------------------------------------------------------
# The arithmetic, by hand


def test_normalised_gain_by_hand() -> None:
    assert C.normalised_gain(30.0, 80.0) == pytest.approx(50 / 70)  # 0.714…
    assert C.normalised_gain(50.0, 90.0) == pytest.approx(0.8)
    assert C.normalised_gain(60.0, 45.0) == pytest.approx(-15 / 40)  # the class did worse: a negative gain
    assert C.normalised_gain(0.0, 25.0) == pytest.approx(0.25)
    assert C.normalised_gain(100.0, 100.0) is None  # nothing was left to learn
    assert C.normalised_gain(None, 50.0) is None and C.normalised_gain(40.0, None) is None


def test_tallies_from_phones_or_hands() -> None:
    assert C.tally([7, 0, 3, 0], answer=2) == C.Tally(3, 10, "phones")
    assert C.tally([7, 0, 3, 0], answer=2).percent == pytest.approx(30.0)
    assert C.tally([7, 0, 3, 0], answer=2, hands=(5, 12)) == C.Tally(5, 12, "hands")  # hands counted win
    assert C.tally([7, 0, 3, 0], answer=2, hands=(0, 0)) == C.Tally(3, 10, "phones")  # … when they count anyone
    assert C.tally([0, 0], answer=1) == C.Tally(0, 0, "none") and C.tally(None, 0).percent is None
    assert C.tally(None, 0, hands=(15, 12)) == C.Tally(12, 12, "hands")  # more right than answered: all of them


def test_the_class_gain_over_the_questions_asked_twice() -> None:
    """Reordering 3 of 10 → 8 of 10, long sentences 5 of 10 → 9 of 10, unknown words asked after only: the
    class went from (30 + 50) / 2 = 40 % to (80 + 90) / 2 = 85 %, a gain of 45 / 60 = 0.75."""
    rows = [C.Row("reorder", "Reordering", C.Tally(3, 10), C.Tally(8, 10)),
            C.Row("long", "Long sentences", C.Tally(5, 10, "hands"), C.Tally(9, 10, "hands")),
            C.Row("unknown", "Unknown words", C.Tally(0, 0, "none"), C.Tally(7, 10))]
    pre, post, g = C.class_gain(rows)
    assert (pre, post) == (pytest.approx(40.0), pytest.approx(85.0)) and g == pytest.approx(0.75)
    assert [r.gain for r in rows][:2] == [pytest.approx(0.7142857), pytest.approx(0.8)] and rows[2].gain is None
    text = C.gain_text(rows)
    assert text.startswith("The class: 40 % right before the lesson, 85 % after (2 of 3 questions): normalised "
                           "gain 0.75")
    table = C.results_frame(rows)
    assert list(table["before"]) == ["3 of 10 (30 %)", "5 of 10 (50 %)", "not asked"]
    assert list(table["gain"]) == ["0.71", "0.80", "–"]
    assert C.class_gain(rows[2:]) == (None, None, None)
    assert C.gain_text(rows[2:]).startswith("Ask the concept check at the intro and again here")


def test_the_check_is_four_concepts_each_asked_twice_on_fresh_sentences() -> None:
    from ui.lesson.content import STOPS

    assert 4 <= len(CHECK) <= 6 and len({i.key for i in CHECK}) == len(CHECK)
    lesson = {s.sentence for s in STOPS}
    for item in CHECK:
        assert item.pre.sentence != item.post.sentence, item.key  # a fresh sentence the second time
        for form in (item.pre, item.post):
            assert form.sentence not in lesson and 0 <= form.answer < len(form.choices) and len(form.choices) >= 3
    keys = [ballot_key(p, i) for p in PHASES for i in CHECK]
    assert len(set(keys)) == 2 * len(CHECK) and not set(keys) & {s.key for s in STOPS}  # its own ballots


@shipped
def test_each_forms_answer_is_what_the_shipped_models_do() -> None:
    from nmt.decoding.search import greedy
    from nmt.models import checkpoint

    lms = {GROUP: checkpoint.load(SEARCH), EVERYDAY: checkpoint.load(EVERYDAY_CKPT)}
    encdec = checkpoint.load(ENCDEC)
    checked = 0
    for item in CHECK:
        for form in (item.pre, item.post):
            if form.reads is not None:
                t = greedy(lms[form.group], [form.sentence])[0]
                i, word = form.reads
                assert t.steps[i].token == word, (item.key, t.translation)
                assert t.src_tokens[int(np.argmax(t.steps[i].alpha))] == form.right, item.key
                assert form.choices == tuple(form.sentence[:-1].split())  # the words, the full stop left out
                checked += 1
            if form.kept is not None:
                search = greedy(lms[GROUP], [form.sentence])[0].translation.split()
                assert form.kept in search and form.kept not in greedy(encdec, [form.sentence])[0].translation
                assert form.right.startswith("The one-summary model")
                checked += 1
    assert checked == 6  # reordering, long sentences and unknown words, before and after


# ----------------------------------------------------------------------------------------------
# The page


def texts(at: AppTest) -> str:
    return " ".join(plain(m.value) for m in [*at.markdown, *at.info, *at.success, *at.caption, *at.subheader])


def votes(room: vote_panel.Room, right: int, wrong: int, answer: int) -> None:
    """``right`` phones pick the answer, ``wrong`` pick the choice after it."""
    q = room.question()
    assert q is not None
    for n in range(right + wrong):
        assert room.vote(f"{q.serial}-{n}", q.serial, answer if n < right else (answer + 1) % len(q.choices)) == \
            "counted"


@shipped
def test_the_check_before_and_after_ends_on_the_class_gain() -> None:
    """Before: reordering 3 of 10 on the phones, long sentences 5 of 10 hands; after: 8 of 10 and 9 of 10,
    and unknown words 7 of 10 (asked only after): 40 % → 85 %, a gain of 0.75."""
    at = AppTest.from_file(str(ROOT / "pages" / "lesson.py"), default_timeout=120)
    at.query_params.update({"ls_stop": "1", "ls_vote": "true"})
    at.run()
    room = vote_panel.rooms().get(at.query_params["ls_room"])
    assert room is not None and room.question() is None
    at.button(key="ls_check").click().run()
    assert "Concept check before the lesson: question 1 of 4" in texts(at)
    assert "Right answer" not in texts(at)  # … not answered on the projector
    q = room.question()
    assert q is not None and q.stop == "check-pre-reorder" and q.choices == CHECK[0].pre.choices
    votes(room, 3, 7, CHECK[0].pre.answer)
    at.button(key="ls_next").click().run()  # → : the next question, the first one closed
    assert "question 2 of 4" in texts(at) and room.vote("late", q.serial, 2) == "closed"
    at.number_input(key="ls_all_check-pre-long").set_value(10).run()
    at.number_input(key="ls_right_check-pre-long").set_value(5).run()
    assert room.hands("check-pre-long") == (5, 10)
    for _ in range(3):  # past the last question: back to the stop
        at.button(key="ls_next").click().run()
    assert at.title[0].value.startswith("1. ") and room.position.check == "" and room.question() is None
    room.move(stop=9)  # the lesson, taught: the wrap-up
    at.run()
    assert "Ask the concept check at the intro and again here" in texts(at)
    at.button(key="ls_check").click().run()
    assert "Concept check after the lesson: question 1 of 4" in texts(at)
    votes(room, 8, 2, CHECK[0].post.answer)
    at.button(key="ls_next").click().run()
    at.number_input(key="ls_all_check-post-long").set_value(10).run()
    at.number_input(key="ls_right_check-post-long").set_value(9).run()
    at.button(key="ls_next").click().run()
    votes(room, 7, 3, CHECK[2].post.answer)
    at.button(key="ls_check_end").click().run()
    assert at.title[0].value.startswith("10. ")
    text = texts(at)
    assert ("The class: 40 % right before the lesson, 85 % after (2 of 4 questions): normalised gain 0.75"
            in text), text
    table = at.dataframe[-1].value
    assert list(table["before"]) == ["3 of 10 (30 %)", "5 of 10 (50 %)", "not asked", "not asked"]
    assert list(table["after"]) == ["8 of 10 (80 %)", "9 of 10 (90 %)", "7 of 10 (70 %)", "not asked"]
    assert list(table["gain"]) == ["0.71", "0.80", "–", "–"]
    specs = [c.proto.spec for c in at.get("vega_lite_chart")]
    assert any("Reordering: attention jumps ahead: before 3 of 10 (30 %), after 8 of 10 (80 %)" in s for s in specs)


@shipped
def test_the_presenter_view_alone_names_the_right_answer() -> None:
    projector = AppTest.from_file(str(ROOT / "pages" / "lesson.py"), default_timeout=120)
    projector.query_params.update({"ls_stop": "1"})
    projector.run()
    code, key = projector.query_params["ls_room"], projector.query_params["ls_key"]
    projector.button(key="ls_check").click().run()
    presenter = AppTest.from_file(str(ROOT / "pages" / "lesson.py"), default_timeout=120)
    presenter.query_params.update({"ls_room": code, "ls_key": key, "ls_view": "presenter"})
    presenter.run()
    answer = f"Right answer: {CHECK[0].pre.right}"
    assert "question 1 of 4" in texts(presenter) and answer in texts(presenter) and answer not in texts(projector)
    presenter.button(key="ls_next").click().run()  # the presenter's → moves the projector's question too
    projector.run()
    assert "question 2 of 4" in texts(projector)
