"""Train deep fusion's controller (Gülçehre et al. 2015 §4.2) on parallel text, TM and LM frozen.

    nice -n 10 python scripts/train_fusion.py --tm checkpoints/europarl-en-fr-rnnsearch-50.pt \\
        --lm checkpoints/fusion/tatoeba-fr-lm.pt --data ../shared/data/tatoeba-fr-en \\
        --out checkpoints/fusion/europarl-en-fr-deep-fusion.pt --minutes 15 --threads 1

Only the gate (v_g, b_g) and W_f of :class:`nmt.fusion.DeepFusionController` learn; the TM's and
the LM's weights are frozen (``requires_grad`` off, eval mode). The loss is the cross-entropy of the
TM's own deep output with W_f (g_i s_i^LM) added to t̃_i (:meth:`nmt.model.RNNSearch.log_probs`), over
the TM's teacher-forced states (:meth:`nmt.model.RNNSearch.teacher_force`) and the LM's
(:meth:`nmt.lm.GRULanguageModel.teacher_force`). The checkpoint is small (the controller only) and
records which TM and LM it belongs to (file names and weight digests), the data hash, device, time,
and the held-out loss per token before (= the TM alone, W_f = 0) and after.
"""

from __future__ import annotations

import argparse
import json
import platform
import random
import sys
import time
from pathlib import Path
from typing import Any

import torch

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from nmt import checkpoint, cli
from nmt.data import Example, files_sha256, make_batch, read_parallel, tokenize_pairs
from nmt.fusion import CONTROLLER_ARCH, DeepFusionController, load_lm
from nmt.lm import GRULanguageModel
from nmt.model import RNNSearch
from nmt.vocab import PAD_ID
from scripts.train_lm import TATOEBA_CREDIT


def fused_loss(tm: RNNSearch, lm: GRULanguageModel, ctl: DeepFusionController, batch: Any) -> torch.Tensor:
    """Summed cross-entropy of deep fusion over a batch (the TM's and LM's passes without gradients)."""
    with torch.no_grad():
        forced = tm.teacher_force(tm.encode(batch.src, batch.src_len), batch.tgt_in, readout=False)
        h_lm, _ = lm.teacher_force(batch.tgt_in)  # (B, T, n_LM): s_i^LM predicts y_i
    _, extra = ctl(h_lm)  # (B, T, 2l)
    log_probs = tm.log_probs(forced.s_prev, forced.y_emb, forced.context, extra)  # (B, T, K_y)
    return torch.nn.functional.nll_loss(log_probs.flatten(0, 1), batch.tgt_out.flatten(), ignore_index=PAD_ID,
                                        reduction="sum")


@torch.no_grad()
def held_out(tm: RNNSearch, lm: GRULanguageModel, ctl: DeepFusionController, batches: list) -> float:
    """Mean cross-entropy per target token over held-out batches."""
    total = sum(float(fused_loss(tm, lm, ctl, b)) for b in batches)
    return round(total / sum(b.n_tgt_tokens for b in batches), 4)


def digest(path: Path) -> str | None:
    """The weights digest a checkpoint records (which TM / LM a controller belongs to)."""
    return checkpoint.read_checkpoint(path, mmap=True).get("weights_sha256")


