"""Luong et al. (2015) attention (nmt/models/luong.py): each score function and the local windows against
numbers worked out by hand, input feeding, teacher forcing against stepping, nmt.decoding.search on Luong
models, the model factory and a tiny end-to-end training run.

Expected values are written out from the paper's equations with numpy, never read from the module.
"""

from __future__ import annotations

import math
from pathlib import Path

import numpy as np
import pytest
import torch

import train
from nmt.decoding.search import Stepper, beam_search, greedy
from nmt.models import checkpoint
from nmt.models.checkpoint import LoadedModel
from nmt.models.luong import LuongAttention, LuongConfig, LuongNMT, LuongState
from nmt.models.registry import build_model
from nmt.models.rnnsearch import ModelConfig, RNNSearch
from nmt.text.tokenize import Tokenizer
from nmt.text.vocab import BOS_ID, Vocab
from tests.conftest import ROOT, TINY_DATA

torch.set_num_threads(1)

SENTS = (TINY_DATA / "train.en").read_text().splitlines()


def softmax(x: np.ndarray) -> np.ndarray:
    z = np.exp(x - x.max())
    return z / z.sum()


def attention(n: int, score: str, attention: str = "global", window: int = 10, **weights: list) -> LuongAttention:
    """A LuongAttention with hand-set weights."""
    att = LuongAttention(n, score, attention, window, max_positions=4)
    with torch.no_grad():
        for name, w in weights.items():
            getattr(att, name).weight.copy_(torch.tensor(w, dtype=torch.float32))
    return att


def run(att: LuongAttention, h: list, memory: list, src_len: list[int], t: list) -> tuple:
    """Attention of queries h (N, T, n) over memory (N, S, n), as numpy arrays."""
    mem = torch.tensor(memory, dtype=torch.float32)
    mask = torch.arange(mem.shape[1]).unsqueeze(0) < torch.tensor(src_len).unsqueeze(1)
    out = att(torch.tensor(h, dtype=torch.float32), mem, att.keys(mem), mask, torch.tensor(t))
    return tuple(None if x is None else x.detach().numpy() for x in
                 (out.energies, out.alpha, out.context, out.position, out.window))


# ----------------------------------------------------------------------------------------------
# Score functions, eqs. (7)-(9), on one hand-worked example
# ----------------------------------------------------------------------------------------------

H = [1.0, 2.0]  # h_t
MEM = [[1.0, 0.0], [0.0, 1.0], [1.0, 1.0]]  # h̄_1 … h̄_3
SCORE_CASES = {
    "dot": ({}, [1.0, 2.0, 3.0]),  # h_tᵀ h̄_s
    # W_a h̄_s = [1, 0], [2, 1], [3, 1]; h_tᵀ · that = 1, 4, 5
    "general": ({"W_a": [[1, 2], [0, 1]]}, [1.0, 4.0, 5.0]),
    # W_a [h_t; h̄_s] = [h_1 + h̄_s1, h_2 − h̄_s2] = [2, 2], [1, 1], [2, 1]; v_a = [1, 2]
    "concat": ({"W_a": [[1, 0, 1, 0], [0, 1, 0, -1]], "v_a": [[1, 2]]},
               [3 * math.tanh(2), 3 * math.tanh(1), math.tanh(2) + 2 * math.tanh(1)]),
    # W_a h_t = [1, 2, 3, 0] over the 4 positions W_a covers; the sentence has 3
    "location": ({"W_a": [[1, 0], [0, 1], [1, 1], [2, -1]]}, [1.0, 2.0, 3.0]),
}


@pytest.mark.parametrize("score", list(SCORE_CASES))
def test_score_function_matches_hand_computation(score: str) -> None:
    weights, e = SCORE_CASES[score]
    att = attention(2, score, **weights)
    # row 0: the whole sentence; row 1: the same sentence cut to 2 words (position 3 is padding)
    energies, alpha, context, position, window = run(att, [[H], [H]], [MEM, MEM], [3, 2], [[0], [0]])
    a0, a1 = softmax(np.array(e)), softmax(np.array(e[:2]))
    np.testing.assert_allclose(energies[0, 0], e, rtol=1e-6)
    np.testing.assert_allclose(energies[1, 0], [*e[:2], 0.0], rtol=1e-6)  # padding reads 0
    np.testing.assert_allclose(alpha[0, 0], a0, rtol=1e-6)
    np.testing.assert_allclose(alpha[1, 0], [*a1, 0.0], rtol=1e-6)
    assert alpha[1, 0, 2] == 0.0
    np.testing.assert_allclose(context[0, 0], a0 @ np.array(MEM), rtol=1e-6)  # c_t = Σ a_t(s) h̄_s
    assert position is None and window is None  # global attention


