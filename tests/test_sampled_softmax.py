"""Jean et al. (2015) §3 training loss: softmax over a partition's vocabulary V′ (issue 20)."""

from __future__ import annotations

import itertools
import math

import pytest
import torch
from torch import nn

from nmt.models.luong import LuongConfig
from nmt.models.registry import build_model
from nmt.models.rnnsearch import ModelConfig, RNNSearch, sequence_loss
from nmt.text.data import Example, make_batch
from nmt.text.vocab import Vocab
from nmt.training.sampled_softmax import (
    RestrictedLinear,
    install,
    partition_batches,
    partition_corpus,
    positions,
    sampled_loss,
)


def test_partitions_by_hand() -> None:
    # Encoded targets end in </s> (3); V′ always holds <pad> (0). τ = 5:
    # {0,3,4,5} + {6} = 5 words; the third sentence would add 7, 8, 9 → new partition {0,3,7,8,9};
    # the fourth would add 4 → new partition {0,3,4}.
    parts = partition_corpus([[4, 5, 3], [5, 6, 3], [7, 8, 9, 3], [4, 3]], tau=5)
    assert [(p.start, p.end, p.vocab) for p in parts] == [(0, 2, [0, 3, 4, 5, 6]), (2, 3, [0, 3, 7, 8, 9]),
                                                          (3, 4, [0, 3, 4])]


def test_loss_by_hand() -> None:
    out = RestrictedLinear(1, 4)
    with torch.no_grad():
        out.weight.copy_(torch.tensor([[1.0], [2.0], [0.0], [3.0]]))  # logits 1, 2, 0, 3 for φ = 1
        out.bias.zero_()
    phi, target = torch.ones(1, 1, 1), torch.tensor([[1]])
    vocab = torch.tensor([0, 1, 3])  # V′ without word 2
    out.candidates = vocab
    # −log p′ = log(e¹ + e² + e³) − 2 = log(30.19287) − 2 = 1.40760;  the full softmax adds e⁰: 1.44019
    assert sampled_loss(out(phi), target, vocab).item() == pytest.approx(1.40760, abs=1e-5)
    out.candidates = None
    assert sequence_loss(out(phi), target).item() == pytest.approx(1.44019, abs=1e-5)
    assert math.log(math.e + math.e**2 + math.e**3) - 2 == pytest.approx(1.40760, abs=1e-5)


def _tiny(arch: str) -> tuple[nn.Module, Vocab, Vocab, list[Example]]:
    torch.manual_seed(3)
    src = Vocab.build([[f"s{i}" for i in range(30)]], 100)
    tgt = Vocab.build([[f"t{i}" for i in range(60)]], 100)
    g = torch.Generator().manual_seed(4)
    ex = [Example([f"s{int(i)}" for i in torch.randint(30, (5,), generator=g)],
                  [f"t{int(i)}" for i in torch.randint(12, (6,), generator=g)]) for _ in range(4)]
    if arch == "luong":
        cfg = LuongConfig(len(src), len(tgt), 8, 12, "general", "global", 2, True, "lstm", 1, "bidirectional", 0.0)
        return build_model(cfg.to_dict()), src, tgt, ex
    return RNNSearch(ModelConfig(len(src), len(tgt), 8, 12, 12, 8, 0.0, "attention")), src, tgt, ex


@pytest.mark.parametrize("arch", ["rnnsearch", "luong"])
def test_equals_full_softmax_with_every_word_and_approaches_it(arch: str) -> None:
    model, src, tgt, ex = _tiny(arch)
    b = make_batch(ex, src, tgt)
    full = sequence_loss(model(b.src, b.src_len, b.tgt_in), b.tgt_out).item()
    keys = set(model.state_dict())
    layer = install(model)
    assert set(model.state_dict()) == keys  # same parameter names: checkpoints unchanged
    layer.candidates = torch.arange(len(tgt))
    assert sampled_loss(model(b.src, b.src_len, b.tgt_in), b.tgt_out, layer.candidates).item() == \
        pytest.approx(full, rel=1e-6)
    # Nested samples: V′ = the batch's words plus k of the others; the loss rises to the full one.
    needed = sorted(set(b.tgt_out.flatten().tolist()) | {0})
    others = [i for i in torch.randperm(len(tgt), generator=torch.Generator().manual_seed(5)).tolist()
              if i not in needed]
    losses = []
    for k in (0, 5, 20, 40, len(others)):
        layer.candidates = torch.tensor(sorted(needed + others[:k]))
        losses.append(sampled_loss(model(b.src, b.src_len, b.tgt_in), b.tgt_out, layer.candidates).item())
    gaps = [full - x for x in losses]
    assert all(g1 > g2 for g1, g2 in itertools.pairwise(gaps)), gaps
    assert gaps[0] > 0.5 and gaps[-1] == pytest.approx(0.0, abs=1e-4)
    layer.candidates = None
    assert sequence_loss(model(b.src, b.src_len, b.tgt_in), b.tgt_out).item() == pytest.approx(full, rel=1e-6)


def test_gradient_reaches_only_the_partitions_rows() -> None:
    model, src, tgt, ex = _tiny("rnnsearch")
    b = make_batch(ex, src, tgt)
    layer = install(model)
    layer.candidates = torch.tensor(sorted(set(b.tgt_out.flatten().tolist()) | {0}))
    sampled_loss(model(b.src, b.src_len, b.tgt_in), b.tgt_out, layer.candidates).backward()
    touched = set(torch.nonzero(model.decoder.W_o.weight.grad.abs().sum(1)).flatten().tolist())
    assert touched <= set(layer.candidates.tolist()) and len(touched) > 3


