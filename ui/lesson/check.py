"""The Lesson's concept check as data: four short questions asked before the lesson (at the intro) and again
after it (at the wrap-up), each time on a fresh sentence with the same phenomenon.

No Streamlit and no model here. Each :class:`CheckItem` is one concept (attention jumps ahead when French
reorders, the one-summary model loses words of a long sentence, an unknown word is looked up through α, the
attention shares add up to one) with two parallel forms: ``pre`` for the intro and ``post`` for the
wrap-up. Neither form's sentence is one the lesson shows, so the second answer measures the concept, not
the memory of a stop.

Where a form's answer is the model's behaviour, the form records what it relies on (``reads``: the target
step, its word, and the source word with the largest α, which is the right choice; ``kept``: a French word
the attention model writes and the one-summary model loses) and ``tests/test_lesson_check.py`` decodes it
again on the shipped models, as ``tests/test_lesson.py`` does for the stops.
"""

from __future__ import annotations

from dataclasses import dataclass

from ui.lesson.content import EVERYDAY, GROUP

PHASES: dict[str, str] = {"pre": "before the lesson", "post": "after the lesson"}
"""The check's two sittings: key (the ballots' prefix) → words."""
SUMMARY = "The one-summary model (RNNencdec)"
ATTENTION = "The attention model (RNNsearch)"
SAME = "Both about the same"


@dataclass(frozen=True)
class Form:
    """One sitting's question: its sentence, what is asked, the choices (phone buttons, hands up) and the
    right choice's index."""

    sentence: str
    prompt: str
    choices: tuple[str, ...]
    answer: int
    group: str = GROUP  # the checkpoint group whose models the evidence below is about
    reads: tuple[int, str] | None = None  # (target step, target word): its α's argmax is choices[answer]
    kept: str | None = None  # a French word RNNsearch writes and RNNencdec does not

    @property
    def right(self) -> str:
        """The right choice, in words."""
        return self.choices[self.answer]


@dataclass(frozen=True)
class CheckItem:
    """One concept of the check, asked in a parallel form before and after the lesson."""

    key: str
    concept: str  # what the question checks, for the results table
    pre: Form
    post: Form

    def form(self, phase: str) -> Form:
        """The form of this sitting (``"pre"`` or ``"post"``)."""
        return self.pre if phase == "pre" else self.post


def _words(sentence: str) -> tuple[str, ...]:
    """A sentence's words as phone buttons (its final full stop left out)."""
    return tuple(sentence.rstrip(".").split())


_BLUE_CAR = "A blue car is driving down the street."
_RED_CHAIR = "A black cat is sitting on a red chair."
_BEARD = ("An old man with a white beard and a brown hat is playing a guitar on the street while people "
          "walk by.")
_BICYCLE = ("A woman in a yellow jacket is riding a red bicycle past a small shop on a busy street in the "
            "city.")
_BLENDER = "He bought a new blender."
_PLATYPUS = "The children saw a platypus."

CHECK: tuple[CheckItem, ...] = (
    CheckItem(
        key="reorder", concept="Reordering: attention jumps ahead",
        pre=Form(_BLUE_CAR, "The model writes « Une voiture bleue ». To write « voiture », which English word "
                            "does it look at most?", _words(_BLUE_CAR), 2, reads=(1, "voiture")),
        post=Form(_RED_CHAIR, "The model writes « … sur une chaise rouge ». To write « chaise », which English "
                              "word does it look at most?", _words(_RED_CHAIR), 8, reads=(7, "chaise")),
    ),
    CheckItem(
        key="long", concept="Long sentences: one summary loses words",
        pre=Form(_BEARD, f"Two models translate this {len(_words(_BEARD))}-word sentence. Which one changes or "
                         "loses words?",
                 (SUMMARY, ATTENTION, SAME), 0, kept="barbe"),
        post=Form(_BICYCLE, f"Two models translate this {len(_words(_BICYCLE))}-word sentence. Which one changes "
                            "or loses words?",
                  (SUMMARY, ATTENTION, SAME), 0, kept="magasin"),
    ),
    CheckItem(
        key="unknown", concept="Unknown words: α says what to look up",
        pre=Form(_BLENDER, "The model writes « Il acheta un nouveau <unk>. » Which English word does the app "
                           "look up in the dictionary?", _words(_BLENDER), 4, group=EVERYDAY, reads=(4, "<unk>")),
        post=Form(_PLATYPUS, "The model writes « Les enfants virent une <unk>. » Which English word does the "
                             "app look up in the dictionary?", _words(_PLATYPUS), 4, group=EVERYDAY,
                  reads=(4, "<unk>")),
    ),
    CheckItem(
        key="shares", concept="Attention shares add up to 1",
        pre=Form("Suppose that to write « chat » in « Le chat dort. » the attention over “The”, “cat”, “sleeps” "
                 "and “.” is 0.1, 0.75, 0.1 and one more share.", "What is the attention on “.”?",
                 ("0.05", "0.1", "0.75", "1"), 0),
        post=Form("Suppose that to write « chien » in « Un chien court. » the attention over “A”, “dog” and "
                  "“runs” is 0.2, 0.7 and one more share.", "What is the attention on “runs”?",
                  ("0.1", "0.2", "0.7", "1"), 0),
    ),
)
"""The concept check, in the order it is asked."""


def ballot_key(phase: str, item: CheckItem) -> str:
    """The vote room's ballot of one question at one sitting (apart from every stop's key)."""
    return f"check-{phase}-{item.key}"
