"""The model of Appendix A.2: attention weights, padding, the fixed context, overfitting."""

from __future__ import annotations

import json
import math

import pytest
import torch

from nmt.models.rnnsearch import ModelConfig, RNNSearch, gru_update, sequence_loss
from nmt.text.vocab import BOS_ID


def small_model(context: str = "attention", seed: int = 0) -> RNNSearch:
    torch.manual_seed(seed)
    cfg = ModelConfig(src_vocab_size=40, tgt_vocab_size=30, emb_dim=8, hidden_dim=12, attn_dim=10,
                      maxout_dim=6, context=context)
    return RNNSearch(cfg).eval()


def batch_of(lengths: list[int], seed: int = 1) -> tuple[torch.Tensor, torch.Tensor]:
    g = torch.Generator().manual_seed(seed)
    src = torch.zeros(len(lengths), max(lengths), dtype=torch.long)
    for b, n in enumerate(lengths):
        src[b, :n] = torch.randint(4, 40, (n,), generator=g)
    return src, torch.tensor(lengths)


def run_steps(model: RNNSearch, src: torch.Tensor, src_len: torch.Tensor, tokens: torch.Tensor, context=None):
    enc = model.encode(src, src_len)
    state = model.initial_state(enc, torch.full((src.shape[0],), BOS_ID))
    outs = []
    for i in range(tokens.shape[1]):
        out = model.step(enc, state, context)
        outs.append(out)
        state = type(state)(out.state.s, tokens[:, i])
    return enc, outs


def test_alpha_rows_sum_to_one_and_are_zero_on_padding() -> None:
    model = small_model()
    src, src_len = batch_of([5, 3, 7])
    _, outs = run_steps(model, src, src_len, torch.randint(4, 30, (3, 4)))
    for out in outs:
        alpha = out.attended.alpha
        assert torch.allclose(alpha.sum(-1), torch.ones(3), atol=1e-6)
        pad = torch.arange(7).unsqueeze(0) >= src_len.unsqueeze(1)
        assert torch.all(alpha[pad] == 0)
        assert torch.all(alpha[~pad] > 0)


def test_padding_does_not_change_a_sentence() -> None:
    model = small_model()
    src, src_len = batch_of([4, 9, 2])
    tokens = torch.randint(4, 30, (3, 5))
    enc_b, outs_b = run_steps(model, src, src_len, tokens)
    for b, n in enumerate(src_len.tolist()):
        enc_1, outs_1 = run_steps(model, src[b : b + 1, :n], src_len[b : b + 1], tokens[b : b + 1])
        torch.testing.assert_close(enc_b.annotations[b, :n], enc_1.annotations[0], atol=1e-5, rtol=1e-5)
        torch.testing.assert_close(enc_b.summary[b], enc_1.summary[0], atol=1e-5, rtol=1e-5)
        for ob, o1 in zip(outs_b, outs_1):
            torch.testing.assert_close(ob.log_probs[b], o1.log_probs[0], atol=1e-5, rtol=1e-5)
            torch.testing.assert_close(ob.attended.alpha[b, :n], o1.attended.alpha[0], atol=1e-5, rtol=1e-5)


def test_padding_does_not_change_training_logits() -> None:
    model = small_model()
    src, src_len = batch_of([6, 3])
    tgt = torch.randint(4, 30, (2, 4))
    both = model(src, src_len, tgt)
    alone = model(src[1:, :3], src_len[1:], tgt[1:])
    torch.testing.assert_close(both[1], alone[0], atol=1e-5, rtol=1e-5)


def test_teacher_forcing_matches_stepwise_decoding() -> None:
    model = small_model()
    src, src_len = batch_of([5, 4])
    tgt_in = torch.cat([torch.full((2, 1), BOS_ID), torch.randint(4, 30, (2, 3))], dim=1)
    logits = model(src, src_len, tgt_in)
    _, outs = run_steps(model, src, src_len, tgt_in[:, 1:])
    for i, out in enumerate(outs[:3]):
        torch.testing.assert_close(out.log_probs, torch.log_softmax(logits[:, i], -1), atol=1e-5, rtol=1e-5)


