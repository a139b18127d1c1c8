"""Length vs quality's Recompute: a checkpoint (an imported one by its toolkit's search rules, or this app's),
a held-out split, how many sentences and the beam; on the button, its scores (shared by every session) join this
session's curves and Table 1 rows, and the top chart turns to them.
"""

from __future__ import annotations

from typing import Any

import streamlit as st

from ui.common import models, search_rules, user_models
from ui.common import widgets as W
from ui.figures.common import md
from ui.figures.length import length_rows, results_test_name, table1_frame
from ui.length import jobs, state

LIMITS = (0, 500, 1000, 3003)  # sentences scored by Recompute (0 = the whole split)
PREFERRED = ("multi30k/test_2016_flickr", "europarl-v7-fr-en/test2000q4")
APP_RULES = "this app's search rules"  # an imported model's recomputed line when the switch chose this app's rules


def recompute_section(names: list[str], all_results: dict[str, Any], recomputed: dict[str, Any]) -> None:
    """Score a checkpoint on a held-out split (a button press; shared by every session)."""
    st.subheader("Recompute")
    groups = user_models.all_groups()
    ckpts = {c.name: c for g in groups for c in g.members}
    if not ckpts:
        st.info("No checkpoints found to score.")
        return
    c1, c2, c3, c4 = st.columns([3, 3, 2, 1])
    first = models.default_group(groups)
    ck_names = list(ckpts)
    start = ck_names.index(first.search.name) if first and first.search and first.search.name in ck_names else 0
    ck_name = c1.selectbox("Checkpoint", ck_names, index=start, key="lq_ckpt", bind=W.BIND,
                           format_func=user_models.labeller(groups))
    ck = ckpts.get(ck_name or "", next(iter(ckpts.values())))
    search_rules.toggle(ck, "lq_app_rules", c1)  # an imported model: scored by its toolkit's rules, or this app's
    toolkit = search_rules.toolkit_rules(ck)
    lm = W.load_lm(ck)
    if lm is None:
        return
    sets = jobs.test_sets((lm.src_tok.lang, lm.tgt_tok.lang))
    if not sets:
        st.info("No held-out test sets were found. " + W.roots_note())
        return
    labels = [s.label for s in sets]
    prefer = models.same_corpus_first(models.read_meta(str(ck.path), ck.mtime), PREFERRED)
    label = c2.selectbox("Test set", labels, index=next((labels.index(p) for p in prefer if p in labels), 0),
                         key="lq_rtest", bind=W.BIND)
    split = jobs.by_label(sets, label or "") or sets[0]
    limit = c3.selectbox("Sentences", LIMITS, index=1, format_func=lambda n: "all" if n == 0 else f"first {n}",
                         key="lq_limit", bind=W.BIND)
    beam = c4.selectbox("Beam", (1, 5, 12), key="lq_beam", bind=W.BIND)
    if not st.button("Recompute", type="primary", key="lq_go", icon=":material/play_arrow:"):
        return
    bar = st.progress(0.0, text="Loading…")
    try:
        res = jobs.recompute(ck, split, int(limit or 0), int(beam or 1), bar, toolkit)
    except (OSError, ValueError) as e:
        bar.empty()
        st.error(f"Could not score {md(ck.name)} on {md(split.label)}: {md(str(e))}")
        return
    bar.empty()
    tests = {t for n in names for t in length_rows(all_results[n])["test"]}
    test = results_test_name(split.label, split.name, tests)
    model = f"{ck.path.stem}{'' if toolkit else ', ' + APP_RULES} (recomputed)"  # only an imported model switches
    one = {"models": {model: {"tests": {test: res}}}}
    rows = length_rows(one)
    recomputed[f"{ck.name}|{split.label}|{limit}|{beam}|{toolkit}"] = {
        "test": test, "rows": rows, "table1": table1_frame(one, test, origin="recomputed on this server")}
    state.show_at_top(test, rows["decoding"].iloc[0] if len(rows) else None)
    no_unk = res["no_unk"]
    no_unk_text = (f"no UNK {no_unk['score']:.2f} over {res['no_unk_sentences']} sentences" if no_unk
                   else "no sentence is free of unknown words, so there is no no-UNK score")
    rules = "" if toolkit else f" ({APP_RULES})"
    st.success(f"{md(ck.name)}{rules} on {md(split.label)}: BLEU {res['all']['score']:.2f} ± "
               f"{res['all'].get('ci95', 0):.2f} ({no_unk_text}). Its curve and its Table 1 row are above, "
               f"under the test set {md(test)}.")
