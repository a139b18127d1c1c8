"""Train an RNNsearch (``--context attention``), RNNencdec (``--context fixed``) or Luong model.

    python train.py --data data/multi30k --src en --tgt fr --context attention --out runs/search
    python train.py --arch luong --score general --attention local-p --window 10 --input-feeding ...
    python train.py --config configs/m30k-en-fr-rnnsearch.toml --data data/multi30k
    torchrun --nproc_per_node 2 train.py ...        # data-parallel (gloo on CPU, nccl on GPU)

A run directory holds ``last.pt`` (weights, optimiser and position: ``--resume`` continues a
killed run where it stopped; it refuses a run whose model, optimiser or training data differ,
the latter unless ``--force-resume``), ``best.pt`` (best validation BLEU), ``metrics.jsonl`` (one JSON
object per log line, read by the training-curve view) and ``args.json``. Checkpoint writes are
atomic. On the CPU, runs are seeded and deterministic. ``--amp auto`` trains in bf16 where the
hardware has it natively, else fp32 (see :mod:`nmt.device`); the log and checkpoints say which.

With the environment variable ``NMT_RANK_REPORT=DIR`` every rank writes ``DIR/rank{N}.json`` (its
final learning rate and a digest of its weights) at the end: data-parallel ranks must agree.
"""

from __future__ import annotations

import argparse
import json
import math
import os
import random
import signal
import sys
import time
import tomllib
from pathlib import Path
from typing import Any, NoReturn

import torch
import torch.distributed as dist
from torch.nn.parallel import DistributedDataParallel
from tqdm import tqdm

from nmt.checkpoint import LoadedModel, atomic_save, make_checkpoint, read_checkpoint, weights_digest
from nmt.data import (
    Example,
    corpus_file,
    files_sha256,
    filter_by_length,
    read_parallel,
    tokenize_pairs,
)
from nmt.decoding import translate
from nmt.device import AMP_CHOICES, Precision, choose_precision, cpu_info, pick_device
from nmt.luong import ARCHS, ATTENTIONS, CELLS, ENCODERS, SCORES, LuongConfig, build_model
from nmt.metrics import corpus_bleu
from nmt.model import CONTEXT_MODES, ModelConfig, RNNSearch, sequence_loss
from nmt.resume import refusal, resume_problems, rewind_metrics
from nmt.sampled_softmax import epoch_batches, install, positions
from nmt.tokenize import Tokenizer
from nmt.truecase import load_models
from nmt.vocab import Vocab

DEFAULTS: dict[str, Any] = {
    "data": "data", "src": "en", "tgt": "fr", "train_split": "train", "valid_split": "val",
    "train_limit": None, "valid_limit": None, "pretokenized": False, "max_len": 50, "src_vocab": 10000,
    "tgt_vocab": 10000,
    "min_freq": 1, "context": "attention", "emb_dim": 256, "hidden_dim": 512, "attn_dim": 512,
    "maxout_dim": 256, "dropout": 0.0, "optimizer": "adam", "lr": 5e-4, "batch_size": 64,
    "epochs": 20, "max_updates": 0, "time_budget": 0.0, "valid_every": 500, "save_every": 200,
    "patience": 8, "lr_decay": 0.5, "lr_patience": 2, "min_lr": 1e-5, "label_smoothing": 0.0,
    "clip": 1.0, "seed": 1234, "threads": 0, "device": "auto", "amp": "auto", "out": "runs/model",
    "resume": False, "force_resume": False, "log_every": 50, "progress": True,
    # Luong et al. (2015) models (--arch luong, see nmt/luong.py); recorded only for them
    "arch": "rnnsearch", "score": "general", "attention": "global", "window": 10, "input_feeding": True,
    "cell": "lstm", "layers": 1, "encoder": "bidirectional",
    # issue 20: truecase models (PREFIX.{src,tgt}.json, scripts/prep_large_vocab.py) and Jean et al.'s
    # softmax over each data partition's τ target words (nmt/sampled_softmax.py; 0 = full softmax)
    "truecase": "", "sampled_vocab": 0,
}
NOT_RECORDED = ("resume", "force_resume")  # options of one invocation, not of the run
LUONG_KEYS = ("arch", "score", "attention", "window", "input_feeding", "cell", "layers", "encoder")