# ----------------------------------------------------------------------------------------------
# Local attention, eqs. (10)-(11)
# ----------------------------------------------------------------------------------------------


def test_local_p_window_mask_and_gaussian() -> None:
    D = 2  # σ = D/2 = 1
    W_p, v_p = [[1.0, 0.0], [0.0, 1.0]], [0.5, -0.25]
    att = attention(2, "dot", "local-p", D, W_p=W_p, v_p=[v_p])
    mem = [[0.1 * s, 1.0 - 0.2 * s] for s in range(8)]
    energies, alpha, _, position, window = run(att, [[H], [H]], [mem, mem], [8, 3], [[0], [0]])
    gate = 0.5 * math.tanh(1.0) - 0.25 * math.tanh(2.0)  # v_pᵀ tanh(W_p h_t), W_p = I
    sig = 1 / (1 + math.exp(-gate))
    e = np.array(mem) @ np.array(H)  # dot scores, every position
    for row, S in enumerate((8, 3)):
        p = (S - 1) * sig  # 0-based p_t ∈ [0, S − 1]
        assert position[row, 0] == pytest.approx(p, rel=1e-6)
        inside = [s for s in range(S) if abs(s - p) <= D]
        expected = np.zeros(8)
        expected[inside] = softmax(e[inside]) * np.exp(-((np.array(inside) - p) ** 2) / 2)  # σ² = 1
        np.testing.assert_allclose(alpha[row, 0], expected, rtol=1e-5, atol=0)
        assert all(alpha[row, 0, s] == 0.0 for s in range(8) if s not in inside)  # exactly 0 outside
        assert window[row, 0].tolist() == [inside[0], inside[-1]]
        np.testing.assert_allclose(energies[row, 0, :S], e[:S], rtol=1e-6)  # before window and Gaussian
    assert window[0, 0].tolist() == [2, 5]  # p = 7σ(…) ≈ 3.74: [1.74, 5.74]
    assert window[1, 0].tolist() == [0, 2]  # p ≈ 1.07: [−0.93, 3.07] cut to the 3-word sentence
    assert alpha[0, 0].sum() < 1  # eq. (11) is not renormalised


def test_local_m_position_is_t_and_weights_stay_in_the_window() -> None:
    att = attention(2, "dot", "local-m", 1)
    mem = [[0.3 * s, 0.5 - 0.1 * s] for s in range(5)]
    t = [[0, 2, 4, 6]] * 2
    _, alpha, _, position, window = run(att, [[H] * 4] * 2, [mem, mem], [5, 3], t)
    e = np.array(mem) @ np.array(H)
    assert position.tolist() == [[0, 2, 4, 4], [0, 2, 2, 2]]  # p_t = t, held at the last word
    for row, S in enumerate((5, 3)):
        for k in range(4):
            p = position[row, k]
            inside = [s for s in range(S) if abs(s - p) <= 1]
            expected = np.zeros(5)
            expected[inside] = softmax(e[inside])  # local-m: no Gaussian
            np.testing.assert_allclose(alpha[row, k], expected, rtol=1e-6, atol=0)
            assert window[row, k].tolist() == [inside[0], inside[-1]]
    assert window[0].tolist() == [[0, 1], [1, 3], [3, 4], [3, 4]]


# ----------------------------------------------------------------------------------------------
# The model: input feeding, teacher forcing = stepping, contexts
# ----------------------------------------------------------------------------------------------


def tiny(**kw) -> LuongNMT:
    torch.manual_seed(0)
    cfg = {"src_vocab_size": 30, "tgt_vocab_size": 25, "emb_dim": 6, "hidden_dim": 8, "window": 2, **kw}
    return LuongNMT(LuongConfig(**cfg)).eval()


def toy_batch() -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
    g = torch.Generator().manual_seed(1)
    src = torch.randint(4, 30, (3, 7), generator=g)
    src_len = torch.tensor([7, 5, 2])
    src[1, 5:] = 0
    src[2, 2:] = 0
    tgt = torch.randint(4, 25, (3, 6), generator=g)
    tgt[:, 0] = BOS_ID
    return src, src_len, tgt


