"""A hand-made stepper trace shared by the stepper's view tests (tests/test_plots.py,
tests/test_stepper_views.py): five source words (one outside the vocabulary, one with quotes and tags)."""

from __future__ import annotations

import math

import numpy as np

from nmt.decoding.trace import DecodeTrace, StepRecord

SRC = ["a", "red", "car", '"<b>x</b>"', "</s>"]


def _softmax(e: list[float]) -> list[float]:
    x = np.exp(np.asarray(e) - max(e))
    return list(x / x.sum())


def make_trace(context: str = "attention", n_steps: int = 3) -> DecodeTrace:
    """A small trace: attention (α and e), fixed (neither) or mean (uniform α, no e)."""
    steps = []
    tokens = ["une", "voiture", "<script>", "</s>"]
    for i in range(n_steps):
        energies = [float(i == j) * 3.0 - j * 0.1 for j in range(len(SRC))]
        if context == "attention":
            alpha, e = _softmax(energies), energies
        elif context == "mean":
            alpha, e = [1 / len(SRC)] * len(SRC), None
        else:
            alpha, e = None, None
        steps.append(StepRecord(
            i=i, token=tokens[i], token_id=10 + i, logprob=math.log(0.5 + 0.1 * i), forced=(i == 1),
            energies=e, alpha=alpha, topk=[(tokens[i], 0.5 + 0.1 * i), ("rouge", 0.2), ("<b>", 0.1)],
            state_norm=1.0 + i, context_norm=4.0 if context != "attention" else 4.0 + i,
        ))
    return DecodeTrace(source="a red car", src_tokens=SRC, src_unk=[False, False, False, True, False],
                       method="step", context=context, steps=steps)