def parse_args(argv: list[str] | None = None) -> argparse.Namespace:
    """Command-line options over the defaults, with a TOML ``--config`` in between."""
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--config", help="TOML file of options (command-line flags override it)")
    for key, val in DEFAULTS.items():
        flag = "--" + key.replace("_", "-")
        if isinstance(val, bool):
            p.add_argument(flag, action=argparse.BooleanOptionalAction, default=None)
        else:
            typ = type(val) if val is not None else int
            p.add_argument(flag, type=typ, default=None)
    ns = p.parse_args(argv)
    merged = dict(DEFAULTS)
    if ns.config:
        with open(ns.config, "rb") as f:
            cfg = tomllib.load(f)
        unknown = set(cfg) - set(DEFAULTS)
        if unknown:
            p.error(f"unknown keys in {ns.config}: {sorted(unknown)}")
        merged.update(cfg)
    merged.update({k: v for k, v in vars(ns).items() if v is not None and k != "config"})
    merged["config"] = ns.config
    if merged["context"] not in CONTEXT_MODES:
        p.error(f"--context must be one of {CONTEXT_MODES}")
    for key, allowed in (("arch", ARCHS), ("score", SCORES), ("attention", ATTENTIONS), ("cell", CELLS),
                         ("encoder", ENCODERS)):
        if merged[key] not in allowed:
            p.error(f"--{key} must be one of {allowed}")
    if merged["arch"] == "luong" and merged["context"] != "attention":
        p.error("--arch luong has only --context attention")
    if merged["optimizer"] not in ("adam", "adadelta"):
        p.error("--optimizer must be adam or adadelta")
    if str(merged["amp"]).lower() not in AMP_CHOICES:
        p.error("--amp must be auto (bf16 where native), bf16 or off")
    return argparse.Namespace(**merged)


# ----------------------------------------------------------------------------------------------


def log_jsonl(path: Path, record: dict[str, Any]) -> None:
    with open(path, "a", encoding="utf-8") as f:
        f.write(json.dumps(record) + "\n")


def training_data_sha256(args: argparse.Namespace) -> str:
    """Hash of the training files (both sides, whole files: ``--train-limit`` is compared separately)."""
    return files_sha256([corpus_file(args.data, args.train_split, lang) for lang in (args.src, args.tgt)])


def load_training_data(args: argparse.Namespace) -> tuple[list[Example], list[str], list[str]]:
    """Tokenised, length-filtered training pairs and raw validation pairs."""
    src_lines, tgt_lines = read_parallel(args.data, args.train_split, args.src, args.tgt, args.train_limit)
    if args.pretokenized:  # written by scripts/pretokenize.py: Moses tokens joined by spaces
        pairs = [Example(s.split(" "), t.split(" ")) for s, t in zip(src_lines, tgt_lines, strict=True)]
        pairs = [e for e in pairs if e.src != [""] and e.tgt != [""]]
    else:
        pairs = tokenize_pairs(src_lines, tgt_lines, args.src, args.tgt)
        tcs = load_models(args.truecase, args.src, args.tgt)
        if tcs:
            pairs = [Example(tcs["src"].truecase(e.src), tcs["tgt"].truecase(e.tgt)) for e in pairs]
    examples = filter_by_length(pairs, args.max_len)
    v_src, v_tgt = read_parallel(args.data, args.valid_split, args.src, args.tgt, args.valid_limit)
    return examples, v_src, v_tgt


