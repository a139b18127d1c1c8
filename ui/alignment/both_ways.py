"""The alignment browser's "both ways" part: a model of the opposite direction (fr→en beside en→fr)
force-decodes the source from the reference, and the page scores each direction's argmax links, their
intersection, union, grow-diag and grow-diag-final (:mod:`nmt.explanation.symmetrize`) on the gold set.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Sequence
from typing import Any

import pandas as pd
import streamlit as st

from nmt.explanation.align import Links
from ui.common import models, user_models
from ui.common import widgets as W
from ui.figures.alignment import both_ways_rows, both_ways_sets, both_ways_table
from ui.figures.common import md

NONE = "(none)"
Facts = Callable[[W.Job, list[tuple[str, str]], str, bool], list[dict[str, Any]]]


def reverse_candidates(src: str, tgt: str) -> list[models.CheckpointInfo]:
    """The checkpoints that translate ``tgt``→``src`` and attend (have α), in picker order."""
    ckpts = [c for g in user_models.all_groups() for c in g.members]
    return [c for c in ckpts
            if models.read_meta(str(c.path), c.mtime, ("langs",)).get("langs") == f"{tgt}→{src}"
            and models.description(c).has_alpha]


def section(pairs: Sequence[tuple[str, str]], pretokenized: bool, langs: tuple[str, str], forward: Sequence[Links],
            gold: tuple[Sequence[Links], Sequence[Links]], facts_of: Facts) -> None:
    """Pick a reverse model; show the AER of every link set over the gold set (``forward``: this model's
    argmax links, one set per pair; ``facts_of``: the page's shared forced-decoding facts)."""
    src, tgt = langs
    st.markdown(f"**Alignments both ways** ({src}→{tgt} with a {tgt}→{src} model)")
    found = reverse_candidates(src, tgt)
    if not found:
        st.caption(f"No {tgt}→{src} model with attention is in the checkpoint folder: joining both directions "
                   "(intersection, grow-diag-final) needs one.")
        return
    by_name = {c.name: c for c in found}
    name = st.selectbox(f"Reverse model ({tgt}→{src})", [NONE, *by_name], key="al_reverse", bind=W.BIND,
                        help="Force-decodes the source from the reference; its argmax α links each source word "
                             "to one target word. Joined with this model's links as statistical aligners do "
                             "(Koehn et al. 2003; fast_align's atools).")
    if name not in by_name:
        return
    job = W.job_for(by_name[name], "forced", pretokenized=pretokenized)
    facts = facts_of(job, [(r, s) for s, r in pairs], f"Force-decoding all {len(pairs)} sources ({tgt}→{src})", True)
    sets = both_ways_sets(forward, [f["links"] for f in facts])
    rows = both_ways_rows(sets, gold[0], gold[1])
    num = st.column_config.NumberColumn
    st.dataframe(pd.DataFrame(rows), hide_index=True, column_config={
        "AER": num(format="%.3f", help="lower is better"), "precision": num(format="%.3f", help="|A ∩ P| / |A|"),
        "recall": num(format="%.3f", help="|A ∩ S| / |S|")})
    best = min(rows, key=lambda r: r["AER"])
    st.caption(f"Lowest AER: {md(best['links'])} ({best['AER']:.3f}). Intersection keeps the links both "
               "directions agree on (precise); union keeps either's (recalls more); grow-diag-final starts from "
               "the intersection and adds neighbouring links and links of words still unaligned.")
    W.downloads([W.Download("Both-ways AER JSON", json.dumps({"reverse": name, "rows": rows}, indent=1),
                            "aer-both-ways.json", "application/json"),
                 W.Download("Both-ways links CSV", both_ways_table(sets), "links-both-ways.csv", "text/csv")],
                key="al_dl_both")
