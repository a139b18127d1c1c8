"""The Lesson's room on the page (AppTest): the projector and the presenter view are two tabs of one room and
stay in step, a visitor who is not the teacher gets no lesson and no answers, the verdict counts the phones'
votes, the phone's page says what is happening; the class command's host list and address, by hand."""

from __future__ import annotations

from pathlib import Path

import pytest
from streamlit.testing.v1 import AppTest

from nmt.tools import serve
from tests.page_app import app_at
from tests.test_lesson import plain, shipped
from ui.lesson import page as P
from ui.lesson import vote_panel
from ui.lesson.teacher import TEACHER

ROOT = Path(__file__).resolve().parent.parent


def tab(query: dict[str, str]) -> AppTest:
    at = app_at("pages/lesson.py", 120)
    at.query_params.update(query)
    return at.run()


def texts(at: AppTest) -> str:
    return " ".join(plain(m.value) for m in [*at.markdown, *at.info, *at.success, *at.caption])


@shipped
def test_projector_and_presenter_are_one_room_in_step() -> None:
    projector = tab({"ls_stop": "6", "ls_vote": "true"})
    code, key = projector.query_params["ls_room"], projector.query_params["ls_key"]
    assert len(code) == 4 and len(key) >= 16
    presenter = tab({"ls_room": code, "ls_key": key, "ls_view": "presenter", "ls_stop": "1"})
    assert presenter.query_params["ls_stop"] == "6"  # the room's stop, not its own address's
    assert presenter.query_params["ls_vote"] == "true"
    presenter.button(key="ls_next").click().run()  # → in the presenter tab …
    assert presenter.title[0].value.startswith("7. Reordering")
    projector.run()  # … moves the projector at its next redraw (its follow fragment asks every second)
    assert projector.query_params["ls_stop"] == "7" and projector.title[0].value.startswith("7. Reordering")
    projector.radio(key="ls_level").set_value("phd").run()
    projector.button(key="ls_reveal").click().run()
    presenter.run()
    assert presenter.query_params["ls_level"] == "phd" and presenter.button(key="ls_reveal").label == "Hide row"
    assert TEACHER["reorder"].answer in texts(presenter) and TEACHER["reorder"].answer not in texts(projector)
    other = tab({"ls_stop": "2"})  # a second lesson on the same server: its own room, its own stop
    assert other.query_params["ls_room"] != code and other.query_params["ls_stop"] == "2"


@shipped
def test_a_move_while_the_projector_draws_is_followed(monkeypatch: pytest.MonkeyPatch) -> None:
    # the presenter's → then ←: the projector's run for → copies stop 8, and ← lands while it still draws;
    # its follower must compare with the version it copied, or it never redraws and stays on stop 8
    projector = tab({"ls_stop": "7"})
    room = vote_panel.rooms().get(projector.query_params["ls_room"])
    assert room is not None
    room.move(stop=7)  # → in the other tab (0-based 7: stop 8)
    copied = room.version
    moved: list[int] = []
    pair = P.model_pair

    def slow_pair(*args: object, **kwargs: object) -> object:  # ← arrives while the stop is drawn
        if not moved:
            room.move(stop=6)
            moved.append(room.version)
        return pair(*args, **kwargs)

    followed: list[int] = []
    monkeypatch.setattr(P, "model_pair", slow_pair)
    monkeypatch.setattr(vote_panel, "follow", lambda r, seen: followed.append(seen))
    projector.run()
    assert projector.query_params["ls_stop"] == "8"  # the run copied → …
    assert moved == [copied + 1] and followed == [copied]  # … and its follower waits for a later version: ←


@shipped
def test_the_verdict_counts_the_phones_votes() -> None:
    projector = tab({"ls_stop": "7", "ls_vote": "true"})
    room = vote_panel.rooms().get(projector.query_params["ls_room"])
    assert room is not None
    q = room.question()
    assert q is not None and q.stop == "reorder" and q.choices[2] == "car"
    for k, choice in enumerate([2, 2, 1]):  # car, car, red
        assert room.vote(f"p{k}", q.serial, choice) == "counted"
    assert "first vote: **3 votes**" in texts(projector.run())
    projector.button(key="ls_reveal").click().run()
    (verdict,) = [plain(m.value) for m in projector.success if "looks most at" in m.value]
    assert "Your guess “car” is right" in verdict
    assert "The phones' vote (first vote): “car”, 2 of 3." in texts(projector)
    assert room.vote("late", q.serial, 1) == "closed"  # revealed: the histogram is final


