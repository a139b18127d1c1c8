"""Training throughput of a large-vocabulary model before its run (issue 20 item 5), in one process.

    python scripts/lv_probe.py --config configs/large-vocab-en-fr-rnnsearch.toml --data .gpu-data-tc \
        --batches 512,1024,2048 --taus 0,8000 --seconds 3 --out OUT/probe.json --choose runs/probe-lv

For each batch size and softmax (τ = 0: the full softmax; τ > 0: Jean et al.'s softmax over a
partition's τ words, :mod:`nmt.training.sampled_softmax`) it times the training update that ``train.py`` runs
(bf16 autocast forward, :func:`nmt.models.rnnsearch.sequence_loss`, backward, clipping, Adam) on minibatches whose
lengths are those of the real training pairs (``train.tc.{en,fr}.xz``), sorted within chunks of 20
batches as :func:`nmt.text.data.batches` sorts them (App. B.2), ids drawn at random. It reports

* target tokens per second (CUDA-synchronised wall time over ``--seconds`` after a warm-up);
* the model FLOPs of one update per target token, counted by ``torch.utils.flop_counter`` on one
  batch, and the model-FLOP utilisation: achieved FLOP/s over the chip's dense bf16 peak, both the
  datasheet's and one measured here with a large matrix product (METHOD.md: measure the ceiling);
* with ``--compile-batches``, the same at those batch sizes with the step compiled
  (:func:`nmt.training.setup.compile_step`, as ``train.py --compile``), its first update (the compile) timed apart;
* the peak memory of a worst-case batch (every sentence ``max_len`` tokens on both sides), so a size
  that would run out of memory on the long batches of the full data is never chosen.

``--choose DIR`` writes ``DIR/batch`` (the smallest batch whose best tokens/s is within 85 % of the
fastest, among those whose worst case fits in ``--memory-share`` of the GPU's memory: 85 %, or 42 %
when two runs share the GPU), ``DIR/tau`` (τ only if it is ≥ 15 % faster than the full softmax at that
batch) and ``DIR/compile`` (1 when the compiled step is the faster at the chosen batch and τ), which
``scripts/large_vocab_gpu.sh start`` reads.
One process instead of a ``train.py`` run per setting: loading 1.4M pairs would cost a minute each.
"""

from __future__ import annotations

import argparse
import json
import random
import sys
import time
import tomllib
from pathlib import Path
from typing import Any

import numpy as np
import torch

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from nmt.models.registry import build_model
from nmt.models.rnnsearch import ModelConfig, sequence_loss
from nmt.text.data import Batch, pad_ids, read_parallel
from nmt.training.sampled_softmax import install
from nmt.training.setup import compile_step

WITHIN, TAU_GAIN, MEMORY_SHARE = 0.85, 1.15, 0.85
DATASHEET_BF16 = {"H100": 989e12, "H200": 989e12}  # dense bf16 tensor-core peak, FLOP/s (SXM)
FIRST = 4  # ids below are <pad>, <unk>, <s>, </s>


def read_lengths(data: Path, split: str, src: str, tgt: str, n: int, max_len: int) -> list[tuple[int, int]]:
    """Token counts (source, target) of the pairs within ``max_len`` among the first ``n`` training pairs."""
    src_lines, tgt_lines = read_parallel(data, split, src, tgt, n)
    counts = ((len(s.split()), len(t.split())) for s, t in zip(src_lines, tgt_lines, strict=True))
    return [(a, b) for a, b in counts if 0 < a <= max_len and 0 < b <= max_len]


def make_batches(lengths: list[tuple[int, int]], batch: int, vocab: tuple[int, int], targets: list[int] | None,
                 rng: random.Random, chunks: int = 20) -> list[Batch]:
    """``chunks`` minibatches of ``batch`` pairs with real lengths, sorted within the chunk (App. B.2).

    Source words are ids below ``vocab[0]``; target words are drawn from ``targets`` (V′) when given,
    else below ``vocab[1]``; ``</s>`` ends each side as :func:`nmt.text.data.make_batch` writes it."""
    pairs = sorted(rng.choices(lengths, k=batch * chunks))
    ids = np.random.default_rng(rng.randrange(2**32))
    pool = np.asarray(targets) if targets else None
    out = []
    for k in range(chunks):
        group = pairs[k * batch:(k + 1) * batch]
        src = [[*ids.integers(FIRST, vocab[0], a).tolist(), 3] for a, _ in group]
        tgt = [[*(ids.choice(pool, b) if pool is not None else ids.integers(FIRST, vocab[1], b)).tolist(), 3]
               for _, b in group]
        s, s_len = pad_ids(src)
        t_out, t_len = pad_ids(tgt)
        t_in = torch.cat([torch.full_like(t_out[:, :1], 2), t_out[:, :-1]], dim=1)
        t_in.masked_fill_(torch.arange(t_in.shape[1]) >= t_len.unsqueeze(1), 0)
        out.append(Batch(s, s_len, t_in, t_out, t_len))
    return out


