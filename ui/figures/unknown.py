"""A translation as a person reads it: each ``<unk>`` the model wrote replaced and marked.

Unknown-word replacement (Jean et al. 2015 §2.3) is the trace's own rule
(:meth:`nmt.decoding.trace.DecodeTrace.unk_replacements`): an ``<unk>`` becomes the dictionary's translation of
the source word it attends to most, marked "from the dictionary", else that source word copied, marked
"copied". Where α points at no one word (a fixed-context RNNencdec, a tie) the ``<unk>`` stays as
written. A word the model was forced to write (a reference, a user's words) is never replaced: its
``<unk>`` stands for a word someone typed.

Only what is *shown* changes: scores, BLEU and exports keep reading the raw ``trace.translation``
(an RNNencdec has no α, so replacing would favour RNNsearch in a comparison). No Streamlit here.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Collection, Mapping, Sequence
from dataclasses import dataclass, field

from nmt.decoding.trace import DICTIONARY, DecodeTrace, NBestEntry, Replacement, StepRecord
from ui.figures.common import md

Detokenize = Callable[[list[str]], str]
"""Words to text, e.g. ``lm.tgt_tok.detokenize`` (which also detruecases a truecased model's output)."""

MARK_COLOUR = "green"  # Streamlit's Markdown colour of a mark (the stepper marks replaced words in green too)
NOTE = ("Green marks: the model wrote <unk> (a word outside its vocabulary) there; shown instead is the "
        "dictionary's translation of the source word it attends to most, else that word copied "
        "(Jean et al. 2015).")
"""The one line under a translation that has a replaced word (plain text: show it with :func:`md`)."""


@dataclass(frozen=True)
class Shown:
    """A translation as shown: ``text`` (plain, each replaced ``<unk>`` as its replacement),
    ``markdown`` (escaped with :func:`ui.figures.common.md`, each replaced word followed by its mark),
    ``note`` (Markdown: what the marks mean; empty when nothing was replaced) and the replacements."""

    text: str
    markdown: str
    note: str = ""
    swaps: dict[int, Replacement] = field(default_factory=dict)

    @property
    def labelled(self) -> str:
        """Plain text with the marks after it, for places without Markdown (a printed handout)."""
        if not self.swaps:
            return self.text
        return f"{self.text} ({'; '.join(mark_text(r) for _, r in sorted(self.swaps.items()))})"


def mark_label(swap: Replacement) -> str:
    """A replacement's mark in words: ``from the dictionary: 'bike'`` or ``copied``."""
    return f"from the dictionary: '{swap.source}'" if swap.label == DICTIONARY else "copied"


def mark_text(swap: Replacement) -> str:
    """A replacement in plain words: ``«vélo» from the dictionary: 'bike'`` or ``«Gdansk» copied``."""
    return f"«{swap.word}» {mark_label(swap)}"


def mark_suffix(swap: Replacement) -> str:
    """The mark that follows a replaced word, as Markdown: `` :green[(copied)]``."""
    return f" :{MARK_COLOUR}[({md(mark_label(swap))})]"


def mark_markdown(swap: Replacement) -> str:
    """A replaced word and its mark as Markdown (words escaped): ``vélo :green[(from the dictionary: 'bike')]``."""
    return md(swap.word) + mark_suffix(swap)


def replacements(trace: DecodeTrace, hold: Collection[int] = ()) -> dict[int, Replacement]:
    """The trace's replacements (:meth:`~nmt.decoding.trace.DecodeTrace.unk_replacements`) of words the model chose:
    none in forced decoding or at a forced step, none at a step in ``hold`` (e.g. a lesson's row not yet
    revealed)."""
    if trace.method == "forced":
        return {}
    forced = {s.i for s in trace.steps if s.forced}
    return {i: r for i, r in trace.unk_replacements().items() if i not in forced and i not in hold}


def _marked(words: Sequence[str], swaps: Mapping[int, Replacement], detok: Detokenize, text: str) -> str:
    """Markdown of ``words`` (``text`` is their detokenised form) with each replaced word marked where it
    stands: the words are detokenised with a stand-in at each replaced position, which is then written
    back; when that does not reproduce ``text`` (the detokeniser joined a word with its neighbours
    differently), the text is shown whole with the marks after it."""
    marker = "qxunkqx"
    while any(marker in w.lower() for w in words):
        marker += "q"
    at = dict(enumerate(sorted(swaps)))  # stand-in number → position in words
    pos = {i: k for k, i in at.items()}
    layout = detok([f"{marker}{pos[i]}z" if i in pos else w for i, w in enumerate(words)])  # z: ends the number
    pieces = re.split(f"({marker}[0-9]+z)", layout, flags=re.IGNORECASE)
    plain: list[str] = []  # the text the pieces make, to check against ``text``
    out: list[str] = []
    for n, piece in enumerate(pieces):
        if n % 2 == 0:
            plain.append(piece)
            out.append(md(piece))
            continue
        swap = swaps[at[int(piece[len(marker):-1])]]
        word = swap.word[:1].upper() + swap.word[1:] if piece[:1].isupper() else swap.word  # detruecased
        plain.append(word)
        out.append(mark_markdown(swap._replace(word=word)))
    if "".join(plain) == text:
        return "".join(out)
    marks = "; ".join(md(mark_text(r)) for _, r in sorted(swaps.items()))
    return f"{md(text)} :{MARK_COLOUR}[({marks})]"  # the marks after the whole text


def shown(trace: DecodeTrace, detok: Detokenize, hold: Collection[int] = ()) -> Shown:
    """What to show for ``trace``'s translation: each ``<unk>`` the model chose replaced and marked
    (:func:`replacements`); with nothing to replace, exactly the raw translation (``md`` escaped)."""
    raw = trace.output_words()  # the words before </s>, one per step in order
    found = replacements(trace, hold)
    swaps = {s.i: found[s.i] for s in trace.steps[: len(raw)] if s.i in found}
    if not swaps:
        return Shown(trace.translation, md(trace.translation))
    text = detok(trace.output_words(swaps))
    by_word = {n: swaps[s.i] for n, s in enumerate(trace.steps[: len(raw)]) if s.i in swaps}
    return Shown(text, _marked(raw, by_word, detok, text), md(NOTE), swaps)


def nbest_trace(trace: DecodeTrace, rank: int) -> DecodeTrace:
    """The n-best hypothesis ``rank`` (1-based) of a beam trace as a trace of its own: its words and α
    rows, the sentence's dictionary (for :func:`shown`; nothing else is filled)."""
    e: NBestEntry = trace.nbest[rank - 1]
    steps = [StepRecord(i=i, token=t, token_id=-1, logprob=0.0, forced=False, energies=None,
                        alpha=None if e.alpha is None else e.alpha[i], topk=[], state_norm=0.0, context_norm=0.0)
             for i, t in enumerate(e.tokens)]
    return DecodeTrace(trace.source, trace.src_tokens, trace.src_unk, trace.method, trace.context, steps,
                       translation=e.translation, dictionary=trace.dictionary)


def step_lines(trace: DecodeTrace) -> list[str]:
    """One Markdown line per replaced ``<unk>``: ``Step 4: <unk> → lettre (from the dictionary: 'letter')``."""
    return [f"Step {i}: {md('<unk>')} → {mark_markdown(r)}" for i, r in sorted(replacements(trace).items())]
