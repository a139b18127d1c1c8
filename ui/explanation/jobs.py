"""The model work of the "Is attention an explanation?" page, cached: its only calls into the model.

Attributions are kept per step for every visitor (a shared store keyed by checkpoint file, its
mtime, the sentence and the step); surgeries and the debate tests are cached by their arguments.
"""

from __future__ import annotations

from typing import Any

from nmt.decoding.search import MAX_SOURCE_TOKENS, max_target_len
from nmt.decoding.surgery import Edit, SurgeryResult, decode_with_surgery
from nmt.decoding.trace import DecodeTrace
from nmt.explanation.attribution import IG_START, Attributions, attribute
from nmt.explanation.faithfulness import debate_tests
from ui.common import heavy, models
from ui.common import widgets as W
from ui.explanation import views as V
from ui.explanation import views_surgery as S

IG_STEPS, BASELINE = None, "zero"  # the library's defaults: IG points chosen by the completeness gap
N_PERM, SEED, EPS = 20, 0, 0.01
MAX_TARGET_LEN = max_target_len(MAX_SOURCE_TOKENS)  # the longest greedy decoding


# The work an explanation may start without a button (issue 24: ≤ 10 s of CPU, ≤ 200 MB an interaction).
# Gradient units, nmt.explanation.attribution's measure: one source position of one decoder step of one integrated-
# gradients point, Σ (i + 1) · Tx · points. Leave-one-out of the embedding encodes Tx + 1 copies of the
# sentence and decodes each up to the word: (Tx + 1) · (Tx + i + 1) "LOO units". Measured on the shipped
# Multi30k RNNsearch, one torch thread: IG alone at Tx 61, word 20 (25,620 units) +172 MB (~7 KB a unit);
# leave-one-out at Tx 101, word 0 (10,506 units) +340 MB (~32 KB a unit), 2 s; all five methods at Tx 61,
# word 20: 2.6 s, +284 MB; at Tx 101, word 35: 6.7 s, +414 MB. Each limit keeps its part near 100 MB.
AUTO_UNITS = 15_000
AUTO_LOO = 3_000
# one gradient batch of a button's job (nmt.explanation.attribution's own default holds ~1 GB)
GRAD_BATCH_UNITS = 15_000


def cost(trace: DecodeTrace, steps: list[int]) -> int:
    """The gradient units of explaining ``steps`` of ``trace`` (:data:`AUTO_UNITS`' measure), counting IG at
    its first round of points (:data:`nmt.explanation.attribution.IG_START`; the gap may double them on some steps)."""
    points = IG_STEPS or IG_START
    return sum((i + 1) * len(trace.src_tokens) * points for i in steps)


def loo_cost(trace: DecodeTrace, steps: list[int]) -> int:
    """The leave-one-out units of explaining ``steps`` of ``trace`` (:data:`AUTO_LOO`'s measure)."""
    tx = len(trace.src_tokens)
    return (tx + 1) * (tx + max(steps) + 1) if steps else 0


def needs_button(trace: DecodeTrace, steps: list[int]) -> bool:
    """Whether explaining ``steps`` is more work than a URL or a slider may start (issue 24)."""
    return cost(trace, steps) > AUTO_UNITS or loo_cost(trace, steps) > AUTO_LOO


def _keys(ckpt: models.CheckpointInfo, text: str, trace: DecodeTrace, steps: list[int]) -> list[tuple[Any, ...]]:
    tgt_ids = tuple(s.token_id for s in trace.steps)
    return [("attr", str(ckpt.path), ckpt.mtime, text, tgt_ids, IG_STEPS, BASELINE, i) for i in steps]


def known(ckpt: models.CheckpointInfo, text: str, trace: DecodeTrace, steps: list[int]) -> bool:
    """Whether every step's attributions are kept already (showing them costs nothing)."""
    store = W.shared_store("explanation")
    return all(k in store for k in _keys(ckpt, text, trace, steps))


def attributions(ckpt: models.CheckpointInfo, text: str, trace: DecodeTrace, steps: list[int],
                 label: str, heavy_job: bool = False) -> Attributions:
    """Attributions of ``steps`` of the greedy ``trace``; each step computed once per server (shared store);
    ``heavy_job`` (a button's work): in the server's heavy-job slots."""
    lm = models.load(ckpt)
    src_ids = lm.src_vocab.encode(trace.src_tokens[:-1])
    tgt_ids = [s.token_id for s in trace.steps]

    def compute(part: list[int]) -> list[dict[str, Any]]:
        att = attribute(lm, src_ids, tgt_ids, steps=[steps[p] for p in part], ig_steps=IG_STEPS, baseline=BASELINE,
                        src_tokens=trace.src_tokens, grad_units=GRAD_BATCH_UNITS)
        return V.split_rows(att)

    rows = W.cached_items(W.shared_store("explanation"), _keys(ckpt, text, trace, steps), compute, label,
                          chunk=8, heavy_job=heavy_job)  # chunk 8: fastest on a CPU
    return V.assemble(trace.src_tokens, trace.target_tokens, steps, rows, ig_steps=IG_STEPS, baseline=BASELINE)


@heavy.cached("explanation_jobs")
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


@heavy.cached("explanation_jobs")
def unedited(path: str, mtime: float, text: str, prefix: tuple[int, ...]) -> list[str]:
    """The words of the model's own decoding after a forced ``prefix``: the steps a copy edit can take α from."""
    res = decode_with_surgery(models.load_model(path, mtime), text, None, prefix=list(prefix))
    return res.original.target_tokens


def debate(path: str, mtime: float, src_tokens: tuple[str, ...], ids: tuple[int, ...], note: Any) -> S.Debate:
    """The permutation test (N shuffles per step) and the adversarial α of every step of a translation:
    kept for every visitor, run once at a time, in one of the server's heavy-job slots (``note``, an
    ``st.empty``, says so while it queues or waits for another visitor's run)."""
    return heavy.memo(heavy.store("explanation_jobs"), heavy.FLIGHT, ("debate", path, mtime, src_tokens, ids),
                      lambda: W.in_slot(note.info, lambda: _debate(path, mtime, src_tokens, ids)),
                      lambda: note.info(f"Shuffling α and searching for an adversarial α: {W.WAITING}."))


def _debate(path: str, mtime: float, src_tokens: tuple[str, ...], ids: tuple[int, ...]) -> S.Debate:
    perm, adv, alpha = debate_tests(models.load_model(path, mtime), src_tokens, ids, n_perm=N_PERM, seed=SEED, eps=EPS)
    return S.Debate(perm.tvd.tolist(), perm.flipped.tolist(), alpha.tolist(), adv.alpha.tolist(),
                    adv.jsd.tolist(), adv.prob.tolist(), adv.prob_model.tolist(), eps=EPS, n=N_PERM)
