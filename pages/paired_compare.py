"""Is A really better than B? Two models on the same sentences, and whether the difference is chance.

Pick a baseline A and a model B of the same language pair, a held-out split, how many of its sentences
and greedy or beam search; **Run** translates them with both (chunk by chunk, only the translations kept, with a
progress bar and the time left; more than 200 sentences show their estimated time first, and **Stop** ends the run
keeping every finished chunk: :mod:`ui.paired.run`) and runs
:func:`nmt.tools.paired.compare`: sacrebleu's paired bootstrap resampling (Koehn 2004) for BLEU and chrF,
overall and per source-length bucket, and the sentences where the two differ most (ΔchrF). Clicking a
row of that table shows both models' α for the sentence side by side (each model's own greedy decoding
of it). The comparison downloads as JSON, the sentence table as CSV.

Every control, the picked sentence included, is bound to a URL query parameter (``pr_*``); a URL never
starts the run, only the button does (a URL asking for more than 200 sentences translates the first 8 lines with
both models, to estimate the run's time).
"""

from __future__ import annotations

from ui.common import shell

shell.framed()  # a page Streamlit started on its own (a fresh server's first request) runs in the frame

import json
from typing import Any

import pandas as pd
import streamlit as st

from nmt.decoding.search import InputError
from nmt.text.corpora import Split
from nmt.tools.paired import RESAMPLES, compare
from ui.common import heavy, models, search_rules, user_models
from ui.common import widgets as W
from ui.figures.common import csv_text, md, model_heading, readable
from ui.figures.compare import compare_chart
from ui.figures.heatmaps import trace_chart
from ui.figures.unknown import shown
from ui.paired import alpha as paired_alpha
from ui.paired import run as paired_run
from ui.paired import words as paired_words
from ui.paired.views import (
    MIN_SENTENCES,
    estimate_text,
    length_frame,
    overall_frame,
    pair_problem,
    picked_line,
    sentence_frame,
    size_problem,
    stopped_text,
    verdict,
)

BIND = W.BIND
LIMITS = (40, 100, 200, 500, 1000, 0)  # sentences compared (0: the whole split)
DEFAULT_LIMIT = 200
DECODINGS = ("greedy", "beam 5")
# (A, B) by file stem, first found: the paper's Table 1 pair, then the Multi30k pair
DEFAULT_PAIRS = (("europarl-en-fr-rnnencdec-50", "europarl-en-fr-rnnsearch-50"),
                 ("m30k-en-fr-rnnencdec", "m30k-en-fr-rnnsearch"))
