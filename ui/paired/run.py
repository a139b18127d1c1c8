"""The paired page's run over a split: its time estimated before it starts, both models translating chunk by chunk
(only each sentence's translation is kept, server-wide per chunk), and a Stop that loses no work.

Issue 52: "all" was one click for 20,000 × 2 beam-5 decodings (hours), each trace held in memory. Now:

- :func:`measured` times each model on the split's first lines (:data:`ui.paired.views.MEASURE_LINES`) once per
  server; the page turns it into an estimate before Run (:func:`ui.paired.views.estimate_text`), and those
  translations are kept as the run's first chunk.
- :func:`translate` runs the chunks (:func:`ui.paired.views.chunk_bounds`), A then B within each, every chunk in
  one of the server's heavy-job slots, under a progress bar with the time left. A chunk's translations go to the
  store :data:`KEPT` the moment they exist; its traces go at once.
- A Stop (or a closed tab) can only land between chunks (Streamlit stops a script at its next call), so every
  finished chunk is kept: :func:`done` reads the longest run of finished chunks of each model, the page compares
  the sentences both finished, and Run again translates only what is missing.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Sequence
from typing import Any

import streamlit as st

from ui.common import heavy
from ui.common import widgets as W
from ui.paired.views import MEASURE_LINES, chunk_bounds, duration_text, time_left

KEPT = "paired-kept"  # store: each chunk's translations per decoding job and chunk (about 100 bytes a sentence)
COST = "paired-cost"  # store: each job's measured (source words, seconds) on a split's first lines
clock: Callable[[], float] = time.perf_counter  # what the run times with (tests give it a fake clock)


def words(sentences: Sequence[str]) -> int:
    """Source words (whitespace-separated) of ``sentences``: what a run's cost grows with."""
    return sum(len(s.split()) for s in sentences)


def _key(job: W.Job, part: tuple[str, ...]) -> tuple[Any, ...]:
    return ("translations", job, part)


def translations(job: W.Job, part: tuple[str, ...]) -> list[str]:
    """The translations of one chunk; its traces are dropped as soon as they are read."""
    return [t.translation for t in W.decode_now(job, part)]


def measured(job: W.Job, sources: Sequence[str]) -> tuple[int, float]:
    """``(source words, seconds)`` of ``job`` on the first :data:`MEASURE_LINES` lines of ``sources``, timed once
    per server (the first visitor's measure is everyone's); the translations are kept as the run's first chunk."""
    part = tuple(sources[:MEASURE_LINES])

    def compute() -> tuple[int, float]:
        start = clock()
        hyps = translations(job, part)
        seconds = clock() - start
        heavy.store(KEPT).put(_key(job, part), hyps)
        return words(part), seconds

    return heavy.memo(heavy.store(COST), heavy.FLIGHT, ("cost", job, part), compute)


def _chunk(job: W.Job, part: tuple[str, ...], say: Callable[[str], None]) -> tuple[list[str], bool]:
    """One chunk's translations and whether they were computed now (False: kept from before)."""
    store, key = heavy.store(KEPT), _key(job, part)
    hyps = store.get(key)
    if hyps is not heavy.MISSING:
        return hyps, False
    return heavy.memo(store, heavy.FLIGHT, key, lambda: W.in_slot(say, lambda: translations(job, part)),
                      lambda: say(W.WAITING)), True


def translate(jobs: Sequence[W.Job], sources: Sequence[str], label: str) -> list[list[str]]:
    """Each job's translations of ``sources``, chunk by chunk (every job in turn within a chunk), under a progress
    bar with the time left at this run's rate; chunks finished before (a stopped run, another visitor) are reused."""
    total = max(1, words(sources) * len(jobs))
    out: list[list[str]] = [[] for _ in jobs]
    bar = st.progress(0.0, text=label)
    done = fresh_words = 0
    spent = 0.0
    for lo, hi in chunk_bounds(len(sources)):
        part = tuple(sources[lo:hi])
        for hyps, job in zip(out, jobs):
            start = clock()
            got, fresh = _chunk(job, part, lambda text, at=done / total: bar.progress(at, text=f"{label}: {text}"))
            hyps.extend(got)
            done += words(part)
            if fresh:
                spent, fresh_words = spent + clock() - start, fresh_words + words(part)
        left = time_left(fresh_words, spent, total - done)
        bar.progress(done / total, text=f"{label} ({hi:,}/{len(sources):,} sentences"
                                        + (f", {duration_text(left)} left)" if left is not None else ")"))
    bar.empty()
    return out


def done(jobs: Sequence[W.Job], sources: Sequence[str]) -> list[list[str]]:
    """Each job's kept translations of the longest run of finished chunks from the top of ``sources``
    (what a stopped run has); nothing is computed."""
    store, out = heavy.store(KEPT), []
    for job in jobs:
        hyps: list[str] = []
        for lo, hi in chunk_bounds(len(sources)):
            got = store.get(_key(job, tuple(sources[lo:hi])))
            if got is heavy.MISSING:
                break
            hyps.extend(got)
        out.append(hyps)
    return out
