"""Length vs quality: does BLEU collapse as sentences get longer? (Bahdanau et al. 2015, Fig. 2)

Reads the committed results files (``checkpoints/*.results.json``): BLEU per source-length bucket
of each model with bucket sizes and confidence intervals, the Table 1 reproduction beside the
paper's numbers, and validation-BLEU training curves. "Recompute" re-scores a chosen checkpoint on
a chosen test set from the data directory (with a progress bar; results are cached).
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

import pandas as pd
import streamlit as st

from nmt.data import read_parallel
from nmt.experiment import score_test_set
from ui import models, nav
from ui.experiment import curve_figure, curve_rows, length_figure, length_rows, load_results, table1_frame

qp = st.query_params


@st.cache_data(show_spinner=False, max_entries=32)
def recompute(ckpt_path: str, mtime: float, data_dir: str, test: str, limit: int, beam: int,
              _progress: Any = None) -> dict[str, Any]:
    """Scores of one checkpoint on one test set (cached per checkpoint version and settings)."""
    lm = models.load_model(ckpt_path, mtime)
    sub, _, split = test.rpartition("/")
    src, ref = read_parallel(Path(data_dir) / sub, split, lm.src_tok.lang, lm.tgt_tok.lang, limit or None)
    cb = None if _progress is None else (lambda f: _progress.progress(f, text=f"Translating {test}… {f:.0%}"))
    return score_test_set(lm, src, ref, beam=beam, n_bootstrap=200, progress=cb)


def test_sets(data_dir: Path) -> list[str]:
    """``SUBDIR/SPLIT`` names of English–French test sets found under the data directory."""
    found = []
    for en in sorted(data_dir.glob("*/*.en*")):
        split = en.name.split(".en")[0]
        if split == "train" or not list(en.parent.glob(f"{split}.fr*")):
            continue
        found.append(f"{en.parent.name}/{split}")
    return sorted(set(found))


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
            st.error(f"Could not read {results['error']}")
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
    data_dir = Path(st.text_input("Data directory", os.environ.get("RNNSEARCH_DATA", "data"), key="lq_data"))
    ckpts = [c for g in models.scan(models.checkpoint_dir()) for c in g.members]
    sets = test_sets(data_dir) if data_dir.is_dir() else []
    if not ckpts:
        st.info("No checkpoints found to score.")
        return
    if not sets:
        st.info(f"No test sets found under `{data_dir}` (expected SUBDIR/SPLIT.en[.gz] with SPLIT.fr[.gz]).")
        return
    c1, c2, c3, c4 = st.columns([3, 3, 1, 1])
    ck = c1.selectbox("Checkpoint", ckpts, format_func=lambda c: c.name, key="lq_ckpt")
    test = c2.selectbox("Test set", sets, key="lq_rtest")
    limit = c3.number_input("First N (0 = all)", 0, 100000, 500, step=100, key="lq_limit")
    beam = c4.number_input("Beam", 1, 20, 1, key="lq_beam")
    if st.button("Recompute", type="primary", key="lq_go"):
        bar = st.progress(0.0, text="Loading…")
        try:
            res = recompute(str(ck.path), ck.mtime, str(data_dir), test, int(limit), int(beam), _progress=bar)
        except (OSError, ValueError) as e:
            st.error(f"Could not score {ck.name} on {test}: {e}")
            return
        bar.progress(1.0, text="Done")
        label = f"{ck.path.stem} (recomputed)"
        rows = length_rows({"models": {label: {"tests": {test: res}}}})
        recomputed[f"{ck.path}|{test}|{limit}|{beam}"] = {"test": test, "rows": rows}
        st.success(f"{ck.name} on {test}: BLEU {res['all']['score']:.2f} ± {res['all'].get('ci95', 0):.2f} "
                   f"(no UNK {res['no_unk']['score']:.2f} over {res['no_unk_sentences']} sentences). "
                   "Pick this test set above to see its curve beside the others.")
        st.plotly_chart(length_figure(rows, f"{ck.name} · {test}"), use_container_width=True, key="lq_recomputed")


if nav.inside_app(__file__):
    main()
