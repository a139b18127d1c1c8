"""The beam search explorer's controls and its search: the sidebar's settings (beam size, length
normalisation, GNMT α, n-best size, bound to URL query parameters ``bx_*``) and the beam and greedy decodings of
the sentence (cached by :mod:`ui.common.widgets`, read from :mod:`nmt.decoding.search`).
"""

from __future__ import annotations

import streamlit as st

from nmt.decoding.search import LENGTH_NORMS, InputError
from nmt.decoding.toolkit import SearchRules
from nmt.decoding.trace import DecodeTrace
from ui.common import models, search_rules
from ui.common import widgets as W
from ui.figures.common import NORM_LABELS

BIND = W.BIND


def controls(rules: SearchRules | None) -> tuple[int, str, float, int]:
    """The sidebar's search settings: beam size, length normalisation, GNMT α, n-best size. An imported model
    searched by its toolkit's ``rules`` ends and ranks its hypotheses as the toolkit does: no choice of
    normalisation then (it says which the toolkit applies)."""
    with st.sidebar:
        st.header("Search")
        beam = st.slider("Beam size k", 1, 20, 5, key="bx_beam", bind=BIND,
                         help="How many partial hypotheses survive each step (k = 1 is greedy decoding).")
        norm = st.radio("Length normalisation", LENGTH_NORMS, index=LENGTH_NORMS.index("length"), key="bx_norm",
                        bind=BIND, horizontal=True, disabled=rules is not None,
                        help="How finished hypotheses are ranked: raw log p favours short outputs.")
        st.caption(NORM_LABELS.get(str(norm), "") if rules is None else search_rules.ranked_as(rules))
        alpha = st.slider("GNMT α", 0.0, 2.0, 0.6, 0.1, key="bx_alpha", bind=BIND,
                          disabled=norm != "gnmt" or rules is not None,
                          help="lp(Y) = ((5 + |Y|) / 6)^α; the score is log p / lp(Y).")
        nbest = st.slider("n-best size", 1, 20, 5, key="bx_nbest", bind=BIND,
                          help="How many finished hypotheses to list (at most k).")
        if nbest > beam:
            st.caption(f"n-best is capped at the beam size: showing {beam}.")
    return int(beam), str(norm), float(alpha) if norm == "gnmt" else 0.6, int(min(nbest, beam))


def searched(ckpt: models.CheckpointInfo, text: str, beam: int, norm: str, alpha: float,
             nbest: int) -> tuple[DecodeTrace, DecodeTrace] | None:
    """The beam search of ``text`` (with its ``nbest`` finished hypotheses) and its greedy decoding; None, with
    the input's problem shown in plain words, where the sentence cannot be decoded."""
    try:
        trace = W.decode(W.job_for(ckpt, "beam", beam=beam, n_best=nbest, length_norm=norm, gnmt_alpha=alpha),
                         [text])[0]
        greedy = W.decode(W.job_for(ckpt, "greedy"), [text])[0]
    except InputError as err:
        W.input_error(err)
        return None
    return trace, greedy
