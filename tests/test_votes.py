"""The phones' ballot box (ui.votes.Room), counted by hand: one vote per phone per round, a re-vote
round, a late phone getting the open question, at most 200 phones, a new question forgetting the old."""

from __future__ import annotations

import threading

from ui.votes import MAX_PHONES, Room


def test_one_vote_per_phone_per_round_and_a_revote() -> None:
    room = Room()
    q = room.open("reorder", "« voiture »?", ["A", "red", "car"])
    assert (q.round, q.choices) == (1, ("A", "red", "car"))
    for phone, choice in [("p1", 1), ("p2", 2), ("p3", 2)]:
        assert room.join(phone) and room.vote(phone, choice)
    assert not room.vote("p1", 2)  # a second vote in round 1 is not counted
    assert not room.vote("stranger", 0) and not room.vote("p1", 7)  # not joined; no such choice
    assert room.counts(1) == [0, 1, 2] and room.counts(2) == [0, 0, 0] and room.voted("p1") == 1
    q2 = room.revote()
    assert q2 is not None and q2.round == 2 and q2.serial == q.serial + 1
    assert room.voted("p1") is None and room.vote("p1", 2) and room.vote("p2", 2)
    assert room.counts(1) == [0, 1, 2] and room.counts(2) == [0, 0, 2]
    assert room.revote() == q2  # no third round


def test_late_phone_gets_the_open_question_and_a_new_question_starts_afresh() -> None:
    room = Room()
    assert room.question() is None and room.counts(1) == []
    room.open("softmax", "« la »?", ["the", "snow"])
    assert room.open("softmax", "« la »?", ["the", "snow"]).serial == 1  # the projector's rerun keeps it
    room.join("early")
    room.vote("early", 0)
    room.show()
    late = room.question()
    assert late is not None and late.stop == "softmax" and room.join("late")
    q = room.open("reorder", "« voiture »?", ["A", "red", "car"])
    assert q.serial == 2 and room.counts(1) == [0, 0, 0] and not room.shown  # old votes forgotten
    assert room.vote("early", 2) and room.phones == 2  # phones stay in the room


def test_at_most_200_phones_even_at_once() -> None:
    room = Room()
    room.open("reorder", "?", ["a", "b"])
    results: list[bool] = []
    threads = [threading.Thread(target=lambda k=k: results.append(room.join(f"p{k}"))) for k in range(MAX_PHONES + 25)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert MAX_PHONES == 200 and results.count(True) == 200 and room.phones == 200
    assert room.join("p0")  # a phone already in is let back in
