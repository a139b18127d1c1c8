"""Corpus work in several processes, each with its own copy of the model.

One process on one thread is what the command-line tools do by default (:mod:`nmt.tools.cli`). Where a
machine has idle cores, or a GPU that one Python process cannot keep busy with a small model's
many small kernels, :func:`map_chunks` splits the input into chunks and hands them to ``workers``
processes (``spawn``ed, as CUDA requires), each of which loads the checkpoint once and runs torch
on ``$RNNSEARCH_THREADS`` threads (1 by default). Results come back in input order, and a chunk is
computed the same way whichever process runs it, so the output does not depend on ``workers``.
"""

from __future__ import annotations

import multiprocessing
import sys
from collections.abc import Callable, Sequence
from concurrent.futures import ProcessPoolExecutor, as_completed
from typing import Any, TypeVar

import torch
from tqdm import tqdm

from nmt.models import checkpoint
from nmt.models.checkpoint import LoadedModel
from nmt.models.device import threads_from_env

T = TypeVar("T")
R = TypeVar("R")

_MODEL: dict[str, LoadedModel] = {}  # the worker process's own model


def _load_in_worker(path: str, device: str, threads: int) -> None:
    torch.set_num_threads(threads)
    _MODEL["lm"] = checkpoint.load(path, device=device)


def _run_in_worker(fn: Callable[[LoadedModel, list[Any]], list[Any]], items: list[Any]) -> list[Any]:
    return fn(_MODEL["lm"], items)


def map_chunks(
    fn: Callable[[LoadedModel, list[T]], list[R]], items: Sequence[T], *, lm: LoadedModel, path: str, device: str,
    workers: int = 1, chunk: int = 8, progress: bool = True, desc: str = "",
) -> list[R]:
    """``fn(model, chunk)`` over ``items`` in chunks of ``chunk``, one result per item, in order.

    ``fn`` must be a module-level function (or a ``functools.partial`` of one) so that it can be
    sent to a worker. With ``workers`` ≤ 1 everything runs here on ``lm``; otherwise ``workers``
    processes load ``path`` on ``device`` and ``lm`` is not used. The progress bar counts items."""
    chunks = [list(items[i : i + chunk]) for i in range(0, len(items), chunk)]
    bar = tqdm(total=len(items), desc=desc, disable=not progress, file=sys.stderr)
    done: list[list[R] | None] = [None] * len(chunks)
    with bar:
        if workers <= 1:
            for k, part in enumerate(chunks):
                done[k] = fn(lm, part)
                bar.update(len(part))
        else:
            ctx = multiprocessing.get_context("spawn")
            with ProcessPoolExecutor(max_workers=min(workers, len(chunks) or 1), mp_context=ctx,
                                     initializer=_load_in_worker, initargs=(path, device, threads_from_env())) as pool:
                futures = {pool.submit(_run_in_worker, fn, part): k for k, part in enumerate(chunks)}
                for fut in as_completed(futures):
                    k = futures[fut]
                    done[k] = fut.result()
                    bar.update(len(chunks[k]))
    out = [r for part in done for r in (part or [])]
    if len(out) != len(items):
        raise RuntimeError(f"map_chunks: {len(out)} results for {len(items)} items")
    return out
