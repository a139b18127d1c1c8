"""The class's votes from their phones (peer instruction: vote, discuss, vote again), kept in memory.

No Streamlit here: :class:`Room` is one lesson's ballot box, shared by the projector's session and every
phone's (``ui.vote_panel`` keeps one per server). The projector opens a question (the stop, the target
word, the source words to choose from); each phone gets the current question whenever it asks (a phone
that joins late gets it too) and casts one vote per round; the teacher starts the second round after the
discussion. Nothing personal is kept: a phone is a random token its page made up, and everything is
forgotten when the question changes or the server stops. Bounded: at most :data:`MAX_PHONES` phones.
"""

from __future__ import annotations

import threading
from dataclasses import dataclass, field

MAX_PHONES = 200
ROUNDS = (1, 2)


@dataclass(frozen=True)
class Question:
    """What the phones are asked: the stop, a prompt, the choices (source words), and the round."""

    stop: str
    prompt: str
    choices: tuple[str, ...]
    round: int
    serial: int  # changes with every new question or round, so a phone can tell it was asked again


@dataclass
class Room:
    """One lesson's ballot box (thread-safe: the server runs each session's script in its own thread)."""

    max_phones: int = MAX_PHONES
    _lock: threading.Lock = field(default_factory=threading.Lock, repr=False)
    _question: Question | None = None
    _votes: dict[int, dict[str, int]] = field(default_factory=dict)  # round → phone → choice
    _phones: set[str] = field(default_factory=set)
    _shown: bool = False

    def open(self, stop: str, prompt: str, choices: list[str] | tuple[str, ...]) -> Question:
        """Ask ``prompt`` about ``stop`` (round 1, no votes), unless that very question is already open."""
        with self._lock:
            q = self._question
            if q is not None and (q.stop, q.prompt, q.choices) == (stop, prompt, tuple(choices)):
                return q
            serial = 1 if q is None else q.serial + 1
            self._question = Question(stop, prompt, tuple(choices), 1, serial)
            self._votes, self._shown = {r: {} for r in ROUNDS}, False
            return self._question

    def revote(self) -> Question | None:
        """Start round 2 of the open question (after the class has discussed); its round-1 votes stay."""
        with self._lock:
            q = self._question
            if q is None or q.round == 2:
                return q
            self._question = Question(q.stop, q.prompt, q.choices, 2, q.serial + 1)
            return self._question

    def show(self) -> None:
        """Let the projector draw the histogram (after the re-vote)."""
        with self._lock:
            self._shown = True

    @property
    def shown(self) -> bool:
        """Whether the histogram is to be drawn."""
        return self._shown

    def question(self) -> Question | None:
        """The open question, for a phone that asks (however late it joined)."""
        return self._question

    def join(self, phone: str) -> bool:
        """Let a phone in: False when the room is full (a phone already in is always let in)."""
        with self._lock:
            if phone in self._phones:
                return True
            if len(self._phones) >= self.max_phones:
                return False
            self._phones.add(phone)
            return True

    def vote(self, phone: str, choice: int) -> bool:
        """A phone's vote in the current round: False (and nothing counted) for a phone not in the room,
        no open question, a choice out of range, or a second vote in the same round."""
        with self._lock:
            q = self._question
            if q is None or phone not in self._phones or not 0 <= choice < len(q.choices):
                return False
            box = self._votes[q.round]
            if phone in box:
                return False
            box[phone] = choice
            return True

    def voted(self, phone: str) -> int | None:
        """The choice this phone made in the current round, or None."""
        q = self._question
        return None if q is None else self._votes.get(q.round, {}).get(phone)

    def counts(self, round_: int) -> list[int]:
        """Votes per choice in a round (zeros for a round not held)."""
        q = self._question
        if q is None:
            return []
        out = [0] * len(q.choices)
        for c in self._votes.get(round_, {}).values():
            out[c] += 1
        return out

    @property
    def phones(self) -> int:
        """How many phones have joined."""
        return len(self._phones)