def test_fixed_context_is_the_same_at_every_step_and_ignores_alpha() -> None:
    model = small_model(context="fixed")
    src, src_len = batch_of([5, 3])
    enc, outs = run_steps(model, src, src_len, torch.randint(4, 30, (2, 4)))
    n = model.cfg.hidden_dim
    for out in outs:
        assert out.attended.alpha is None and out.attended.energies is None
        torch.testing.assert_close(out.attended.context, enc.summary)
    # c = [→h_Tx; ←h_1]
    torch.testing.assert_close(enc.summary[1, :n], enc.annotations[1, 2, :n])
    torch.testing.assert_close(enc.summary[1, n:], enc.annotations[1, 0, n:])
    # the alignment model's weights play no part: perturbing them changes nothing
    tokens = torch.randint(4, 30, (2, 4), generator=torch.Generator().manual_seed(5))
    _, before = run_steps(model, src, src_len, tokens)
    with torch.no_grad():
        for p in model.decoder.attention.parameters():
            p.add_(torch.randn_like(p))
    _, after = run_steps(model, src, src_len, tokens)
    for x, y in zip(before, after):
        torch.testing.assert_close(x.log_probs, y.log_probs)


def test_fixed_override_on_an_attention_model_equals_a_fixed_model() -> None:
    search = small_model("attention", seed=3)
    encdec = small_model("fixed", seed=3)  # same weights
    src, src_len = batch_of([4, 6])
    tokens = torch.randint(4, 30, (2, 3))
    _, a = run_steps(search, src, src_len, tokens, context="fixed")
    _, b = run_steps(encdec, src, src_len, tokens)
    for x, y in zip(a, b):
        torch.testing.assert_close(x.log_probs, y.log_probs)


def test_mean_context_uses_uniform_alpha() -> None:
    model = small_model()
    src, src_len = batch_of([4, 2])
    enc, outs = run_steps(model, src, src_len, torch.randint(4, 30, (2, 2)), context="mean")
    alpha = outs[0].attended.alpha
    torch.testing.assert_close(alpha[1, :2], torch.full((2,), 0.5))
    torch.testing.assert_close(outs[0].attended.context[0], enc.annotations[0, :4].mean(0))


def test_gru_update_follows_the_appendix() -> None:
    torch.manual_seed(0)
    n = 3
    h, x = torch.randn(2, n), torch.randn(2, 3 * n)
    u_zr, u = torch.randn(n, 2 * n), torch.randn(n, n)
    z = torch.sigmoid(x[:, :n] + h @ u_zr[:, :n])
    r = torch.sigmoid(x[:, n : 2 * n] + h @ u_zr[:, n:])
    h_tilde = torch.tanh(x[:, 2 * n :] + (r * h) @ u)
    torch.testing.assert_close(gru_update(h, x, u_zr, u), (1 - z) * h + z * h_tilde)


def test_modules_hold_no_per_sentence_state() -> None:
    """Encoding and stepping leave every module's attributes, buffers and parameters as they were."""
    model = small_model()

    def snapshot() -> tuple[set[tuple[str, str]], dict[str, torch.Tensor]]:
        attrs = {(name, key) for name, mod in model.named_modules() for key in vars(mod)}
        attrs |= {(name, key) for name, mod in model.named_modules() for key in mod._buffers}
        return attrs, {k: v.clone() for k, v in model.state_dict().items()}

    attrs_before, weights_before = snapshot()
    src, src_len = batch_of([3])
    run_steps(model, src, src_len, torch.randint(4, 30, (1, 2)))
    attrs_after, weights_after = snapshot()
    assert attrs_before == attrs_after
    assert weights_before.keys() == weights_after.keys()
    assert all(torch.equal(weights_before[k], weights_after[k]) for k in weights_before)


def test_config_round_trips_and_rejects_unknown_context() -> None:
    cfg = ModelConfig(10, 11, context="fixed")
    assert ModelConfig.from_dict(json.loads(json.dumps(cfg.to_dict()))) == cfg
    with pytest.raises(ValueError):
        ModelConfig(10, 11, context="nope")


def test_sequence_loss_ignores_padding() -> None:
    """Summed cross-entropy over real targets: −log softmax(logits)[target], padding (id 0) left out."""
    logits = torch.tensor([[[2.0, 0.0, 1.0, 0.0, -1.0], [0.5, 0.5, 0.5, 0.5, 3.0], [-3.0, 0.0, 0.0, 0.0, 0.0]]])
    tgt = torch.tensor([[2, 4, 0]])
    lse = [math.log(math.exp(2) + 2 + math.exp(1) + math.exp(-1)), math.log(4 * math.exp(0.5) + math.exp(3))]
    by_hand = (lse[0] - 1.0) + (lse[1] - 3.0)  # position 3 is padding
    assert float(sequence_loss(logits, tgt)) == pytest.approx(by_hand, rel=1e-6)
    torch.testing.assert_close(sequence_loss(logits, tgt), sequence_loss(logits[:, :2], tgt[:, :2]))
