"""The one training loop: the translation model, the fusion LM and the deep-fusion controller.

Every training of the project goes through :func:`train` (``train.py`` with :mod:`nmt.training.nmt_task`,
``scripts/train_lm.py`` with :mod:`nmt.training.lm_training`, ``scripts/train_fusion.py`` with
:mod:`nmt.training.fusion_training`). A :class:`Task` says what is trained and how: its batches, its loss,
its validation and its checkpoints. The loop owns the rest:

* batches in, epoch by epoch from the saved position (``epoch``, ``batch_in_epoch``); rank r of W
  data-parallel ranks takes batches r, r + W, … (DDP itself wraps the task's model);
* one update: loss_sum, n = task.loss(batch); ∇(loss_sum / n), the gradient norm clipped to
  ``clip``, the optimiser step (after the task's ``before_step``, e.g. a warmup learning rate);
* a log record every ``log_every`` updates (mean loss per token of the window, tokens/s,
  learning rate, gradient norm), a tqdm progress bar;
* validation every ``valid_every`` updates and when a budget stops the run: the learning-rate
  schedule, the best checkpoint, early stopping after ``patience`` validations without a gain;
* stopping: epochs, ``max_updates``, a training-time budget (validation not counted), SIGINT /
  SIGTERM (the update finishes, the state is saved), agreed by every rank (:func:`sync_ranks`);
* the state a resumed run continues from (:func:`training_state` / :func:`restore_state`:
  optimiser, schedule, progress, torch and Python RNGs; the task writes it atomically beside the
  weights), saved every ``save_every`` updates or ``save_every_s`` seconds and when stopping;
* a hook after every update (``task.after_update``: the NMT task's training timeline).

On the CPU, with the task's seeds, two runs give the same losses and weights, and a run stopped and
resumed gives the weights of one that was not (tests/test_one_loop.py).
"""

from __future__ import annotations

import math
import random
import signal
import sys
import threading
import time
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Protocol

import torch
import torch.distributed as dist
from tqdm import tqdm

from nmt.models import checkpoint


@dataclass
class LoopConfig:
    """When the loop validates, saves, logs and stops (0 / None: never)."""

    epochs: int | None = None  # None: until another limit stops the run
    max_updates: int = 0
    time_budget_s: float = 0.0  # training seconds (validation, saving and hooks not counted)
    valid_every: int = 0
    patience: int = 0  # validations without a gain before early stopping
    save_every: int = 0  # updates between saves of the resumable state
    save_every_s: float = 0.0  # seconds between saves of the resumable state
    save_each_epoch: bool = False
    clip: float | None = 1.0  # max gradient norm; None: not clipped
    log_every: int = 50
    progress: bool = True
    score_name: str = "score"  # progress["best_" + score_name]: the best validation score


@dataclass
class Ranks:
    """This process among the data-parallel ranks (one process: rank 0 of 1)."""

    rank: int = 0
    world: int = 1
    distributed: bool = False
    device: torch.device = field(default_factory=lambda: torch.device("cpu"))

    @property
    def is_main(self) -> bool:
        return self.rank == 0


@dataclass
class Evaluation:
    """One validation: the score (higher is better), the fields of its log record, what to show of it
    (``text``, e.g. "BLEU 20.10 (lc 21.00)") and a note after the best score (e.g. a sample translation)."""

    score: float
    fields: dict[str, Any]
    text: str
    note: str = ""


class Task(Protocol):
    """What one training trains: the loop calls these and nothing else."""

    model: torch.nn.Module  # the parameters that train (clipped together)
    optimizer: torch.optim.Optimizer
    scheduler: torch.optim.lr_scheduler.ReduceLROnPlateau | None  # stepped with each validation score
    progress: dict[str, Any]  # new_progress() (+ the task's own keys), restored when resuming

    def batches(self, epoch: int) -> Sequence[Any]:
        """The batches of ``epoch``, the same on every call (a resumed run skips those done)."""

    def loss(self, batch: Any) -> tuple[torch.Tensor, int]:
        """The batch's summed loss (a tensor with its graph) and the number of tokens it sums over."""

    def before_step(self, progress: dict[str, Any]) -> None:
        """Called before each optimiser step (e.g. to set a warmup learning rate)."""

    def evaluate(self) -> Evaluation | None:
        """Validate the current weights (rank 0 only); None: the task does not validate while training."""

    def save(self, kind: str, train_state: dict[str, Any] | None) -> None:
        """Write ``"best"`` (weights only) or ``"last"`` (with ``train_state``, what resuming needs), atomically."""

    def log(self, record: dict[str, Any]) -> None:
        """A train or valid record (rank 0 only)."""

    def after_update(self, progress: dict[str, Any]) -> None:
        """A hook after each update (its time is not training time)."""


