"""Preset sentences for the stepper page, each with one line saying what to watch.

They live in one data structure so a test can check them against the shipped checkpoints they
are written for (``group``: the Multi30k pair, or the Europarl RNNsearch-50 / RNNencdec-50 pair for
the paper's own sentences; ``tests/test_presets.py``): ``expect`` lists (target word, source word) pairs where the
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
    group: str = "m30k-en-fr"  # the checkpoint pair it is written for (ui.models group name)


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

EUROPARL = "europarl-en-fr-50"  # RNNsearch-50 / RNNencdec-50, trained on Europarl (issue 8)
_PRIVILEGE = (
    "An admitting privilege is the right of a doctor to admit a patient to a hospital or a medical centre to "
    "carry out a diagnosis or a procedure, based on his status as a health care worker at a hospital."
)
_DISNEY = (
    "This kind of experience is part of Disney's efforts to \"extend the lifetime of its series and build new "
    "relationships with audiences via digital platforms that are becoming ever more important,\" he added."
)

PAPER_PRESETS: tuple[Preset, ...] = (
    Preset(
        name="Paper Fig. 3(a)",
        text="The agreement on the European Economic Area was signed in August 1992.",
        watch="French puts the noun first: for « Espace » α jumps ahead to 'Area', then walks back, « économique » "
              "reading 'Economic' and « européen » 'European': the reversed diagonal of the paper's Fig. 3(a) "
              "(whose model wrote « zone économique européenne »; ours writes the official « Espace économique "
              "européen »).",
        expect=(("Espace", "Area"), ("économique", "Economic"), ("européen", "European"), ("août", "August")),
        group=EUROPARL,
    ),
    Preset(
        name="Paper §5.2.2 (1)",
        text=_PRIVILEGE,
        watch="36 words through one fixed vector: RNNencdec-50 starts well, then drifts into « d'un hôpital » over "
              "and over and loses the diagnosis, the procedure and the doctor's status. Flip the toggle off: "
              "RNNsearch-50 reads each part of the sentence when it writes it.",
        freeze=True,
        lost=("diagnostic", "procédure", "statut"),
        group=EUROPARL,
    ),
    Preset(
        name="Paper §5.2.2 (2)",
        text=_DISNEY,
        watch="The paper's second long sentence: the fixed-vector RNNencdec-50 keeps « plates-formes » and little "
              "else, and the speaker's « a ajouté » is gone. With a fresh c_i per word (toggle off), RNNsearch-50 "
              "keeps the new relationships, the digital platforms and who said it.",
        freeze=True,
        lost=("relations", "numériques", "ajouté"),
        group=EUROPARL,
    ),
)
PRESETS = PRESETS + PAPER_PRESETS

BY_NAME: dict[str, Preset] = {p.name: p for p in PRESETS}


def long_sentence(group: str) -> str:
    """The bottleneck example for a checkpoint pair: its first preset that freezes c_i (the paper's
    admitting-privilege sentence for the Europarl pair), else the Multi30k one."""
    own = [p.text for p in PRESETS if p.freeze and p.group == group]
    return own[0] if own else next(p.text for p in PRESETS if p.freeze)
