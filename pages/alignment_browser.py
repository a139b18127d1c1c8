"""Alignment browser: the model's α over a corpus, sentence by sentence, and against gold links.

Pick a split from the data directory (or paste / upload your own pairs): the page decodes the first
N sentences that pass the length and text filters and lists them in a sortable table with sentence
BLEU and chrF (sacrebleu), the mean entropy of α and the mean peak α. For a chosen pair it shows the
model's own translation with its α, and forced decoding of the reference: the model's α for the
human translation. Gold alignment sets (Sure/Possible links) are overlaid on the forced heatmap and
scored: the alignment error rate (AER) of the argmax-α links over the whole set, and, with a model of
the opposite direction picked, of both directions' links joined (intersection, union, grow-diag-final).

Controls are bound to URL query parameters (``al_*``); pasted or uploaded pairs are not (too big for
a URL). The page only reads traces from :mod:`nmt.decoding.search` (through :mod:`ui.common.widgets`).
"""

from __future__ import annotations

from ui.common import shell

shell.framed()  # a page Streamlit started on its own (a fresh server's first request) runs in the frame

import json
from dataclasses import dataclass, field
from typing import Any

import pandas as pd
import streamlit as st

from nmt.decoding.search import InputError
from nmt.decoding.trace import DecodeTrace
from nmt.explanation.align import Links
from nmt.text.tokenize import Tokenizer
from ui.alignment import both_ways as alignment_both_ways
from ui.alignment.views_uploads import MAX_PASTE_CHARS, PairsError, parse_tsv_pairs, parse_two_files
from ui.common import heavy, models
from ui.common import widgets as W
from ui.figures.alignment import (
    browser_frame,
    coverage_line,
    domain_note,
    filter_pairs,
    forced_facts,
    links_corpus_aer,
    links_table,
    own_facts,
    recorded_aer_rows,
    selected_row,
    table_row,
)
from ui.figures.common import FONT, FONT_MAIN, csv_text, finite, md
from ui.figures.heatmaps import trace_chart
from ui.figures.length import load_results
from ui.figures.unknown import Shown, shown

BIND = W.BIND
PREFERRED = ("multi30k/test_2016_flickr", "multi30k/val", "alignment/hansards-naacl2003-en-fr/test")
SOURCES = ("corpus", "my own pairs")
UPLOADS = ("paste", "TSV file", "two files")
LEN_MAX = 120
N_CHOICES = (10, 25, 50, 100, 200)  # pairs decoded for the table: the URL can ask for no more
COLUMN_WIDTH = 300  # heatmap cells in a half-page column (pixels), for sources of up to SIDE_BY_SIDE words
FULL_WIDTH = 660  # heatmap cells at the page's width, for longer sources (one heatmap under the other)
SIDE_BY_SIDE = 12
ss = st.session_state


@dataclass
class Pairs:
    """The sentence pairs being browsed, and their gold links if they are a gold alignment set."""

    name: str
    pairs: list[tuple[str, str]]
    pretokenized: bool = False
    sure: list[Links] | None = None
    possible: list[Links] | None = None
    notes: list[str] = field(default_factory=list)

    @property
    def gold(self) -> bool:
        """Whether the pairs come with gold Sure/Possible links."""
        return self.sure is not None


