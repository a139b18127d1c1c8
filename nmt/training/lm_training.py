"""The fusion language model's task for the one training loop (:mod:`nmt.training.loop`), as
``python -m scripts.train_lm`` runs it: the target-side GRU LM of :mod:`nmt.models.lm` on monolingual text, in
a translation model's target vocabulary, written as a small checkpoint for fusion (:mod:`nmt.decoding.fusion`).

The text is Moses-tokenised like the translation model's target side (:class:`nmt.text.tokenize.Tokenizer`)
and looked up in its target vocabulary (the ids must match word for word); tokenised ids are cached
under ``runs/`` (git-ignored). Batches: sentences of similar lengths, shuffled by one
``random.Random(seed)`` that goes on from epoch to epoch. Loss: the summed cross-entropy of an exact
softmax over the words the training text holds (:func:`restricted_loss`). No validation while
training; the checkpoint (fp16, embedding int8 per row) is written every ``--save-minutes``, when the
run stops, and at the end with the held-out perplexity and the floor given to unseen words.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import math
import platform
import random
import time
from pathlib import Path
from typing import Any

import torch

from nmt.models import checkpoint, quantize
from nmt.models.lm import GRULanguageModel, LMConfig, lm_loss
from nmt.text import atomic
from nmt.text.data import corpus_file, files_sha256, pad_ids, read_lines
from nmt.text.tokenize import Tokenizer
from nmt.text.vocab import BOS_ID, PAD_ID, Vocab
from nmt.training import loop

TATOEBA_CREDIT = ("Trained on the French side of Tatoeba sentence pairs (tatoeba.org, CC-BY 2.0 FR) as packaged "
                  "by www.manythings.org/anki; attribution: \"www.manythings.org/anki and tatoeba.org\".")
# Options a resumed run must share with the saved one (the model, the data and its order, the recipe).
RESUME_KEYS = ("tm", "data", "split", "emb_dim", "hidden_dim", "dropout", "batch_size", "lr", "max_len", "limit",
               "seed")


def vocab_digest(words: list[str]) -> str:
    """SHA-256 of a vocabulary's word list (one word a line): which vocabulary an LM reads."""
    return hashlib.sha256("\n".join(words).encode()).hexdigest()


def encoded(path: Path, vocab: Vocab, lang: str, cache_dir: Path, max_len: int) -> list[list[int]]:
    """Token ids (with ``</s>``) of every line of ``path`` no longer than ``max_len`` words, cached."""
    key = hashlib.sha256(f"{files_sha256([path])}|{vocab_digest(vocab.itos)}|{lang}|{max_len}".encode()).hexdigest()
    cache = cache_dir / f"lm-ids-{key[:16]}.pt"
    if cache.exists():
        return load_ids(cache)
    tok = Tokenizer(lang)
    ids = [vocab.encode(t) for t in (tok.tokenize(line) for line in read_lines(path)) if 0 < len(t) <= max_len]
    save_ids(ids, cache)
    return ids


def save_ids(ids: list[list[int]], cache: Path) -> None:
    """Write the token-id cache atomically (:mod:`nmt.text.atomic`): the next run reads it as it stands, so a
    kill mid-write must leave no half of one (a truncated cache made every later run fail to load it)."""
    with atomic.atomic_path(cache) as tmp:
        torch.save(ids, tmp)


def load_ids(cache: Path) -> list[list[int]]:
    """The token ids :func:`save_ids` wrote."""
    return torch.load(cache, weights_only=True)


def shortlist(seqs: list[list[int]]) -> torch.Tensor:
    """V': the sorted ids of the words the training text holds (``<pad>`` first, so it stays at 0)."""
    return torch.tensor(sorted({PAD_ID} | {i for s in seqs for i in s}))


def restricted_loss(model: GRULanguageModel, rows: torch.Tensor, pos: torch.Tensor, tgt_in: torch.Tensor,
                    tgt_out: torch.Tensor) -> torch.Tensor:
    """Summed cross-entropy of the softmax over V' = ``rows`` only (``pos`` maps an id to its place in V').

    Exact, not sampled: V' is every word of the training text, so no target falls outside it and the
    loss equals the full softmax's with the other words' logits at −∞ (Jean et al. 2015 §3 with one
    partition); it saves the output layer's cost for the ~40 % of the vocabulary the text never uses."""
    logits = model.teacher_force(tgt_in, rows)[1]  # (B, T, |V'|): the model's own forward
    return torch.nn.functional.cross_entropy(logits.flatten(0, 1), pos[tgt_out].flatten(), ignore_index=PAD_ID,
                                             reduction="sum")