def build_optimizer(args: argparse.Namespace, model: torch.nn.Module) -> torch.optim.Optimizer:
    if args.optimizer == "adadelta":  # the paper: ρ = 0.95, ε = 1e-6
        return torch.optim.Adadelta(model.parameters(), lr=args.lr, rho=0.95, eps=1e-6)
    on_gpu = next(model.parameters()).is_cuda  # one fused kernel per step instead of a few per tensor
    return torch.optim.Adam(model.parameters(), lr=args.lr, fused=on_gpu)


def sync_ranks(stopped: str, interrupted: bool, bleu: float | None, is_main: bool,
               device: torch.device) -> tuple[str, float | None]:
    """Agree across data-parallel ranks, once per update, on stopping and on rank 0's validation BLEU.

    Rank 0 alone validates and decides on early stopping and the time and update budgets (another
    rank's clock must not stop it alone: the ranks would wait on each other for ever); a signal on
    any rank stops all. Returns this rank's stop reason ("" to go on) and the BLEU rank 0 validated
    at this update (None if it did not), which every rank feeds its learning-rate scheduler."""
    vote = bool(stopped) if is_main else bool(interrupted)
    validated = is_main and bleu is not None
    t = torch.tensor([float(vote), bleu if validated else 0.0, float(validated)], dtype=torch.float64, device=device)
    dist.all_reduce(t)
    n_stop, bleu_sum, n_valid = t.tolist()
    rank0_bleu = bleu_sum if n_valid else None
    if not n_stop:
        return "", rank0_bleu
    return stopped or ("signal on another rank" if is_main else "stopped by rank 0"), rank0_bleu


def validate(model: RNNSearch, lm: LoadedModel, v_src: list[str], v_tgt: list[str]) -> dict[str, Any]:
    """Greedy validation BLEU (cased and lowercased) of the current weights."""
    model.eval()
    hyps = translate(lm, v_src, beam=1)
    model.train()
    return {"bleu": corpus_bleu(hyps, v_tgt)["score"], "bleu_lc": corpus_bleu(hyps, v_tgt, lowercase=True)["score"],
            "sample": hyps[0]}


