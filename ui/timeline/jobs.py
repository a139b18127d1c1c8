"""Watch it learn's reading of the training timelines in the checkpoint folder (``NAME.timeline.npz``,
recorded by ``train.py --timeline``, :mod:`nmt.training.timeline`): the pairs found and their timelines,
each file read once per version for every session. No model is loaded. Used by ``pages/watch_it_learn.py``.
"""

from __future__ import annotations

import streamlit as st

from nmt.training import timeline
from nmt.training.timeline import Shipped, Timeline
from ui.common import models
from ui.figures.common import md
from ui.timeline import views as V

__all__ = ["Shipped", "Timeline", "find", "load_pair", "read_timeline"]


@st.cache_data(max_entries=16, show_spinner=False)
def read_timeline(path: str, mtime: float) -> Timeline:
    """A timeline file, read once per version (``mtime``) for every session."""
    return timeline.read(path)


def find() -> list[Shipped]:
    """The recorded runs in the checkpoint folder (a pair each: RNNsearch's and RNNencdec's timeline)."""
    return timeline.find(models.checkpoint_dir())


def load_pair(pair: Shipped) -> dict[str, Timeline]:
    """The pair's timelines by model name (RNNsearch first); unreadable files are reported and skipped."""
    out: dict[str, Timeline] = {}
    for path in (pair.search, pair.encdec):
        if path is None:
            continue
        try:
            tl = read_timeline(str(path), path.stat().st_mtime)
        except timeline.TimelineError as err:
            st.warning(md(str(err)))
            continue
        if tl.entries:
            out[V.model_name(tl)] = tl
    return out
