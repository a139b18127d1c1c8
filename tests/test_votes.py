"""The class's rooms (ui.lesson.votes), counted by hand: one vote per phone per round (a reopened tab is the same
phone), a late vote refused as closed, stepping back keeping a stop's votes, a shown histogram frozen, the
teacher's tabs sharing one position, two rooms apart, a phone without the teacher key refused, bounds."""

from __future__ import annotations

import threading

from ui.lesson.votes import MAX_PHONES, Room, RoomStore

WORDS = ["A", "red", "car"]


def test_one_vote_per_phone_per_round_also_from_a_reopened_tab() -> None:
    room = RoomStore().create()
    q = room.open("reorder", "« voiture »?", WORDS)
    for phone, choice in [("p1", 1), ("p2", 2), ("p3", 2)]:
        assert room.vote(phone, q.serial, choice) == "counted"
    # the same browser reopens the address in a new tab: its kept token comes back with it
    assert room.vote("p1", q.serial, 2) == "already"
    assert room.vote("p1", q.serial, 7) == "invalid"
    ballot = room.ballot("reorder")
    assert ballot is not None and ballot.counts(1) == [0, 1, 2] and room.voted("p1") == 1
    q2 = room.revote("reorder")
    assert q2 is not None and q2.round == 2 and q2.serial != q.serial
    assert room.vote("p1", q.serial, 2) == "closed"  # a round-1 page tapped after the re-vote began
    assert room.voted("p1") is None and room.vote("p1", q2.serial, 2) == "counted"
    assert room.vote("p1", q2.serial, 0) == "already"
    assert ballot.counts(1) == [0, 1, 2] and ballot.counts(2) == [0, 0, 1]


def test_a_late_vote_is_closed_and_stepping_back_keeps_the_votes() -> None:
    room = RoomStore().create()
    q = room.open("softmax", "« la »?", ["the", "snow", "in"])
    assert room.vote("p1", q.serial, 0) == "counted" and room.vote("p2", q.serial, 1) == "counted"
    room.close()  # the teacher moves to a stop without a question
    assert room.question() is None
    assert room.vote("p3", q.serial, 0) == "closed"  # the phone still showed the old question
    q7 = room.open("reorder", "« voiture »?", WORDS)  # on to another question
    assert room.vote("p3", q.serial, 0) == "closed" and room.vote("p3", q7.serial, 2) == "counted"
    back = room.open("softmax", "« la »?", ["the", "snow", "in"])  # stepping back
    assert back == q
    softmax = room.ballot("softmax")
    assert softmax is not None and softmax.counts(1) == [1, 1, 0]
    assert room.vote("p1", q.serial, 2) == "already" and room.vote("p4", q.serial, 0) == "counted"
    assert softmax.counts(1) == [2, 1, 0]
    reorder = room.ballot("reorder")
    assert reorder is not None and reorder.counts(1) == [0, 0, 1]


def test_a_shown_or_revealed_histogram_never_changes() -> None:
    room = RoomStore().create()
    q = room.open("reorder", "?", WORDS)
    room.vote("p1", q.serial, 2)
    q2 = room.revote("reorder")
    assert q2 is not None
    room.vote("p1", q2.serial, 2)
    room.vote("p2", q2.serial, 1)
    room.show("reorder")
    assert room.vote("p3", q2.serial, 1) == "closed" and room.question() is None
    assert room.revote("reorder") == q2  # no new round after the votes were shown
    ballot = room.ballot("reorder")
    assert ballot is not None and ballot.counts(1) == [0, 0, 1] and ballot.counts(2) == [0, 1, 1]
    q9 = room.open("unknown", "?", ["toaster", "the"])
    room.reveal("unknown", True)  # B before any "show": the row is out, so is the vote
    assert room.vote("p1", q9.serial, 0) == "closed"


def test_presenter_and_projector_share_one_position() -> None:
    store = RoomStore()
    room = store.create()
    projector, presenter = store.teacher(room.code, room.key), store.teacher(room.code.lower(), room.key)
    assert projector is room and presenter is room
    v0 = room.version
    projector.move(stop=6)  # → on the projector's clicker
    assert presenter.position.stop == 6 and room.version == v0 + 1
    presenter.move(level="phd")  # the level changed in the presenter tab
    presenter.reveal("reorder", True)
    assert (projector.position.stop, projector.position.level, projector.position.revealed) == \
        (6, "phd", frozenset({"reorder"}))
    assert room.version == v0 + 3
    room.move(stop=6)  # no change, no new version (a tab does not redraw for nothing)
    assert room.version == v0 + 3