@shipped
def test_the_phones_vote_on_the_word_most_like_dogs() -> None:
    """Stop 3's phones choose among the other words (not “dogs” itself); their most voted word is the guess the
    verdict judges, mapped back to its place in the sentence."""
    projector = tab({"ls_stop": "3", "ls_vote": "true"})
    room = vote_panel.rooms().get(projector.query_params["ls_room"])
    assert room is not None
    q = room.question()
    assert q is not None and q.stop == "annotations"
    assert q.prompt == "Whose annotation is most like that of “dogs”?"
    assert q.choices == ("Two", "are", "running", "in", "the", "snow", ".", "</s>")
    for k, choice in enumerate([1, 1, 0]):  # are, are, Two
        assert room.vote(f"p{k}", q.serial, choice) == "counted"
    projector.run().button(key="ls_reveal").click().run()
    (verdict,) = [plain(m.value) for m in projector.success]
    assert "is the annotation of “are”" in verdict and verdict.endswith("Your guess “are” is right.")
    assert "The phones' vote (first vote): “are”, 2 of 3." in texts(projector)


def test_a_phone_gets_no_lesson_and_no_answers(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(vote_panel, "teacher_machine", lambda ip, host: False)
    at = tab({"ls_stop": "7", "ls_view": "presenter"})
    assert not at.exception
    shown = texts(at)
    assert "The Lesson runs on the teacher's machine" in shown and TEACHER["reorder"].answer not in shown
    assert "ls_room" not in at.query_params and not at.button  # no room made, no controls


def test_the_teacher_machine_is_loopback_by_a_local_name() -> None:
    assert vote_panel.teacher_machine("127.0.0.1", "localhost:8501")
    assert vote_panel.teacher_machine("::1", "[::1]:8501")
    assert not vote_panel.teacher_machine("127.0.0.1", "nmt-lab.test:8501")  # a phone mapped to loopback
    assert not vote_panel.teacher_machine("192.168.1.7", "localhost:8501")
    assert not vote_panel.teacher_machine("not an ip", None)


def test_the_phone_page_waits_then_shows_plain_words() -> None:
    room = vote_panel.rooms().create()
    at = app_at("pages/vote.py", 30)
    at.query_params["room"] = room.code
    at.run()
    assert "Waiting for the teacher's question…" in texts(at)
    room.open("reorder", "Which word?", ["A", "![x](http://beacon.test/x.png)", "car"])
    at.run()
    labels = [b.label for b in at.button]
    assert labels[1] == r"\!\[x\]\(http\:\/\/beacon\.test\/x\.png\)"  # escaped: shown as typed, never fetched
    at.button[2].click().run()
    assert "Your vote: car. Watch the projector." in texts(at)
    token = at.query_params["v"]
    again = app_at("pages/vote.py", 30)  # the address opened again
    again.query_params.update({"room": room.code, "v": token})
    assert "Your vote: car." in texts(again.run()) and not again.button
    room.close()
    assert "Waiting for the teacher's question…" in texts(at.run())
    late = app_at("pages/vote.py", 30)  # a phone still on the question
    late.query_params["room"] = room.code
    room.open("reorder", "Which word?", ["A", "![x](http://beacon.test/x.png)", "car"])  # back to it
    late.run()
    room.open("softmax", "Which other word?", ["the", "snow"])  # the teacher moves on before its tap arrives
    late.button[0].click().run()
    assert "This question is closed: the class has moved on." in texts(late)
    ballot = room.ballot("reorder")
    assert ballot is not None and ballot.counts(1) == [0, 0, 1]  # only the first phone's vote


def test_the_class_command_refuses_a_host_without_class_in_one_line(capsys: pytest.CaptureFixture[str]) -> None:
    assert serve.main(["--host", "nmt-lab.test"]) == 2 and serve.main(["--class", "--port", "70000"]) == 2
    err = capsys.readouterr().err
    assert err.splitlines() == ["error: --host needs --class (without it the server answers to this machine only)",
                                "error: --port must be between 1 and 65535"]


def test_the_class_command_allows_its_names_and_shows_one_of_them() -> None:
    assert serve.allowed_hosts(["NMT-Lab.test."], ["192.168.1.20", "10.0.0.5"]) == [
        "localhost", "127.0.0.1", "::1", "nmt-lab.test", "192.168.1.20", "10.0.0.5"]
    assert serve.phones_url(["nmt-lab.test"], ["192.168.1.20"], 8600) == "http://nmt-lab.test:8600"
    assert serve.phones_url([], ["192.168.1.20"], 8501) == "http://192.168.1.20:8501"
    assert vote_panel.join_address("http://nmt-lab.test:8600", "K7QX") == "http://nmt-lab.test:8600/vote?room=K7QX"