def main(argv: list[str] | None = None) -> dict[str, Any]:
    """Train as the options say; returns the final summary (also written to ``summary.json``)."""
    args = parse_args(argv)
    distributed = int(os.environ.get("WORLD_SIZE", "1")) > 1
    device = pick_device(args.device)
    if distributed:
        dist.init_process_group("nccl" if device.type == "cuda" else "gloo")
        rank, world = dist.get_rank(), dist.get_world_size()
        if device.type == "cuda":
            device = torch.device("cuda", int(os.environ.get("LOCAL_RANK", 0)))
            torch.cuda.set_device(device)
    else:
        rank, world = 0, 1
    is_main = rank == 0
    if args.threads:
        torch.set_num_threads(args.threads)
    if device.type == "cpu":
        torch.use_deterministic_algorithms(True)
    random.seed(args.seed)
    torch.manual_seed(args.seed)
    cpu = cpu_info()
    precision: Precision = choose_precision(args.amp, device, cpu)
    if is_main:
        print(precision.log_line(), file=sys.stderr)

    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    last_path, best_path, metrics_path = out / "last.pt", out / "best.pt", out / "metrics.jsonl"

    def refuse(message: str) -> NoReturn:
        """Stop with a one-line error and exit status 2 (every rank: none is left waiting)."""
        if is_main:
            print(message, file=sys.stderr)
        if distributed:
            dist.destroy_process_group()
        raise SystemExit(2)

    t_load = time.time()
    data_hash = training_data_sha256(args)
    resume_ckpt = None
    if args.resume and last_path.exists():
        try:
            resume_ckpt = read_checkpoint(last_path)
        except (ValueError, RuntimeError, OSError) as err:  # damaged or not a checkpoint
            refuse(f"cannot resume {args.out}: {err}")
    if resume_ckpt is not None:
        fatal, differs = resume_problems(resume_ckpt, vars(args), data_hash, world)
        refused = refusal(args.out, fatal, differs, args.force_resume)
        if refused:
            refuse(refused)
        if differs and is_main:
            print(f"warning: --force-resume: resuming {args.out} although " + "; ".join(differs), file=sys.stderr)
    examples, v_src, v_tgt = load_training_data(args)
    if resume_ckpt is not None:
        src_vocab, tgt_vocab = Vocab(resume_ckpt["src_vocab"]), Vocab(resume_ckpt["tgt_vocab"])
    else:
        src_vocab = Vocab.build((e.src for e in examples), args.src_vocab, args.min_freq)
        tgt_vocab = Vocab.build((e.tgt for e in examples), args.tgt_vocab, args.min_freq)
    if is_main:
        print(f"{len(examples)} training pairs (≤ {args.max_len} tokens), vocab {len(src_vocab)}/{len(tgt_vocab)}, "
              f"loaded in {time.time() - t_load:.1f}s", file=sys.stderr)

    cfg: ModelConfig | LuongConfig
    if args.arch == "luong":
        cfg = LuongConfig(len(src_vocab), len(tgt_vocab), args.emb_dim, args.hidden_dim, args.score, args.attention,
                          args.window, args.input_feeding, args.cell, args.layers, args.encoder, args.dropout)
    else:
        cfg = ModelConfig(len(src_vocab), len(tgt_vocab), args.emb_dim, args.hidden_dim, args.attn_dim,
                          args.maxout_dim, args.dropout, args.context)
    model = build_model(cfg.to_dict()).to(device)
    restricted = install(model) if args.sampled_vocab else None  # same parameters, V′-only logits when set
    optimizer = build_optimizer(args, model)
    scheduler = torch.optim.lr_scheduler.ReduceLROnPlateau(
        optimizer, mode="max", factor=args.lr_decay, patience=args.lr_patience, min_lr=args.min_lr)
    st: dict[str, Any] = {"update": 0, "epoch": 0, "batch_in_epoch": 0, "best_bleu": -1.0, "bad_evals": 0,
                          "elapsed": 0.0, "wall": 0.0, "tokens": 0, "stopped": ""}
    if resume_ckpt is not None:
        model.load_state_dict(resume_ckpt["model"])
        ts = resume_ckpt["train_state"]
        optimizer.load_state_dict(ts["optimizer"])
        scheduler.load_state_dict(ts["scheduler"])
        st.update(ts["progress"], stopped="")  # a resumed run decides afresh when to stop
        torch.set_rng_state(ts["torch_rng"])
        random.setstate((ts["py_rng"][0], tuple(ts["py_rng"][1]), ts["py_rng"][2]))
        if is_main:
            print(f"resumed at update {st['update']} (epoch {st['epoch']}, batch {st['batch_in_epoch']})",
                  file=sys.stderr)
    wall_base, wall_t0 = st["wall"], time.time()  # wall time of all invocations, validation included
    if is_main:
        rewind_metrics(metrics_path, st["update"])  # each update is logged once, also after a kill
    train_model: torch.nn.Module = model
    if distributed:
        train_model = DistributedDataParallel(model, find_unused_parameters=args.context != "attention")
    truecase = load_models(args.truecase, args.src, args.tgt)
    lm = LoadedModel(model, src_vocab, tgt_vocab, Tokenizer(args.src, truecase.get("src")),
                     Tokenizer(args.tgt, truecase.get("tgt")))

    meta_base = {
        "args": {k: v for k, v in vars(args).items()
                 if k not in NOT_RECORDED and (args.arch == "luong" or k not in LUONG_KEYS)},
        "train_data": {"dir": str(args.data), "split": args.train_split, "sha256": data_hash,
                       "pairs": len(examples)},
        "device": (torch.cuda.get_device_name(device) if device.type == "cuda"
                   else f"cpu ({torch.get_num_threads()} threads)"),
        "cpu": cpu.model, "precision": precision.name, "precision_reason": precision.reason,
        "world_size": world, "torch": str(torch.__version__),
    }

    def save(path: Path, with_state: bool) -> None:
        ts = None
        if with_state:
            py = random.getstate()
            ts = {"optimizer": optimizer.state_dict(), "scheduler": scheduler.state_dict(), "progress": dict(st),
                  "torch_rng": torch.get_rng_state(), "py_rng": [py[0], list(py[1]), py[2]]}
        st["wall"] = wall_base + time.time() - wall_t0
        meta = {**meta_base, "updates": st["update"], "epochs": st["epoch"], "train_seconds": round(st["elapsed"], 1),
                "wall_seconds": round(st["wall"], 1),
                "train_tokens": st["tokens"],
                "train_tokens_per_s": round(st["tokens"] / max(st["elapsed"], 1e-9), 1),
                "best_valid_bleu": st["best_bleu"]}
        atomic_save(make_checkpoint(model, src_vocab, tgt_vocab, args.src, args.tgt, meta, train_state=ts,
                                    truecase=truecase), path)

    if is_main:
        (out / "args.json").write_text(json.dumps(meta_base["args"], indent=2))
    # SIGTERM / SIGINT: finish the current update, save last.pt, and stop (resume with --resume).
    interrupted: list[int] = []

    def on_signal(signum: int, _frame: object) -> None:
        interrupted.append(signum)

    for sig in (signal.SIGTERM, signal.SIGINT):
        signal.signal(sig, on_signal)

    model.train()
    t_last = time.time()
    win_tokens, win_t = 0, time.time()
    win_loss: torch.Tensor | float = 0.0
    done = False
    while not done and st["epoch"] < args.epochs:
        all_batches = epoch_batches(examples, src_vocab, tgt_vocab, args.batch_size, args.sampled_vocab,
                                    seed=args.seed + st["epoch"])  # (batch, V′ or None: full softmax)
        mine = all_batches[rank::world]
        bar = tqdm(total=len(mine), initial=st["batch_in_epoch"], desc=f"epoch {st['epoch'] + 1}",
                   disable=not (is_main and args.progress), unit="batch", dynamic_ncols=True)
        for batch, v_prime in mine[st["batch_in_epoch"]:]:
            # No value is read back from the GPU between log lines: the host queues the next
            # update's kernels while the GPU still runs this one (a read would wait for it).
            n_tok = batch.n_tgt_tokens  # summed on the host, before the copy
            if v_prime is not None:  # targets as positions in V′, found on the host (no device read)
                batch.tgt_out = positions(batch.tgt_out, v_prime)
                restricted.candidates = v_prime.to(device)
            batch = batch.to(device)
            with torch.autocast(device.type, dtype=torch.bfloat16, enabled=precision.bf16):
                logits = train_model(batch.src, batch.src_len, batch.tgt_in)
            if restricted is not None:
                restricted.candidates = None  # validation and checkpoints use the full output layer
            loss_sum = sequence_loss(logits, batch.tgt_out, args.label_smoothing)
            optimizer.zero_grad(set_to_none=True)
            (loss_sum / n_tok).backward()
            grad_norm = torch.nn.utils.clip_grad_norm_(model.parameters(), args.clip)
            optimizer.step()
            now = time.time()
            st["elapsed"] += now - t_last
            t_last = now
            st["update"] += 1
            st["batch_in_epoch"] += 1
            st["tokens"] += n_tok * world
            win_tokens += n_tok
            win_loss = win_loss + loss_sum.detach()  # a device tensor until the log line reads it
            bar.update(1)
            if st["update"] % args.log_every == 0 and is_main:
                dt = time.time() - win_t
                mean_loss = float(win_loss) / win_tokens
                rec = {"type": "train", "update": st["update"], "epoch": st["epoch"] + 1,
                       "loss": mean_loss, "ppl": math.exp(min(mean_loss, 50)),
                       "tok_s": win_tokens * world / dt, "lr": optimizer.param_groups[0]["lr"],
                       "grad_norm": float(grad_norm), "elapsed": round(st["elapsed"], 1)}
                log_jsonl(metrics_path, rec)
                bar.set_postfix(loss=f"{rec['loss']:.3f}", tok_s=f"{rec['tok_s']:.0f}")
                win_tokens, win_loss, win_t = 0, 0.0, time.time()
            out_of_time = args.time_budget and st["elapsed"] >= args.time_budget * 60
            out_of_updates = args.max_updates and st["update"] >= args.max_updates
            valid_bleu: float | None = None
            if st["update"] % args.valid_every == 0 or out_of_time or out_of_updates:
                if is_main:
                    v = validate(model, lm, v_src, v_tgt)
                    valid_bleu = v["bleu"]
                    scheduler.step(v["bleu"])
                    improved = v["bleu"] > st["best_bleu"]
                    st["bad_evals"] = 0 if improved else st["bad_evals"] + 1
                    if improved:
                        st["best_bleu"] = v["bleu"]
                        save(best_path, with_state=False)
                    log_jsonl(metrics_path, {"type": "valid", "update": st["update"], "epoch": st["epoch"] + 1,
                                             "bleu": v["bleu"], "bleu_lc": v["bleu_lc"],
                                             "lr": optimizer.param_groups[0]["lr"], "elapsed": round(st["elapsed"], 1)})
                    tqdm.write(f"update {st['update']}: valid BLEU {v['bleu']:.2f} (lc {v['bleu_lc']:.2f}) "
                               f"best {st['best_bleu']:.2f} | {v['sample']}", file=sys.stderr)
                    if st["bad_evals"] >= args.patience:
                        st["stopped"] = "early stopping"
                t_last = time.time()  # validation time is not training time
            if out_of_time:
                st["stopped"] = st["stopped"] or "time budget"
            if out_of_updates:
                st["stopped"] = st["stopped"] or "max updates"
            if interrupted:
                st["stopped"] = st["stopped"] or f"signal {interrupted[0]}"
            if distributed:
                st["stopped"], rank0_bleu = sync_ranks(st["stopped"], bool(interrupted), valid_bleu, is_main, device)
                if rank0_bleu is not None and not is_main:
                    scheduler.step(rank0_bleu)  # the same decision as rank 0's: learning rates stay equal
            if is_main and (st["update"] % args.save_every == 0 or st["stopped"]):
                save(last_path, with_state=True)
            if st["stopped"]:
                done = True
                break
        bar.close()
        if not done:
            st["epoch"] += 1
            st["batch_in_epoch"] = 0
            if is_main:
                save(last_path, with_state=True)
    summary = {"updates": st["update"], "epochs": st["epoch"], "best_valid_bleu": st["best_bleu"],
               "train_seconds": round(st["elapsed"], 1), "train_tokens": st["tokens"],
               "tokens_per_s": round(st["tokens"] / max(st["elapsed"], 1e-9), 1),
               "stopped": st["stopped"] or "epochs"}
    if is_main:
        if not best_path.exists():
            save(best_path, with_state=False)
        (out / "summary.json").write_text(json.dumps(summary, indent=2))
        print(json.dumps(summary), file=sys.stderr)
    report_dir = os.environ.get("NMT_RANK_REPORT")
    if report_dir:
        Path(report_dir).mkdir(parents=True, exist_ok=True)
        (Path(report_dir) / f"rank{rank}.json").write_text(json.dumps({
            "rank": rank, "update": st["update"], "lr": [g["lr"] for g in optimizer.param_groups],
            "weights_sha256": weights_digest(model.state_dict())}))
    if distributed:
        dist.barrier()
        dist.destroy_process_group()
    return summary


if __name__ == "__main__":
    main()
