"""The Lesson's and the vote page's session state (ui/lesson/state.py, issue 49): every key the two pages and
ui/lesson use is listed in ``state.KEYS`` and carries the prefix ``ls_``: read from the code (each ``key=``
and each name ``state`` defines) and from the session state of the pages run in AppTest (the default view,
a deep link to stop 3's presenter view with phones voting, the concept check counted by hand, and the
phone's page before and after a vote)."""

from __future__ import annotations

from pathlib import Path

from tests.conftest import plain
from tests.page_app import app_at, open_link
from tests.state_keys import constants, created, literal_keys
from tests.test_lesson import shipped
from ui.lesson import state, vote_panel

ROOT = Path(__file__).resolve().parent.parent
FILES = [ROOT / "pages" / "lesson.py", ROOT / "pages" / "vote.py", *sorted((ROOT / "ui" / "lesson").glob("*.py"))]
COMMON_KEYS: frozenset[str] = frozenset()  # keys without the prefix that app.py or ui/common make on these pages


def unlisted(keys: list[str] | set[str]) -> list[str]:
    """The keys of ``keys`` that ``state.KEYS`` does not list."""
    return sorted(k for k in keys if not state.listed(k))


def test_every_key_starts_with_the_prefix_and_patterns_match_by_hand() -> None:
    assert state.PREFIX == "ls_" and all(k.startswith(state.PREFIX) for k in state.KEYS)
    assert state.listed("ls_rev_reorder") and state.listed("ls_v_3_1") and state.listed("ls_all_check-pre-long")
    assert not state.listed("ls_rev") and not state.listed("v_3_1") and not state.listed("ls_unknown")
    assert state.guess_key("reorder") == "ls_guess_reorder" and state.tap_key(3, 1) == "ls_v_3_1"
    assert state.hands_keys("check-pre-long") == ("ls_all_check-pre-long", "ls_right_check-pre-long")


def test_every_key_the_code_names_is_listed() -> None:
    named = {k for path in FILES for k in literal_keys(path)}
    named |= constants(state)
    assert len(named) > 25 and unlisted(named) == []


@shipped
def test_every_key_the_lesson_makes_is_listed() -> None:
    """The lesson's default view, then stop 3 in the presenter view with phones voting: a guess and the reveal."""
    seen = created(open_link("/lesson"))
    at = open_link("/lesson", ls_stop="3", ls_view="presenter", ls_vote="true", ls_level="phd")
    at.pills(key="ls_guess_annotations").set_value(2).run()
    at.button(key="ls_reveal").click().run()
    seen |= created(at)
    assert {"ls_guess_annotations", "ls_rev_annotations", "ls_seen", "ls_level", "ls_vote_on"} <= seen
    assert unlisted({k for k in seen if k.startswith(state.PREFIX)}) == []
    assert sorted(k for k in seen if not k.startswith(state.PREFIX)) == sorted(COMMON_KEYS)


@shipped
def test_every_key_the_concept_check_makes_is_listed() -> None:
    at = open_link("/lesson", ls_stop="1")
    at.button(key="ls_check").click().run()
    at.number_input(key="ls_all_check-pre-reorder").set_value(4).run()
    keys = created(at)
    assert {"ls_all_check-pre-reorder", "ls_right_check-pre-reorder", "ls_check_end"} <= keys
    assert unlisted(keys) == [] and not at.exception


def test_every_key_the_phones_page_makes_is_listed() -> None:
    nocode = open_link("/vote")
    room = vote_panel.rooms().create()
    room.open("reorder", "Which word?", ["A", "red", "car"])
    at = app_at("pages/vote.py", 30)
    at.query_params["room"] = room.code
    at.run()
    at.button(key=state.tap_key(room.question().serial, 2)).click().run()
    assert "Your vote: car. Watch the projector." in [plain(m.value) for m in at.markdown]
    keys = created(nocode) | created(at)
    assert {"ls_vote_code", "ls_vote_phone"} <= keys and any(k.startswith("ls_v_") for k in keys)
    assert unlisted(keys) == []
