"""The first phases of a training run (:mod:`train`): config, data and model.

``configure`` sets up the process (distributed group, threads, determinism, seeds, precision),
``load_data`` checks the run to resume and reads the training and validation data and the
vocabularies, ``build_run`` builds the model, optimiser and schedule (restored when resuming) into
the :class:`Run` that the one training loop (:mod:`nmt.training.loop`, with
:class:`nmt.training.nmt_task.NMTTask`) updates.
"""

from __future__ import annotations

import argparse
import os
import random
import sys
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, NoReturn

import torch
import torch.distributed as dist
from torch.nn.parallel import DistributedDataParallel

from nmt.models.checkpoint import CheckpointError, LoadedModel, read_checkpoint
from nmt.models.contract import capabilities
from nmt.models.device import CpuInfo, Precision, choose_precision, cpu_info, pick_device
from nmt.models.luong import LuongConfig
from nmt.models.registry import build_model
from nmt.models.rnnsearch import ModelConfig
from nmt.text.data import Example, corpus_file, files_sha256, filter_by_length, read_parallel, tokenize_pairs
from nmt.text.tokenize import Tokenizer
from nmt.text.truecase import Truecaser, load_models
from nmt.text.vocab import Vocab
from nmt.training import segments
from nmt.training.loop import new_progress, restore_state
from nmt.training.resume import refusal, remove_stale_temporaries, resume_problems, rewind_metrics
from nmt.training.sampled_softmax import RestrictedLinear, install

NOT_RECORDED = ("resume", "force_resume")  # options of one invocation, not of the run
LUONG_KEYS = ("arch", "score", "attention", "window", "input_feeding", "cell", "layers", "encoder")


def training_data_sha256(args: argparse.Namespace) -> str:
    """Hash of the training files (both sides, whole files: ``--train-limit`` is compared separately)."""
    return files_sha256([corpus_file(args.data, args.train_split, lang) for lang in (args.src, args.tgt)])


def load_training_data(args: argparse.Namespace, truecase: dict[str, Truecaser] | None = None,
                       ) -> tuple[list[Example], list[str], list[str]]:
    """Tokenised (truecased with ``truecase``, else with ``--truecase``'s models), length-filtered
    training pairs and raw validation pairs."""
    src_lines, tgt_lines = read_parallel(args.data, args.train_split, args.src, args.tgt, args.train_limit)
    if args.pretokenized:  # written by scripts/pretokenize.py: Moses tokens joined by spaces
        pairs = [Example(s.split(" "), t.split(" ")) for s, t in zip(src_lines, tgt_lines, strict=True)]
        pairs = [e for e in pairs if e.src != [""] and e.tgt != [""]]
    else:
        pairs = tokenize_pairs(src_lines, tgt_lines, args.src, args.tgt)
        tcs = load_models(args.truecase, args.src, args.tgt) if truecase is None else truecase
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


# ----------------------------------------------------------------------------------------------
# Phase 1, config: options, processes, seeds, precision
# ----------------------------------------------------------------------------------------------


@dataclass
class Env:
    """Where and how this process trains: its options, device, rank and precision."""

    args: argparse.Namespace
    device: torch.device
    rank: int
    world: int
    distributed: bool
    precision: Precision
    cpu: CpuInfo
    out: Path

    @property
    def is_main(self) -> bool:
        return self.rank == 0

    @property
    def last_path(self) -> Path:
        return self.out / "last.pt"

    @property
    def best_path(self) -> Path:
        return self.out / "best.pt"

    @property
    def metrics_path(self) -> Path:
        return self.out / "metrics.jsonl"

    def say(self, message: str) -> None:
        """A line on stderr, from rank 0 only."""
        if self.is_main:
            print(message, file=sys.stderr)

    def refuse(self, message: str) -> NoReturn:
        """Stop with a one-line error and exit status 2 (every rank: none is left waiting)."""
        self.say(message)
        if self.distributed:
            dist.destroy_process_group()
        raise SystemExit(2)


def configure(args: argparse.Namespace) -> Env:
    """Join the process group, seed, and choose the device and precision for parsed options."""
    distributed = int(os.environ.get("WORLD_SIZE", "1")) > 1
    device = pick_device(args.device)
    rank, world = 0, 1
    if distributed:
        dist.init_process_group("nccl" if device.type == "cuda" else "gloo")
        rank, world = dist.get_rank(), dist.get_world_size()
        if device.type == "cuda":
            device = torch.device("cuda", int(os.environ.get("LOCAL_RANK", 0)))
            torch.cuda.set_device(device)
    if args.threads:
        torch.set_num_threads(args.threads)
    if device.type == "cpu":
        torch.use_deterministic_algorithms(True)
    random.seed(args.seed)
    torch.manual_seed(args.seed)
    cpu = cpu_info()
    env = Env(args, device, rank, world, distributed, choose_precision(args.amp, device, cpu), cpu, Path(args.out))
    env.say(env.precision.log_line())
    env.out.mkdir(parents=True, exist_ok=True)
    return env


