"""The class's rooms: one per lesson, holding where the lesson is and the phones' votes, kept in memory.

No Streamlit here. A :class:`Room` is one lesson: a short code the phones type or scan, a teacher key
that only the teacher's tabs hold (the projector and the presenter view), the lesson's position
(stop, narration level, which rows are revealed, whether phones vote) shared by those tabs, and one
:class:`Ballot` per stop with a question. The projector opens a stop's question; moving on closes it
(a late vote is refused as closed); stepping back reopens that stop's stored ballot, votes kept; once
the votes are shown or the row revealed, the ballot is closed for good, so its histogram never
changes. A phone is a random token its browser keeps (``ui.lesson.vote_panel``); it votes once per round.

:class:`RoomStore` is the server's set of rooms (``ui.lesson.vote_panel`` keeps one per process): bounded in
number, each room forgotten after hours without use. Memory is bounded throughout: at most
:data:`MAX_PHONES` votes per round, a ballot per stop, :data:`MAX_ROOMS` rooms.
"""

from __future__ import annotations

import secrets
import threading
import time
from dataclasses import dataclass, field, replace
from typing import Literal

MAX_PHONES = 200
MAX_ROOMS = 32
ROOM_TTL_S = 6 * 3600.0  # a room unused this long is forgotten
ROUNDS = (1, 2)
CODE_LETTERS = "ABCDEFGHJKLMNPQRSTUVWXYZ23456789"  # no 0/O or 1/I to misread from the back row
CODE_LEN = 4
Outcome = Literal["counted", "already", "closed", "full", "invalid"]


@dataclass(frozen=True)
class Question:
    """What the phones are asked: the stop, a prompt, the choices (source words), and the round."""

    stop: str
    prompt: str
    choices: tuple[str, ...]
    round: int
    serial: int  # changes with every new question or round, so a phone can tell it was asked again


@dataclass
class Ballot:
    """One stop's question and its votes (round → phone → choice); ``closed`` once shown or revealed."""

    question: Question
    votes: dict[int, dict[str, int]] = field(default_factory=lambda: {r: {} for r in ROUNDS})
    shown: bool = False
    closed: bool = False

    def counts(self, round_: int) -> list[int]:
        """Votes per choice in a round (zeros for a round not held)."""
        out = [0] * len(self.question.choices)
        for c in self.votes.get(round_, {}).values():
            out[c] += 1
        return out


@dataclass
class Position:
    """Where the lesson is, shared by the teacher's tabs: 0-based stop, level, revealed stops, voting, and
    the concept check's sitting (``"pre"``, ``"post"``; ``""`` when it is not running) and question."""

    stop: int = 0
    level: str = "school"
    revealed: frozenset[str] = frozenset()
    voting: bool = False
    check: str = ""
    item: int = 0


