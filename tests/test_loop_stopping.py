"""The one training loop's early stopping and gradient clipping (nmt/training/loop.py), on a task built
by hand: one weight, scripted validation scores, every expected number worked out below.

The NMT, LM and controller trainings reach neither (tests/test_one_loop.py runs with no patience and a
gradient norm under the clip most of the time), so a loop that never stopped early, or stopped on a tie,
or clipped to the wrong norm, passed every other test.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import pytest
import torch

import train
from nmt.training import loop, nmt_task
from tests.conftest import TINY_ARGS


class Scripted:
    """A :class:`nmt.training.loop.Task` with one weight ``w`` (start 0) and one batch per epoch, whose
    loss is ``slope · w`` over one token (so the gradient is ``slope``); validation ``k`` scores
    ``scores[k]``. It records what the loop asks of it."""

    def __init__(self, scores: Sequence[float], slope: float = 1.0, lr: float = 0.1) -> None:
        self.model = torch.nn.Linear(1, 1, bias=False)
        with torch.no_grad():
            self.model.weight.zero_()
        self.optimizer = torch.optim.SGD(self.model.parameters(), lr=lr)
        self.scheduler = None
        self.progress = loop.new_progress()
        self.scores, self.slope = list(scores), slope
        self.saved: list[tuple[str, int]] = []
        self.logs: list[dict[str, Any]] = []

    @property
    def w(self) -> float:
        return float(self.model.weight.detach())

    def batches(self, epoch: int) -> list[int]:
        return [epoch]

    def loss(self, batch: int) -> tuple[torch.Tensor, int]:
        return self.slope * self.model.weight.sum(), 1

    def before_step(self, progress: dict[str, Any]) -> None:
        pass

    def evaluate(self) -> loop.Evaluation:
        score = self.scores.pop(0)
        return loop.Evaluation(score, {"score": score}, f"{score}")

    def save(self, kind: str, train_state: dict[str, Any] | None) -> None:
        self.saved.append((kind, self.progress["update"]))

    def log(self, record: dict[str, Any]) -> None:
        self.logs.append(record)

    def after_update(self, progress: dict[str, Any]) -> None:
        pass


def run(scores: Sequence[float], patience: int, updates: int = 20, **cfg: Any) -> Scripted:
    task = Scripted(scores)
    loop.train(task, loop.LoopConfig(max_updates=updates, valid_every=1, patience=patience, progress=False,
                                     log_every=0, **cfg))
    return task


def test_early_stopping_after_patience_validations_without_a_gain() -> None:
    """Scores 1, 2, 2, 1.5, 3 … with patience 2: updates 1 and 2 gain; update 3 ties (a tie is no gain:
    1 bad), update 4 falls (2 bad = patience): the run stops after update 4, best 2, best.pt written at
    updates 1 and 2 only, last.pt at the stop."""
    task = run([1.0, 2.0, 2.0, 1.5, 3.0, 4.0, 5.0], patience=2)
    st = task.progress
    assert (st["update"], st["stopped"], st["best_score"], st["bad_evals"]) == (4, "early stopping", 2.0, 2)
    assert task.saved == [("best", 1), ("best", 2), ("last", 4)]


def test_a_gain_resets_the_count_of_bad_validations() -> None:
    """Scores 1, 0, 2, 0, 0 with patience 2: update 2 is bad (1), update 3 gains (back to 0), updates 4
    and 5 are bad (1, 2): the stop comes after update 5, not 4."""
    task = run([1.0, 0.0, 2.0, 0.0, 0.0, 9.0], patience=2)
    st = task.progress
    assert (st["update"], st["stopped"], st["best_score"]) == (5, "early stopping", 2.0)


def test_patience_one_stops_at_the_first_bad_validation_and_zero_never() -> None:
    """Patience 1: the first validation without a gain (update 2, a tie) stops the run. Patience 0 (off):
    the same scores run to the update budget, 6 updates."""
    once = run([5.0, 5.0, 6.0], patience=1)
    assert (once.progress["update"], once.progress["stopped"]) == (2, "early stopping")
    never = run([5.0] * 6, patience=0, updates=6)
    assert (never.progress["update"], never.progress["stopped"], never.progress["bad_evals"]) == (6, "max updates", 5)


def test_the_gradient_norm_is_clipped_to_clip() -> None:
    """Gradient 4 (slope 4, one token), SGD with learning rate 0.1 for 2 updates: clipped to norm 1 each
    step moves w by 0.1 (w = -0.2); clipped to 0.5, by 0.05 (w = -0.1); unclipped, by 0.4 (w = -0.8).
    The log record holds the norm before clipping, 4."""
    for clip, w in ((1.0, -0.2), (0.5, -0.1), (None, -0.8)):
        task = Scripted([0.0], slope=4.0)  # one validation: where the update budget stops the run
        loop.train(task, loop.LoopConfig(max_updates=2, clip=clip, progress=False, log_every=1))
        assert task.w == pytest.approx(w, abs=1e-7), clip
        train = [r for r in task.logs if r["type"] == "train"]
        assert [r.get("grad_norm") for r in train] == ([4.0, 4.0] if clip else [None, None])


def test_a_small_gradient_is_not_scaled_up() -> None:
    """A gradient of norm 0.3 under clip 1 is left as it is: w = -0.03 after one update."""
    task = Scripted([0.0], slope=0.3)
    loop.train(task, loop.LoopConfig(max_updates=1, clip=1.0, progress=False, log_every=0))
    assert task.w == pytest.approx(-0.03, abs=1e-7)


def test_train_py_stops_early_with_its_patience(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """On the path a user runs (train.py --patience 2 --valid-every 1), with validation BLEU scripted as
    10, 20, 20, 15, 30: the run stops after update 4, says why, and keeps the best BLEU 20."""
    scores = iter([10.0, 20.0, 20.0, 15.0, 30.0, 40.0])

    def scripted(*_: Any) -> dict[str, Any]:
        bleu = next(scores)
        return {"bleu": bleu, "bleu_lc": bleu, "sample": ""}

    monkeypatch.setattr(nmt_task, "validate", scripted)
    out = tmp_path / "run"
    summary = train.main([*TINY_ARGS, "--valid-every", "1", "--patience", "2", "--max-updates", "20",
                          "--out", str(out)])
    assert (summary["updates"], summary["stopped"], summary["best_valid_bleu"]) == (4, "early stopping", 20.0)
    valid = [json.loads(x) for x in (out / "metrics.jsonl").read_text().splitlines()]
    assert [r["bleu"] for r in valid if r["type"] == "valid"] == [10.0, 20.0, 20.0, 15.0]


def test_train_py_hands_its_clip_to_the_loop() -> None:
    """``--clip`` reaches the loop (1.0 by default)."""
    assert nmt_task.loop_config(train.parse_args(["--data", "x", "--clip", "0.25"])).clip == 0.25
    assert nmt_task.loop_config(train.parse_args(["--data", "x"])).clip == 1.0