def new_progress(score_name: str = "score") -> dict[str, Any]:
    """The progress of a fresh run: position, best score, times, tokens, stop reason."""
    return {"update": 0, "epoch": 0, "batch_in_epoch": 0, f"best_{score_name}": -1.0, "bad_evals": 0,
            "elapsed": 0.0, "wall": 0.0, "tokens": 0, "stopped": ""}


def training_state(optimizer: torch.optim.Optimizer, scheduler: Any, progress: dict[str, Any]) -> dict[str, Any]:
    """What a resumed run needs beside the weights: optimiser, schedule, progress and the RNGs."""
    py = random.getstate()
    return {"optimizer": optimizer.state_dict(), "scheduler": scheduler.state_dict() if scheduler is not None else {},
            "progress": dict(progress), "torch_rng": torch.get_rng_state(), "py_rng": [py[0], list(py[1]), py[2]]}


def restore_state(ts: dict[str, Any], optimizer: torch.optim.Optimizer, scheduler: Any, progress: dict[str, Any],
                  lr: float | None = None) -> None:
    """Put back what :func:`training_state` saved (the weights are the task's); ``lr`` overrides the
    saved learning rate (a resume forced to another one). The run decides afresh when to stop."""
    optimizer.load_state_dict(ts["optimizer"])
    if lr is not None:
        for group in optimizer.param_groups:
            group["lr"] = lr
    if scheduler is not None:
        scheduler.load_state_dict(ts["scheduler"])
    progress.update(ts["progress"], stopped="")
    torch.set_rng_state(ts["torch_rng"])
    random.setstate((ts["py_rng"][0], tuple(ts["py_rng"][1]), ts["py_rng"][2]))


def sync_ranks(stopped: str, interrupted: bool, score: float | None, is_main: bool,
               device: torch.device) -> tuple[str, float | None]:
    """Agree across data-parallel ranks, once per update, on stopping and on rank 0's validation score.

    Rank 0 alone validates and decides on early stopping and the time and update budgets (another
    rank's clock must not stop it alone: the ranks would wait on each other for ever); a signal on
    any rank stops all. Returns this rank's stop reason ("" to go on) and the score rank 0 validated
    at this update (None if it did not), which every rank feeds its learning-rate scheduler."""
    vote = bool(stopped) if is_main else bool(interrupted)
    validated = is_main and score is not None
    t = torch.tensor([float(vote), score if validated else 0.0, float(validated)], dtype=torch.float64, device=device)
    dist.all_reduce(t)
    n_stop, score_sum, n_valid = t.tolist()
    rank0_score = score_sum if n_valid else None
    if not n_stop:
        return "", rank0_score
    return stopped or ("signal on another rank" if is_main else "stopped by rank 0"), rank0_score


@dataclass
class _Loop:
    """The loop's own state while it runs (the task's progress dict is ``st``)."""

    task: Task
    cfg: LoopConfig
    ranks: Ranks
    st: dict[str, Any]
    interrupted: list[int] = field(default_factory=list)  # signals received
    t_last: float = 0.0  # end of the last update (training time excludes validation and saves)
    wall_base: float = 0.0
    wall_t0: float = 0.0
    last_save: float = 0.0
    win_tokens: int = 0  # the log record's window: tokens, summed loss and start time
    win_loss: torch.Tensor | float = 0.0
    win_t: float = 0.0


def _save(lp: _Loop, kind: str) -> None:
    lp.st["wall"] = lp.wall_base + time.time() - lp.wall_t0
    task = lp.task
    task.save(kind, training_state(task.optimizer, task.scheduler, task.progress) if kind == "last" else None)
    lp.last_save = time.time()