def corpus_pairs(src: str, tgt: str) -> Pairs | None:
    """Pairs of a split of the data directory (with gold links for alignment sets)."""
    splits = W.corpus_splits(src, tgt)
    if not splits:
        st.warning(f"No {src}–{tgt} parallel files (NAME.{src} and NAME.{tgt}, gzipped or not) were found. "
                   + W.roots_note())
        return None
    split = W.split_picker(splits, "al_split", prefer=PREFERRED)
    try:
        s_lines, r_lines = W.read_split(split, src, tgt)
    except (OSError, ValueError) as err:
        st.error(f"Cannot read {md(split.label)}: {md(str(err))}")
        return None
    out = Pairs(split.label, [(s, r) for s, r in zip(s_lines, r_lines) if s.strip() and r.strip()],
                pretokenized=split.gold)
    if len(s_lines) >= W.MAX_READ:
        out.notes.append(f"Only the first {W.MAX_READ} lines of this split are read.")
    if split.gold:
        try:
            sure, possible = W.read_gold(split, src, tgt)
        except (OSError, ValueError) as err:
            st.error(f"Cannot read the gold links of {md(split.label)}: {md(str(err))}")
            return out
        if len(sure) != len(s_lines) or len(possible) != len(s_lines):
            st.error(f"The gold link files of {md(split.label)} have {len(sure)} / {len(possible)} lines "
                     f"but the text has {len(s_lines)}; ignoring them.")
            return out
        keep = [k for k, (s, r) in enumerate(zip(s_lines, r_lines)) if s.strip() and r.strip()]
        out.sure, out.possible = [sure[k] for k in keep], [possible[k] for k in keep]
    return out


def own_pairs() -> Pairs | None:
    """Pairs pasted or uploaded by the user (errors shown as messages)."""
    how = st.radio("How", UPLOADS, key="al_upload", bind=BIND, horizontal=True,
                   help="paste: source<TAB>reference lines · TSV file: the same as a file · two files: "
                        "sources and references, one sentence per line")
    try:
        if how == "paste":
            text = st.text_area("One pair per line: source, a tab, then the reference", key="al_paste", height=140,
                                placeholder="A dog runs.\tUn chien court.", max_chars=MAX_PASTE_CHARS)
            if not (text or "").strip():
                st.info("Paste sentence pairs to browse them.")
                return None
            return Pairs("pasted pairs", parse_tsv_pairs(text))
        if how == "TSV file":
            f = st.file_uploader("Tab-separated pairs (UTF-8)", type=["tsv", "txt"], key="al_file_tsv")
            if f is None:
                st.info("Upload a file with one source<TAB>reference pair per line.")
                return None
            return Pairs(f.name, parse_tsv_pairs(f.getvalue(), f.name))
        c1, c2 = st.columns(2)
        fs = c1.file_uploader("Source sentences (UTF-8, one per line)", key="al_file_src")
        fr = c2.file_uploader("Reference translations (UTF-8, one per line)", key="al_file_ref")
        if fs is None or fr is None:
            st.info("Upload both files: line k of the references translates line k of the sources.")
            return None
        return Pairs(f"{fs.name} + {fr.name}", parse_two_files(fs.getvalue(), fr.getvalue(), fs.name, fr.name))
    except PairsError as err:
        st.error(md(str(err)))  # messages name uploaded files: user text
        return None


def _on_table_select() -> None:
    """A row clicked in the table becomes the chosen pair."""
    row = selected_row(ss.get("al_table"))
    ids = ss.get("_al_ids") or []
    if row is not None and 0 <= row < len(ids):
        ss["al_pick"] = int(ids[row])


def forced_facts_of(job: W.Job, pairs: list[tuple[str, str]], label: str, heavy_job: bool = False
                    ) -> list[dict[str, Any]]:
    """log p(reference) and argmax-α links of each pair, computed once per server (progress on the first);
    ``heavy_job`` (the whole set, on a button): in the server's heavy-job slots."""
    return W.cached_items(W.shared_store("alignment"), [("forced", job, s, r) for s, r in pairs],
                          lambda part: [forced_facts(t) for t in W.decode_now(
                              job, [pairs[p][0] for p in part], [pairs[p][1] for p in part])], label,
                          heavy_job=heavy_job)


def words_to_translate(ckpt: Any, data: Pairs, idx: list[int]) -> int:
    """Source words of the pairs ``idx`` whose table facts no visitor has computed yet."""
    store, job = W.shared_store("alignment"), W.job_for(ckpt, "greedy")
    return sum(len(data.pairs[k][0].split()) for k in idx
               if ("own", job, *data.pairs[k], data.pretokenized) not in store)