def step_through(model: LuongNMT, src, src_len, tgt) -> tuple[torch.Tensor, list]:
    """Log-probabilities (B, T, K_y) of teacher-forced stepping, and each step's output."""
    enc = model.encode(src, src_len)
    state = model.initial_state(enc, tgt[:, 0])
    outs = []
    for i in range(tgt.shape[1]):
        out = model.step(enc, state)
        outs.append(out)
        state = type(state)(out.state.s, tgt[:, min(i + 1, tgt.shape[1] - 1)])
    return torch.stack([o.log_probs for o in outs], 1), outs


@pytest.mark.parametrize("encoder", ["bidirectional", "reversed"])
def test_encoder_states_in_source_order_and_the_bridge(encoder: str) -> None:
    """h̄_s belongs to word s; decoder layer l starts from [→h_S; ←h_1] (or the reversed reader's
    last state) of encoder layer l; padding changes nothing."""
    model = tiny(encoder=encoder, layers=2)
    src, src_len, _ = toy_batch()
    with torch.no_grad():
        enc = model.encode(src, src_len)
        for row in range(3):
            S = int(src_len[row])
            x = model.src_embed(src[row : row + 1, :S])  # (1, S, m), no padding
            if encoder == "bidirectional":
                out, finals = model.encoder(x)  # h_n, c_n: (L·2, 1, n/2), layer-major
                expected_mem = out[0]
                bridged = [torch.stack([torch.cat([f[2 * k, 0], f[2 * k + 1, 0]]) for k in range(2)]) for f in finals]
            else:
                out, finals = model.encoder(x.flip(1))  # read backwards
                expected_mem = out[0].flip(0)  # state after reading word s, put at position s
                bridged = [f[:, 0] for f in finals]  # after reading word 1
            torch.testing.assert_close(enc.memory[row, :S], expected_mem, rtol=0, atol=1e-6)
            assert (enc.memory[row, S:] == 0).all()
            torch.testing.assert_close(enc.h0[row], bridged[0], rtol=0, atol=1e-6)
            torch.testing.assert_close(enc.c0[row], bridged[1], rtol=0, atol=1e-6)
    assert enc.c0 is not None and enc.h0.shape == (3, 2, 8)


def test_input_feeding_changes_the_recurrent_input_and_nothing_else() -> None:
    src, src_len, tgt = toy_batch()
    off, on = tiny(input_feeding=False), tiny(input_feeding=True)
    assert off.cells[0].input_size == 6 and on.cells[0].input_size == 6 + 8  # [E y_{t-1}; h̃_{t-1}]
    extra = {k for k, v in on.state_dict().items() if v.shape != off.state_dict()[k].shape}
    assert extra == {"cells.0.weight_ih"}  # the only parameter that differs
    with torch.no_grad():
        on.load_state_dict({**off.state_dict(), "cells.0.weight_ih": torch.cat(
            [off.cells[0].weight_ih, torch.zeros(32, 8)], 1)})  # h̃_{t-1} columns = 0: the same model
        torch.testing.assert_close(on(src, src_len, tgt), off(src, src_len, tgt), rtol=0, atol=1e-6)
        on.cells[0].weight_ih[:, 6:].uniform_(-0.5, 0.5)  # now h̃_{t-1} enters the recurrence
        seen: list[torch.Tensor] = []
        hook = on.cells[0].register_forward_hook(lambda mod, args, out: seen.append(args[0]))
        lp_on, outs = step_through(on, src, src_len, tgt)
        hook.remove()
        lp_off, _ = step_through(off, src, src_len, tgt)
    feeds = [torch.zeros(3, 8)] + [o.state.s.feed for o in outs[:-1]]  # h̃_0 = 0, then h̃_{t-1}
    for i, x in enumerate(seen):
        torch.testing.assert_close(x, torch.cat([on.tgt_embed(tgt[:, i]), feeds[i]], -1), rtol=0, atol=0)
    h1 = outs[0].state.s.top
    torch.testing.assert_close(feeds[1], torch.tanh(on.W_c(torch.cat([outs[0].attended.context, h1], -1))))  # eq. (5)
    torch.testing.assert_close(lp_on[:, 0], lp_off[:, 0], rtol=0, atol=1e-6)  # h̃_0 = 0: step 1 equal
    assert (lp_on[:, 1:] - lp_off[:, 1:]).abs().max() > 1e-5  # later steps differ


