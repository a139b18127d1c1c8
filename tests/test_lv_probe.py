"""scripts/lv_probe.py: the probe's choice of batch and softmax, and its minibatches (issue 20 item 5)."""

from __future__ import annotations

import random
import shutil
from pathlib import Path

import pytest
import torch

from scripts.lv_probe import choose, make_batches


def row(batch: int, tau: int, tok_s: float, worst: float | None, compiled: bool = False) -> dict:
    return {"batch": batch, "tau": tau, "tok_s": tok_s, "worst_case_gb": worst, "compiled": compiled}


def test_choice_by_hand() -> None:
    rows = [row(512, 0, 100e3, 10), row(512, 8000, 110e3, 8), row(1024, 0, 180e3, 20), row(1024, 8000, 220e3, 15),
            row(2048, 0, 260e3, 70), row(2048, 8000, 230e3, 30)]
    # 2048 with the full softmax needs 70 GB > 0.85 × 80: out. Fastest left 230k; 0.85 × 230k = 195.5k, so
    # 1024 (220k) is the smallest batch near it; there τ = 8000 is 220 / 180 = 1.22 × faster (≥ 1.15): taken.
    assert choose(rows, 80.0) == (1024, 8000, False)
    # Without the memory limit 2048/full (260k) is fastest: 0.85 × 260k = 221k leaves only 2048 itself,
    # where the partition softmax is slower: the full softmax.
    assert choose(rows, None) == (2048, 0, False)
    # τ only 1.1 × faster (< 1.15): the full softmax.
    assert choose([row(512, 0, 100e3, 1), row(512, 8000, 110e3, 1)], 80.0) == (512, 0, False)
    # two runs on one GPU: each worst case in 0.42 × 80 = 33.6 GB leaves 512 and 1024 and 2048/τ (30 GB);
    # fastest 230k again, so 1024 with τ as above; at 0.2 × 80 = 16 GB only 512 (10, 8) and 1024/τ (15) fit:
    # fastest 220k, 0.85 × 220k = 187k: 1024, and no full softmax fits there to compare with: τ.
    assert choose(rows, 80.0, 0.42) == (1024, 8000, False)
    assert choose(rows, 80.0, 0.2) == (1024, 8000, False)
    assert choose(rows, 80.0, 0.12) == (512, 8000, False)  # 9.6 GB: only 512/τ (8 GB) fits
    # nothing fits: the smallest batch, full softmax
    assert choose([row(512, 0, 1, 99), row(1024, 0, 2, 99)], 80.0) == (512, 0, False)


def test_compiled_rows_count_at_their_faster_variant() -> None:
    rows = [row(1024, 0, 200e3, 20), row(1024, 8000, 210e3, 15), row(2048, 0, 300e3, 30), row(2048, 8000, 320e3, 25),
            row(2048, 0, 500e3, 28, True), row(2048, 8000, 560e3, 24, True)]
    # 2048 compiled: 560k fastest; 0.85 × 560k = 476k leaves only 2048; there τ compiled 560k against full
    # compiled 500k is 1.12 × (< 1.15): the full softmax, compiled.
    assert choose(rows, 80.0) == (2048, 0, True)
    # compiled τ at 600k (1.2 ×): τ, compiled
    assert choose([*rows[:5], row(2048, 8000, 600e3, 24, True)], 80.0) == (2048, 8000, True)
    # the compiled rows slower than eager: eager (1024: 210/200 = 1.05, no τ; 2048 eager 320k is the best)
    slow = [*rows[:4], row(2048, 0, 100e3, 28, True), row(2048, 8000, 100e3, 24, True)]
    assert choose(slow, 80.0) == (2048, 0, False)


def test_compile_step_wraps_rnnsearch_only() -> None:
    from nmt.models.luong import LuongConfig, LuongNMT
    from nmt.models.rnnsearch import ModelConfig, RNNSearch
    from nmt.training.setup import compile_step

    model = RNNSearch(ModelConfig(20, 30, 8, 16, 16, 8))
    keys = list(model.state_dict())
    plain = model.transition
    assert compile_step(model) and model.transition is not plain  # compiled lazily: no call needed here
    assert list(model.state_dict()) == keys  # the weights and their names are unchanged
    luong = LuongNMT(LuongConfig(20, 30, 8, 16))
    assert not compile_step(luong) and "transition" not in vars(luong)


