"""Hand-made decode traces for the builders' unit tests (no model involved)."""

from __future__ import annotations

import math

from nmt.decoding.trace import BeamStep, DecodeTrace, Hypothesis, NBestEntry, StepRecord


def make_step(i: int, token: str, alpha: list[float] | None, logprob: float = -0.5) -> StepRecord:
    return StepRecord(i=i, token=token, token_id=4 + i, logprob=logprob, forced=False, energies=None,
                      alpha=alpha, topk=[(token, math.exp(logprob))], state_norm=1.0, context_norm=2.0)


def make_trace(
    alphas: list[list[float] | None], tokens: list[str] | None = None, context: str = "attention"
) -> DecodeTrace:
    tokens = tokens or [f"w{i}" for i in range(len(alphas))]
    n_src = max((len(a) for a in alphas if a is not None), default=3)
    src = [f"s{j}" for j in range(n_src - 1)] + ["</s>"]
    return DecodeTrace(source=" ".join(src[:-1]), src_tokens=src, src_unk=[False] * n_src, method="forced",
                       context=context, steps=[make_step(i, t, a) for i, (t, a) in enumerate(zip(tokens, alphas))])


def make_hyp(id_: int, parent: int, step: int, tokens: list[str], logprob: float, status: str) -> Hypothesis:
    return Hypothesis(id_, parent, step, tokens[-1], tokens, logprob, logprob, status == "finished", status)


def make_beam_trace() -> DecodeTrace:
    """k = 2: step 0 keeps A, B (C pruned); step 1 finishes "A </s>", keeps "A x", "B y" (B z pruned);
    step 2 finishes "A x </s>" and "B y </s>"."""
    steps = [
        BeamStep(live=[make_hyp(1, 0, 0, ["A"], -0.1, "live"), make_hyp(2, 0, 0, ["B"], -1.0, "live")],
                 pruned=[make_hyp(3, 0, 0, ["C"], -3.0, "pruned")]),
        BeamStep(live=[make_hyp(5, 1, 1, ["A", "x"], -0.5, "live"), make_hyp(6, 2, 1, ["B", "y"], -1.2, "live")],
                 pruned=[make_hyp(7, 2, 1, ["B", "z"], -4.0, "pruned")],
                 finished=[make_hyp(4, 1, 1, ["A", "</s>"], -2.0, "finished")]),
        BeamStep(finished=[make_hyp(8, 5, 2, ["A", "x", "</s>"], -0.9, "finished"),
                           make_hyp(9, 6, 2, ["B", "y", "</s>"], -1.5, "finished")]),
    ]
    nbest = [NBestEntry(["A", "x", "</s>"], "A x", -0.9, -0.3, [[0.9, 0.1]] * 3),
             NBestEntry(["B", "y", "</s>"], "B y", -1.5, -0.5, [[0.2, 0.8]] * 3)]
    t = DecodeTrace(source="s0", src_tokens=["s0", "</s>"], src_unk=[False, False], method="beam", context="attention",
                    steps=[make_step(i, w, [0.9, 0.1]) for i, w in enumerate(["A", "x", "</s>"])],
                    nbest=nbest, beam_size=2, length_norm="length", beam_steps=steps)
    t.translation = "A x"
    return t
