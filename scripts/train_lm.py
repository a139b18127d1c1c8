"""Train the target-side GRU language model of :mod:`nmt.lm` on monolingual text, in a translation
model's target vocabulary, and write a small checkpoint for fusion (:mod:`nmt.fusion`).

    nice -n 10 python scripts/train_lm.py --tm checkpoints/europarl-en-fr-rnnsearch-50.pt \\
        --data ../shared/data/tatoeba-fr-en --split train --valid dev \\
        --out checkpoints/fusion/tatoeba-fr-lm.pt --minutes 35 --threads 1

The text is Moses-tokenised like the translation model's target side (:class:`nmt.tokenize.Tokenizer`)
and looked up in its target vocabulary (the ids must match word for word). Training stops after
``--epochs`` or ``--minutes``, whichever comes first; every ``--save-minutes`` and at the end the
checkpoint (fp16, embedding int8 per row) is written with its config, vocabulary reference, data hash,
device, time and held-out perplexity. Tokenised ids are cached under ``runs/`` (git-ignored).
"""

from __future__ import annotations

import argparse
import hashlib
import json
import math
import platform
import random
import sys
import time
from pathlib import Path
from typing import Any

import torch

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from nmt import checkpoint, cli, quantize
from nmt.data import corpus_file, files_sha256, pad_ids, read_lines
from nmt.lm import GRULanguageModel, LMConfig, lm_loss
from nmt.tokenize import Tokenizer
from nmt.vocab import BOS_ID, PAD_ID, Vocab

TATOEBA_CREDIT = ("Trained on the French side of Tatoeba sentence pairs (tatoeba.org, CC-BY 2.0 FR) as packaged "
                  "by www.manythings.org/anki; attribution: \"www.manythings.org/anki and tatoeba.org\".")


def vocab_digest(words: list[str]) -> str:
    """SHA-256 of a vocabulary's word list (one word a line): which vocabulary an LM reads."""
    return hashlib.sha256("\n".join(words).encode()).hexdigest()


def encoded(path: Path, vocab: Vocab, lang: str, cache_dir: Path, max_len: int) -> list[list[int]]:
    """Token ids (with ``</s>``) of every line of ``path`` no longer than ``max_len`` words, cached."""
    key = hashlib.sha256(f"{files_sha256([path])}|{vocab_digest(vocab.itos)}|{lang}|{max_len}".encode()).hexdigest()
    cache = cache_dir / f"lm-ids-{key[:16]}.pt"
    if cache.exists():
        return torch.load(cache, weights_only=True)
    tok = Tokenizer(lang)
    ids = [vocab.encode(t) for t in (tok.tokenize(line) for line in read_lines(path)) if 0 < len(t) <= max_len]
    cache_dir.mkdir(parents=True, exist_ok=True)
    torch.save(ids, cache)
    return ids


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


def lm_batches(seqs: list[list[int]], batch_size: int, rng: random.Random | None) -> list[tuple[torch.Tensor, ...]]:
    """(tgt_in, tgt_out) batches of similar lengths; shuffled when ``rng`` is given."""
    order = sorted(range(len(seqs)), key=lambda i: (len(seqs[i]), rng.random() if rng else 0))
    groups = [order[k : k + batch_size] for k in range(0, len(order), batch_size)]
    if rng:
        rng.shuffle(groups)
    out = []
    for g in groups:
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
    """Checkpoint dict: fp16 weights with the (tied) embedding int8 per row (:mod:`nmt.quantize`)."""
    weights = {k: v.detach().cpu().half() if v.is_floating_point() else v.detach().cpu()
               for k, v in model.state_dict().items()}
    ckpt = {"format": checkpoint.FORMAT, "config": model.cfg.to_dict(), "model": weights,
            "weights_sha256": checkpoint.weights_digest(weights), "tgt_lang": lang, "tgt_vocab": vocab.to_list(),
            "meta": meta}
    ckpt = checkpoint.int8_storage(ckpt, ["embed.weight"])
    assert quantize.int8_names(ckpt["model"]) == ["embed.weight"]
    return ckpt