VARIANTS = [
    {"score": "general", "attention": "global"},
    {"score": "dot", "attention": "local-m", "cell": "gru", "encoder": "reversed"},
    {"score": "concat", "attention": "local-p", "layers": 2},
    {"score": "location", "attention": "global", "input_feeding": False, "cell": "gru", "layers": 2},
    {"score": "general", "attention": "local-p", "input_feeding": False, "encoder": "reversed"},
]


@pytest.mark.parametrize("kw", VARIANTS, ids=lambda kw: "-".join(map(str, kw.values())))
def test_teacher_forcing_equals_stepping(kw: dict) -> None:
    model = tiny(**kw)
    src, src_len, tgt = toy_batch()
    with torch.no_grad():
        logits = model(src, src_len, tgt)
        lp, outs = step_through(model, src, src_len, tgt)
    torch.testing.assert_close(lp, torch.log_softmax(logits, -1), rtol=0, atol=1e-5)
    for i, o in enumerate(outs):
        assert torch.equal(o.state.s.t, torch.full((3,), i + 1))
        local = kw["attention"] != "global"
        assert (o.attended.position is not None) == local and (o.attended.window is not None) == local
        assert (o.attended.alpha[~(torch.arange(7) < src_len.unsqueeze(1))] == 0).all()  # padding


@pytest.mark.parametrize("kw", VARIANTS, ids=lambda kw: "-".join(map(str, kw.values())))
def test_a_given_alpha_replaces_a_t_and_the_models_own_changes_nothing(kw: dict) -> None:
    """step(alpha=its own a_t) is step(); a one-hot α on word 1 makes c_t = h̄_1, and h̃_t (eq. 5) and
    p(y_t) (eq. 6), computed here from W_c and W_s, read that c_t with the unchanged h_t."""
    model = tiny(**kw)
    src, src_len, tgt = toy_batch()
    with torch.no_grad():
        enc = model.encode(src, src_len)
        state = model.initial_state(enc, tgt[:, 0])
        own = model.step(enc, state)
        same = model.step(enc, state, alpha=own.attended.alpha)
        assert torch.equal(same.log_probs, own.log_probs) and torch.equal(same.attended.context, own.attended.context)
        assert torch.equal(same.state.s.feed, own.state.s.feed) and torch.equal(same.state.s.h, own.state.s.h)
        onehot = torch.zeros(3, 7)
        onehot[:, 1] = 1.0
        out = model.step(enc, state, alpha=onehot)
        assert torch.equal(out.attended.context, enc.memory[:, 1]) and torch.equal(out.attended.alpha, onehot)
        h_t = own.state.s.h[:, -1]  # the recurrence runs before attention: h_t is the same
        h_tilde = torch.tanh(torch.cat([enc.memory[:, 1], h_t], -1) @ model.W_c.weight.T + model.W_c.bias)
        torch.testing.assert_close(out.state.s.feed, h_tilde)
        torch.testing.assert_close(out.log_probs, torch.log_softmax(h_tilde @ model.W_s.weight.T + model.W_s.bias, -1))
        assert not torch.allclose(out.log_probs, own.log_probs)


def test_only_the_attention_context_exists() -> None:
    model = tiny()
    src, src_len, tgt = toy_batch()
    enc = model.encode(src, src_len)
    for mode in ("fixed", "mean"):
        with pytest.raises(ValueError, match="only the 'attention' context"):
            model.step(enc, model.initial_state(enc, tgt[:, 0]), mode)
    with pytest.raises(ValueError, match="context"):
        LuongConfig(10, 10, context="fixed")


# ----------------------------------------------------------------------------------------------
# nmt.decoding.search on Luong models
# ----------------------------------------------------------------------------------------------


def tiny_lm(**kw) -> LoadedModel:
    en, fr = Tokenizer("en"), Tokenizer("fr")
    src_vocab = Vocab.build([en.tokenize(s) for s in SENTS], 1000)
    tgt_vocab = Vocab.build([fr.tokenize(s) for s in (TINY_DATA / "train.fr").read_text().splitlines()], 1000)
    torch.manual_seed(0)
    cfg = LuongConfig(len(src_vocab), len(tgt_vocab), emb_dim=8, hidden_dim=12, window=3, **kw)
    return LoadedModel(LuongNMT(cfg).eval(), src_vocab, tgt_vocab, en, fr)