def test_missing_target_is_refused() -> None:
    with pytest.raises(ValueError, match="missing"):
        sampled_loss(torch.zeros(1, 1, 2), torch.tensor([[5]]), torch.tensor([0, 4]))


def test_partition_batches_cover_every_example_once() -> None:
    _, src, tgt, ex = _tiny("rnnsearch")
    ex = ex * 5
    seen = 0
    for batch, vocab in partition_batches(ex, src, tgt, batch_size=3, tau=14, seed=1):
        assert len(vocab) <= 14 or batch.src.shape[0] == 1
        assert set(batch.tgt_out.flatten().tolist()) <= set(vocab.tolist())
        seen += batch.src.shape[0]
    assert seen == len(ex)


def test_partial_vocabulary_loss_by_hand_with_distinct_bias_rows() -> None:
    """Six words, φ ∈ R², every row of W and b different; V′ = {0, 3, 5} (not the first rows).

    z_k = w_k·φ + b_k over V′ only. φ_1 = (0.4, −0.3): z_0 = 0.4, z_3 = −0.4 − 0.6 + 1.1 = 0.1,
    z_5 = 0.2 − 0.15 + 0.9 = 0.95; target 3: log(e^0.4 + e^0.1 + e^0.95) − 0.1 = 1.54533.
    φ_2 = (1.0, 0.5): z_0 = 1.0, z_3 = −1 + 1 + 1.1 = 1.1, z_5 = 0.5 + 0.25 + 0.9 = 1.65; target 5:
    log(e^1.0 + e^1.1 + e^1.65) − 1.65 = 0.74146. Summed: 2.28679."""
    out = RestrictedLinear(2, 6)
    with torch.no_grad():
        out.weight.copy_(torch.tensor([[1.0, 0], [0, 1], [1, 1], [-1, 2], [2, -1], [0.5, 0.5]]))
        out.bias.copy_(torch.tensor([0.0, 0.3, -0.7, 1.1, -0.2, 0.9]))
    vocab = torch.tensor([0, 3, 5])
    out.candidates = vocab
    phi = torch.tensor([[[0.4, -0.3], [1.0, 0.5]]])
    logits = out(phi)
    torch.testing.assert_close(logits, torch.tensor([[[0.4, 0.1, 0.95], [1.0, 1.1, 1.65]]]), rtol=0, atol=1e-6)
    assert sampled_loss(logits, torch.tensor([[3, 5]]), vocab).item() == pytest.approx(2.28679, abs=1e-5)
    # padding (0) is in V′ but never a target: a padded position adds nothing
    assert sampled_loss(logits, torch.tensor([[3, 0]]), vocab).item() == pytest.approx(1.54533, abs=1e-5)
    # label smoothing ε = 0.1 over V′'s three words: −log p′ = (1.24533, 1.54533, 0.69533), mean 1.16199;
    # 0.9 · 1.54533 + 0.1 · 1.16199 = 1.50699
    assert sampled_loss(logits, torch.tensor([[3, 0]]), vocab, 0.1).item() == pytest.approx(1.50699, abs=1e-5)


@pytest.mark.parametrize("arch", ["rnnsearch", "luong"])
def test_partial_vocabulary_loss_of_a_model_equals_a_hand_restricted_full_softmax(arch: str) -> None:
    """A model whose output-bias rows all differ: for several V′ (random subsets holding the targets),
    the loss is Σ_t logsumexp_{k ∈ V′} z_k − z_{y_t}, with z the *full* layer's logits (float64)."""
    model, src, tgt, ex = _tiny(arch)
    layer = install(model)
    with torch.no_grad():
        layer.bias.copy_(torch.linspace(-3.0, 3.0, len(tgt))[torch.randperm(len(tgt))])
    b = make_batch(ex, src, tgt)
    z = model(b.src, b.src_len, b.tgt_in).detach().double()  # (B, T, K): every word's logit
    needed = set(b.tgt_out.flatten().tolist()) | {0}
    g = torch.Generator().manual_seed(7)
    for extra in (0, 3, 11):
        others = [i for i in torch.randperm(len(tgt), generator=g).tolist() if i not in needed][:extra]
        vocab = sorted(needed | set(others))
        hand = 0.0
        for bi, t in itertools.product(range(z.shape[0]), range(z.shape[1])):
            y = int(b.tgt_out[bi, t])
            if y != 0:
                hand += float(torch.logsumexp(z[bi, t, vocab], 0) - z[bi, t, y])
        layer.candidates = torch.tensor(vocab)
        got = sampled_loss(model(b.src, b.src_len, b.tgt_in), b.tgt_out, layer.candidates).item()
        assert got == pytest.approx(hand, rel=1e-5), (extra, got, hand)
    layer.candidates = None


def test_partitions_at_exactly_tau_words() -> None:
    # τ = 4: {0, 3, 4} + {5} = 4 words exactly (kept together); the next sentence's 6 makes 5 → split.
    parts = partition_corpus([[4, 3], [5, 3], [6, 3]], tau=4)
    assert [(p.start, p.end, p.vocab) for p in parts] == [(0, 2, [0, 3, 4, 5]), (2, 3, [0, 3, 6])]
    # each target's position in V′ (padding → 0)
    assert positions(torch.tensor([[5, 3, 0]]), torch.tensor([0, 3, 4, 5])).tolist() == [[3, 1, 0]]
