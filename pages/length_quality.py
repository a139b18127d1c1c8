"""Length vs quality: does BLEU collapse as sentences get longer? (Bahdanau et al. 2015, Fig. 2)

Reads the committed results files (``checkpoints/*.results.json``): BLEU per source-length bucket
of each model with bucket sizes and confidence intervals, the Table 1 reproduction beside the
paper's numbers, and validation-BLEU training curves. "Recompute" re-scores a chosen checkpoint on
a held-out split of the configured data folders (a button press, with a progress bar; results are
shared by every session of the server).
"""

from __future__ import annotations

from typing import Any

import pandas as pd
import streamlit as st

from nmt.corpora import Split, by_label
from nmt.data import read_parallel
from nmt.experiment import score_test_set
from ui import models, shell
from ui import widgets as W
from ui.views.common import md
from ui.views.length import curve_figure, curve_rows, length_figure, length_rows, load_results, table1_frame

qp = st.query_params
LIMITS = (0, 500, 1000, 3003)  # sentences scored by Recompute (0 = the whole split)


@st.cache_resource(show_spinner=False)
def _shared_scores() -> dict[tuple[Any, ...], dict[str, Any]]:
    """Recomputed scores shared by every session of this server (one dict per process)."""
    return {}


def recompute(ck: models.CheckpointInfo, split: Split, limit: int, beam: int, bar: Any) -> dict[str, Any]:
    """Scores of one checkpoint on one split, computed once per server and settings (progress on ``bar``)."""
    key = (str(ck.path), ck.mtime, str(split.directory), split.name, limit, beam)
    cache = _shared_scores()  # dict reads and writes are atomic; a race only computes twice
    if key in cache:
        return cache[key]
    lm = models.load(ck)
    src, ref = read_parallel(split.directory, split.name, lm.src_tok.lang, lm.tgt_tok.lang, limit or None)
    res = score_test_set(lm, src, ref, beam=beam, n_bootstrap=200,
                         progress=lambda f: bar.progress(f, text=f"Translating {split.label}… {f:.0%}"))
    cache[key] = res
    return res


def test_sets(lm_langs: tuple[str, str]) -> list[Split]:
    """Held-out splits (not training data, not pre-tokenised gold sets) in the configured data folders."""
    return [s for s in W.corpus_splits(*lm_langs) if not s.gold and not s.name.startswith("train")]