def parse(argv: list[str] | None) -> argparse.Namespace:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--tm", type=Path, required=True, help="translation model whose target vocabulary the LM reads")
    p.add_argument("--data", type=Path, required=True)
    p.add_argument("--split", default="train")
    p.add_argument("--valid", default="dev")
    p.add_argument("--out", type=Path, required=True)
    p.add_argument("--emb-dim", type=int, default=256)
    p.add_argument("--hidden-dim", type=int, default=512)
    p.add_argument("--dropout", type=float, default=0.1)
    p.add_argument("--batch-size", type=int, default=64)
    p.add_argument("--lr", type=float, default=2e-3)
    p.add_argument("--epochs", type=int, default=3)
    p.add_argument("--minutes", type=float, default=40.0, help="training time budget")
    p.add_argument("--save-minutes", type=float, default=5.0)
    p.add_argument("--max-len", type=int, default=50)
    p.add_argument("--limit", type=int, default=None, help="first N training sentences only")
    p.add_argument("--threads", type=int, default=1)
    p.add_argument("--seed", type=int, default=1234)
    return p.parse_args(argv)


def main(argv: list[str] | None = None) -> int:
    args = parse(argv)
    torch.set_num_threads(args.threads)
    torch.manual_seed(args.seed)
    tm = checkpoint.read_checkpoint(args.tm, mmap=True)
    vocab, lang = Vocab(tm["tgt_vocab"]), tm["tgt_lang"]
    train_path, valid_path = corpus_file(args.data, args.split, lang), corpus_file(args.data, args.valid, lang)
    cache = Path("runs") / "lm-cache"
    train = encoded(train_path, vocab, lang, cache, args.max_len)[: args.limit]
    valid = encoded(valid_path, vocab, lang, cache, 10**6)
    print(f"train {len(train)} sentences, {sum(map(len, train))} tokens; valid {len(valid)}", flush=True)
    model = GRULanguageModel(LMConfig(len(vocab), args.emb_dim, args.hidden_dim, args.dropout))
    opt = torch.optim.Adam(model.parameters(), lr=args.lr)
    rows = shortlist(train)
    pos = torch.zeros(len(vocab), dtype=torch.long)
    pos[rows] = torch.arange(len(rows))
    rng = random.Random(args.seed)
    t0 = last_save = time.time()
    tokens = updates = 0
    meta: dict[str, Any] = {}

    def save(final: bool) -> None:
        elapsed = time.time() - t0
        meta.update({
            "kind": "target-side GRU language model for fusion (Gülçehre et al. 2015)",
            "args": {k: str(v) if isinstance(v, Path) else v for k, v in vars(args).items()},
            "vocabulary": {"of": args.tm.name, "tm_weights_sha256": tm.get("weights_sha256"),
                           "words": len(vocab), "sha256": vocab_digest(vocab.itos)},
            "train_data": {"dir": args.data.name, "split": args.split, "file": train_path.name,
                           "sha256": files_sha256([train_path]), "sentences": len(train)},
            "device": "cpu", "cpu": platform.processor() or platform.machine(), "threads": args.threads,
            "torch": torch.__version__, "updates": updates, "train_tokens": tokens,
            "train_seconds": round(elapsed, 1), "train_tokens_per_s": round(tokens / max(elapsed, 1e-9), 1),
            "finished": final, "written": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()),
            "credit": TATOEBA_CREDIT,
        })
        if final:
            meta["unseen_words"] = {"count": len(vocab) - len(rows), "bias": floor_unseen(model, rows),
                                    "rule": "words absent from the training text: zero embedding, bias = the "
                                            "smallest bias of a seen word - log(count) (trained on a softmax "
                                            "over the seen words only)"}
            meta["scores"] = {f"{args.data.name}/{args.valid}": perplexity(model, valid)}
        checkpoint.atomic_save(lm_checkpoint(model, vocab, lang, meta), args.out)
        print(json.dumps({k: meta[k] for k in ("updates", "train_seconds", "train_tokens_per_s")} |
                         {"scores": meta.get("scores")}), flush=True)

    model.train()
    done = False
    for epoch in range(args.epochs):
        for tgt_in, tgt_out in lm_batches(train, args.batch_size, rng):
            n = int((tgt_out != PAD_ID).sum())
            loss = restricted_loss(model, rows, pos, tgt_in, tgt_out)
            opt.zero_grad()
            (loss / n).backward()
            torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
            opt.step()
            tokens, updates = tokens + n, updates + 1
            if updates % 50 == 0:
                el = time.time() - t0
                print(f"epoch {epoch} update {updates} loss/token {loss.item() / n:.3f} "
                      f"{tokens / el:.0f} tok/s {el / 60:.1f} min", flush=True)
            if time.time() - t0 > args.minutes * 60:
                done = True
                break
            if time.time() - last_save > args.save_minutes * 60:
                save(final=False)
                last_save = time.time()
        if done:
            break
    save(final=True)
    return 0


if __name__ == "__main__":
    sys.exit(cli.refusing(main))  # a bad checkpoint or corpus: one line, exit status 2
