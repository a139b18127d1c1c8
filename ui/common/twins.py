"""Models of two pairs side by side: each labelled with the data and vocabulary it learnt from.

Issue 34 item 4: a pair shipped without an RNNencdec twin of its own (the everyday model), frozen, shows its
own weights with c_i frozen (an untrained ablation) and, beside it, the trained RNNencdec of another pair
named in :data:`STAND_IN_TWINS`, each labelled (:func:`labelled`) so that neither passes for the pair's own
twin; and the credit a pair's training data asks for wherever the model ships (:func:`credit`).
"""

from __future__ import annotations

import dataclasses
from collections.abc import Sequence
from pathlib import Path

from ui.common.models import (
    CORPUS_NAMES,
    TYPED_GROUP,
    CheckpointInfo,
    Choice,
    ModelGroup,
    data_name,
    read_meta,
    resolve,
)

STAND_IN_TWINS = {TYPED_GROUP: "europarl-en-fr-50"}


def pedigree(ckpt: CheckpointInfo) -> str:
    """The data and vocabulary a checkpoint learnt from, in words: e.g. "Europarl + Tatoeba, 30k-word
    vocabularies" ("" when its metadata does not say)."""
    meta = read_meta(str(ckpt.path), ckpt.mtime)
    td, config = meta.get("train_data"), meta.get("config", {})
    folder = Path(str(td.get("dir", ""))).name if isinstance(td, dict) else ""
    corpus = CORPUS_NAMES.get(folder, folder)
    sizes = [config.get(k) for k in ("src_vocab_size", "tgt_vocab_size")]
    if not all(isinstance(n, int) and n > 0 for n in sizes):
        return corpus
    words = [f"{n / 1000:.0f}k" if n >= 10000 else f"{n / 1000:.1f}k" for n in sizes]
    vocab = f"{words[0]}-word vocabularies" if words[0] == words[1] else f"{words[0]} / {words[1]}-word vocabularies"
    return f"{corpus}, {vocab}" if corpus else vocab


def labelled(choice: Choice) -> Choice:
    """``choice`` with its data and vocabulary in its label and note, where two pairs' models meet: e.g.
    "RNNsearch (Europarl + Tatoeba, 30k-word vocabularies): a fresh context c_i for every target word"."""
    where = pedigree(choice.ckpt)
    d = choice.description
    if not where:
        return choice
    if choice.kind == "ablation":
        label = f"The same RNNsearch weights ({where}) with c_i frozen to the summary c: an untrained ablation"
    else:
        head, _, rest = d.label.partition(": ")
        label = f"{head} ({where}): {rest}" if rest else f"{d.label} ({where})"
    return dataclasses.replace(choice, description=dataclasses.replace(d, label=label, note=f"{d.note}; {where}"))


def stand_in(group: ModelGroup, groups: Sequence[ModelGroup]) -> Choice | None:
    """The trained RNNencdec shown beside a twinless group's frozen ablation (:data:`STAND_IN_TWINS`),
    labelled as another pair's twin with its data and vocabulary; None when the group has its own twin,
    names none, or the named pair is not in the folder."""
    name = STAND_IN_TWINS.get(group.name)
    other = next((g for g in groups if g.name == name and g.encdec is not None), None)
    if group.encdec is not None or other is None:
        return None
    own = labelled(resolve(other, True, False))
    d = own.description
    label = f"{d.label}; the {other.name} pair's twin, not this pair's"
    return dataclasses.replace(own, notice=None, description=dataclasses.replace(d, label=label))


TATOEBA_CREDIT = ("Its everyday sentences are Tatoeba's (tatoeba.org, CC-BY 2.0 FR), "
                  "via www.manythings.org/anki.")


def credit(group: ModelGroup) -> str | None:
    """The credit a pair's training data asks for wherever the model ships (Tatoeba's CC-BY), else None."""
    return TATOEBA_CREDIT if any("Tatoeba" in data_name(read_meta(str(c.path), c.mtime))
                                 for c in group.members) else None


def columns(group: ModelGroup, ablation: bool, groups: Sequence[ModelGroup] = ()) -> list[Choice]:
    """The bottleneck page's columns: RNNsearch, RNNencdec and (if asked) the frozen ablation,
    as far as the group has them, each resolved by :func:`resolve`; for a group without an RNNencdec
    of its own, its frozen ablation and the stand-in twin from ``groups`` (:func:`stand_in`)."""
    wanted = [(False, False), (True, False)] + ([(True, True)] if ablation else [])
    out: list[Choice] = []
    for freeze, abl in wanted:
        c = resolve(group, freeze, abl)
        if all((c.ckpt.path, c.context) != (o.ckpt.path, o.context) for o in out):
            out.append(dataclasses.replace(c, notice=None))
    twin = stand_in(group, groups)
    if twin is None:
        return out
    return [labelled(c) for c in out] + [twin]
