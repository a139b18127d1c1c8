"""Is A really better than B? Two models on the same sentences, and whether the difference is chance.

Pick a baseline A and a model B of the same language pair, a held-out split, how many of its sentences
and greedy or beam search; **Run** translates them with both (chunk by chunk, only the translations kept, with a
progress bar and the time left; more than 200 sentences show their estimated time first, and **Stop** ends the run
keeping every finished chunk: :mod:`ui.paired.run`) and runs :func:`nmt.tools.paired.compare` (through
:mod:`ui.paired.jobs`): sacrebleu's paired bootstrap resampling (Koehn 2004) for BLEU and chrF, overall and per
source-length bucket, and the sentences where the two differ most (ΔchrF). Clicking a row of that table shows both
models' α for the sentence side by side (each model's own greedy decoding of it). The comparison downloads as JSON,
the sentence table as CSV.

Every control, the picked sentence included, is bound to a URL query parameter (``pr_*``); a URL never
starts the run, only the button does (a URL asking for more than 200 sentences translates the first 8 lines with
both models, to estimate the run's time). Its panels are in :mod:`ui.paired`, its session state in
:mod:`ui.paired.state`.
"""

from __future__ import annotations

from ui.common import shell

shell.framed()  # a page Streamlit started on its own (a fresh server's first request) runs in the frame

import json

import streamlit as st

from ui.common import models
from ui.common import widgets as W
from ui.figures.common import csv_text, md
from ui.paired import alpha, jobs, state
from ui.paired import words as paired_words
from ui.paired.results_panel import alphas, overall, sentences
from ui.paired.settings_panel import DEFAULT_LIMIT, pick_models, settings
from ui.paired.views import pair_problem


def main() -> None:
    """Build the page."""
    st.title("Is A really better than B?")
    st.caption("Two models translate the same sentences; paired bootstrap resampling (Koehn 2004, sacrebleu) "
               "asks whether B's lead over A could be chance, overall and by sentence length.")
    pair = pick_models()
    if pair is None:
        return
    a, b = pair
    langs = [models.read_meta(str(c.path), c.mtime, ("langs",)).get("langs", "?") for c in pair]
    if problem := pair_problem(langs[0], langs[1], a.path == b.path):
        (st.warning if a.path == b.path else st.error)(md(problem))
        return
    lm = W.load_lm(a)
    if lm is None or W.load_lm(b) is None:
        return
    got = settings(a, lm.src_tok.lang, lm.tgt_tok.lang)
    if got is None:
        return
    split, limit, beam = got
    data = None
    if limit == 0 or limit > DEFAULT_LIMIT:  # a long run: its estimated time before it starts
        if (data := jobs.pairs(split, limit, lm)) is None:
            return
        jobs.estimate([jobs.job(a, beam), jobs.job(b, beam)], data[1])
    token = "|".join(map(str, (a.path, a.mtime, b.path, b.mtime, split.label, limit, beam)))
    if not W.run_button("Run the comparison", "pr_go", token, on_click=state.clear_stop,
                        help="Translates the sentences with both models (cached for every visitor) and runs "
                             f"sacrebleu's paired bootstrap with {jobs.resamples():,} resamples."):
        st.info("Press **Run the comparison**: both models translate the chosen sentences, then the paired test runs.")
        return
    if data is None and (data := jobs.pairs(split, limit, lm)) is None:
        return
    res = jobs.run(a, b, split, limit, beam, lm, data, token)
    if res is None:
        return
    labels = {a.path.stem: f"A ({a.path.stem})", b.path.stem: f"B ({b.path.stem})"}
    overall(res, labels)
    df = sentences(res)
    stem = W.safe_stem(f"{a.path.stem}-vs-{b.path.stem}")
    W.downloads([W.Download("Comparison JSON", lambda: json.dumps(res, ensure_ascii=False, indent=1),
                            f"paired-{stem}.json", "application/json"),
                 W.Download("Sentence table CSV", csv_text(df), f"paired-{stem}.csv", "text/csv")], key="pr_dl")
    paired_words.section(res, stem)
    alphas(res, a, b, labels, df)
    alpha.test_set(a, b, res["sources"], res["references"])


main()