def table_facts(ckpt: Any, data: Pairs, idx: list[int], tgt: str, heavy_job: bool = False
                ) -> tuple[list[dict], list[dict], W.Job, W.Job]:
    """The own-translation and forced-decoding facts of the pairs ``idx`` (shared by every session);
    ``heavy_job`` (on a button): in the server's heavy-job slots."""
    own_job, forced_job = W.job_for(ckpt, "greedy"), W.job_for(ckpt, "forced", pretokenized=data.pretokenized)
    pairs, tok = [data.pairs[k] for k in idx], Tokenizer(tgt)
    own = W.cached_items(
        W.shared_store("alignment"), [("own", own_job, s, r, data.pretokenized) for s, r in pairs],
        lambda part: [own_facts(t, pairs[p][1], data.pretokenized, tok)
                      for p, t in zip(part, W.decode_now(own_job, [pairs[p][0] for p in part]))],
        f"Translating {len(pairs)} sentences", heavy_job=heavy_job)
    forced = forced_facts_of(forced_job, pairs, "Force-decoding the references", heavy_job=heavy_job)
    return own, forced, own_job, forced_job


def table(data: Pairs, idx: list[int], own: list[dict], forced: list[dict]) -> pd.DataFrame:
    """The sortable sentence table; a clicked row picks the pair shown below."""
    gold = data.gold and data.sure is not None and data.possible is not None
    df = browser_frame([table_row(k, *data.pairs[k], o, f, (data.sure[k], data.possible[k]) if gold else None)
                        for k, o, f in zip(idx, own, forced)])
    ss["_al_ids"] = [int(k) for k in df["#"]]
    num = st.column_config.NumberColumn
    st.dataframe(df, hide_index=True, key="al_table", on_select=_on_table_select, selection_mode="single-row",
                 column_config={
                     "#": num("#", help="line in the corpus (0-based)", width="small"),
                     "BLEU": num(format="%.1f", help="sentence BLEU (sacrebleu)", width="small"),
                     "chrF": num(format="%.1f", help="sentence chrF (sacrebleu)", width="small"),
                     "AER": num(format="%.2f", help="AER of argmax-α links vs gold", width="small"),
                     "α entropy": num(format="%.2f", help="mean entropy of α over the translation's words (nats)"),
                     "max α": num(format="%.2f", help="mean over the translation's words of the largest α_ij"),
                     "ref log p": num(format="%.2f", help="log-probability of the reference (forced decoding)"),
                     "flags": num(width="small", help="source words the translation read less than 0.2 in all "
                                  "(unread) or more than 3 times (re-read): Σ_i α_ij"),
                     **{c: st.column_config.TextColumn(width="medium") for c in ("source", "reference", "translation")},
                 })
    st.caption("Click a column header to sort, a row to show that pair below.")
    if line := coverage_line(df.to_dict("records")):
        st.caption(line)
    return df


