"""The Lesson page's content as data: the paper's story in ten stops (an intro, eight stops, a wrap-up),
narrated at three levels.

No Streamlit and no model here. Each :class:`Stop` names the sentence it is shown on, the view
that draws it (:mod:`ui.lesson.views`), the target step whose α row the class predicts (``None``
where the stop has no prediction; stop 3 predicts a word's most alike annotation instead, ``like``), its
narration per level and its question for the class.

The sentences were checked on the shipped Multi30k pair (``m30k-en-fr-rnnsearch.pt`` /
``-rnnencdec.pt``, greedy decoding; stop 9 on the everyday model, ``europarl-tatoeba-en-fr-rnnsearch-30k.pt``);
``expect`` records what the stop relies on, as
(target step, target word, source word with the largest α), and ``tests/test_lesson.py`` decodes
them again so that the narration cannot drift away from what the model does.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from ui.common.presets import long_sentence

LEVELS: dict[str, str] = {
    "school": "For a high schooler",
    "undergrad": "For an undergraduate",
    "phd": "For a PhD candidate",
}
"""Narration levels, simplest first: URL value → label."""
DEFAULT_LEVEL = "undergrad"

GROUP = "m30k-en-fr"  # the checkpoint pair the sentences were chosen for (ui.common.models group name)
# BLEU by source length (Fig. 2): (results file in the checkpoint folder, test set, title, better, worse)
FIG2: tuple[tuple[str, str, str, str, str], ...] = (
    ("europarl-en-fr.results.json", "europarl-v7-fr-en/test2000q4", "Europarl: the paper's models",
     "RNNsearch-50", "RNNencdec-50"),
    ("m30k-en-fr.results.json", "test_2016_flickr", "Multi30k: the lesson's pair", "rnnsearch", "rnnencdec"),
)

DOGS = "Two dogs are running in the snow."
CAR = "A red car is parked near a white house."
CAT = "A black dog and a white cat are sleeping on a red couch."
TOASTER = "Tom bought a new toaster."
BOY = "A boy is eating an apple."
EVERYDAY = "europarl-tatoeba-en-fr-30k"  # the everyday model's group (models.TYPED_GROUP): stop 9's real <unk>


@dataclass(frozen=True)
class Stop:
    """One stop of the lesson."""

    key: str  # short id, also the view's name in ui.lesson.views
    title: str
    sentence: str | None  # None: the stop shows results, not a sentence
    narration: dict[str, str]  # level → a few sentences
    question: str
    predict: int | None = None  # target step i whose α row stays hidden until the class guesses
    expect: tuple[tuple[int, str, str], ...] = field(default_factory=tuple)  # (step, target word, argmax source)
    group: str = GROUP  # the checkpoint group whose RNNsearch decodes the sentence (ui.common.models group name)
    stepper: tuple[str, str] | None = None  # (sentence, group) the stepper opens on, for a stop without a sentence
    then: int | None = None  # a later row drawn with the revealed one, its argmax marked too (stop 7's « rouge »)
    # (source position j, its word, the other word whose annotation is most like h_j): the class predicts the
    # last, with the row and column of j hidden until the reveal (stop 3); tests/test_lesson.py checks the model
    like: tuple[int, str, str] | None = None

    @property
    def asks(self) -> bool:
        """Whether the class predicts something here (an α row, or the word most like ``like``'s), revealed by B."""
        return self.predict is not None or self.like is not None


STOPS: tuple[Stop, ...] = (
    Stop(
        key="intro", title="1. How to read the pictures", sentence=BOY,
        narration={
            "school": "The model writes the French sentence one word at a time. Each row of the picture is one "
                      "French word, in the order it was written; each column is one English word. The darker a "
                      "square, the more the model looked at that English word to write that French word.",
            "undergrad": "Rows: target words y_i, top to bottom in the order they were written; columns: source "
                         "words x_j (and </s>, the end of the sentence). Cell (i, j) is the attention weight "
                         "α_ij; each row sums to 1. Note « mange »: two English words (“is eating”), one French.",
            "phd": "The heatmap is the matrix α ∈ R^{T_y × T_x} of one greedy decode, each row a distribution "
                   "over source positions. It is a by-product of translation, never supervised; the first row "
                   "is scored from s_0 = tanh(W_s ←h_1), before any target word exists.",
        },
        question="In the row « pomme », which column is darkest, and what does that tell you about how « pomme » "
                 "was written?",
        expect=((0, "Un", "</s>"), (2, "mange", "eating"), (4, "pomme", "apple")),
    ),
    Stop(
        key="bottleneck", title="2. The bottleneck", sentence=CAT,
        narration={
            "school": "The older model (RNNencdec) reads the whole English sentence and squeezes it into one "
                      "list of numbers before it writes a single French word. Fourteen words are already too "
                      "many: the white cat comes out as a white dog.",
            "undergrad": "An encoder–decoder compresses the source into one fixed-length vector c, and every "
                         "target word is predicted from that same c. On this 14-word sentence our RNNencdec "
                         "writes « un chien blanc » (a white dog) where RNNsearch writes « un chat blanc ».",
            "phd": "Cho et al.'s RNNencdec conditions p(y_i | y_<i, x) on a single summary c = q({h_j}), "
                   "fixed for all i. The information-theoretic bottleneck grows with |x|; Bahdanau et al. "
                   "replace c by a step-dependent c_i. Compare the two decoders trained on the same Multi30k "
                   "data: only the context differs.",
        },
        question="Where did the cat go? Which words of the sentence would you expect a single summary to "
                 "lose first, and why?",
        expect=((5, "chat", "cat"),),
    ),
    Stop(
        key="annotations", title="3. Annotations: one vector per word", sentence=DOGS,
        narration={
            "school": "Instead of one summary, RNNsearch keeps a note for every English word. Each note "
                      "also remembers the words around it, so neighbouring notes look alike.",
            "undergrad": "A bidirectional RNN reads the sentence forwards and backwards; the annotation h_j "
                         "of word j joins both states. Each h_j describes word j in its context. The grid "
                         "shows how similar two annotations are (cosine): high near the diagonal.",
            "phd": "h_j = [→h_j ; ←h_j] (here 2 × 512 dimensions) summarises the whole sentence with a "
                   "focus on x_j, since recurrent states favour recent inputs. The cosine similarities "
                   "decay with |j − k|: the annotations are contextual, but local.",
        },
        question="Which word's annotation is most like that of “dogs”: a word next to it, or one far away? Why?",
        like=(1, "dogs", "are"),
    ),
    Stop(
        key="energies", title="4. Energies: scoring each word", sentence=DOGS, predict=5,
        narration={
            "school": "Before writing each French word, the model gives every English word a score: how "
                      "useful is this word right now? Guess which word scores highest before « neige ».",
            "undergrad": "The alignment model a scores each annotation h_j against the decoder's previous "
                         "state s_{i−1}: e_ij = a(s_{i−1}, h_j). A higher energy means a better match.",
            "phd": "a is a one-hidden-layer MLP, e_ij = v_a^T tanh(W_a s_{i−1} + U_a h_j), trained jointly "
                   "with the translation model; U_a h_j can be precomputed once per sentence. Energies are "
                   "unnormalised: only their differences matter.",
        },
        question="Which English word gets the highest energy when the model is about to write « neige », and "
                 "why that one?",
        expect=((5, "neige", "snow"),),
    ),
    Stop(
        key="softmax", title="5. Softmax: from energies to α", sentence=DOGS, predict=4,
        narration={
            "school": "The scores are turned into shares that add up to 100 %: the attention. A clear winner "
                      "takes almost everything; a close race shares the attention.",
            "undergrad": "α_ij = exp(e_ij) / Σ_k exp(e_ik): a softmax over the source words. The table "
                         "shows each step: subtract the largest energy, exponentiate, divide by the sum.",
            "phd": "The softmax gives a soft, differentiable alignment: α_ij is the probability that y_i is "
                   "aligned to x_j, and c_i the expected annotation under it. For the article « la » the "
                   "mass is split; a hard alignment could not express that.",
        },
        question="For the article « la », which word gets the most attention, and is it more than half?",
        expect=((4, "la", "the"),),
    ),
    Stop(
        key="context", title="6. The context c_i: a weighted sum", sentence=DOGS, predict=1,
        narration={
            "school": "The model mixes the notes of all English words, using the attention shares as the "
                      "recipe. For « chiens » the mix is almost only the note of “dogs”.",
            "undergrad": "c_i = Σ_j α_ij h_j. The table shows the first four of the 1024 numbers of each "
                         "annotation, multiplied by α_ij and added up. A new c_i is computed for every "
                         "target word: that is what removes the bottleneck.",
            "phd": "c_i enters the decoder's recurrence s_i = f(s_{i−1}, y_{i−1}, c_i) and the output "
                   "layer. Our ‖c_i‖ recomputed from α and h_j matches the decoder's own to the last "
                   "digit shown: c_i is exactly the expectation of h under α_i.",
        },
        question="Which word's annotation will dominate the mix for « chiens »?",
        expect=((1, "chiens", "dogs"),),
    ),
    Stop(
        key="reorder", title="7. Reordering", sentence=CAR, predict=1,
        narration={
            "school": "French puts most colours after the noun: “a red car” is « une voiture rouge ». The "
                      "attention jumps over “red” to “car”, then comes back.",
            "undergrad": "Attention is not tied to word order. At « voiture » α jumps ahead to “car”, "
                         "skipping “red”, and returns to “red” for « rouge »: a non-monotonic alignment, "
                         "the paper's Fig. 3(a) in miniature.",
            "phd": "The alignment is latent and learned from translation alone, yet it recovers the "
                   "adjective–noun inversion (and again for « maison blanche »). Compare with phrase-based "
                   "systems, where reordering needs its own model.",
        },
        question="After « Une », which English word does the model read to write the next word?", then=2,
        expect=((1, "voiture", "car"), (2, "rouge", "red"), (8, "maison", "house"), (9, "blanche", "white")),
    ),
    Stop(
        key="length", title="8. Long sentences (Fig. 2)", sentence=None,
        narration={
            "school": "The longer the sentence, the worse the old model gets. The attention model trained "
                      "on parliament debates (Europarl) stays about as good from 0 to 80 words.",
            "undergrad": "BLEU by source-sentence length (greedy decoding). Left: our Europarl models, trained "
                         "on sentences of up to 30 or 50 words as in the paper; RNNsearch-50 stays near 24 BLEU "
                         "up to 79 words while RNNencdec-50 falls from 21 to 9. Right: the lesson's Multi30k "
                         "pair, where the gap also widens. Buckets of fewer than 10 sentences are left out.",
            "phd": "Cho et al. (2014) observed that encoder–decoder quality degrades quickly with length; "
                   "Fig. 2 of Bahdanau et al. shows RNNsearch-50 flat beyond 50 words. Our Europarl replica "
                   "reproduces the shape (RNNsearch-30 also degrades past 40 words, as in the paper); "
                   "absolute BLEU is lower than the paper's newstest2014 numbers.",
        },
        question="By how many BLEU points does the gap between RNNsearch-50 and RNNencdec-50 grow from "
                 "short to long sentences? Why would a fixed vector hurt long sentences most?",
        stepper=(long_sentence(GROUP), GROUP),
    ),
    Stop(
        key="unknown", title="9. Unknown words", sentence=TOASTER, predict=5, group=EVERYDAY,
        narration={
            "school": "The model knows 30,000 French words, and « grille-pain » is not one of them, so it "
                      "writes <unk> (unknown). The attention shows which English word it was translating: "
                      "the app looks that word up in a dictionary and writes « grille-pain » in its place.",
            "undergrad": "The everyday model's vocabulary is a shortlist of its 30,000 most frequent words; "
                         "rarer ones become <unk>. Here it writes <unk> for “toaster”, with α on “toaster”, so "
                         "the word can be replaced by its dictionary translation, « grille-pain », learnt from "
                         "the training data's word alignments (Jean et al. 2015).",
            "phd": "Table 1 of the paper reports BLEU without sentences containing unknown words. The "
                   "argmax of α_i at an <unk> output gives the source position for post-hoc replacement "
                   "(Luong et al. 2015; Jean et al. 2015): a dictionary lookup, else a copy. It works when "
                   "α is sharp; Jean et al.'s large-vocabulary softmax avoids most <unk> in the first place.",
        },
        question="The model writes <unk>. Which English word was it looking at?",
        expect=((5, "<unk>", "toaster"),),
    ),
    Stop(
        key="wrapup", title="10. What we learned", sentence=None,
        narration={
            "school": "Three ideas: squeezing a whole sentence into one list of numbers loses words; attention "
                      "lets the model look back at every English word, a little or a lot, before each French "
                      "word; and it learns by itself where to look, even when French changes the word order.",
            "undergrad": "RNNsearch replaces the fixed vector c by c_i = Σ_j α_ij h_j, with α_i a softmax over "
                         "learned energies e_ij = a(s_{i−1}, h_j). The alignment is learned from translation "
                         "alone; it handles reordering and keeps quality up on long sentences (Fig. 2).",
            "phd": "Soft, differentiable alignment removed the encoder–decoder bottleneck and became the "
                   "template for later attention models. Whether α explains the output is a separate "
                   "question: the explanation page compares it with gradient and leave-one-out attributions "
                   "and edits α to see what changes.",
        },
        question="At stop 9 the model looked at “toaster” when it wrote <unk>. Does that prove α explains "
                 "the word it wrote? How would you test it?",
        stepper=(TOASTER, EVERYDAY),
    ),
)

IDEAS: tuple[str, ...] = (
    "One fixed vector is a bottleneck: RNNencdec loses words, more so in long sentences.",
    "Attention is a soft search: energies e_ij → softmax α_ij → a fresh context c_i = Σ_j α_ij h_j for every word.",
    "The alignment is learned from translation alone: it reorders (« voiture rouge ») and keeps long sentences up.",
)
"""The wrap-up's three ideas, one line each."""
NOT_ATTENTION = ("What attention is not: an explanation by itself. α shows where the model looked, not why it "
                 "wrote the word: on the explanation page, another α often gives the same word, and gradient "
                 "attributions pick the same top word only part of the time.")
"""The wrap-up's one-slide answer from the page *Is attention an explanation?*."""
