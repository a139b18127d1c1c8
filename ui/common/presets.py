"""Preset sentences for the stepper page, each with one line saying what to watch.

They live in one data structure so a test can check them against the shipped checkpoints they
are written for (``group``: the Multi30k pair, or the Europarl RNNsearch-50 / RNNencdec-50 pair for
the paper's own sentences; ``tests/test_presets.py``): ``expect`` lists (target word, source word) pairs where the
source word should get the most attention when the target word is written; ``lost`` lists words
the RNNsearch writes and its RNNencdec twin does not (the bottleneck toggle's visible difference);
``copies`` lists source words the unknown-word replacement copies into the translation (the
model's dictionary lacks them); ``flipped`` is
the line to watch once the bottleneck toggle is flipped away from the preset's own setting.

The first three are the explainer's script (issue 21), named as it names them: "Monotonic copy",
"Reordered phrase" and "Fixed-vector bottleneck"; every other preset's name says what it shows.
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
    group: str = "m30k-en-fr"  # the checkpoint pair it is written for (ui.common.models group name)
    flipped: str = ""  # what to watch with the toggle flipped (default: FLIPPED_TO_FROZEN / FLIPPED_TO_FREE)
    src: str = "en"  # the language of ``text``: a French preset is listed only when its fr→en pair is in the folder


FLIPPED_TO_FROZEN = ("c_i is frozen now (RNNencdec): every word reads the same summary c, drawn as one flat band "
                     "in every row; there is no alignment to follow. Flip the toggle off to see α again at this step.")
FLIPPED_TO_FREE = ("c_i is free again (RNNsearch): each word reads its own mix of the source, so the rows peak on "
                   "different source words, at the same step. Flip the toggle on to see the flat band.")


def watch_for(preset: Preset, freeze: bool) -> str:
    """The line to watch for ``preset`` with the bottleneck toggle at ``freeze``: its own line on its
    own setting, else what the flip shows (so a frozen preset flipped off never says "c_i is frozen")."""
    if freeze == preset.freeze:
        return preset.watch
    return preset.flipped or (FLIPPED_TO_FROZEN if freeze else FLIPPED_TO_FREE)


EUROPARL = "europarl-en-fr-50"  # RNNsearch-50 / RNNencdec-50, trained on Europarl (issue 8)
_PRIVILEGE = (
    "An admitting privilege is the right of a doctor to admit a patient to a hospital or a medical centre to "
    "carry out a diagnosis or a procedure, based on his status as a health care worker at a hospital."
)
_DISNEY = (
    "This kind of experience is part of Disney's efforts to \"extend the lifetime of its series and build new "
    "relationships with audiences via digital platforms that are becoming ever more important,\" he added."
)

# The explainer's script (issue 21), in its own words and order, on the best pair the project ships:
# the Europarl RNNsearch-50 / RNNencdec-50 (the Multi30k pair reads "letter", "Economic", "Area" as <unk>).
SCRIPT_PRESETS: tuple[Preset, ...] = (
    Preset(
        name="Monotonic copy",
        text="She read the old letter slowly.",
        watch="α walks down the diagonal: « a lu » reads 'read', « la » 'the', « vieille » 'old', « lettre » "
              "'letter', each French word the English word in the same place. (This model leaves out 'slowly'.)",
        expect=(("a", "read"), ("lu", "read"), ("la", "the"), ("vieille", "old"), ("lettre", "letter")),
        group=EUROPARL,
    ),
    Preset(
        name="Reordered phrase",
        text="The agreement on the European Economic Area was signed in August 1992.",
        watch="Step to « Espace »: the bright weight jumps ahead to 'Area', past the two adjectives, then walks "
              "back: « économique » reads 'Economic', « européen » 'European', the reversed diagonal of the "
              "paper's Fig. 3(a). (The paper's model wrote « zone »; ours writes the official « Espace ».)",
        expect=(("Espace", "Area"), ("économique", "Economic"), ("européen", "European"), ("août", "August")),
        group=EUROPARL,
    ),
    Preset(
        name="Fixed-vector bottleneck",
        text=_PRIVILEGE,
        watch="c_i is frozen (RNNencdec-50): every French word reads the same summary c of the whole 36-word "
              "sentence, the flat band in every row. It starts well, then drifts into « d'hôpital » over and "
              "over and loses the diagnosis, the procedure and the doctor's status. Flip the toggle off at any step.",
        flipped="c_i is free again (RNNsearch-50), at the same step: each row now peaks on its own source word "
                "(« médical » reads 'medical', « diagnostic » 'diagnosis'), and the diagnosis, the procedure and "
                "the status survive. Flip it back on to see the flat band.",
        freeze=True,
        lost=("diagnostic", "procédure", "statut"),
        group=EUROPARL,
    ),
)

_LONG = (
    "A man in a blue shirt and a woman in a white dress are sitting on a wooden bench in front of "
    "a large building while two small children play with a brown dog on the grass."
)

PRESETS: tuple[Preset, ...] = (
    Preset(
        name="Diagonal walk",
        text="Two dogs are running in the snow.",
        watch="α walks down the diagonal: each French word reads the English word in the same place.",
        expect=(("chiens", "dogs"), ("courent", "running"), ("neige", "snow")),
    ),
    Preset(
        name="Adjective swap",
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
              "which the model's dictionary lacks, so the stepper copies that word into the translation "
              "(marked “copied”; a word the dictionary knows is written as its translation, marked “dictionary”).",
        expect=(("xylophone", "xylophone"),),
        copies=("gondola",),
    ),
    Preset(
        name="Bottleneck: lost details",
        text=_LONG,
        watch="c_i is frozen (RNNencdec): the whole sentence must squeeze through one vector. The woman in "
              "the white dress and the brown dog get lost, and children play “on a bench”. Flip the toggle "
              "off to see RNNsearch keep them.",
        flipped="c_i is free again (RNNsearch), at the same step: α walks along the source, and the woman, "
                "the dress and the brown dog on the grass are back.",
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

PAPER_PRESETS: tuple[Preset, ...] = (
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

# Issue 34: sentences people type, on the pair trained for them (Europarl + Tatoeba, 30k words), which has no
# RNNencdec twin of its own: frozen, the stepper shows its own weights frozen (an untrained ablation) and,
# under the band, the Europarl RNNencdec-50 (ui.common.twins.STAND_IN_TWINS). ``lost``: words its RNNsearch writes
# and neither of those does.
EVERYDAY = "europarl-tatoeba-en-fr-30k"  # ui.common.models.TYPED_GROUP (not imported: presets stay plain data)
_EVENING = ("When I came home last night, my sister was cooking dinner in the kitchen while our parents were "
            "watching an old film in the living room.")
EVERYDAY_PRESETS: tuple[Preset, ...] = (
    Preset(
        name="Everyday sentence",
        text="My brother bought a new bike yesterday.",
        watch="The pair trained for everyday sentences (Europarl + Tatoeba, 30k words): α walks down the "
              "diagonal, « frère » reads 'brother', « a acheté » 'bought', « nouveau » 'new', « vélo » 'bike', "
              "« hier » 'yesterday': « Mon frère a acheté un nouveau vélo hier. » (The Europarl pair writes "
              "<unk> for 'bike'.)",
        flipped="c_i is frozen now, and this pair has no RNNencdec twin: its own RNNsearch weights read one "
                "summary c, as they were never trained to, and go round in circles (« mon frère cadet mon frère "
                "cadet »). Under the band, a trained RNNencdec of the Europarl pair translates it for comparison.",
        expect=(("frère", "brother"), ("acheté", "bought"), ("nouveau", "new"), ("vélo", "bike"),
                ("hier", "yesterday")),
        group=EVERYDAY,
    ),
    Preset(
        name="Everyday bottleneck",
        text=_EVENING,
        watch="c_i is frozen, and this pair has no RNNencdec twin: its own RNNsearch weights, never trained on "
              "one summary c, repeat « lorsque … » and lose everything; under the band, the Europarl RNNencdec-50, "
              "trained that way, keeps the opening and loses the sister, the dinner and the film. Flip the "
              "toggle off at any step.",
        flipped="c_i is free again (RNNsearch, 30k words), at the same step: α walks along the sentence, and the "
                "sister cooking dinner in the kitchen, the parents and the old film in the living room (« salon ») "
                "all survive. Flip it back on to compare.",
        freeze=True,
        lost=("sœur", "dîner", "cuisine", "film", "salon"),
        group=EVERYDAY,
    ),
)
# Issue 47: the same kind of sentence for the French→English pair (ui.common.models.TYPED_GROUPS), once it is in the
# folder. It says nothing of what that pair writes: no such model has been trained yet (the GPU queue's item c).
EVERYDAY_FR = "europarl-tatoeba-fr-en-30k"
FRENCH_PRESETS: tuple[Preset, ...] = (
    Preset(
        name="Phrase de tous les jours (fr→en)",
        text="Mon frère a acheté un nouveau vélo hier.",
        watch="The French→English pair (Europarl + Tatoeba, 30k words) reads « Everyday sentence » the other way: "
              "each row of α is an English word, each column a French one. Follow which French word each English "
              "word reads, and where the two languages order words differently.",
        group=EVERYDAY_FR,
        src="fr",
    ),
)
PRESETS = SCRIPT_PRESETS + EVERYDAY_PRESETS + PRESETS + PAPER_PRESETS + FRENCH_PRESETS

BY_NAME: dict[str, Preset] = {p.name: p for p in PRESETS}


def listed(groups: set[str]) -> list[str]:
    """The preset names a picker offers with the model groups ``groups`` in the folder: every English one,
    and a preset in another language only when its own pair is there (never French fed to an en→fr model)."""
    return [p.name for p in PRESETS if p.src == "en" or p.group in groups]


def long_sentence(group: str) -> str:
    """The bottleneck example for a checkpoint pair: its first preset that freezes c_i (the paper's
    admitting-privilege sentence for the Europarl pair), else the Multi30k one."""
    own = [p.text for p in PRESETS if p.freeze and p.group == group]
    return own[0] if own else next(p.text for p in PRESETS if p.freeze and p.group == "m30k-en-fr")
