"""The Lesson's minute plan: each stop's minutes summing to 45 with the stops to vote on, the time against
the plan (worked out by hand), in the presenter view (AppTest) and the answer key, never on the projector."""

from __future__ import annotations

from pathlib import Path

import pytest
from streamlit.testing.v1 import AppTest

from tests.conftest import plain
from ui.lesson.content import STOPS
from ui.lesson.teacher import LESSON_MINUTES, PLAN, pace, plan_words
from ui.lesson.views_handout import answer_key_html

ROOT = Path(__file__).resolve().parent.parent
KEYS = [s.key for s in STOPS]


def test_the_minutes_sum_to_45_and_name_the_votes() -> None:
    assert [PLAN[k].minutes for k in KEYS] == [7, 4, 3, 5, 4, 3, 5, 4, 4, 6]  # 7 + 4 + … + 6 = 45
    assert sum(PLAN[k].minutes for k in KEYS) == LESSON_MINUTES == 45 and set(PLAN) == set(KEYS)
    assert [k for k in KEYS if PLAN[k].vote] == ["intro", "energies", "reorder", "unknown", "wrapup"]
    assert all(STOPS[KEYS.index(k)].predict is not None for k in ("energies", "reorder", "unknown"))
    assert plan_words("energies") == "5 min · vote: the highest energy"
    assert plan_words("softmax") == "4 min · no vote (hands up)"


def test_the_time_against_the_plan() -> None:
    # by the end of stop 4 the plan has used 7 + 4 + 3 + 5 = 19 minutes
    assert pace(KEYS, 3, 15 * 60) == ("Elapsed 15:00 of 45 min; the plan reaches the end of this stop at 19 min "
                                      "(4 min ahead).")
    assert pace(KEYS, 0, 10 * 60 + 5).endswith("at 7 min (3 min behind).")  # 10:05 into a 7-minute intro
    assert pace(KEYS, 9, 44 * 60 + 40) == ("Elapsed 44:40 of 45 min; the plan reaches the end of this stop at "
                                          "45 min (on time).")


def test_the_answer_key_gives_each_stop_its_minutes() -> None:
    from ui.lesson.teacher import TEACHER

    page = answer_key_html(STOPS, TEACHER, plan={k: plan_words(k) for k in KEYS})
    assert page.count("<strong>Plan.</strong>") == 10 and "7 min · vote: the concept check before" in page


@pytest.mark.skipif(not (ROOT / "checkpoints" / "m30k-en-fr-rnnsearch.pt").exists(), reason="no shipped pair")
def test_the_presenter_view_shows_the_plan_and_the_projector_does_not() -> None:
    def texts(at: AppTest) -> str:
        return " ".join(plain(m.value) for m in at.markdown)

    projector = AppTest.from_file(str(ROOT / "pages" / "lesson.py"), default_timeout=120)
    projector.query_params["ls_stop"] = "4"
    projector.run()
    presenter = AppTest.from_file(str(ROOT / "pages" / "lesson.py"), default_timeout=120)
    presenter.query_params.update({"ls_room": projector.query_params["ls_room"],
                                   "ls_key": projector.query_params["ls_key"], "ls_view": "presenter"})
    presenter.run()
    assert "**Plan.** 5 min · vote: the highest energy. Elapsed 0:" in texts(presenter)
    assert "the plan reaches the end of this stop at 19 min" in texts(presenter)
    assert "**Plan.**" not in texts(projector) and "Elapsed" not in texts(projector)
