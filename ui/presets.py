"""Preset sentences for the stepper page, each with one line saying what to watch.

They live in one data structure so a test can check them against the shipped Multi30k en→fr
checkpoints (``tests/test_presets.py``): ``expect`` lists (target word, source word) pairs where the
source word should get the most attention when the target word is written; ``lost`` lists words
the RNNsearch writes and its RNNencdec twin does not (the bottleneck toggle's visible difference);
``copies`` lists source words the unknown-word replacement copies into the translation.
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
    lost: tuple[str, ...] = ()
    copies: tuple[str, ...] = ()


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
        name="Unknown word",
        text="A man plays the xylophone in a gondola.",
        watch="'gondola' is outside the vocabulary, so the model writes <unk>; its α points at 'gondola', "
              "and the stepper copies that word into the translation (marked “copied”).",
        expect=(("xylophone", "xylophone"),),
        copies=("gondola",),
    ),
    Preset(
        name="Fixed-vector bottleneck",
        text=_LONG,
        watch="c_i is frozen (RNNencdec): the whole sentence must squeeze through one vector. The woman in "
              "the white dress and the brown dog get lost, and children play “on a bench”. Flip the toggle "
              "off to see RNNsearch keep them.",
        freeze=True,
        lost=("femme", "robe", "chien", "herbe"),
    ),
    Preset(
        name="Bottleneck: who wears what",
        text="A woman wearing a purple dress and a man wearing a black suit are dancing on a stage.",
        watch="With one fixed c, the RNNencdec mixes up the two people: the purple dress and the man "
              "disappear and the woman wears the black suit. With a fresh c_i per word, RNNsearch gets both.",
        freeze=True,
        lost=("robe", "violette", "homme"),
    ),
    Preset(
        name="Bottleneck: short sentence",
        text="A black dog and a white cat are sleeping on a red couch.",
        watch="Even 14 words overflow one fixed vector: the RNNencdec turns the white cat into a white dog. "
              "RNNsearch reads 'cat' when it writes « chat ».",
        freeze=True,
        expect=(("chat", "cat"),),
        lost=("chat",),
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