@torch.no_grad()
def floor_unseen(model: GRULanguageModel, rows: torch.Tensor) -> float:
    """Give the words outside V' (never trained) a zero embedding and the bias b_min − log |unseen|
    (b_min: the smallest bias of a word in V'), so together they weigh about as much as one of the
    rarest seen words, and none is rated at random; returns that bias."""
    unseen = torch.ones(model.cfg.vocab_size, dtype=torch.bool)
    unseen[rows] = False
    unseen[PAD_ID] = False
    floor = float(model.out_bias[rows[1:]].min()) - math.log(max(int(unseen.sum()), 1))
    model.out_bias[unseen] = floor
    model.embed.weight[unseen] = 0.0
    return floor


def lm_groups(seqs: list[list[int]], batch_size: int, rng: random.Random | None) -> list[list[int]]:
    """Indices of ``seqs`` in batches of similar lengths; shuffled (drawing from ``rng``) when it is given."""
    order = sorted(range(len(seqs)), key=lambda i: (len(seqs[i]), rng.random() if rng else 0))
    groups = [order[k : k + batch_size] for k in range(0, len(order), batch_size)]
    if rng:
        rng.shuffle(groups)
    return groups


def lm_batches(seqs: list[list[int]], batch_size: int, rng: random.Random | None) -> list[tuple[torch.Tensor, ...]]:
    """(tgt_in, tgt_out) batches (B, T) of similar lengths; shuffled when ``rng`` is given."""
    out = []
    for g in lm_groups(seqs, batch_size, rng):
        tgt_out, lens = pad_ids([seqs[i] for i in g])
        tgt_in = torch.cat([torch.full_like(tgt_out[:, :1], BOS_ID), tgt_out[:, :-1]], dim=1)
        tgt_in.masked_fill_(torch.arange(tgt_in.shape[1]) >= lens.unsqueeze(1), PAD_ID)
        out.append((tgt_in, tgt_out))
    return out


@torch.no_grad()
def perplexity(model: GRULanguageModel, seqs: list[list[int]], batch_size: int = 128) -> dict[str, float]:
    """exp(mean cross-entropy per token, ``</s>`` included) over held-out sentences."""
    model.eval()
    nll, n = 0.0, 0
    for tgt_in, tgt_out in lm_batches(seqs, batch_size, None):
        nll += float(lm_loss(model, tgt_in, tgt_out))
        n += int((tgt_out != PAD_ID).sum())
    model.train()
    return {"perplexity": round(math.exp(nll / n), 2), "tokens": n, "sentences": len(seqs)}


def lm_checkpoint(model: GRULanguageModel, vocab: Vocab, lang: str, meta: dict[str, Any]) -> dict[str, Any]:
    """Checkpoint dict: fp16 weights with the (tied) embedding int8 per row (:mod:`nmt.models.quantize`)."""
    weights = {k: v.detach().cpu().half() if v.is_floating_point() else v.detach().cpu()
               for k, v in model.state_dict().items()}
    ckpt = {"format": checkpoint.FORMAT, "config": model.cfg.to_dict(), "model": weights,
            "weights_sha256": checkpoint.weights_digest(weights), "tgt_lang": lang, "tgt_vocab": vocab.to_list(),
            "meta": meta}
    ckpt = checkpoint.int8_storage(ckpt, ["embed.weight"])
    assert quantize.int8_names(ckpt["model"]) == ["embed.weight"]
    return ckpt


NOT_RECORDED = ("state", "resume", "progress")  # options of one invocation, not of the run


def recorded_args(args: argparse.Namespace) -> dict[str, Any]:
    """The options as a checkpoint records them (paths as text)."""
    return {k: str(v) if isinstance(v, Path) else v for k, v in vars(args).items() if k not in NOT_RECORDED}


def loop_config(args: argparse.Namespace) -> loop.LoopConfig:
    """The LM's schedule: epochs, a time budget, saves every ``--save-minutes`` (and, with ``--state``, at
    each epoch's end, so a finished run can go on for more epochs), gradient norm ≤ 1."""
    return loop.LoopConfig(epochs=args.epochs, max_updates=args.max_updates, time_budget_s=args.minutes * 60,
                           save_every_s=args.save_minutes * 60, save_each_epoch=args.state is not None, clip=1.0,
                           log_every=50, progress=args.progress)