class Update:
    """The update of ``train.py`` (forward, loss, backward, clipping, Adam) on one model."""

    def __init__(self, cfg: dict[str, Any], device: torch.device) -> None:
        mc = ModelConfig(src_vocab_size=cfg["src_vocab"], tgt_vocab_size=cfg["tgt_vocab"], emb_dim=cfg["emb_dim"],
                         hidden_dim=cfg["hidden_dim"], attn_dim=cfg["attn_dim"], maxout_dim=cfg["maxout_dim"],
                         dropout=cfg["dropout"], context=cfg["context"])
        self.model = build_model(mc.to_dict()).to(device)
        self.restricted = install(self.model)
        self.opt = torch.optim.Adam(self.model.parameters(), lr=1e-4)
        self.device = device
        self.compiled = False

    def compile(self) -> None:
        """From now on, the step compiled as ``train.py --compile`` compiles it."""
        self.compiled = compile_step(self.model)

    def __call__(self, batch: Batch, v_prime: torch.Tensor | None) -> torch.Tensor:
        b = batch.to(self.device)
        tgt_out = b.tgt_out
        # targets as positions in V′ (sorted), as nmt.training.nmt_task.NMTTask.loss passes them
        if v_prime is not None:
            self.restricted.candidates = v_prime.to(self.device)
            tgt_out = torch.searchsorted(self.restricted.candidates, b.tgt_out)
        with torch.autocast(self.device.type, dtype=torch.bfloat16, enabled=self.device.type == "cuda"):
            logits = self.model(b.src, b.src_len, b.tgt_in)
        self.restricted.candidates = None
        loss = sequence_loss(logits, tgt_out)
        self.opt.zero_grad(set_to_none=True)
        (loss / batch.n_tgt_tokens).backward()
        torch.nn.utils.clip_grad_norm_(self.model.parameters(), 1.0)
        self.opt.step()
        return loss.detach()


def sync(device: torch.device) -> None:
    if device.type == "cuda":
        torch.cuda.synchronize()


def timed(step: Update, work: list[tuple[Batch, torch.Tensor | None]], seconds: float) -> dict[str, float]:
    """Tokens/s over ``seconds`` of updates after two warm-up updates."""
    for b, v in work[:2]:
        step(b, v)
    sync(step.device)
    t0, tokens, n = time.perf_counter(), 0, 0
    while time.perf_counter() - t0 < seconds or n < 2:
        b, v = work[(n + 2) % len(work)]
        step(b, v)
        tokens += b.n_tgt_tokens
        n += 1
        if n % 4 == 0:
            sync(step.device)
    sync(step.device)
    dt = time.perf_counter() - t0
    return {"tok_s": tokens / dt, "ms_per_update": 1000 * dt / n, "updates": n, "tokens": tokens}


def flops_per_token(step: Update, work: list[tuple[Batch, torch.Tensor | None]]) -> float:
    """Model FLOPs of an update (forward and backward) per target token, counted by torch's FLOP counter
    over every fourth batch of ``work`` (short and long ones: attention's cost grows with the source)."""
    from torch.utils.flop_counter import FlopCounterMode

    sample = work[::4]
    with FlopCounterMode(display=False) as counter:
        for b, v in sample:
            step(b, v)
    return counter.get_total_flops() / sum(b.n_tgt_tokens for b, _ in sample)


def worst_case_gb(step: Update, batch: int, max_len: int, vocab: tuple[int, int],
                  v_prime: torch.Tensor | None) -> float | None:
    """Peak GPU memory (GB) of one update on ``batch`` pairs of ``max_len`` tokens; None if it runs out."""
    if step.device.type != "cuda":
        return None
    rng = random.Random(1)
    worst = make_batches([(max_len, max_len)], batch, vocab, v_prime.tolist()[1:] if v_prime is not None else None,
                         rng, chunks=1)[0]
    torch.cuda.empty_cache()
    torch.cuda.reset_peak_memory_stats()
    try:
        step(worst, v_prime)
        sync(step.device)
    except torch.OutOfMemoryError:
        step.opt.zero_grad(set_to_none=True)
        torch.cuda.empty_cache()
        return float("inf")
    return torch.cuda.max_memory_allocated() / 1e9