@dataclass
class Room:
    """One lesson's room (thread-safe: the server runs each session's script in its own thread)."""

    code: str
    key: str
    max_phones: int = MAX_PHONES
    touched: float = field(default_factory=time.monotonic)
    started: float = field(default_factory=time.monotonic)  # when the lesson began (the presenter's clock)
    version: int = 0  # changes whenever the position does, so a teacher's tab knows to redraw
    _position: Position = field(default_factory=Position)
    _lock: threading.Lock = field(default_factory=threading.Lock, repr=False)
    _ballots: dict[str, Ballot] = field(default_factory=dict)
    _open: str | None = None  # the stop whose ballot takes votes now
    _serial: int = 0
    _hands: dict[str, tuple[int, int]] = field(default_factory=dict)  # ballot key → (right, answered) by hand

    # -- the teacher's side ---------------------------------------------------------------------

    @property
    def position(self) -> Position:
        """The lesson's shared position."""
        return self._position

    def snapshot(self) -> tuple[Position, int]:
        """The position and its version, read together (a move between two separate reads would pair a
        position with another position's version)."""
        with self._lock:
            return self._position, self.version

    def move(self, stop: int | None = None, level: str | None = None, voting: bool | None = None,
             check: str | None = None, item: int | None = None) -> None:
        """Change the shared position (``None``: leave that part as it is)."""
        with self._lock:
            p = self._position
            given = {"stop": stop, "level": level, "voting": voting, "check": check, "item": item}
            new = replace(p, **{k: v for k, v in given.items() if v is not None})
            if new != p:
                self._position, self.version = new, self.version + 1

    def reveal(self, stop: str, shown: bool) -> None:
        """Reveal (or hide again) the model's row at ``stop``; revealing closes its ballot for good."""
        with self._lock:
            p = self._position
            revealed = p.revealed | {stop} if shown else p.revealed - {stop}
            if revealed != p.revealed:
                self._position = replace(p, revealed=frozenset(revealed))
                self.version += 1
            if shown and stop in self._ballots:
                self._ballots[stop].closed = True

    def open(self, stop: str, prompt: str, choices: list[str] | tuple[str, ...]) -> Question:
        """Take votes on ``stop``'s question: its stored ballot when it had one (votes kept), else a new
        one in round 1. Any other stop's question is closed."""
        with self._lock:
            b = self._ballots.get(stop)
            if b is None or (b.question.prompt, b.question.choices) != (prompt, tuple(choices)):
                self._serial += 1
                b = self._ballots[stop] = Ballot(Question(stop, prompt, tuple(choices), 1, self._serial))
            self._open = stop
            return b.question

    def close(self) -> None:
        """No question at this stop: the open one (if any) stops taking votes."""
        with self._lock:
            self._open = None

    def revote(self, stop: str) -> Question | None:
        """Start round 2 of ``stop``'s question (after the class has discussed); its round-1 votes stay."""
        with self._lock:
            b = self._ballots.get(stop)
            if b is None or b.question.round == 2 or b.closed:
                return None if b is None else b.question
            self._serial += 1
            q = b.question
            b.question = Question(q.stop, q.prompt, q.choices, 2, self._serial)
            return b.question

    def show(self, stop: str) -> None:
        """Draw ``stop``'s histogram from now on; its votes are final."""
        with self._lock:
            if stop in self._ballots:
                self._ballots[stop].shown = self._ballots[stop].closed = True

    def ballot(self, stop: str) -> Ballot | None:
        """``stop``'s ballot (its question, votes and state), or None before it was asked."""
        return self._ballots.get(stop)

    def count_hands(self, key: str, right: int, answered: int) -> None:
        """The teacher's count of hands for a question asked without phones (right ≤ answered, both ≥ 0)."""
        answered = max(0, min(int(answered), self.max_phones))
        with self._lock:
            self._hands[key] = (max(0, min(int(right), answered)), answered)

    def hands(self, key: str) -> tuple[int, int] | None:
        """The hands counted for a question (right, answered), or None."""
        return self._hands.get(key)

    # -- the phones' side -----------------------------------------------------------------------

    def current(self) -> Ballot | None:
        """The ballot of this stop's question, open or closed (shown, revealed), or None at a stop without one."""
        return self._ballots.get(self._open) if self._open else None

    def question(self) -> Question | None:
        """The question that takes votes now, for a phone that asks (however late it joined)."""
        b = self.current()
        return None if b is None or b.closed else b.question

    def vote(self, phone: str, serial: int, choice: int) -> Outcome:
        """A phone's vote on the question it was shown (``serial``): counted, or why not."""
        with self._lock:
            b = self.current()
            if b is None or b.closed or b.question.serial != serial:
                return "closed"  # the teacher moved on, started the re-vote, showed or revealed
            if not 0 <= choice < len(b.question.choices):
                return "invalid"
            box = b.votes[b.question.round]
            if phone in box:
                return "already"
            if len(box) >= self.max_phones:
                return "full"
            box[phone] = choice
            return "counted"

    def voted(self, phone: str) -> int | None:
        """The choice this phone made in the open question's current round, or None."""
        b = self.current()
        return None if b is None else b.votes[b.question.round].get(phone)


def new_code(taken: set[str] | dict[str, Room]) -> str:
    """A short room code not in ``taken`` (4 characters easy to read from the back row)."""
    while True:
        code = "".join(secrets.choice(CODE_LETTERS) for _ in range(CODE_LEN))
        if code not in taken:
            return code


@dataclass
class RoomStore:
    """The server's rooms: at most ``max_rooms`` (the least recently used goes first), each forgotten
    ``ttl_s`` seconds after its last use."""

    max_rooms: int = MAX_ROOMS
    ttl_s: float = ROOM_TTL_S
    clock: object = time.monotonic
    _rooms: dict[str, Room] = field(default_factory=dict)
    _lock: threading.Lock = field(default_factory=threading.Lock, repr=False)

    def _now(self) -> float:
        return float(self.clock())  # type: ignore[operator]

    def _expire(self) -> None:
        now = self._now()
        for code in [c for c, r in self._rooms.items() if now - r.touched > self.ttl_s]:
            del self._rooms[code]

    def create(self) -> Room:
        """A new room with a fresh code and teacher key."""
        with self._lock:
            self._expire()
            while len(self._rooms) >= self.max_rooms:
                del self._rooms[min(self._rooms, key=lambda c: self._rooms[c].touched)]
            room = Room(new_code(self._rooms), secrets.token_urlsafe(12), touched=self._now())
            self._rooms[room.code] = room
            return room

    def get(self, code: str | None) -> Room | None:
        """The room a phone joins by its code (any case), or None."""
        with self._lock:
            self._expire()
            room = self._rooms.get((code or "").strip().upper())
            if room is not None:
                room.touched = self._now()
            return room

    def teacher(self, code: str | None, key: str | None) -> Room | None:
        """The room whose teacher key is ``key``, or None (a wrong key gives nothing away)."""
        room = self.get(code)
        if room is None or not key or not secrets.compare_digest(room.key.encode(), key.encode()):
            return None
        return room

    def __len__(self) -> int:
        return len(self._rooms)
