"""Integrated gradients add up on the shipped Multi30k RNNsearch, not only on a tiny random model.

Completeness (Sundararajan et al. 2017): Σ_j IG_ij = F_i(x) − F_i(x'). The expected F values come
from the model's own teacher-forced pass on the encoder re-run from x and from x' = 0
(``RNNSearch.encode_embeddings`` + ``teacher_force``), not from Captum or nmt.explanation.attribution's forward.
At the old fixed 20 points some step of each sentence has a gap above the tolerance (the test would
not notice a silent return to a fixed count); the default chooses the points per step by the gap.
"""

from __future__ import annotations

import numpy as np
import pytest
import torch

from nmt.decoding.search import greedy
from nmt.explanation.attribution import IG_GAP_TOL, IG_MAX, IG_START, Attributions, attribute
from nmt.models import checkpoint
from nmt.text.vocab import BOS_ID
from tests.test_surgery import SHIPPED, needs_shipped, one_thread  # noqa: F401
from ui.explanation import views as V

SENTENCES = ["A man in a blue shirt is standing on a ladder .", "Two dogs are playing in the snow ."]


@pytest.fixture(scope="module")
def shipped() -> checkpoint.LoadedModel:
    return checkpoint.load(SHIPPED)


@torch.no_grad()
def _f(lm: checkpoint.LoadedModel, x: torch.Tensor, ids: list[int]) -> np.ndarray:
    """log p(y_i | y_<i, x) of every target position, teacher-forced from source embeddings x (1, Tx, m)."""
    model = lm.model
    enc = model.encode_embeddings(x, torch.tensor([x.shape[1]]))
    run = model.teacher_force(enc, torch.tensor([[BOS_ID, *ids[:-1]]]))
    return run.log_probs[0, torch.arange(len(ids)), torch.tensor(ids)].numpy()


@needs_shipped
@pytest.mark.parametrize("text", SENTENCES)
def test_ig_adds_up_on_the_shipped_model(shipped, text) -> None:
    trace = greedy(shipped, [text], topk=1)[0]
    src = shipped.src_vocab.encode(trace.src_tokens[:-1])
    ids = [s.token_id for s in trace.steps]
    with torch.no_grad():
        x = shipped.model.encoder.embed(torch.tensor([src]))
    drop = _f(shipped, x, ids) - _f(shipped, torch.zeros_like(x), ids)  # F(x) − F(0), independent of Captum
    auto = attribute(shipped, src, ids, methods=["ig"])
    gap = auto.scores["ig"].sum(-1) - drop
    assert np.abs(gap - auto.ig_delta).max() < 1e-3  # the recorded gap is the real one
    assert np.abs(gap).mean() < IG_GAP_TOL
    assert all(abs(d) <= IG_GAP_TOL or p == IG_MAX for d, p in zip(gap, auto.ig_points, strict=True))
    assert set(auto.ig_points) <= {IG_START, 2 * IG_START, 4 * IG_START, IG_MAX}
    fixed = attribute(shipped, src, ids, methods=["ig"], ig_steps=20)
    old_gap = np.abs(fixed.scores["ig"].sum(-1) - drop)
    assert old_gap.max() > IG_GAP_TOL  # 20 points leave a step above the tolerance here: the test can fail
    assert list(fixed.ig_points) == [20] * len(ids)  # a fixed count is honoured, never refined


def _att(delta: list[float], points: list[int]) -> Attributions:
    k = len(delta)
    return Attributions(["a", "</s>"], ["x"] * k, list(range(k)), 2, np.full((k, 2), 0.5),
                        ig_delta=np.array(delta), ig_points=np.array(points))


def test_the_page_shows_the_gap_beside_the_ig_numbers() -> None:
    one = V.ig_gap_note(_att([-0.012], [50]))
    assert "50 points" in one and "completeness gap 0.012 nats" in one and "care" not in one
    many = V.ig_gap_note(_att([0.01, -0.03, 0.2], [50, 100, 400]))
    assert "50–400 points" in many and "0.080 nats on average, 0.200 at most" in many
    assert "even at 400 points" in many  # a gap left above 0.05 nats is flagged
    assert V.ig_gap_note(_att([], [])) == ""


def test_split_rows_and_assemble_keep_the_points() -> None:
    att = _att([0.01, 0.02], [50, 100])
    att.scores = {"ig": np.array([[0.3, 0.1], [0.2, 0.0]])}
    back = V.assemble(att.src_tokens, att.tgt_tokens, att.steps, V.split_rows(att))
    assert back.ig_points.tolist() == [50, 100] and back.ig_delta.tolist() == [0.01, 0.02]