def pairs(args: argparse.Namespace, split: str, limit: int | None, seed: int) -> list[Example]:
    """Tokenised pairs of a split (a random ``limit`` of them), both sides ≤ 50 words."""
    src, tgt = read_parallel(args.data, split, "en", "fr")
    idx = list(range(len(src)))
    random.Random(seed).shuffle(idx)
    idx = idx[:limit] if limit else idx
    ex = tokenize_pairs([src[i] for i in idx], [tgt[i] for i in idx], "en", "fr")
    return [e for e in ex if 0 < len(e.src) <= 50 and 0 < len(e.tgt) <= 50]


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--tm", type=Path, required=True)
    p.add_argument("--lm", type=Path, required=True)
    p.add_argument("--data", type=Path, required=True)
    p.add_argument("--out", type=Path, required=True)
    p.add_argument("--train-pairs", type=int, default=40000)
    p.add_argument("--valid-pairs", type=int, default=300)
    p.add_argument("--batch-size", type=int, default=64)
    p.add_argument("--lr", type=float, default=1e-3)
    p.add_argument("--minutes", type=float, default=15.0)
    p.add_argument("--threads", type=int, default=1)
    p.add_argument("--seed", type=int, default=1234)
    args = p.parse_args(argv)
    torch.set_num_threads(args.threads)
    torch.manual_seed(args.seed)
    tm_l, lm_l = checkpoint.load(args.tm), load_lm(args.lm)
    tm, lm = tm_l.model.requires_grad_(False).eval(), lm_l.model.requires_grad_(False).eval()
    ctl = DeepFusionController(lm.cfg.hidden_dim, 2 * tm.cfg.maxout_dim)
    train = pairs(args, "train", args.train_pairs, args.seed)
    valid = [make_batch(train_b, tm_l.src_vocab, tm_l.tgt_vocab) for train_b in
             (lambda ex: [ex[k : k + 100] for k in range(0, len(ex), 100)])(pairs(args, "dev", args.valid_pairs, 0))]
    before = held_out(tm, lm, ctl, valid)
    print(f"train {len(train)} pairs; held-out loss/token before (TM alone) {before}", flush=True)
    opt = torch.optim.Adam(ctl.parameters(), lr=args.lr)
    t0, updates, tokens = time.time(), 0, 0
    rng = random.Random(args.seed)
    while time.time() - t0 < args.minutes * 60:
        rng.shuffle(train)
        chunk = sorted(train[: args.batch_size * 20], key=lambda e: len(e.tgt))
        for k in range(0, len(chunk), args.batch_size):
            batch = make_batch(chunk[k : k + args.batch_size], tm_l.src_vocab, tm_l.tgt_vocab)
            loss = fused_loss(tm, lm, ctl, batch)
            opt.zero_grad()
            (loss / batch.n_tgt_tokens).backward()
            opt.step()
            updates, tokens = updates + 1, tokens + batch.n_tgt_tokens
            if updates % 20 == 0:
                print(f"update {updates} loss/token {loss.item() / batch.n_tgt_tokens:.3f} "
                      f"{tokens / (time.time() - t0):.0f} tok/s", flush=True)
    elapsed = time.time() - t0
    after = held_out(tm, lm, ctl, valid)
    weights = {k: v.detach().cpu().half() for k, v in ctl.state_dict().items()}
    meta = {
        "kind": "deep-fusion controller (Gülçehre et al. 2015 §4.2): gate v_g, b_g and W_f only",
        "args": {k: str(v) if isinstance(v, Path) else v for k, v in vars(args).items()},
        "tm": {"file": args.tm.name, "weights_sha256": digest(args.tm)},
        "lm": {"file": args.lm.name, "weights_sha256": digest(args.lm)},
        "train_data": {"dir": args.data.name, "split": "train", "pairs_used": len(train),
                       "sha256": files_sha256([args.data / "train.en.gz", args.data / "train.fr.gz"])},
        "device": "cpu", "cpu": platform.processor() or platform.machine(), "threads": args.threads,
        "torch": torch.__version__, "updates": updates, "train_tokens": tokens, "train_seconds": round(elapsed, 1),
        "written": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()),
        "scores": {f"{args.data.name}/dev[:{args.valid_pairs}]": {"loss_per_token_tm_alone": before,
                                                                 "loss_per_token_deep_fusion": after}},
        "credit": TATOEBA_CREDIT,
    }
    cfg = {"arch": CONTROLLER_ARCH, "lm_hidden": lm.cfg.hidden_dim, "readout_dim": 2 * tm.cfg.maxout_dim}
    ckpt = {"format": checkpoint.FORMAT, "config": cfg, "model": weights,
            "weights_sha256": checkpoint.weights_digest(weights), "meta": meta}
    checkpoint.atomic_save(ckpt, args.out)
    print(json.dumps(meta["scores"]), flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(cli.refusing(main))  # a bad checkpoint or corpus: one line, exit status 2