def detail(data: Pairs, k: int, own: DecodeTrace, forced: DecodeTrace, row: dict[str, Any], text: Shown) -> None:
    """One pair: its translation (``text``: its ``<unk>`` replaced and marked; the table and BLEU keep the
    raw one) and α, and the α of forced decoding of the reference (with gold links)."""
    s, r = data.pairs[k]
    st.markdown(f"**Source** ({row['src words']} words): {md(s)}")
    st.markdown(f"**Reference:** {md(r)}")
    st.markdown(f"**Model:** {text.markdown or '(empty)'}")
    if text.note:
        st.caption(f"{text.note} {md('BLEU and chrF score the text with <unk>, as the table shows it.')}")
    m = st.columns(4)
    m[0].metric("sentence BLEU", f"{row['BLEU']:.1f}")
    m[1].metric("chrF", f"{row['chrF']:.1f}")
    m[2].metric("log p(reference)", f"{forced.logprob:.2f}")
    m[3].metric("AER (this pair)", f"{row['AER']:.2f}" if finite(row.get("AER")) else "—")
    stem = f"pair{k}"
    side = len(own.src_tokens) - 1 <= SIDE_BY_SIDE  # short: side by side; long: legible at full width
    left, right = st.columns(2, gap="large") if side else (st.container(), st.container())
    width = COLUMN_WIDTH if side else FULL_WIDTH
    with left:
        st.markdown("**The model's own translation**")
        chart = trace_chart(own, title="α while translating", max_width=width, legend="bottom")
        if not own.has_alignment:
            st.caption("A fixed-context model: every word reads the same summary c, so there is no α.")
        if chart is not None:
            W.show_chart(chart, key="al_chart_own", fit=side, size=FONT if side else FONT_MAIN)
        W.downloads([*W.chart_downloads(chart, f"alignment-own-{stem}"),
                     W.Download("JSON", own.to_json(indent=1), f"trace-own-{stem}.json", "application/json")],
                    key="al_dl_own")
    with right:
        st.markdown("**Forced decoding of the reference**")
        sure = possible = None
        show_argmax = False
        if data.gold and data.sure is not None and data.possible is not None:  # they change this chart only
            if st.toggle("Overlay gold Sure / Possible links", value=True, key="al_gold", bind=BIND):
                sure, possible = data.sure[k], data.possible[k]
            show_argmax = st.toggle("Mark the argmax-α link of each word", value=True, key="al_argmax", bind=BIND)
        chart = trace_chart(forced, title="α for the human translation", max_width=width, sure=sure,
                            possible=possible, show_argmax=show_argmax, legend="bottom")
        if chart is not None:
            W.show_chart(chart, key="al_chart_forced", fit=side, size=FONT if side else FONT_MAIN)
        if forced.has_alignment and (sure is not None or show_argmax):
            st.caption("Squares: gold Sure links; circles: Possible links; crosses: argmax α (the model's link).")
        W.downloads([*W.chart_downloads(chart, f"alignment-forced-{stem}"),
                     W.Download("JSON", forced.to_json(indent=1), f"trace-forced-{stem}.json", "application/json")],
                    key="al_dl_forced")


def aer_section(data: Pairs, job: W.Job, ckpt: models.CheckpointInfo, langs: tuple[str, str]) -> None:
    """AER, precision and recall of argmax-α links over the whole gold set, then both ways with a reverse
    model of the ``langs`` (source, target) pair turned round."""
    st.subheader("Alignment error rate over the whole set")
    n = len(data.pairs)
    if "hansard" in data.name.lower():
        rows = recorded_aer_rows(load_results(sorted(models.checkpoint_dir().glob("*.results.json"))))
        with st.expander("Reference points: recorded and published AERs on such gold sets"):
            st.dataframe(rows, hide_index=True)
            st.caption("Attention is trained to translate, not to align: its AER sits well above a statistical "
                       "aligner's. Thresholded α links a target word to every source word with α_ij ≥ τ.")
    if not W.run_button(f"Compute AER over all {n} sentences", "al_aer", f"{job.path}|{data.name}",
                        help="Force-decodes every reference on its given tokens and links each target word to its "
                             "most-attended source word (Luong et al. 2015); AER as in Och & Ney (2003). "
                             "Results are kept for every visitor."):
        return
    assert data.sure is not None and data.possible is not None
    try:
        facts = forced_facts_of(job, data.pairs, f"Force-decoding all {n} references", heavy_job=True)
    except InputError as err:
        W.input_error(err)
        return
    links = [f["links"] for f in facts]
    if any(a is None for a in links):
        st.info("This model reads a fixed summary c: it has no α, so there is no alignment to score.")
        return
    res = links_corpus_aer(links, data.sure, data.possible)
    note = domain_note(models.data_name(models.read_meta(str(ckpt.path), ckpt.mtime)), data.name)
    if note:
        st.warning(md(note), icon=":material/travel_explore:")
    c = st.columns(4)
    c[0].metric("AER", f"{res['aer']:.3f}", help="lower is better")
    c[1].metric("precision", f"{res['precision']:.3f}", help="|A ∩ P| / |A|")
    c[2].metric("recall", f"{res['recall']:.3f}", help="|A ∩ S| / |S|")
    c[3].metric("sentences", res["sentences"])
    W.downloads([W.Download("AER JSON", json.dumps({"set": data.name, **res}, indent=1), "aer.json",
                            "application/json"),
                 W.Download("Links CSV", links_table(links, list(range(n))), "argmax-links.csv", "text/csv")],
                key="al_dl_aer")
    alignment_both_ways.section(data.pairs, data.pretokenized, langs, links, (data.sure, data.possible),
                                forced_facts_of)


