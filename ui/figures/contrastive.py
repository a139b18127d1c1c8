"""The "Why this word?" view of one step: a contrastive explanation (:mod:`nmt.explanation.contrastive`) as tables.

Data in (a :class:`~nmt.explanation.contrastive.Contrast`), tables and strings out; no Streamlit. Each source word
with α and its two scores (positive: pushed toward the written word; negative: toward the alternative),
the readout's three shares, and the downloads (CSV of the rows, JSON of everything).
"""

from __future__ import annotations

import json

import pandas as pd

from nmt.explanation.contrastive import GAP_TOL, SHARES, Contrast
from nmt.text.vocab import SPECIALS
from ui.figures.common import csv_text

SHARE_WORDS = {"state": "the state s_(i−1)", "previous word": "the previous word E y_(i−1)",
               "context": "the context c_i (what attention read)"}


def alternatives(topk: list[tuple[str, float]], written: str) -> list[str]:
    """The words the step could have written instead: its top-k without the written word and the special
    tokens (<pad>, <unk>, <s>, </s>: no word to contrast with, and IG does not converge on them), most likely
    first."""
    return [w for w, _ in topk if w != written and w not in SPECIALS]


def converged(c: Contrast) -> bool:
    """Whether IG's scores add up to the contrast (completeness gap within :data:`GAP_TOL` nats): only then
    is a verdict drawn from them."""
    return c.ig_gap <= GAP_TOL


def not_converged_note(c: Contrast) -> str:
    """What a result whose completeness gap stayed above the tolerance says instead of a verdict."""
    return (f"No verdict: the integrated gradients did not converge. After {c.ig_points} points their sum still "
            f"misses the difference by {c.ig_gap:.3f} nats (the tolerance is {GAP_TOL} nats), so the scores "
            "below do not account for why « " + c.chosen + " » and not « " + c.alternative + " ».")


def source_frame(c: Contrast) -> pd.DataFrame:
    """One row per source token: α_ij and the two attributions of the contrast, strongest |IG| first."""
    rows = [{"j": j, "source word": w, "α_ij": c.alpha[j], "integrated gradients": c.ig[j],
             "gradient × input": c.x_grad[j]} for j, w in enumerate(c.src_tokens)]
    return pd.DataFrame(rows).sort_values("integrated gradients", key=abs, ascending=False, kind="stable")


def shares_frame(c: Contrast) -> pd.DataFrame:
    """How much of the readout's logit difference came through each of its inputs (sums to the difference)."""
    total = sum(abs(v) for v in c.shares.values()) or 1.0
    return pd.DataFrame([{"through": SHARE_WORDS[k], "logit difference": c.shares.get(k, 0.0),
                          "share %": 100.0 * abs(c.shares.get(k, 0.0)) / total} for k in SHARES])


def summary_line(c: Contrast) -> str:
    """The numbers a researcher checks first: the contrast, IG's completeness gap and its points."""
    return (f"log p(« {c.chosen} ») − log p(« {c.alternative} ») = {c.delta:.3f} nats "
            f"(p {c.logprob_chosen:.3f} vs {c.logprob_alternative:.3f} in log space) · integrated gradients from "
            f"the {c.baseline} embedding, {c.ig_points} points, completeness gap {c.ig_gap:.4f} nats · readout "
            f"shares' gap {c.shares_gap:.4f}")


def csv_of(c: Contrast) -> str:
    """The source rows as CSV, in source order, user text defused as in every export (:func:`csv_text`)."""
    return csv_text(source_frame(c).sort_values("j"))


def json_of(c: Contrast) -> str:
    return json.dumps(c.to_dict(), ensure_ascii=False, indent=1)