def _update(lp: _Loop, batch: Any, bar: tqdm) -> None:
    """One optimiser update on ``batch``, its accounting, and a log record every ``log_every`` updates.

    No value is read back from the GPU between log records: the host queues the next update's
    kernels while the GPU still runs this one (a read would wait for it)."""
    task, st, cfg = lp.task, lp.st, lp.cfg
    loss_sum, n_tok = task.loss(batch)
    task.optimizer.zero_grad(set_to_none=True)
    (loss_sum / n_tok).backward()
    grad_norm = torch.nn.utils.clip_grad_norm_(task.model.parameters(), cfg.clip) if cfg.clip else None
    task.before_step(st)
    task.optimizer.step()
    now = time.time()
    st["elapsed"] += now - lp.t_last
    lp.t_last = now
    st["update"] += 1
    st["batch_in_epoch"] += 1
    st["tokens"] += n_tok * lp.ranks.world
    lp.win_tokens += n_tok
    lp.win_loss = lp.win_loss + loss_sum.detach()  # a device tensor until the log record reads it
    bar.update(1)
    if cfg.log_every and st["update"] % cfg.log_every == 0 and lp.ranks.is_main:
        dt = max(time.time() - lp.win_t, 1e-9)
        mean_loss = float(lp.win_loss) / lp.win_tokens
        rec = {"type": "train", "update": st["update"], "epoch": st["epoch"] + 1,
               "loss": mean_loss, "ppl": math.exp(min(mean_loss, 50)),
               "tok_s": lp.win_tokens * lp.ranks.world / dt, "lr": task.optimizer.param_groups[0]["lr"]}
        if grad_norm is not None:
            rec["grad_norm"] = float(grad_norm)
        rec["elapsed"] = round(st["elapsed"], 1)
        task.log(rec)
        bar.set_postfix(loss=f"{rec['loss']:.3f}", tok_s=f"{rec['tok_s']:.0f}")
        lp.win_tokens, lp.win_loss, lp.win_t = 0, 0.0, time.time()


def _validation(lp: _Loop) -> float | None:
    """Validate on rank 0: step the schedule, save the best weights on a gain, log; the score (None elsewhere)."""
    task, st, cfg = lp.task, lp.st, lp.cfg
    if not lp.ranks.is_main or (v := task.evaluate()) is None:
        return None
    if task.scheduler is not None:
        task.scheduler.step(v.score)
    best = f"best_{cfg.score_name}"
    improved = v.score > st[best]
    st["bad_evals"] = 0 if improved else st["bad_evals"] + 1
    if improved:
        st[best] = v.score
        _save(lp, "best")
    task.log({"type": "valid", "update": st["update"], "epoch": st["epoch"] + 1, **v.fields,
              "lr": task.optimizer.param_groups[0]["lr"], "elapsed": round(st["elapsed"], 1)})
    tqdm.write(f"update {st['update']}: valid {v.text} best {st[best]:.2f}" + (f" | {v.note}" if v.note else ""),
               file=sys.stderr)
    if cfg.patience and st["bad_evals"] >= cfg.patience:
        st["stopped"] = "early stopping"
    return v.score


def _after_update(lp: _Loop) -> bool:
    """Validate when due, decide whether to stop (agreed by every rank), save the state when due; True to stop."""
    task, st, cfg, ranks = lp.task, lp.st, lp.cfg, lp.ranks
    out_of_time = cfg.time_budget_s and st["elapsed"] >= cfg.time_budget_s
    out_of_updates = cfg.max_updates and st["update"] >= cfg.max_updates
    score: float | None = None
    if (cfg.valid_every and st["update"] % cfg.valid_every == 0) or out_of_time or out_of_updates:
        score = _validation(lp)
        lp.t_last = time.time()  # validation time is not training time
    if out_of_time:
        st["stopped"] = st["stopped"] or "time budget"
    if out_of_updates:
        st["stopped"] = st["stopped"] or "max updates"
    if lp.interrupted:
        st["stopped"] = st["stopped"] or f"signal {lp.interrupted[0]}"
    if ranks.distributed:
        st["stopped"], rank0_score = sync_ranks(st["stopped"], bool(lp.interrupted), score, ranks.is_main,
                                                ranks.device)
        if rank0_score is not None and not ranks.is_main and task.scheduler is not None:
            task.scheduler.step(rank0_score)  # the same decision as rank 0's: learning rates stay equal
    task.after_update(st)
    due = ((cfg.save_every and st["update"] % cfg.save_every == 0)
           or (cfg.save_every_s and time.time() - lp.last_save > cfg.save_every_s))
    if ranks.is_main and (due or st["stopped"]):
        _save(lp, "last")
    lp.t_last = time.time()  # the hook's and the save's time is not training time
    return bool(st["stopped"])