def main() -> None:
    st.title("Length vs quality")
    st.caption("The paper's central claim: as source sentences get longer, the fixed-vector RNNencdec's "
               "BLEU collapses while RNNsearch, which reads a fresh context c_i for every word, holds up.")
    files = sorted(models.checkpoint_dir().glob("*.results.json"))
    all_results = load_results(files)
    if not all_results:
        st.info("No results files yet: ship a model with `python -m nmt.export` or run `python -m nmt.experiment` "
                "(see README), then reload.")
    names = list(all_results)
    recomputed: dict[str, Any] = st.session_state.setdefault("recomputed", {})

    if names:
        chosen = qp.get("results", names[0])
        chosen = chosen if chosen in names else names[0]
        name = st.selectbox("Results file", names, index=names.index(chosen), key="lq_results")
        qp["results"] = name
        results = all_results[name]
        if "error" in results:
            st.error(f"Could not read {md(results['error'])}")
            return
        rows = length_rows(results)
        if rows.empty:
            st.warning("This results file has no per-length scores.")
        else:
            tests = sorted(rows["test"].unique())
            t_sel = qp.get("test", tests[0])
            test = st.selectbox("Test set", tests, index=tests.index(t_sel) if t_sel in tests else 0, key="lq_test")
            decs = sorted(rows[rows["test"] == test]["decoding"].unique())
            d_sel = qp.get("decoding", decs[-1])
            dec = st.radio("Decoding", decs, index=decs.index(d_sel) if d_sel in decs else len(decs) - 1,
                           horizontal=True, key="lq_dec")
            qp["test"], qp["decoding"] = test, dec
            view = rows[(rows["test"] == test) & (rows["decoding"] == dec)]
            extra = [r["rows"] for r in recomputed.values() if r["test"] == test and not r["rows"].empty]
            if extra:
                view = pd.concat([view, *extra], ignore_index=True)
            fig = length_figure(view, f"BLEU by source length · {test} · {dec}")
            st.plotly_chart(fig, use_container_width=True, key="lq_length_fig")
            c1, c2 = st.columns(2)
            c1.download_button("Download data (CSV)", view.to_csv(index=False), f"length-{test.replace('/', '_')}.csv",
                               "text/csv", key="dl_lq_csv")
            c2.download_button("Download figure (HTML)", fig.to_html(include_plotlyjs="cdn"),
                               f"length-{test.replace('/', '_')}.html", "text/html", key="dl_lq_html")
            with st.expander("Bucket table"):
                st.dataframe(view, hide_index=True, use_container_width=True)
            table = table1_frame(results, test)
            if not table.empty:
                st.subheader("Table 1 reproduction")
                st.caption("BLEU on all sentences and on sentences with no word outside the shortlists "
                           "(source or reference). Paper numbers: Bahdanau et al. 2015, Table 1 (newstest2014).")
                st.dataframe(table, hide_index=True, use_container_width=True)
        curves = curve_rows(results)
        if not curves.empty:
            st.subheader("Training curves")
            st.plotly_chart(curve_figure(curves), use_container_width=True, key="lq_curve_fig")

    st.subheader("Recompute")
    ckpts = [c for g in models.scan(models.checkpoint_dir()) for c in g.members]
    if not ckpts:
        st.info("No checkpoints found to score.")
        return
    c1, c2, c3, c4 = st.columns([3, 3, 1, 1])
    ck = c1.selectbox("Checkpoint", ckpts, format_func=lambda c: c.name, key="lq_ckpt")
    lm = W.load_lm(ck)
    if lm is None:
        return
    sets = test_sets((lm.src_tok.lang, lm.tgt_tok.lang))
    if not sets:
        st.info("No held-out test sets were found. " + W.roots_note())
        return
    label = c2.selectbox("Test set", [s.label for s in sets], key="lq_rtest")
    split = by_label(sets, label) or sets[0]
    limit = c3.selectbox("Sentences", LIMITS, index=1, format_func=lambda n: "all" if n == 0 else f"first {n}",
                         key="lq_limit")
    beam = c4.selectbox("Beam", (1, 5, 12), key="lq_beam")
    if st.button("Recompute", type="primary", key="lq_go"):
        bar = st.progress(0.0, text="Loading…")
        try:
            res = recompute(ck, split, int(limit), int(beam), bar)
        except (OSError, ValueError) as e:
            bar.empty()
            st.error(f"Could not score {md(ck.name)} on {md(split.label)}: {md(str(e))}")
            return
        bar.progress(1.0, text="Done")
        tests = set(length_rows(all_results[name])["test"]) if names else set()
        test = split.name if split.name in tests else split.label  # the name the results files use
        label = f"{ck.path.stem} (recomputed)"
        rows = length_rows({"models": {label: {"tests": {test: res}}}})
        recomputed[f"{ck.path}|{split.label}|{limit}|{beam}"] = {"test": test, "rows": rows}
        no_unk = res["no_unk"]
        no_unk_text = (f"no UNK {no_unk['score']:.2f} over {res['no_unk_sentences']} sentences" if no_unk
                       else "no sentence is free of unknown words")
        st.success(f"{md(ck.name)} on {md(split.label)}: BLEU {res['all']['score']:.2f} ± "
                   f"{res['all'].get('ci95', 0):.2f} ({no_unk_text}). "
                   "Pick this test set above to see its curve beside the others.")
        st.plotly_chart(length_figure(rows, f"{ck.name} · {split.label}"), use_container_width=True,
                        key="lq_recomputed")


with shell.page("Length vs quality"):
    main()