def test_batches_have_the_lengths_given_sorted_in_the_chunk_and_targets_in_v_prime() -> None:
    lengths = [(3, 2), (5, 4), (1, 1), (5, 6), (2, 3)]
    bs = make_batches(lengths, 4, (50, 60), [7, 9, 11], random.Random(0), chunks=3)
    assert len(bs) == 3 and all(b.src.shape[0] == 4 for b in bs)
    firsts = [(int(b.src_len[0]), int(b.tgt_len[0])) for b in bs]
    assert firsts == sorted(firsts)  # sorted across the chunk (App. B.2)
    for b in bs:
        for s_len, t_len, src, out, inp in zip(b.src_len, b.tgt_len, b.src, b.tgt_out, b.tgt_in, strict=True):
            assert (int(s_len) - 1, int(t_len) - 1) in lengths  # + </s>
            assert int(src[s_len - 1]) == 3 and int(out[t_len - 1]) == 3  # </s> ends each side
            assert set(out[: t_len - 1].tolist()) <= {7, 9, 11}
            assert inp[0] == 2 and inp[1:t_len].tolist() == out[: t_len - 1].tolist()  # <s> y_1 … y_T
            assert (src[: s_len - 1] >= 4).all() and (src[: s_len - 1] < 50).all()


def test_large_vocab_entry_sums_the_runs_medians_and_keeps_the_rest(tmp_path: Path) -> None:
    import json

    from scripts.gpu_throughput import large_vocab

    (tmp_path / "probe.json").write_text(json.dumps({"chosen": {"batch": 2048}}))
    for name, rates in (("rnnsearch", [1, 2, 10, 30, 20]), ("rnnencdec", [5, 5, 100, 300, 200, 400])):
        run = tmp_path / "runs" / f"large-vocab-en-fr-{name}"
        run.mkdir(parents=True)
        (run / "summary.json").write_text(json.dumps({"updates": len(rates)}))
        lines = [{"type": "train", "tok_s": r} for r in rates] + [{"type": "valid", "bleu": 1.0}]
        (run / "metrics.jsonl").write_text("\n".join(map(json.dumps, lines)))
    dest = tmp_path / "results-gpu.json"
    dest.write_text(json.dumps({"date": "earlier"}))
    out = large_vocab(tmp_path, dest)
    entry = out["large_vocab_30k"]
    # the first two windows left out: medians of [10, 30, 20] = 20 and [100, 300, 200, 400] = 250
    assert entry["runs"]["large-vocab-en-fr-rnnsearch"]["median_tok_s"] == 20
    assert entry["runs"]["large-vocab-en-fr-rnnencdec"]["median_tok_s"] == 250
    assert entry["aggregate_tok_s"] == 270
    assert out["date"] == "earlier" and entry["probe"] == {"chosen": {"batch": 2048}}


@pytest.mark.skipif(shutil.which("g++") is None and shutil.which("cc") is None,
                    reason="torch.compile on the CPU needs a C++ compiler")
def test_compiled_steps_give_the_eager_loss_and_gradients() -> None:
    """train.py --compile compiles the decoder's and the encoder's steps; a tiny RNNsearch's loss and every
    gradient are the eager ones (float32 on the CPU; two batch lengths). On torch 2.13 the encoder's step
    compiles twice (the first state carries no gradient) and the decoder's again for the second length."""
    from nmt.models.rnnsearch import ModelConfig, RNNSearch, sequence_loss
    from nmt.training.setup import compile_step

    torch.manual_seed(0)
    eager = RNNSearch(ModelConfig(20, 30, 8, 16, 16, 8, dropout=0.0))
    compiled = RNNSearch(ModelConfig(20, 30, 8, 16, 16, 8, dropout=0.0))
    compiled.load_state_dict(eager.state_dict())
    assert compile_step(compiled) and "transition" in vars(compiled.encoder)
    for tx, ty in ((5, 4), (7, 6)):
        src, tgt = torch.randint(4, 20, (3, tx)), torch.randint(4, 30, (3, ty))
        src_len = torch.tensor([tx, tx - 1, 2])
        losses = []
        for model in (eager, compiled):
            model.zero_grad()
            loss = sequence_loss(model(src, src_len, tgt[:, :-1]), tgt[:, 1:])
            loss.backward()
            losses.append(loss)
        torch.testing.assert_close(losses[1], losses[0], rtol=1e-5, atol=1e-5)
        for (name, p), q in zip(eager.named_parameters(), compiled.parameters(), strict=True):
            torch.testing.assert_close(q.grad, p.grad, rtol=1e-4, atol=1e-6, msg=name)