@pytest.mark.parametrize("kw", VARIANTS[:3], ids=lambda kw: "-".join(map(str, kw.values())))
def test_beam_one_and_stepping_equal_greedy(kw: dict) -> None:
    lm = tiny_lm(**kw)
    sents = SENTS[:6]
    g = greedy(lm, sents)
    assert [t.target_tokens for t in greedy(lm, sents, batch_size=1)] == [t.target_tokens for t in g]  # padding
    b = beam_search(lm, sents, beam=1)
    assert [t.target_tokens for t in b] == [t.target_tokens for t in g]
    for x, y in zip(b[0].steps, g[0].steps, strict=True):
        np.testing.assert_allclose(x.alpha, y.alpha, atol=1e-6)
    one = greedy(lm, [SENTS[3]])[0]
    st = Stepper(lm, SENTS[3])
    st.run()
    assert st.trace.target_tokens == one.target_tokens
    for a, b_ in zip(st.trace.steps, one.steps, strict=True):
        assert a.alpha == b_.alpha and a.energies == b_.energies and a.logprob == b_.logprob
        assert a.state_norm == b_.state_norm
    st.back()
    st.step()
    assert st.trace.target_tokens == one.target_tokens  # back then step returns the same state
    assert isinstance(st._states[-1].s, LuongState)


# ----------------------------------------------------------------------------------------------
# Factory, RNNsearch untouched, training end to end
# ----------------------------------------------------------------------------------------------


def test_factory_keeps_rnnsearch_the_default() -> None:
    cfg = ModelConfig(20, 22, 8, 10, 6, 4)
    torch.manual_seed(3)
    ref = RNNSearch(cfg)
    torch.manual_seed(3)
    built = build_model(cfg.to_dict())
    assert type(built) is RNNSearch and built.cfg == cfg
    for (k, a), (k2, b) in zip(ref.state_dict().items(), built.state_dict().items(), strict=True):
        assert k == k2 and torch.equal(a, b)  # same weights: the same RNG use
    assert type(build_model({**cfg.to_dict(), "arch": "rnnsearch"})) is RNNSearch
    assert type(build_model(LuongConfig(20, 22).to_dict())) is LuongNMT
    with pytest.raises(ValueError, match="arch"):
        build_model({**cfg.to_dict(), "arch": "transformer"})
    shipped = ROOT / "checkpoints" / "m30k-en-fr-rnnsearch.pt"
    if shipped.exists():
        ck = checkpoint.read_checkpoint(shipped, mmap=True)
        model = build_model(ck["config"], init=False)
        assert type(model) is RNNSearch
        model.load_state_dict(ck["model"])  # strict: every shipped weight has its place


def test_train_luong_end_to_end(tmp_path: Path) -> None:
    out = tmp_path / "run"
    summary = train.main([
        "--data", str(TINY_DATA), "--arch", "luong", "--score", "general", "--attention", "local-p",
        "--window", "3", "--input-feeding", "--cell", "lstm", "--layers", "1", "--emb-dim", "16",
        "--hidden-dim", "24", "--epochs", "8", "--batch-size", "10", "--lr", "0.01", "--valid-every", "100000",
        "--max-updates", "16", "--no-progress", "--threads", "1", "--amp", "off", "--log-every", "4",
        "--out", str(out)])
    assert summary["updates"] == 16
    ck = checkpoint.read_checkpoint(out / "best.pt")
    assert ck["config"]["arch"] == "luong" and ck["config"]["attention"] == "local-p"
    assert ck["meta"]["args"]["arch"] == "luong"
    model = build_model(ck["config"], init=False)
    model.load_state_dict(ck["model"])
    assert type(model) is LuongNMT and model.cfg.window == 3 and model.cfg.hidden_dim == 24
    lines = [line for line in (out / "metrics.jsonl").read_text().splitlines() if '"train"' in line]
    losses = [float(line.split('"loss": ')[1].split(",")[0]) for line in lines]
    assert losses[-1] < losses[0]  # it learns
    lm = LoadedModel(model.eval(), Vocab(ck["src_vocab"]), Vocab(ck["tgt_vocab"]), Tokenizer("en"), Tokenizer("fr"))
    assert greedy(lm, [SENTS[0]])[0].steps  # decodes