def main() -> None:
    """Build the page."""
    st.title("Alignment browser")
    st.caption("How the model's attention lines up source and target words across a whole corpus: "
               "sort by sentence BLEU or attention entropy, open a pair, and compare with human alignments.")
    with st.sidebar:
        st.header("Model")
    ckpt = W.checkpoint_picker("al_model")
    lm = W.load_lm(ckpt) if ckpt is not None else None
    if ckpt is None or lm is None:
        return
    src, tgt = lm.src_tok.lang, lm.tgt_tok.lang
    how = st.radio("Browse", SOURCES, key="al_from", bind=BIND, horizontal=True)
    data = corpus_pairs(src, tgt) if how == "corpus" else own_pairs()
    st.sidebar.caption(W.roots_note())
    if data is None:
        return
    for note in data.notes:
        st.caption(note)

    f1, f2, f3 = st.columns([2, 2, 1])
    lo, hi = f1.slider("Source length (words)", 1, LEN_MAX, (1, LEN_MAX), key="al_len", bind=BIND)
    query = f2.text_input("Search (source or reference)", key="al_q", bind=BIND, max_chars=200)
    n_max = f3.select_slider("Decode the first N", N_CHOICES, value=50, key="al_n", bind=BIND,
                             help="Only the first N matching pairs are decoded (kept for every visitor).")
    matching = filter_pairs(data.pairs, (lo, hi if hi < LEN_MAX else 10**6), query or "")
    idx = matching[: int(n_max) if n_max in N_CHOICES else 50]
    st.caption(f"{len(matching)} of {len(data.pairs)} pairs in {md(data.name)} match; showing the first {len(idx)}.")
    if not idx:
        st.info("No pair matches the filters.")
        return
    words = words_to_translate(ckpt, data, idx)  # a URL or a slider starts at most heavy.AUTO_WORDS of work
    if words > heavy.AUTO_WORDS and not W.run_button(
            f"Translate these {len(idx)} pairs", "al_go", f"{ckpt.path}|{data.name}|{idx}",
            help=f"{words} source words to translate and force-decode: more than a click starts on its own. "
                 "Results are kept for every visitor."):
        return
    try:
        own, forced, own_job, forced_job = table_facts(ckpt, data, idx, tgt, heavy_job=words > heavy.AUTO_WORDS)
    except InputError as err:
        W.input_error(err)
        return
    if own[0]["α entropy"] is None:
        st.info("This model (RNNencdec) reads one fixed summary c for every word: it has no α, so its "
                "pictures show that summary instead of a heatmap, and its entropy and AER are empty.")
    df = table(data, idx, own, forced)
    W.downloads([W.Download("Table CSV", csv_text(df), "sentences.csv", "text/csv")], key="al_dl_table")

    st.subheader("One pair")
    if ss.get("_al_pick_for", data.name) != data.name or ("al_pick" in ss and ss["al_pick"] not in idx):
        ss["al_pick"] = idx[0]  # another split (or filter): a pair number of the old one means nothing here
    ss["_al_pick_for"] = data.name
    k = st.selectbox("Pair # (or click a row of the table)", idx, key="al_pick", bind=BIND)
    k = int(k if k in idx else idx[0])
    s, r = data.pairs[k]
    try:
        own_t = W.decode(own_job, [s])[0]
        forced_t = W.decode(forced_job, [s], [r])[0]
    except InputError as err:
        W.input_error(err)
        return
    detail(data, k, own_t, forced_t, df.iloc[idx.index(k)].to_dict(), shown(own_t, lm.tgt_tok.detokenize))

    if data.gold:
        aer_section(data, forced_job, ckpt, (src, tgt))


main()
