"""The paired page's pickers: models A (the baseline) and B side by side, then the test set (a built-in one of
A's corpus by default, followed while untouched), how many of its sentences and the decoding; all bound to the URL.
"""

from __future__ import annotations

import streamlit as st

from nmt.text.corpora import Split
from ui.common import models, search_rules, user_models
from ui.common import widgets as W
from ui.figures.common import md
from ui.paired import state

LIMITS = (40, 100, 200, 500, 1000, 0)  # sentences compared (0: the whole split)
DEFAULT_LIMIT = 200
DECODINGS = ("greedy", "beam 5")


def limit_label(n: int) -> str:
    """The Sentences picker's words for ``n`` (0: the whole split), also its value in the URL."""
    return "all" if n == 0 else f"first {n}"


def plain_limit_in_url() -> None:
    """A link written by hand with a plain number (``pr_limit=100``, ``0`` for all) opens that many sentences,
    as the picker's own words in the URL (``first 100``) do; other values are left to the picker."""
    raw = st.query_params.get("pr_limit", "").strip()
    if raw.isdigit() and int(raw) in LIMITS:
        state.seed_limit(int(raw))
# (A, B) by file stem, first found: the paper's Table 1 pair, then the Multi30k pair
DEFAULT_PAIRS = (("europarl-en-fr-rnnencdec-50", "europarl-en-fr-rnnsearch-50"),
                 ("m30k-en-fr-rnnencdec", "m30k-en-fr-rnnsearch"))
PREFER_NEWS = ("wmt/newstest2014-fren", "europarl-v7-fr-en/test2000q4", "multi30k/test_2016_flickr")
PREFER_M30K = ("multi30k/test_2016_flickr", "wmt/newstest2014-fren")


def default_pair(names: list[str], groups: list[models.ModelGroup]) -> tuple[int, int]:
    """Positions of the default A and B in ``names`` (file names): the first pair of :data:`DEFAULT_PAIRS`
    found, else the first group's RNNencdec and RNNsearch, else the first two files (the first alone twice
    when there is one)."""
    pairs = [(f"{a}.pt", f"{b}.pt") for a, b in DEFAULT_PAIRS]
    pairs += [(g.encdec.name, g.search.name) for g in groups if g.encdec is not None and g.search is not None]
    for a, b in pairs:
        if a in names and b in names:
            return names.index(a), names.index(b)
    return 0, min(1, len(names) - 1)


def pick_models() -> tuple[models.CheckpointInfo, models.CheckpointInfo] | None:
    """The two checkpoint pickers (A, the baseline, and B), side by side and bound to the URL."""
    ckpts = {c.name: c for c in W.all_checkpoints()}
    if not ckpts:
        W.no_checkpoints()
        return None
    names = list(ckpts)
    groups = user_models.all_groups()
    ia, ib = default_pair(names, groups)
    c1, c2 = st.columns(2)
    chosen = []
    for col, key, label, index, what in ((c1, "pr_a", "Model A (the baseline)", ia, "the baseline"),
                                         (c2, "pr_b", "Model B", ib, "compared with A")):
        name = col.selectbox(label, names, index=index, key=key, bind=W.BIND,
                             format_func=user_models.labeller(groups),
                             help=f"A checkpoint of the checkpoint folder, then “{user_models.LABEL}”: {what}.")
        chosen.append(ckpts.get(name or names[index], ckpts[names[index]]))
        if chosen[-1].yours:  # a model of your folder: where it came from, as the other pickers say
            col.caption(md(models.origin(chosen[-1])))
        search_rules.toggle(chosen[-1], f"{key}_app_rules", col)  # an imported model: its toolkit's rules
        col.caption(md(models.describe(chosen[-1])["model"]))
    W.left_out_note(st)
    return chosen[0], chosen[1]


def held_out(src: str, tgt: str) -> list[Split]:
    """The splits one may test on: not training data, not the pre-tokenised gold alignment sets."""
    return [s for s in W.corpus_splits(src, tgt) if not s.gold and not s.name.startswith("train")]


def settings(a: models.CheckpointInfo, src: str, tgt: str) -> tuple[Split, int, int] | None:
    """The split (default: a built-in test set of A's corpus, followed while untouched), the sentence limit
    and the beam size."""
    splits = held_out(src, tgt)
    if not splits:
        st.info(f"No held-out {src}–{tgt} test set was found. " + W.roots_note())
        return None
    meta = models.read_meta(str(a.path), a.mtime)
    prefer = PREFER_M30K if models.data_name(meta).startswith("Multi30k") else PREFER_NEWS
    labels = [s.label for s in splits]
    default = next((x for x in prefer if x in labels), labels[0])
    state.follow_default_split(default)  # an untouched test set follows the models (Europarl's or Multi30k's)
    c1, c2, c3 = st.columns([3, 1.3, 1.5])
    split = W.split_picker(splits, "pr_split", label="Test set", prefer=prefer, container=c1)
    plain_limit_in_url()
    limit = c2.selectbox("Sentences", LIMITS, index=LIMITS.index(DEFAULT_LIMIT), key="pr_limit", bind=W.BIND,
                         format_func=limit_label,
                         help="How many sentence pairs of the test set, from its top, both models translate.")
    dec = c3.radio("Decoding", DECODINGS, horizontal=True, key="pr_dec", bind=W.BIND,
                   help="Both models decode the same way: greedy, or beam search with k = 5.")
    return split, int(limit or 0), 5 if dec == "beam 5" else 1