PREFER_NEWS = ("wmt/newstest2014-fren", "europarl-v7-fr-en/test2000q4", "multi30k/test_2016_flickr")
PREFER_M30K = ("multi30k/test_2016_flickr", "wmt/newstest2014-fren")
HEATMAP_WIDTH = 260  # px of α cells in a half-width column at 1280×720
FIXED_EXTRA = 90  # px above and below a fixed context's band: its title and the source axis' title
ss = st.session_state


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
        name = col.selectbox(label, names, index=index, key=key, bind=BIND,
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
    if ss.get("pr_split") is not None and ss.get("pr_split") == ss.get("_pr_split_default") != default:
        ss["pr_split"] = default  # an untouched test set follows the models (Europarl's or Multi30k's)
    ss["_pr_split_default"] = default
    c1, c2, c3 = st.columns([3, 1.3, 1.5])
    split = W.split_picker(splits, "pr_split", label="Test set", prefer=prefer, container=c1)
    limit = c2.selectbox("Sentences", LIMITS, index=LIMITS.index(DEFAULT_LIMIT), key="pr_limit", bind=BIND,
                         format_func=lambda n: "all" if n == 0 else f"first {n}",
                         help="How many sentence pairs of the test set, from its top, both models translate.")
    dec = c3.radio("Decoding", DECODINGS, horizontal=True, key="pr_dec", bind=BIND,
                   help="Both models decode the same way: greedy, or beam search with k = 5.")
    return split, int(limit or 0), 5 if dec == "beam 5" else 1


def job(ckpt: models.CheckpointInfo, beam: int) -> W.Job:
    """The decoding job of one model for the comparison (top-1 only: the table needs no alternatives)."""
    return W.job_for(ckpt, "greedy") if beam == 1 else W.job_for(ckpt, "beam", beam=beam)


def pairs(split: Split, limit: int, lm: Any) -> tuple[list[int], list[str], list[str]] | None:
    """The split's first ``limit`` usable pairs as (1-based lines, sources, references); ``None`` after a
    one-line message (unreadable, or too few to test)."""
    try:
        sources, refs = W.read_split(split, lm.src_tok.lang, lm.tgt_tok.lang, limit=limit or W.MAX_READ)
    except (OSError, ValueError) as err:
        st.error(f"Cannot read {md(split.label)}: {md(str(err))}")
        return None
    keep = [(k + 1, s, r) for k, (s, r) in enumerate(zip(sources, refs)) if s.strip() and r.strip()]
    if problem := size_problem(len(keep), split.label):
        st.error(md(problem))
        return None
    return [k for k, _, _ in keep], [s for _, s, _ in keep], [r for _, _, r in keep]


def estimate(jobs: list[W.Job], src: list[str]) -> None:
    """Before a long run (more than :data:`DEFAULT_LIMIT` sentences): its estimated time, from each model timed
    on the split's first lines (once per server; those translations become the run's first chunk)."""
    try:
        costs = [paired_run.measured(j, src) for j in jobs]
    except InputError as err:
        W.input_error(err)
        return
    st.info(md(estimate_text(len(src), paired_run.words(src), costs)), icon=":material/schedule:")


def _stop(token: str) -> None:
    """The Stop button: this run's settings are marked stopped (the rerun it causes ends the running script
    between two chunks, every finished chunk kept)."""
    ss["_pr_stopped"] = token


def run(a: models.CheckpointInfo, b: models.CheckpointInfo, split: Split, limit: int, beam: int, lm: Any,
        data: tuple[list[int], list[str], list[str]], token: str) -> dict[str, Any] | None:
    """Translate the pairs ``data`` with both models and compare them: computed once per server and settings (a
    second visitor gets the stored result). Stopped: the comparison of the sentences both models finished."""
    lines, src, ref = data
    jobs = [job(a, beam), job(b, beam)]

    def compute(hyps: list[list[str]], n: int) -> dict[str, Any]:
        freq, freq_source = paired_words.training_counts(lm)
        res = compare([a.path.stem, b.path.stem], src[:n], ref[:n], [h[:n] for h in hyps],
                      [len(lm.src_tok.tokenize(s)) for s in src[:n]], RESAMPLES, lm.tgt_tok.tokenize, freq, freq_source)
        return res | {"test": split.label, "beam": beam, "lines": lines[:n], "sources": src[:n], "references": ref[:n],
                      "checkpoints": {a.path.stem: a.name, b.path.stem: b.name}}

    key = ("paired-words", str(a.path), a.mtime, str(b.path), b.mtime, str(split.directory), split.name, limit, beam)
    store = W.shared_store("paired")
    try:
        if ss.get("_pr_stopped") == token and key not in store:
            hyps = paired_run.done(jobs, src)
            n = min(len(h) for h in hyps)
            st.info(md(stopped_text(n, len(src))), icon=":material/stop_circle:")
            return None if n < MIN_SENTENCES else heavy.memo(store, heavy.FLIGHT, (*key, "stopped", n),
                                                             lambda: compute(hyps, n))
        box = st.empty()
        if key not in store:  # Stop, shown while the run goes (a click ends it between two chunks)
            box.button("Stop", key="pr_stop", on_click=_stop, args=(token,), icon=":material/stop:",
                       help="Stops the run after the chunk being translated; the sentences done are kept and compared.")
        label = f"Translating {len(src):,} sentences with A and B"
        res = heavy.memo(store, heavy.FLIGHT, key, lambda: compute(paired_run.translate(jobs, src, label), len(src)))
        box.empty()
        return res
    except InputError as err:
        W.input_error(err)
        return None


def overall(res: dict[str, Any], labels: dict[str, str]) -> None:
    """The verdicts, the overall table and the table by source length."""
    a, b = labels[res["baseline"]], labels[res["systems"][0]]
    st.markdown(f"#### {md(verdict(res, a, b, 'BLEU'))}")
    st.markdown(md(verdict(res, a, b, "chrF")))
    num = st.column_config.NumberColumn
    df = overall_frame(res, labels)
    st.dataframe(df, hide_index=True, column_config={c: num(format="%.2f") for c in df.columns
                                                     if c != "model" and "p vs" not in c})
    st.caption(f"{res['sentences']:,} sentences of {md(res['test'])}, "
               f"{'greedy decoding' if res['beam'] == 1 else 'beam search, k = 5'}. Mean and 95% interval: "
               f"sacrebleu's bootstrap over {res['resamples']:,} resampled test sets; p: how often resampling "
               "gives a difference at least as large if the two were equally good (two-sided). "
               f"sacrebleu's smallest p is 1/(resamples + 1).")
    sigs = res["overall"].get("signatures", {})
    st.caption("sacrebleu signatures: " + " · ".join(f"{m} {md(s)}" for m, s in sigs.items()))
    st.subheader("By source length")
    lf = length_frame(res)
    st.dataframe(lf, hide_index=True, column_config={c: num(format="%.2f") for c in lf.columns
                                                     if c.startswith(("BLEU ", "chrF ", "Δ")) and not c.endswith(" p")})
    st.caption(f"Buckets of 10 source words; a bucket of fewer than {res['min_bucket']} sentences is listed "
               "but not tested. One test per bucket: with several buckets, one p under 0.05 can be luck.")


def _on_pick() -> None:
    """A row clicked in the sentence table becomes the sentence shown below (and in the URL)."""
    line = picked_line(ss.get("pr_table"), ss.get("_pr_lines") or [])
    if line is not None:
        ss["pr_row"] = line


def sentences(res: dict[str, Any]) -> pd.DataFrame:
    """The table of the largest |ΔchrF| (a click picks a row) and the line picker bound to the URL."""
    st.subheader("Where they differ most")
    df = sentence_frame(res, res.get("lines"))
    ss["_pr_lines"] = [int(x) for x in df["line"]]
    num = st.column_config.NumberColumn
    st.dataframe(df, hide_index=True, key="pr_table", on_select=_on_pick, selection_mode="single-row",
                 column_config={"line": num(help="line of the test set (1-based)", width="small"),
                                **{c: num(format="%.1f", width="small") for c in ("ΔchrF", "chrF A", "chrF B")},
                                **{c: st.column_config.TextColumn(width="medium")
                                   for c in ("source", "A wrote", "B wrote", "reference")}})
    st.caption("Sentence chrF (sacrebleu) of each translation against the reference, B − A; the "
               f"{len(df)} sentences with the largest difference either way. Click a row to see both models' α.")
    return df


def alphas(res: dict[str, Any], a: models.CheckpointInfo, b: models.CheckpointInfo, labels: dict[str, str],
           df: pd.DataFrame) -> None:
    """Both models' α for the picked sentence, side by side (each model's own greedy decoding of it)."""
    lines = [int(x) for x in df["line"]]
    if ss.get("pr_row") is not None and ss["pr_row"] not in lines:
        ss["pr_row"] = None  # another comparison: a line of the old table means nothing here
    line = st.selectbox("Line of the test set (or click a row above)", lines, index=None, key="pr_row", bind=BIND,
                        placeholder="Click a row of the table")
    if line is None:
        return
    row = df.iloc[lines.index(int(line))]
    try:
        traces = [W.decode(W.job_for(c, "greedy"), [row["source"]])[0] for c in (a, b)]
    except InputError as err:
        W.input_error(err)
        return
    if res["beam"] != 1:
        st.caption("The heatmaps are each model's greedy decoding of the sentence; the table's translations "
                   "are beam search's, so they may differ.")
    for col, role, c, trace in zip(st.columns(2, gap="large"), "ab", (a, b), traces):
        with col:
            st.html(model_heading(labels[c.path.stem], models.description(c).colour))
            text = shown(trace, models.load(c).tgt_tok.detokenize)  # each <unk> as its source word, marked
            st.markdown(text.markdown or "(empty)")
            if text.note:
                st.caption(text.note)
            name = models.description(c).name
            title = f"{name}: α_ij" if trace.has_alignment else f"{name}: one fixed c, no α"
            chart = trace_chart(trace, title=title, max_width=HEATMAP_WIDTH, legend="bottom")
            if chart is not None and trace.has_alignment:  # a local window outlined, as on Compare attention
                W.show_chart(compare_chart(trace, title, max_width=HEATMAP_WIDTH), key=f"pr_chart_{role}")
            elif chart is not None:  # Streamlit's height="content" drew the band squeezed to ~60 % of its height
                st.altair_chart(readable(chart), width="stretch", height=int(chart.height) + FIXED_EXTRA,
                                key=f"pr_chart_{role}")
    paired_alpha.sentence(a, b, row["source"], row["reference"])


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
        if (data := pairs(split, limit, lm)) is None:
            return
        estimate([job(a, beam), job(b, beam)], data[1])
    token = "|".join(map(str, (a.path, a.mtime, b.path, b.mtime, split.label, limit, beam)))
    if not W.run_button("Run the comparison", "pr_go", token, on_click=lambda: ss.pop("_pr_stopped", None),
                        help="Translates the sentences with both models (cached for every visitor) and runs "
                             f"sacrebleu's paired bootstrap with {RESAMPLES:,} resamples."):
        st.info("Press **Run the comparison**: both models translate the chosen sentences, then the paired test runs.")
        return
    if data is None and (data := pairs(split, limit, lm)) is None:
        return
    res = run(a, b, split, limit, beam, lm, data, token)
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
    paired_alpha.test_set(a, b, res["sources"], res["references"])


main()
