"""Length vs quality: does BLEU collapse as sentences get longer? (Bahdanau et al. 2015, Fig. 2)

Reads the committed results files (``checkpoints/*.results.json``): BLEU per source-length bucket
of each model with bucket sizes and confidence intervals, the Table 1 reproduction beside the
paper's numbers where the results have it, and validation-BLEU training curves. "Recompute"
re-scores a chosen checkpoint on a held-out split of the configured data folders (a button press,
with a progress bar; results are shared by every session of the server) and adds its curve to the
top chart and its row to Table 1.

Every control is bound to a URL query parameter (``lq_*``; ``lq_app_rules``: an imported model is scored by this
app's search rules instead of its toolkit's); the button is not.
"""

from __future__ import annotations

from ui.common import shell

shell.framed()  # a page Streamlit started on its own (a fresh server's first request) runs in the frame

from typing import Any

import pandas as pd
import streamlit as st

from nmt.text.corpora import Split, by_label
from nmt.text.data import read_parallel
from nmt.tools.experiment import score_test_set
from ui.common import heavy, models, search_rules, user_models
from ui.common import widgets as W
from ui.figures.common import csv_text, md
from ui.figures.length import (
    curve_figure,
    curve_rows,
    empty_bucket_note,
    length_figure,
    length_rows,
    load_results,
    opening_results,
    opening_test,
    results_test_name,
    table1_frame,
    table1_note,
)

BIND = W.BIND
LIMITS = (0, 500, 1000, 3003)  # sentences scored by Recompute (0 = the whole split)
PREFERRED = ("multi30k/test_2016_flickr", "europarl-v7-fr-en/test2000q4")
APP_RULES = "this app's search rules"  # an imported model's recomputed line when the switch chose this app's rules
ss = st.session_state


def recompute(ck: models.CheckpointInfo, split: Split, limit: int, beam: int, bar: Any,
              toolkit_rules: bool = True) -> dict[str, Any]:
    """Scores of one checkpoint on one split, computed once per server and settings (progress on ``bar``):
    one run at a time (a second visitor waits for its result), in one of the server's heavy-job slots. An imported
    model decodes by its toolkit's search rules unless ``toolkit_rules`` is False."""
    key = (str(ck.path), ck.mtime, str(split.directory), split.name, limit, beam, toolkit_rules)

    def compute() -> dict[str, Any]:
        lm = models.load(ck)
        src, ref = read_parallel(split.directory, split.name, lm.src_tok.lang, lm.tgt_tok.lang, limit or None)
        return score_test_set(lm, src, ref, beam=beam, n_bootstrap=200, toolkit_rules=toolkit_rules,
                              progress=lambda f: bar.progress(f, text=f"Translating {split.label}… {f:.0%}"))

    return heavy.memo(W.shared_store("recomputed_scores"), heavy.FLIGHT, key,
                      lambda: W.in_slot(lambda text: bar.progress(0.0, text=text), compute),
                      lambda: bar.progress(0.0, text=f"Translating {split.label}: {W.WAITING}"))


def test_sets(lm_langs: tuple[str, str]) -> list[Split]:
    """Held-out splits (not training data, not pre-tokenised gold sets) in the configured data folders."""
    return [s for s in W.corpus_splits(*lm_langs) if not s.gold and not s.name.startswith("train")]


def results_section(name: str, results: dict[str, Any], recomputed: dict[str, Any]) -> None:
    """BLEU by length (with this session's recomputed curves), Table 1 and the training curves."""
    if "error" in results:
        st.error(f"Could not read {md(results['error'])}")
        return
    rows = pd.concat([length_rows(results), *(r["rows"] for r in recomputed.values())], ignore_index=True)
    if rows.empty:
        st.warning("This results file has no per-length scores.")
    else:
        tests = sorted(rows["test"].unique())
        test = st.selectbox("Test set", tests, index=opening_test(tests), key="lq_test", bind=BIND)
        test = test if test in tests else tests[0]
        decs = sorted(rows[rows["test"] == test]["decoding"].unique())
        dec = st.radio("Decoding", decs, index=len(decs) - 1, horizontal=True, key="lq_dec", bind=BIND)
        dec = dec if dec in decs else decs[-1]
        view = rows[(rows["test"] == test) & (rows["decoding"] == dec)]
        fig = length_figure(view, f"BLEU by source length · {test} · {dec}")
        st.plotly_chart(fig, width="stretch", key="lq_length_fig", theme=None)  # keep its 14-px text
        if note := empty_bucket_note(view):
            st.caption(md(note))
        if view["model"].str.endswith("(recomputed)").any():
            st.caption("Lines marked “recomputed” were scored on this server with Recompute below.")
        c1, c2 = st.columns(2)
        stem = f"length-{test.replace('/', '_')}"
        c1.download_button("Download data (CSV)", csv_text(view), f"{stem}.csv", "text/csv",
                           key="dl_lq_csv", on_click="ignore")
        c2.download_button("Download figure (HTML)", fig.to_html(include_plotlyjs="cdn"), f"{stem}.html",
                           "text/html", key="dl_lq_html", on_click="ignore")
        with st.expander("Bucket table"):
            st.dataframe(view, hide_index=True, width="stretch")
        table1(name, results, test, [r for r in recomputed.values() if r["test"] == test])
    curves = curve_rows(results)
    if not curves.empty:
        st.subheader("Training curves")
        st.plotly_chart(curve_figure(curves), width="stretch", key="lq_curve_fig", theme=None)