def test_two_rooms_are_apart_and_a_phone_without_the_key_is_refused() -> None:
    store = RoomStore()
    a, b = store.create(), store.create()
    assert a.code != b.code and a.key != b.key and len(a.code) == 4
    qa = a.open("reorder", "?", WORDS)
    qb = b.open("reorder", "?", WORDS)
    assert a.vote("p1", qa.serial, 2) == "counted" and b.vote("p1", qb.serial, 0) == "counted"
    ba, bb = a.ballot("reorder"), b.ballot("reorder")
    assert ba is not None and bb is not None and ba.counts(1) == [0, 0, 1] and bb.counts(1) == [1, 0, 0]
    assert store.get(a.code) is a  # a phone joins with the code only …
    assert store.teacher(a.code, None) is None  # … which never makes it a teacher
    assert store.teacher(a.code, b.key) is None and store.teacher(a.code, a.key[:-1]) is None
    assert store.teacher("ZZZZ", a.key) is None


def test_rooms_are_bounded_and_expire() -> None:
    now = [0.0]
    store = RoomStore(max_rooms=3, ttl_s=100.0, clock=lambda: now[0])
    rooms = []
    for t in range(4):
        now[0] = float(t)
        rooms.append(store.create())
    assert len(store) == 3 and store.get(rooms[0].code) is None  # the least recently used went
    now[0] = 50.0
    assert store.get(rooms[1].code) is rooms[1]  # used at 50 s
    now[0] = 140.0  # rooms 2 and 3 last used at 2 s and 3 s: forgotten; room 1 at 50 s: kept
    assert store.get(rooms[2].code) is None and store.get(rooms[1].code) is rooms[1] and len(store) == 1


def test_at_most_200_votes_a_round_even_at_once() -> None:
    room = Room("ABCD", "k")
    q = room.open("reorder", "?", ["a", "b"])
    results: list[str] = []
    threads = [threading.Thread(target=lambda k=k: results.append(room.vote(f"p{k}", q.serial, 0)))
               for k in range(MAX_PHONES + 25)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert MAX_PHONES == 200 and results.count("counted") == 200 and results.count("full") == 25
    ballot = room.ballot("reorder")
    assert ballot is not None and ballot.counts(1) == [200, 0]


def test_the_join_bar_says_the_open_round_then_what_the_closed_question_got() -> None:
    from ui.lesson.vote_panel import address_px, votes_line

    room = RoomStore().create()
    assert room.current() is None and votes_line(room.current()) == "no question at this stop"
    q = room.open("reorder", "?", WORDS)
    assert votes_line(room.current()) == "first vote: **0 votes**"
    room.vote("p1", q.serial, 2)
    assert votes_line(room.current()) == "first vote: **1 vote**"
    q2 = room.revote("reorder")
    assert q2 is not None and votes_line(room.current()) == "after discussion: **0 votes**"
    room.vote("p1", q2.serial, 2)
    room.vote("p2", q2.serial, 1)
    room.show("reorder")  # the question is closed, not gone: the bar says what it got (it said "no question")
    assert room.question() is None
    assert votes_line(room.current()) == "voting closed · first vote: 1 vote, after discussion: 2 votes"
    room.open("unknown", "?", ["toaster", "the"])
    room.reveal("unknown", True)  # revealed in round 1: one round to report
    assert votes_line(room.current()) == "voting closed · first vote: 0 votes"
    room.close()
    assert votes_line(room.current()) == "no question at this stop"
    # 28 px for a LAN address (42 letters × 0.6 em × 28 px = 706 px ≤ 800); a long host name shrinks to fit
    assert address_px("http://192.168.100.123:8501/vote?room=K7QX") == 28
    assert address_px("http://nmt-lab.physics.example-university.edu:8501/vote?room=K7QX") == 20  # 800/(0.6×66)
    assert address_px("http://" + "a" * 200) == 16