def matmul_peak(device: torch.device, n: int = 8192, reps: int = 20) -> float | None:
    """Measured dense bf16 FLOP/s of an n×n×n matrix product (median of ``reps``), or None on the CPU."""
    if device.type != "cuda":
        return None
    a, b = (torch.randn(n, n, device=device, dtype=torch.bfloat16) for _ in range(2))
    times = []
    for _ in range(reps + 3):
        start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        start.record()
        a @ b
        end.record()
        torch.cuda.synchronize()
        times.append(start.elapsed_time(end) / 1000)
    times = sorted(times[3:])
    return 2 * n**3 / times[len(times) // 2]


def choose(rows: list[dict[str, Any]], memory_gb: float | None,
           share: float = MEMORY_SHARE) -> tuple[int, int, bool]:
    """The batch (smallest within WITHIN of the fastest, worst case in ``share`` of the memory), τ (only
    if ≥ TAU_GAIN faster) and whether to compile the step (each (batch, τ) taken at its faster of the
    eager and the compiled update, rows with ``compiled`` True)."""
    fits = [r for r in rows if memory_gb is None or (r["worst_case_gb"] or 0) <= share * memory_gb]
    if not fits:
        return min(r["batch"] for r in rows), 0, False
    best_of: dict[tuple[int, int], dict[str, Any]] = {}
    for r in fits:
        key = (r["batch"], r["tau"])
        if key not in best_of or r["tok_s"] > best_of[key]["tok_s"]:
            best_of[key] = r
    reps = list(best_of.values())
    best = max(r["tok_s"] for r in reps)
    batch = min(r["batch"] for r in reps if r["tok_s"] >= WITHIN * best)
    full = best_of.get((batch, 0))
    part = max((r for r in reps if r["batch"] == batch and r["tau"] > 0), key=lambda r: r["tok_s"], default=None)
    pick = part if part is not None and (full is None or part["tok_s"] >= TAU_GAIN * full["tok_s"]) else full
    assert pick is not None  # the batch was taken from a row that fits
    return batch, pick["tau"], bool(pick.get("compiled"))


def measure(step: Update, batch: int, tau: int, lengths: list[tuple[int, int]], cfg: dict[str, Any],
            args: argparse.Namespace, rng: random.Random, flops: float | None = None) -> dict[str, Any]:
    """One row: tokens/s, FLOPs per token (counted unless given) and worst-case memory at (batch, τ)."""
    vocab = (cfg["src_vocab"], cfg["tgt_vocab"])
    v_prime = torch.tensor(sorted({0, *rng.sample(range(FIRST, vocab[1]), tau - 1)})) if tau else None
    targets = v_prime.tolist()[1:] if v_prime is not None else None
    work = [(b, v_prime) for b in make_batches(lengths, batch, vocab, targets, rng)]
    t0 = time.perf_counter()
    step(*work[0])  # the first update (compiles, when compiled)
    sync(step.device)
    row: dict[str, Any] = {"batch": batch, "tau": tau, "compiled": step.compiled,
                           "first_update_s": time.perf_counter() - t0, **timed(step, work, args.seconds)}
    row["flops_per_token"] = flops if flops is not None else flops_per_token(step, work)
    row["worst_case_gb"] = worst_case_gb(step, batch, cfg["max_len"], vocab, v_prime)
    print(f"batch {batch:5d} tau {tau:5d}{' compiled' if step.compiled else ''}: {row['tok_s']:10.0f} tok/s  "
          f"{row['ms_per_update']:7.1f} ms/update  {row['flops_per_token'] / 1e6:6.1f} MFLOP/token  "
          f"worst case {row['worst_case_gb']} GB", flush=True)
    return row


def main(argv: list[str] | None = None) -> None:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--config", type=Path, required=True)
    p.add_argument("--data", type=Path, default=None, help="the prepared folder (default: the config's)")
    p.add_argument("--batches", default="512,1024,2048")
    p.add_argument("--taus", default="0,8000")
    p.add_argument("--seconds", type=float, default=3.0)
    p.add_argument("--pairs", type=int, default=100000, help="training pairs whose lengths are sampled")
    p.add_argument("--out", type=Path, required=True)
    p.add_argument("--choose", type=Path, default=None)
    p.add_argument("--compile-batches", default="",
                   help="batch sizes at which to time the compiled step too (torch.compile of the transition)")
    p.add_argument("--memory-share", type=float, default=MEMORY_SHARE,
                   help="share of the GPU's memory one run's worst case may take (0.42 for two runs at once)")
    args = p.parse_args(argv)
    cfg = tomllib.loads(args.config.read_text())
    device = torch.device("cuda" if torch.cuda.is_available() else "cpu")
    lengths = read_lengths(args.data or Path(cfg["data"]), cfg["train_split"], cfg["src"], cfg["tgt"], args.pairs,
                           cfg["max_len"])
    step, rng, rows = Update(cfg, device), random.Random(0), []
    settings = [(b, t) for b in map(int, args.batches.split(",")) for t in map(int, args.taus.split(","))]
    for batch, tau in settings:
        rows.append(measure(step, batch, tau, lengths, cfg, args, rng))
    compile_at = {int(b) for b in args.compile_batches.split(",") if b}
    if compile_at:
        try:
            step.compile()
            for batch, tau in settings:
                if batch in compile_at:
                    eager = next(r for r in rows if r["batch"] == batch and r["tau"] == tau)
                    rows.append(measure(step, batch, tau, lengths, cfg, args, rng, eager["flops_per_token"]))
        except Exception as err:  # a compiler failure must not cost the run: eager it is
            print(f"compiled step failed: {type(err).__name__}: {err}"[:500], flush=True)
            rows.append({"compiled": True, "error": f"{type(err).__name__}: {err}"[:500]})
    result = summarise(rows, device, args, cfg)
    args.out.write_text(json.dumps(result, indent=1))
    print(f"chosen: batch {result['chosen']['batch']}, tau {result['chosen']['tau']}, "
          f"compiled {result['chosen']['compiled']}; "
          f"MFU {result['chosen'].get('mfu_datasheet')}")
    if args.choose:
        args.choose.mkdir(parents=True, exist_ok=True)
        (args.choose / "batch").write_text(str(result["chosen"]["batch"]))
        (args.choose / "tau").write_text(str(result["chosen"]["tau"]))
        (args.choose / "compile").write_text(str(int(result["chosen"]["compiled"])))


def summarise(rows: list[dict[str, Any]], device: torch.device, args: argparse.Namespace,
              cfg: dict[str, Any]) -> dict[str, Any]:
    """The probe's JSON: device, ceilings, rows with their MFU, and the choice."""
    name = torch.cuda.get_device_name() if device.type == "cuda" else "cpu"
    memory_gb = torch.cuda.get_device_properties(0).total_memory / 1e9 if device.type == "cuda" else None
    sheet = next((v for k, v in DATASHEET_BF16.items() if k in name), None)
    measured = matmul_peak(device)
    failed = [r for r in rows if "error" in r]
    rows = [r for r in rows if "error" not in r]
    for r in rows:
        achieved = r["tok_s"] * r["flops_per_token"]
        r["model_tflop_s"] = achieved / 1e12
        r["mfu_datasheet"] = achieved / sheet if sheet else None
        r["mfu_measured_peak"] = achieved / measured if measured else None
    batch, tau, compiled = choose(rows, memory_gb, args.memory_share)
    chosen = next(r for r in rows if r["batch"] == batch and r["tau"] == tau and r["compiled"] == compiled)
    return {"what": "training-update throughput of one model alone on the device, bf16 autocast, eager PyTorch, "
                    "random ids with the real pairs' lengths sorted in chunks of 20 batches",
            "config": str(args.config), "device": name, "torch": torch.__version__, "memory_gb": memory_gb,
            "datasheet_bf16_flop_s": sheet, "measured_bf16_matmul_flop_s": measured,
            "seconds_per_setting": args.seconds, "model": {k: cfg[k] for k in (
                "context", "src_vocab", "tgt_vocab", "emb_dim", "hidden_dim", "attn_dim", "maxout_dim")},
            "rows": rows, "rule": f"smallest batch within {WITHIN:.0%} of the fastest whose worst case fits in "
                                  f"{args.memory_share:.0%} of memory; tau only if >= {TAU_GAIN - 1:.0%} faster",
            "failed": failed,
            "chosen": {"batch": batch, "tau": tau, "compiled": compiled, "tok_s": chosen["tok_s"],
                       "mfu_datasheet": chosen["mfu_datasheet"], "mfu_measured_peak": chosen["mfu_measured_peak"]}}


if __name__ == "__main__":
    main()
