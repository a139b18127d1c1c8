"""The teacher's side of the Lesson: each stop's answer and one line of what to say, shown only in the
presenter view (``/lesson?ls_view=presenter``, a second tab on the laptop) and in the answer key, never
on the projected page. No Streamlit and no model here; the model's own numbers for a stop's row come
from its decode trace (:func:`ui.lesson.views.verdict`), not from this text.
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class Teacher:
    """A stop's answer to its question for the class, and the one line to say while it is projected."""

    answer: str
    say: str


TEACHER: dict[str, Teacher] = {
    "intro": Teacher(
        answer="“apple”: the model read “apple” to write « pomme ». Each row shows where the model looked "
               "for one French word; « mange » reads “eating” and skips “is”.",
        say="Top to bottom is the order of writing; dark means “looked here”. Ignore the first row for now."),
    "bottleneck": Teacher(
        answer="It became a dog: RNNencdec writes « un chien blanc ». One vector for 14 words keeps the common "
               "pattern (a white dog, as in « un chien noir » just before) and loses the rarer detail.",
        say="Same training data, same size: the only difference is one summary for all words versus a fresh "
            "one for every word."),
    "annotations": Teacher(
        answer="“are”, right next to “dogs” (“Two”, on its other side, comes close): each annotation comes from "
               "RNNs reading the sentence in both directions, so it carries its neighbours; “snow”, five words "
               "away, is far less alike.",
        say="One vector per English word, coloured by its neighbours: these are what attention chooses among."),
    "energies": Teacher(
        answer="“snow”: it has the highest energy before « neige ». Energies are unbounded scores; only their "
               "differences matter, which is why the softmax comes next.",
        say="Every English word gets a score before each French word; the scores are not yet shares."),
    "softmax": Teacher(
        answer="“the”, with less than half of the weight: the rest is spread over “in”, “snow” and </s>. A soft "
               "alignment can split its attention; an article's gender comes from its noun.",
        say="exp and divide by the sum: big scores win big, but a close race shares the attention."),
    "context": Teacher(
        answer="“dogs”: nearly all the weight is on it, so c_i is almost h_dogs itself.",
        say="The context is a recipe: mix the word vectors with the attention as the amounts."),
    "reorder": Teacher(
        answer="“car”: the model jumps over “red” to write « voiture », then comes back to “red” for « rouge ».",
        say="Nobody told the model about French word order: it learnt to look ahead and come back."),
    "length": Teacher(
        answer="Read the gaps printed beside the chart: a few BLEU points on short sentences, many more on the "
               "longest. A fixed-size vector must hold ever more words; RNNsearch reads a fresh c_i per word.",
        say="This is the paper's Figure 2 on our own models: the old model falls, attention stays up."),
    "unknown": Teacher(
        answer="“toaster”: α is on “toaster”, so the dictionary's « grille-pain » replaces <unk>.",
        say="The model's French has 30,000 words; attention tells us which English word to look up."),
    "wrapup": Teacher(
        answer="No. α shows where the model looked, not why it wrote the word. Test it: change α or remove the "
               "word and see whether the output changes (the page “Is attention an explanation?” does both).",
        say="Three ideas: the bottleneck, attention as a soft search, alignment learnt for free; and a warning."),
}
"""Each stop's answer and what to say, by stop key (every stop of :data:`ui.lesson.content.STOPS`)."""


@dataclass(frozen=True)
class Plan:
    """A stop's minutes in a 45-minute lesson, and whether the class votes on it (a phone vote with its
    discussion and re-vote takes about 4 of them)."""

    minutes: int
    vote: str = ""  # what the class votes on here, "" for none


PLAN: dict[str, Plan] = {
    "intro": Plan(7, "the concept check before the lesson (4 questions)"),
    "bottleneck": Plan(4),
    "annotations": Plan(3),
    "energies": Plan(5, "the highest energy"),
    "softmax": Plan(4),
    "context": Plan(3),
    "reorder": Plan(5, "the word « voiture » reads"),
    "length": Plan(4),
    "unknown": Plan(4, "the word <unk> reads"),
    "wrapup": Plan(6, "the concept check after the lesson (4 questions)"),
}
"""Each stop's minutes (45 in all) and what to vote on: the two sittings of the concept check and three
predictions; the other stops' questions go to a show of hands."""
LESSON_MINUTES = 45


def plan_words(key: str) -> str:
    """A stop's plan in words: "5 min · vote: the highest energy" (plain text)."""
    p = PLAN[key]
    return f"{p.minutes} min · " + (f"vote: {p.vote}" if p.vote else "no vote (hands up)")


def pace(keys: list[str], k: int, elapsed_s: float) -> str:
    """The time against the plan at stop ``k`` (0-based in ``keys``, the stops in order): the minutes
    elapsed, the minutes planned by the end of this stop, and how far ahead or behind (plain text)."""
    planned = sum(PLAN[key].minutes for key in keys[: k + 1])
    minutes, seconds = divmod(int(max(0.0, elapsed_s)), 60)
    gap = planned - (elapsed_s / 60)
    where = "on time" if abs(gap) < 1 else f"{abs(gap):.0f} min {'ahead' if gap > 0 else 'behind'}"
    return (f"Elapsed {minutes}:{seconds:02d} of {LESSON_MINUTES} min; the plan reaches the end of this stop at "
            f"{planned} min ({where}).")