# ----------------------------------------------------------------------------------------------
# Phase 2, data: the run to resume, training pairs, validation text, vocabularies
# ----------------------------------------------------------------------------------------------


@dataclass
class Data:
    """What the model is trained and validated on, and the checkpoint a resumed run continues."""

    examples: list[Example]
    v_src: list[str]
    v_tgt: list[str]
    src_vocab: Vocab
    tgt_vocab: Vocab
    sha256: str
    resume: dict[str, Any] | None
    truecase: dict[str, Truecaser] = field(default_factory=dict)  # --truecase's models, read once
    init: dict[str, Any] | None = None  # --init-from's checkpoint (a fresh run starts from its weights)


def load_data(env: Env) -> Data:
    """Check the run to resume (refusing a different model, optimiser or data), read the data, build vocabularies."""
    args = env.args
    t_load = time.time()
    if env.is_main and (gone := remove_stale_temporaries(env.out)):
        env.say(f"removed {len(gone)} temporary file(s) of an interrupted save: {', '.join(gone)}")
    data_hash = training_data_sha256(args)
    resume_ckpt = None
    if args.resume and env.last_path.exists():
        try:
            resume_ckpt = read_checkpoint(env.last_path)
        except (ValueError, RuntimeError, OSError) as err:  # damaged or not a checkpoint
            env.refuse(f"cannot resume {args.out}: {err}")
    if resume_ckpt is not None:
        fatal, differs = resume_problems(resume_ckpt, vars(args), data_hash, env.world)
        refused = refusal(args.out, fatal, differs, args.force_resume)
        if refused:
            env.refuse(refused)
        if differs:
            env.say(f"warning: --force-resume: resuming {args.out} although " + "; ".join(differs))
    truecase = load_models(args.truecase, args.src, args.tgt)
    init_ckpt = read_init(env, truecase) if args.init_from and resume_ckpt is None else None
    examples, v_src, v_tgt = load_training_data(args, truecase)
    if (base := resume_ckpt or init_ckpt) is not None:  # the weights' own vocabularies
        src_vocab, tgt_vocab = Vocab(base["src_vocab"]), Vocab(base["tgt_vocab"])
    else:
        src_vocab = Vocab.build((e.src for e in examples), args.src_vocab, args.min_freq)
        tgt_vocab = Vocab.build((e.tgt for e in examples), args.tgt_vocab, args.min_freq)
    env.say(f"{len(examples)} training pairs (≤ {args.max_len} tokens), vocab {len(src_vocab)}/{len(tgt_vocab)}, "
            f"loaded in {time.time() - t_load:.1f}s")
    return Data(examples, v_src, v_tgt, src_vocab, tgt_vocab, data_hash, resume_ckpt, truecase, init_ckpt)


def read_init(env: Env, truecase: dict[str, Truecaser]) -> dict[str, Any]:
    """``--init-from``'s checkpoint, refused (one line) when damaged or when its model, languages or
    truecase models are not the run's (:func:`nmt.training.segments.init_problems`)."""
    args = env.args
    try:
        ckpt = read_checkpoint(args.init_from)
    except CheckpointError as err:
        env.refuse(f"cannot start from {args.init_from}: {err}")
    problems = segments.init_problems(ckpt, vars(args), {side: tc.to_dict() for side, tc in truecase.items()})
    if problems:
        env.refuse(f"cannot start from {args.init_from}: " + "; ".join(problems))
    return ckpt


# ----------------------------------------------------------------------------------------------
# Phase 3, model: weights, optimiser, schedule and progress (fresh or resumed)
# ----------------------------------------------------------------------------------------------


@dataclass
class Run:
    """Everything the training loop reads and updates."""

    env: Env
    data: Data
    model: torch.nn.Module
    train_model: torch.nn.Module  # the model, or its DistributedDataParallel wrapper
    optimizer: torch.optim.Optimizer
    scheduler: torch.optim.lr_scheduler.ReduceLROnPlateau
    lm: LoadedModel  # the model as validation decodes it
    meta_base: dict[str, Any]  # what every checkpoint's meta records about the run
    # progress (nmt.training.loop.new_progress): update, epoch, batch_in_epoch, best_bleu, …, segments
    st: dict[str, Any]
    restricted: RestrictedLinear | None = None  # the output layer's V′ switch (--sampled-vocab), else None
    timeline: Any = None  # --timeline's nmt.training.timeline_record.Recorder (rank 0), else None