def _epochs(lp: _Loop) -> None:
    """Train epoch by epoch (from the saved position) until the epochs run out or a stop is decided."""
    st, cfg, ranks = lp.st, lp.cfg, lp.ranks
    while cfg.epochs is None or st["epoch"] < cfg.epochs:
        mine = list(lp.task.batches(st["epoch"]))[ranks.rank::ranks.world]
        bar = tqdm(total=len(mine), initial=st["batch_in_epoch"], desc=f"epoch {st['epoch'] + 1}",
                   disable=not (ranks.is_main and cfg.progress), unit="batch", dynamic_ncols=True)
        for batch in mine[st["batch_in_epoch"]:]:
            _update(lp, batch, bar)
            if _after_update(lp):
                bar.close()
                return
        bar.close()
        st["epoch"] += 1
        st["batch_in_epoch"] = 0
        if ranks.is_main and cfg.save_each_epoch:
            _save(lp, "last")
        lp.t_last = time.time()


def train(task: Task, cfg: LoopConfig, ranks: Ranks | None = None) -> dict[str, Any]:
    """Train ``task`` as ``cfg`` says, from its (fresh or restored) progress; returns the progress.

    SIGINT and SIGTERM are caught while it runs: the update in flight finishes, the state is
    saved, and the loop stops with the reason ``signal N`` (the previous handlers come back after)."""
    lp = _Loop(task, cfg, ranks or Ranks(), task.progress)

    def on_signal(signum: int, _frame: object) -> None:
        lp.interrupted.append(signum)

    in_main_thread = threading.current_thread() is threading.main_thread()  # signals reach that thread only
    previous = {sig: signal.signal(sig, on_signal) for sig in (signal.SIGTERM, signal.SIGINT)} if in_main_thread else {}
    try:
        task.model.train()
        lp.wall_base, lp.wall_t0 = lp.st["wall"], time.time()  # wall time of all invocations
        lp.t_last = lp.win_t = lp.last_save = time.time()
        _epochs(lp)
    finally:
        for sig, handler in previous.items():
            signal.signal(sig, handler)
    lp.st["wall"] = lp.wall_base + time.time() - lp.wall_t0
    return lp.st


def save_state_file(path: Path, model: torch.nn.Module, task: Task, args: dict[str, Any]) -> None:
    """Write a task's resumable state (fp32 weights, :func:`training_state`, its options) atomically:
    the state file of the LM and controller trainings (``--state``), whose own checkpoints are small."""
    weights = {k: v.detach().cpu() for k, v in model.state_dict().items()}
    checkpoint.atomic_save({"format": checkpoint.FORMAT, "config": {"arch": "training-state"}, "model": weights,
                            "weights_sha256": checkpoint.weights_digest(weights), "meta": {"args": args},
                            "train_state": training_state(task.optimizer, task.scheduler, task.progress)}, path)


def load_state_file(path: Path, model: torch.nn.Module, task: Task, args: dict[str, Any],
                    keys: Sequence[str]) -> None:
    """Resume from :func:`save_state_file`'s file: refused (one line) when one of the options ``keys``
    (the model, the data and their order, the recipe) differs from the saved run's."""
    state = checkpoint.read_checkpoint(path)
    saved = state["meta"]["args"]
    differs = [f"{k} is {saved.get(k)} in the saved run but {args.get(k)} now" for k in keys
               if saved.get(k) != args.get(k)]
    if differs:
        raise checkpoint.CheckpointError(f"cannot resume {path.name}: " + "; ".join(differs))
    model.load_state_dict(state["model"])
    restore_state(state["train_state"], task.optimizer, task.scheduler, task.progress)