def table1(name: str, results: dict[str, Any], test: str, extra: list[dict[str, Any]]) -> None:
    """Table 1 on ``test`` from the results file and from this session's recomputed scores, with its source."""
    st.subheader("Table 1 reproduction")
    own = table1_frame(results, test, origin=name)
    if name:
        st.caption(md(table1_note(own, name)))
    table = pd.concat([own, *(r["table1"] for r in extra)], ignore_index=True) if extra else own
    if table.empty:
        return
    num = st.column_config.NumberColumn
    st.dataframe(table, hide_index=True, width="stretch", column_config={
        **{c: num(format="%.2f") for c in table.columns if "BLEU" in c or "CI" in c or "paper" in c},
        "BLEU (no UNK)": num(format="%.2f", help="empty: not in this results file, or no sentence without UNK")})


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
    ck_name = c1.selectbox("Checkpoint", ck_names, index=start, key="lq_ckpt", bind=BIND,
                           format_func=user_models.labeller(groups))
    ck = ckpts.get(ck_name or "", next(iter(ckpts.values())))
    search_rules.toggle(ck, "lq_app_rules", c1)  # an imported model: scored by its toolkit's rules, or this app's
    toolkit = search_rules.toolkit_rules(ck)
    lm = W.load_lm(ck)
    if lm is None:
        return
    sets = test_sets((lm.src_tok.lang, lm.tgt_tok.lang))
    if not sets:
        st.info("No held-out test sets were found. " + W.roots_note())
        return
    labels = [s.label for s in sets]
    prefer = models.same_corpus_first(models.read_meta(str(ck.path), ck.mtime), PREFERRED)
    label = c2.selectbox("Test set", labels, index=next((labels.index(p) for p in prefer if p in labels), 0),
                         key="lq_rtest", bind=BIND)
    split = by_label(sets, label or "") or sets[0]
    limit = c3.selectbox("Sentences", LIMITS, index=1, format_func=lambda n: "all" if n == 0 else f"first {n}",
                         key="lq_limit", bind=BIND)
    beam = c4.selectbox("Beam", (1, 5, 12), key="lq_beam", bind=BIND)
    if not st.button("Recompute", type="primary", key="lq_go", icon=":material/play_arrow:"):
        return
    bar = st.progress(0.0, text="Loading…")
    try:
        res = recompute(ck, split, int(limit or 0), int(beam or 1), bar, toolkit)
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
    ss["lq_test"], ss["lq_dec"] = test, rows["decoding"].iloc[0] if len(rows) else None  # show it at the top
    no_unk = res["no_unk"]
    no_unk_text = (f"no UNK {no_unk['score']:.2f} over {res['no_unk_sentences']} sentences" if no_unk
                   else "no sentence is free of unknown words, so there is no no-UNK score")
    rules = "" if toolkit else f" ({APP_RULES})"
    st.success(f"{md(ck.name)}{rules} on {md(split.label)}: BLEU {res['all']['score']:.2f} ± "
               f"{res['all'].get('ci95', 0):.2f} ({no_unk_text}). Its curve and its Table 1 row are above, "
               f"under the test set {md(test)}.")


def main() -> None:
    st.title("Length vs quality")
    st.caption("The paper's central claim: as source sentences get longer, the fixed-vector RNNencdec's "
               "BLEU collapses while RNNsearch, which reads a fresh context c_i for every word, holds up.")
    all_results = load_results(sorted(models.checkpoint_dir().glob("*.results.json")))
    names = list(all_results)
    recomputed: dict[str, Any] = ss.setdefault("recomputed", {})
    top = st.container()  # drawn after Recompute, so a curve recomputed now shows at once
    recompute_section(names, all_results, recomputed)
    with top:
        if not names:
            st.info("No results files yet: ship a model with `python -m nmt export` or run `python -m nmt experiment` "
                    "(see README), then reload.")
        name = (st.selectbox("Results file", names, index=opening_results(all_results), key="lq_results", bind=BIND)
                if names else None)
        name = name if name in names else (names[0] if names else "")
        if names or recomputed:
            results_section(name, all_results.get(name, {}), recomputed)


main()