def compile_step(model: torch.nn.Module) -> bool:
    """Compile RNNsearch's recurrent steps with ``torch.compile`` and dynamic shapes, so that their many
    small kernels fuse (issue 20 item 5): the decoder's ``transition`` (attention, then the GRU; once per
    target position) and the encoder's (both directions' GRU; once per source position), forward and
    backward. Weights and state dict are unchanged, and training and decoding both go through the
    compiled steps. False, and nothing done, for a model without them (Luong's)."""
    if not capabilities(model).compilable:
        return False
    model.transition = torch.compile(model.transition, dynamic=True)  # type: ignore[method-assign]
    model.encoder.transition = torch.compile(model.encoder.transition, dynamic=True)  # type: ignore[method-assign]
    return True


def model_config(args: argparse.Namespace, data: Data) -> ModelConfig | LuongConfig:
    """The model the options describe, sized by the vocabularies."""
    if args.arch == "luong":
        return LuongConfig(src_vocab_size=len(data.src_vocab), tgt_vocab_size=len(data.tgt_vocab),
                           emb_dim=args.emb_dim, hidden_dim=args.hidden_dim, score=args.score,
                           attention=args.attention, window=args.window, input_feeding=args.input_feeding,
                           cell=args.cell, layers=args.layers, encoder=args.encoder, dropout=args.dropout)
    return ModelConfig(src_vocab_size=len(data.src_vocab), tgt_vocab_size=len(data.tgt_vocab),
                       emb_dim=args.emb_dim, hidden_dim=args.hidden_dim, attn_dim=args.attn_dim,
                       maxout_dim=args.maxout_dim, dropout=args.dropout, context=args.context)


def build_run(env: Env, data: Data) -> Run:
    """Build the model, optimiser and schedule, and restore them (and the RNGs) from a resumed run."""
    args = env.args
    model = build_model(model_config(args, data).to_dict()).to(env.device)
    restricted = install(model) if args.sampled_vocab else None  # same parameters, V′-only logits when set
    if args.compile and not compile_step(model):
        env.say("--compile: only RNNsearch's step can be compiled; this model trains eagerly")
    optimizer = build_optimizer(args, model)
    scheduler = torch.optim.lr_scheduler.ReduceLROnPlateau(
        optimizer, mode="max", factor=args.lr_decay, patience=args.lr_patience, min_lr=args.min_lr)
    st = {**new_progress("bleu"), "segment_start": 0, "segment_from": None, "segments_before": []}
    if data.resume is not None:
        model.load_state_dict(data.resume["model"])
        saved_lr = data.resume.get("meta", {}).get("args", {}).get("lr", args.lr)
        # --force-resume let another learning rate by: the one asked for, not the saved one, as the checkpoint records
        restore_state(data.resume["train_state"], optimizer, scheduler, st, lr=args.lr if saved_lr != args.lr else None)
        env.say(f"resumed at update {st['update']} (epoch {st['epoch']}, batch {st['batch_in_epoch']})")
    elif data.init is not None:  # a new segment: the weights go on, the optimiser starts afresh
        model.load_state_dict(segments.init_weights(data.init))
        st.update(segments.start_progress(data.init, args.init_from))
        env.say(f"starting from {args.init_from} at update {st['update']} (epoch {st['epoch']}), "
                f"learning rate warmed up over {args.warmup} updates")
    if env.is_main:
        rewind_metrics(env.metrics_path, st["update"])  # each update is logged once, also after a kill
    train_model: torch.nn.Module = model
    if env.distributed:
        train_model = DistributedDataParallel(model, find_unused_parameters=args.context != "attention")
    lm = LoadedModel(model, data.src_vocab, data.tgt_vocab, Tokenizer(args.src, data.truecase.get("src")),
                     Tokenizer(args.tgt, data.truecase.get("tgt")))
    return Run(env, data, model, train_model, optimizer, scheduler, lm, run_meta(env, data), st,
               restricted=restricted)


def run_meta(env: Env, data: Data) -> dict[str, Any]:
    """The run's options, data, device and precision, as every checkpoint records them."""
    args, device = env.args, env.device
    return {
        "args": {k: v for k, v in vars(args).items()
                 if k not in NOT_RECORDED and (args.arch == "luong" or k not in LUONG_KEYS)},
        "train_data": {"dir": str(args.data), "split": args.train_split, "sha256": data.sha256,
                       "pairs": len(data.examples)},
        "device": (torch.cuda.get_device_name(device) if device.type == "cuda"
                   else f"cpu ({torch.get_num_threads()} threads)"),
        "cpu": env.cpu.model, "precision": env.precision.name, "precision_reason": env.precision.reason,
        "world_size": env.world, "torch": str(torch.__version__),
    }


