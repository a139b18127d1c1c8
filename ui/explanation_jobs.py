"""The model work of the "Is attention an explanation?" page, cached: its only calls into the model.

Attributions are kept per step for every visitor (a shared store keyed by checkpoint file, its
mtime, the sentence and the step); surgeries and the debate tests are cached by their arguments.
"""

from __future__ import annotations

from typing import Any

import streamlit as st

from nmt.attribution import Attributions, attribute
from nmt.decoding import MAX_SOURCE_TOKENS, max_target_len
from nmt.faithfulness import debate_tests
from nmt.surgery import Edit, SurgeryResult, decode_with_surgery
from nmt.trace import DecodeTrace
from ui import models
from ui import widgets as W
from ui.views import explanation as V
from ui.views import surgery as S

IG_STEPS, BASELINE = None, "zero"  # the library's defaults: IG points chosen by the completeness gap
N_PERM, SEED, EPS = 20, 0, 0.01
MAX_TARGET_LEN = max_target_len(MAX_SOURCE_TOKENS)  # the longest greedy decoding


def attributions(ckpt: models.CheckpointInfo, text: str, trace: DecodeTrace, steps: list[int],
                 label: str) -> Attributions:
    """Attributions of ``steps`` of the greedy ``trace``; each step computed once per server (shared store)."""
    lm = models.load(ckpt)
    src_ids = lm.src_vocab.encode(trace.src_tokens[:-1])
    tgt_ids = [s.token_id for s in trace.steps]
    keys = [("attr", str(ckpt.path), ckpt.mtime, text, tuple(tgt_ids), IG_STEPS, BASELINE, i) for i in steps]

    def compute(part: list[int]) -> list[dict[str, Any]]:
        att = attribute(lm, src_ids, tgt_ids, steps=[steps[p] for p in part], ig_steps=IG_STEPS, baseline=BASELINE,
                        src_tokens=trace.src_tokens)
        return V.split_rows(att)

    rows = W.cached_items(W.shared_store("explanation"), keys, compute, label, chunk=8)  # 8: fastest on a CPU
    return V.assemble(trace.src_tokens, trace.target_tokens, steps, rows, ig_steps=IG_STEPS, baseline=BASELINE)


@st.cache_data(show_spinner=False, max_entries=256)
def surgery(path: str, mtime: float, text: str, step: int, kind: str, j: int | None, seed: int,
            reference: tuple[int, ...] = (), from_step: int = 0, every: bool = False,
            ) -> tuple[SurgeryResult, list[float], str, list[float] | None]:
    """The edited decoding, log p of the original words under the same edit (forced), the edit in
    words, and, for a ``reference`` translation (ids, ``</s>`` last), log p of its words under the edit.
    ``kind`` "copy" puts the unedited decoding's α of step ``from_step`` at ``step``; ``every``
    applies the edit at ``step`` and at every later step (not for "copy" or "freeze").

    With a reference, both decodings are forced on its first ``step`` words and go on greedily
    from there (the original with the model's own α)."""
    lm = models.load_model(path, mtime)
    freeze = kind == "freeze"
    edit = None if freeze else Edit(kind, j=j if kind in ("zero", "onehot") else None, seed=seed,
                                    step=from_step if kind == "copy" else None)
    every = every and kind not in S.ONCE_ONLY
    last = max(MAX_TARGET_LEN, len(reference)) if every else step  # no decoding runs past either
    edits = None if edit is None else dict.fromkeys(range(step, last + 1), edit)
    freeze_from = step if freeze else None
    res = decode_with_surgery(lm, text, edits, freeze_from=freeze_from, prefix=list(reference[:step]))
    scored = decode_with_surgery(lm, text, edits, freeze_from=freeze_from,
                                 target=[s.token_id for s in res.original.steps])
    ref_lp = None
    if reference:
        ref_scored = decode_with_surgery(lm, text, edits, freeze_from=freeze_from, target=list(reference))
        ref_lp = [s.logprob for s in ref_scored.trace.steps]
    if edit is None:
        what = f"α held from step {step} on"
    else:
        what = edit.describe(res.trace.src_tokens) + (f", at every step from {step} on" if every else "")
    return res, [s.logprob for s in scored.trace.steps], what, ref_lp


@st.cache_data(show_spinner=False, max_entries=256)
def unedited(path: str, mtime: float, text: str, prefix: tuple[int, ...]) -> list[str]:
    """The words of the model's own decoding after a forced ``prefix``: the steps a copy edit can take α from."""
    res = decode_with_surgery(models.load_model(path, mtime), text, None, prefix=list(prefix))
    return res.original.target_tokens


@st.cache_data(show_spinner=False, max_entries=64)
def debate(path: str, mtime: float, src_tokens: tuple[str, ...], ids: tuple[int, ...]) -> S.Debate:
    """The permutation test (N shuffles per step) and the adversarial α of every step of a translation."""
    perm, adv, alpha = debate_tests(models.load_model(path, mtime), src_tokens, ids, n_perm=N_PERM, seed=SEED, eps=EPS)
    return S.Debate(perm.tvd.tolist(), perm.flipped.tolist(), alpha.tolist(), adv.alpha.tolist(),
                    adv.jsd.tolist(), adv.prob.tolist(), adv.prob_model.tolist(), eps=EPS, n=N_PERM)