class LMTask:
    """The fusion LM on monolingual text (a :class:`nmt.training.loop.Task`; set up as the old script did,
    seeds first)."""

    scheduler = None  # a fixed learning rate

    def __init__(self, args: argparse.Namespace) -> None:
        self.args = args
        torch.set_num_threads(args.threads)
        torch.manual_seed(args.seed)
        self.tm = checkpoint.read_checkpoint(args.tm, mmap=True)
        self.vocab, self.lang = Vocab(self.tm["tgt_vocab"]), self.tm["tgt_lang"]
        self.train_path = corpus_file(args.data, args.split, self.lang)
        valid_path = corpus_file(args.data, args.valid, self.lang)
        cache = Path("runs") / "lm-cache"
        self.train = encoded(self.train_path, self.vocab, self.lang, cache, args.max_len)[: args.limit]
        self.valid = encoded(valid_path, self.vocab, self.lang, cache, 10**6)
        print(f"train {len(self.train)} sentences, {sum(map(len, self.train))} tokens; valid {len(self.valid)}",
              flush=True)
        self.model = GRULanguageModel(LMConfig(len(self.vocab), args.emb_dim, args.hidden_dim, args.dropout))
        self.optimizer = torch.optim.Adam(self.model.parameters(), lr=args.lr)
        self.rows = shortlist(self.train)
        self.pos = torch.zeros(len(self.vocab), dtype=torch.long)
        self.pos[self.rows] = torch.arange(len(self.rows))
        self.rng, self.epochs_drawn = random.Random(args.seed), 0  # epochs whose order the rng has drawn
        self.progress = loop.new_progress()
        if args.resume and args.state and args.state.exists():
            loop.load_state_file(args.state, self.model, self, recorded_args(args), RESUME_KEYS)
            print(f"resumed at update {self.progress['update']} (epoch {self.progress['epoch']})", flush=True)

    def batches(self, epoch: int) -> list[tuple[torch.Tensor, ...]]:
        """Epoch ``epoch``'s batches: the rng's draws of the epochs before are replayed (a resumed run)."""
        if epoch < self.epochs_drawn:
            self.rng, self.epochs_drawn = random.Random(self.args.seed), 0
        for _ in range(self.epochs_drawn, epoch):
            lm_groups(self.train, self.args.batch_size, self.rng)
        self.epochs_drawn = epoch + 1
        return lm_batches(self.train, self.args.batch_size, self.rng)

    def loss(self, batch: tuple[torch.Tensor, ...]) -> tuple[torch.Tensor, int]:
        """Summed cross-entropy over V' (:func:`restricted_loss`) and the batch's target tokens."""
        tgt_in, tgt_out = batch
        return restricted_loss(self.model, self.rows, self.pos, tgt_in, tgt_out), int((tgt_out != PAD_ID).sum())

    def before_step(self, progress: dict[str, Any]) -> None:
        """Nothing: the learning rate is fixed."""

    def evaluate(self) -> None:
        """No validation while training (the perplexity is measured at the end)."""

    def after_update(self, progress: dict[str, Any]) -> None:
        """No hook."""

    def log(self, record: dict[str, Any]) -> None:
        """A progress line on stdout."""
        print(f"epoch {record['epoch'] - 1} update {record['update']} loss/token {record['loss']:.3f} "
              f"{record['tok_s']:.0f} tok/s {record['elapsed'] / 60:.1f} min", flush=True)

    def save(self, kind: str, train_state: dict[str, Any] | None) -> None:
        """The checkpoint so far (not final) and, with ``--state``, what ``--resume`` needs."""
        if self.args.state is not None:
            loop.save_state_file(self.args.state, self.model, self, recorded_args(self.args))
        self.write(final=False)

    def write(self, final: bool) -> None:
        """Write the checkpoint; the final one first floors the unseen words and measures the perplexity."""
        args, st, vocab = self.args, self.progress, self.vocab
        meta: dict[str, Any] = {
            "kind": "target-side GRU language model for fusion (Gülçehre et al. 2015)", "args": recorded_args(args),
            "vocabulary": {"of": args.tm.name, "tm_weights_sha256": self.tm.get("weights_sha256"),
                           "words": len(vocab), "sha256": vocab_digest(vocab.itos)},
            "train_data": {"dir": args.data.name, "split": args.split, "file": self.train_path.name,
                           "sha256": files_sha256([self.train_path]), "sentences": len(self.train)},
            "device": "cpu", "cpu": platform.processor() or platform.machine(), "threads": args.threads,
            "torch": torch.__version__, "updates": st["update"], "train_tokens": st["tokens"],
            "train_seconds": round(st["elapsed"], 1),
            "train_tokens_per_s": round(st["tokens"] / max(st["elapsed"], 1e-9), 1),
            "finished": final, "written": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()),
            "credit": TATOEBA_CREDIT,
        }
        if final:
            meta["unseen_words"] = {"count": len(vocab) - len(self.rows), "bias": floor_unseen(self.model, self.rows),
                                    "rule": "words absent from the training text: zero embedding, bias = the "
                                            "smallest bias of a seen word - log(count) (trained on a softmax "
                                            "over the seen words only)"}
            meta["scores"] = {f"{args.data.name}/{args.valid}": perplexity(self.model, self.valid)}
        checkpoint.atomic_save(lm_checkpoint(self.model, vocab, self.lang, meta), args.out)
        print(json.dumps({k: meta[k] for k in ("updates", "train_seconds", "train_tokens_per_s")} |
                         {"scores": meta.get("scores")}), flush=True)


def train_lm(args: argparse.Namespace) -> dict[str, Any]:
    """Train the LM with the one loop and write its final checkpoint; the progress."""
    task = LMTask(args)
    st = loop.train(task, loop_config(args))
    task.write(final=True)
    return st
