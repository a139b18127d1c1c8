"""Preset sentences for the stepper page, each with one line saying what to watch.

They live in one data structure so a test can check them against the shipped Multi30k en→fr
checkpoints: ``expect`` lists (target word, source word) pairs where the source word should get
the most attention when the target word is written (an expectation, not a guarantee).
"""

from __future__ import annotations

from dataclasses import dataclass, field


@dataclass(frozen=True)
class Preset:
    """A ready-made example: the sentence, what to watch, and the bottleneck toggle it wants."""

    name: str
    text: str
    watch: str
    freeze: bool = False
    expect: tuple[tuple[str, str], ...] = field(default_factory=tuple)


_LONG = (
    "A man in a blue shirt and a woman in a white dress are sitting on a wooden bench in front of "
    "a large building while two small children play with a brown dog on the grass."
)

PRESETS: tuple[Preset, ...] = (
    Preset(
        name="Monotonic copy",
        text="Two dogs are running in the snow.",
        watch="α walks down the diagonal: each French word reads the English word in the same place.",
        expect=(("chiens", "dogs"), ("courent", "running"), ("neige", "snow")),
    ),
    Preset(
        name="Reordered phrase",
        text="A red car is parked near a white house.",
        watch="Adjective–noun swaps: at « voiture » the weight jumps ahead to 'car', past 'red', then back "
              "to 'red' for « rouge »; the same happens for « maison blanche ».",
        expect=(("voiture", "car"), ("rouge", "red"), ("maison", "house"), ("blanche", "white")),
    ),
    Preset(
        name="Soft alignment",
        text="Two children are playing near the water.",
        watch="« l' » spreads its weight over 'the' and 'water': the elided article depends on the noun "
              "after it, so the model reads both.",
        expect=(("enfants", "children"), ("eau", "water")),
    ),
    Preset(
        name="Fixed-vector bottleneck",
        text=_LONG,
        watch="c_i is frozen (RNNencdec): the whole sentence must squeeze through one vector, so the later "
              "details get lost, repeated or invented.",
        freeze=True,
    ),
    Preset(
        name="Long sentence",
        text=_LONG,
        watch="The same sentence with a fresh c_i per word: α keeps walking along the source to the end, "
              "and the details survive.",
        freeze=False,
        expect=(("chien", "dog"), ("herbe", "grass")),
    ),
)

BY_NAME: dict[str, Preset] = {p.name: p for p in PRESETS}
