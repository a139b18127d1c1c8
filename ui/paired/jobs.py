"""The paired page's model work: the test set's pairs read, each model's decoding job, the estimate before a long
run, the run itself (both models, chunk by chunk: :mod:`ui.paired.run`) and :func:`nmt.tools.paired.compare` on
its translations, computed once per server and settings; each model's greedy trace of the picked sentence.
The page file catches :class:`InputError` from here (a sentence a model cannot read).
"""

from __future__ import annotations

from typing import Any

import streamlit as st

from nmt.decoding.search import InputError
from nmt.decoding.trace import DecodeTrace
from nmt.models.checkpoint import LoadedModel
from nmt.text.corpora import Split
from nmt.tools import paired
from ui.common import heavy, models
from ui.common import widgets as W
from ui.figures.common import md
from ui.paired import run as paired_run
from ui.paired import state
from ui.paired import words as paired_words
from ui.paired.views import MIN_SENTENCES, estimate_text, size_problem, stopped_text

__all__ = ["InputError", "estimate", "job", "pairs", "resamples", "run", "traces"]
Data = tuple[list[int], list[str], list[str]]  # 1-based lines of the test set, sources, references


def resamples() -> int:
    """How many resampled test sets the paired bootstrap draws (:data:`nmt.tools.paired.RESAMPLES`)."""
    return paired.RESAMPLES


def job(ckpt: models.CheckpointInfo, beam: int) -> W.Job:
    """The decoding job of one model for the comparison (top-1 only: the table needs no alternatives)."""
    return W.job_for(ckpt, "greedy") if beam == 1 else W.job_for(ckpt, "beam", beam=beam)


def pairs(split: Split, limit: int, lm: LoadedModel) -> Data | None:
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
    """Before a long run: its estimated time, from each model timed on the split's first lines (once per
    server; those translations become the run's first chunk)."""
    try:
        costs = [paired_run.measured(j, src) for j in jobs]
    except InputError as err:
        W.input_error(err)
        return
    st.info(md(estimate_text(len(src), paired_run.words(src), costs)), icon=":material/schedule:")


def run(a: models.CheckpointInfo, b: models.CheckpointInfo, split: Split, limit: int, beam: int, lm: LoadedModel,
        data: Data, token: str) -> dict[str, Any] | None:
    """Translate the pairs ``data`` with both models and compare them: computed once per server and settings (a
    second visitor gets the stored result). Stopped: the comparison of the sentences both models finished."""
    lines, src, ref = data
    jobs = [job(a, beam), job(b, beam)]

    def compute(hyps: list[list[str]], n: int) -> dict[str, Any]:
        freq, freq_source = paired_words.training_counts(lm)
        lengths = [len(lm.src_tok.tokenize(s)) for s in src[:n]]
        res = paired.compare([a.path.stem, b.path.stem], src[:n], ref[:n], [h[:n] for h in hyps], lengths,
                             paired.RESAMPLES, lm.tgt_tok.tokenize, freq, freq_source)
        return res | {"test": split.label, "beam": beam, "lines": lines[:n], "sources": src[:n], "references": ref[:n],
                      "checkpoints": {a.path.stem: a.name, b.path.stem: b.name}}

    key = ("paired-words", str(a.path), a.mtime, str(b.path), b.mtime, str(split.directory), split.name, limit, beam)
    store = W.shared_store("paired")
    try:
        if state.stopped(token) and key not in store:
            hyps = paired_run.done(jobs, src)
            n = min(len(h) for h in hyps)
            st.info(md(stopped_text(n, len(src))), icon=":material/stop_circle:")
            return None if n < MIN_SENTENCES else heavy.memo(store, heavy.FLIGHT, (*key, "stopped", n),
                                                             lambda: compute(hyps, n))
        box = st.empty()
        if key not in store:  # Stop, shown while the run goes (a click ends it between two chunks)
            box.button("Stop", key="pr_stop", on_click=state.stop, args=(token,), icon=":material/stop:",
                       help="Stops the run after the chunk being translated; the sentences done are kept and compared.")
        label = f"Translating {len(src):,} sentences with A and B"
        res = heavy.memo(store, heavy.FLIGHT, key, lambda: compute(paired_run.translate(jobs, src, label), len(src)))
        box.empty()
        return res
    except InputError as err:
        W.input_error(err)
        return None


def traces(a: models.CheckpointInfo, b: models.CheckpointInfo, source: str) -> list[DecodeTrace]:
    """Each model's own greedy decoding of ``source`` (the picked sentence's α)."""
    return [W.decode(W.job_for(c, "greedy"), [source])[0] for c in (a, b)]
