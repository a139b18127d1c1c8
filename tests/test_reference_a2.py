"""Appendix A.2 of Bahdanau, Cho & Bengio (2015), written again from the paper, against nmt.models.rnnsearch.

The reference below uses plain float64 tensor operations only: no module of :mod:`nmt.models.rnnsearch` is
called. It reads the weights from the model's ``state_dict`` by name, turns them into the
paper's matrices (``W_z``, ``U_r``, ``C``, ``U_o``, … as out × in matrices acting on column
vectors), and runs one sentence at a time, one position at a time:

* encoder (A.2.1): E x_j; →h_j = (1 − z_j) ∘ →h_{j−1} + z_j ∘ h̃_j with z_j = σ(W_z E x_j + U_z →h_{j−1}),
  r_j likewise, h̃_j = tanh(W E x_j + U [r_j ∘ →h_{j−1}]) (reset *before* U); ←h runs the same
  equations with its own weights over x_Tx … x_1 (the sentence's own length, ``</s>`` included,
  never the padding); h_j = [→h_j; ←h_j];
* s_0 = tanh(W_s ←h_1);
* alignment model (A.1.2, eq. 6): e_ij = v_aᵀ tanh(W_a s_{i−1} + U_a h_j), α_ij = softmax_j e_ij,
  c_i = Σ_j α_ij h_j (eq. 5);
* decoder (A.2.2): s_i = (1 − z_i) ∘ s_{i−1} + z_i ∘ s̃_i with z_i = σ(W_z E y_{i−1} + U_z s_{i−1} + C_z c_i),
  r_i likewise with C_r c_i, s̃_i = tanh(W E y_{i−1} + U [r_i ∘ s_{i−1}] + C c_i);
* deep output with maxout: t̃_i = U_o s_{i−1} + V_o E y_{i−1} + C_o c_i, t_i,k = max(t̃_i,2k−1, t̃_i,2k),
  p(y_i | …) ∝ exp(y_iᵀ W_o t_i).

The biases the appendix leaves out "to make the equations less cluttered" are added where the
model keeps them (encoder inputs, W_s, U_a, the decoder's W, V_o, W_o). The context modes:
``fixed`` is c_i = [→h_Tx; ←h_1] for every i; ``mean`` is uniform α.

The model runs on random weights scaled up so that gates and maxout are far from degenerate, in
float64, so any difference larger than rounding is a difference in the equations. Swapping the
source of s_0, removing the maxout, reading the backward RNN forwards (or across the padding), or
dropping c_i from the gates each fails these tests.
"""

from __future__ import annotations

from dataclasses import dataclass

import pytest
import torch

from nmt.decoding import search as decoding
from nmt.models.checkpoint import LoadedModel
from nmt.models.rnnsearch import ModelConfig, RNNSearch
from nmt.text.tokenize import Tokenizer
from nmt.text.vocab import BOS_ID, EOS_ID, PAD_ID, SPECIALS, Vocab

M, N, N_ATT, L = 7, 4, 5, 3  # m, n, n', l: with 2l, 2n, 3n, K_x, K_y all different sizes, so a
# transposed or misread matrix cannot slip through
K_X, K_Y = 13, 11
TOL = {"atol": 1e-10, "rtol": 1e-9}
# RNNSearch.step returns log p in float32 whatever the weights' dtype (``logits.float()``, for fp16
# models), so the inference path's log p is compared at float32 precision; all else at float64.
LOGP32_T = {"atol": 1e-6, "rtol": 1e-6}  # torch.testing.assert_close
LOGP32 = {"abs": 1e-6, "rel": 1e-6}  # the same for pytest.approx

Tensor = torch.Tensor
Weights = dict[str, Tensor]


# ----------------------------------------------------------------------------------------------
# The reference: the paper's equations on one sentence
# ----------------------------------------------------------------------------------------------


def paper_weights(model: RNNSearch) -> Weights:
    """The paper's matrices (out × in, acting on column vectors) read from the state_dict by name."""
    sd = {k: v.detach().to(torch.float64) for k, v in model.state_dict().items()}
    n = N
    w: Weights = {"E_x": sd["encoder.embed.weight"], "E_y": sd["decoder.embed.weight"]}
    for d, arrow in enumerate(("fwd", "bwd")):
        w_in, b_in = sd["encoder.w_in"][d], sd["encoder.b_in"][d, 0]  # (m, 3n): x @ w_in
        u_zr, u_h = sd["encoder.u_zr"][d], sd["encoder.u_h"][d]  # (n, 2n), (n, n): h @ u
        w |= {
            f"{arrow}.W_z": w_in[:, :n].T, f"{arrow}.W_r": w_in[:, n : 2 * n].T, f"{arrow}.W": w_in[:, 2 * n :].T,
            f"{arrow}.b_z": b_in[:n], f"{arrow}.b_r": b_in[n : 2 * n], f"{arrow}.b": b_in[2 * n :],
            f"{arrow}.U_z": u_zr[:, :n].T, f"{arrow}.U_r": u_zr[:, n:].T, f"{arrow}.U": u_h.T,
        }
    W, b, C = sd["decoder.W.weight"], sd["decoder.W.bias"], sd["decoder.C.weight"]  # nn.Linear: (out, in)
    w |= {
        "W_s": sd["decoder.W_s.weight"], "b_s": sd["decoder.W_s.bias"],
        "W_a": sd["decoder.attention.W_a.weight"], "U_a": sd["decoder.attention.U_a.weight"],
        "b_a": sd["decoder.attention.U_a.bias"], "v_a": sd["decoder.attention.v_a.weight"][0],
        "W_z": W[:n], "W_r": W[n : 2 * n], "W": W[2 * n :], "b_z": b[:n], "b_r": b[n : 2 * n], "b": b[2 * n :],
        "C_z": C[:n], "C_r": C[n : 2 * n], "C": C[2 * n :],
        "U_z": sd["decoder.U_zr"][:, :n].T, "U_r": sd["decoder.U_zr"][:, n:].T, "U": sd["decoder.U"].T,
        "U_o": sd["decoder.U_o.weight"], "V_o": sd["decoder.V_o.weight"], "b_o": sd["decoder.V_o.bias"],
        "C_o": sd["decoder.C_o.weight"], "W_o": sd["decoder.W_o.weight"], "b_out": sd["decoder.W_o.bias"],
    }
    return w


def gru(h: Tensor, in_z: Tensor, in_r: Tensor, in_h: Tensor, U_z: Tensor, U_r: Tensor, U: Tensor) -> Tensor:
    """One gated step of the appendix given the input terms of z, r and h̃ (reset before U)."""
    z = torch.sigmoid(in_z + U_z @ h)
    r = torch.sigmoid(in_r + U_r @ h)
    h_tilde = torch.tanh(in_h + U @ (r * h))
    return (1 - z) * h + z * h_tilde


def encode_ref(w: Weights, x: list[int]) -> tuple[Tensor, Tensor, Tensor]:
    """Annotations h_j = [→h_j; ←h_j] (Tx, 2n), s_0 = tanh(W_s ←h_1) and c = [→h_Tx; ←h_1]."""
    def run(arrow: str, order: list[int]) -> dict[int, Tensor]:
        h, out = torch.zeros(N, dtype=torch.float64), {}
        for j in order:
            e = w["E_x"][x[j]]
            h = gru(h, w[f"{arrow}.W_z"] @ e + w[f"{arrow}.b_z"], w[f"{arrow}.W_r"] @ e + w[f"{arrow}.b_r"],
                    w[f"{arrow}.W"] @ e + w[f"{arrow}.b"], w[f"{arrow}.U_z"], w[f"{arrow}.U_r"], w[f"{arrow}.U"])
            out[j] = h
        return out

    T = len(x)
    fwd, bwd = run("fwd", list(range(T))), run("bwd", list(reversed(range(T))))
    annotations = torch.stack([torch.cat([fwd[j], bwd[j]]) for j in range(T)])
    s0 = torch.tanh(w["W_s"] @ bwd[0] + w["b_s"])
    return annotations, s0, torch.cat([fwd[T - 1], bwd[0]])


@dataclass
class RefSteps:
    """Everything the reference computes for one sentence and one target prefix."""

    annotations: Tensor  # (Tx, 2n)
    s0: Tensor  # (n,)
    energies: list[Tensor]  # e_i· per step (attention only)
    alpha: list[Tensor]  # α_i· per step (attention and mean)
    log_p: Tensor  # (Ty, K_y): log p(y_i | y_<i, x)
    states: Tensor  # (Ty, n): s_i after each step


def decode_ref(
    w: Weights, x: list[int], y_in: list[int], mode: str = "attention", given: dict[int, Tensor] | None = None
) -> RefSteps:
    """Run the decoder of A.2.2 on the given previous words y_0 = <s>, y_1, … (teacher forcing);
    ``given`` α rows replace the alignment model's at their steps (attention surgery)."""
    H, s, summary = encode_ref(w, x)
    s0 = s
    energies, alphas, log_ps, states = [], [], [], []
    for i, y_prev in enumerate(y_in):
        if mode == "attention":
            e = torch.stack([w["v_a"] @ torch.tanh(w["W_a"] @ s + w["U_a"] @ h_j + w["b_a"]) for h_j in H])
            alpha = torch.exp(e - e.max()) / torch.exp(e - e.max()).sum()
            alpha = alpha if given is None or i not in given else given[i].to(torch.float64)
            c = (alpha.unsqueeze(1) * H).sum(0)
            energies.append(e)
            alphas.append(alpha)
        elif mode == "mean":
            alpha = torch.full((len(x),), 1.0 / len(x), dtype=torch.float64)
            c = (alpha.unsqueeze(1) * H).sum(0)
            alphas.append(alpha)
        else:  # fixed
            c = summary
        ey = w["E_y"][y_prev]
        t_tilde = w["U_o"] @ s + w["V_o"] @ ey + w["b_o"] + w["C_o"] @ c  # (2l,)
        t = torch.maximum(t_tilde[0::2], t_tilde[1::2])  # t_k = max(t̃_{2k−1}, t̃_{2k}), 1-based
        logits = w["W_o"] @ t + w["b_out"]
        log_ps.append(logits - torch.logsumexp(logits, 0))
        s = gru(s, w["W_z"] @ ey + w["b_z"] + w["C_z"] @ c, w["W_r"] @ ey + w["b_r"] + w["C_r"] @ c,
                w["W"] @ ey + w["b"] + w["C"] @ c, w["U_z"], w["U_r"], w["U"])
        states.append(s)
    return RefSteps(H, s0, energies, alphas, torch.stack(log_ps), torch.stack(states))


# ----------------------------------------------------------------------------------------------
# The model on random weights
# ----------------------------------------------------------------------------------------------

SOURCES = [[5, 9, 4, 11, EOS_ID], [7, 6, EOS_ID], [10, 4, 8, 8, 6, 5, EOS_ID]]  # padded in a batch
TARGETS = [[BOS_ID, 4, 7, 9, 5], [BOS_ID, 8, 4, 6, 6], [BOS_ID, 9, 9, 5, 7]]  # y_0 … y_4 fed to the decoder


def random_model(context: str = "attention", seed: int = 0, dtype: torch.dtype = torch.float64) -> RNNSearch:
    """Small model with N(0, 0.8²) weights (the padding embeddings stay zero) in ``dtype``."""
    torch.manual_seed(seed)
    cfg = ModelConfig(src_vocab_size=K_X, tgt_vocab_size=K_Y, emb_dim=M, hidden_dim=N, attn_dim=N_ATT,
                      maxout_dim=L, context=context)
    model = RNNSearch(cfg)
    with torch.no_grad():
        for name, p in model.named_parameters():
            p.copy_(torch.randn_like(p) * 0.8)
            if name.endswith("embed.weight"):
                p[PAD_ID] = 0.0
    return model.to(dtype).eval()


def padded(rows: list[list[int]]) -> tuple[Tensor, Tensor]:
    out = torch.full((len(rows), max(map(len, rows))), PAD_ID, dtype=torch.long)
    for b, r in enumerate(rows):
        out[b, : len(r)] = torch.tensor(r)
    return out, torch.tensor([len(r) for r in rows])


# ----------------------------------------------------------------------------------------------
# Tests
# ----------------------------------------------------------------------------------------------


def test_reference_sanity_on_a_one_word_sentence() -> None:
    """Guards the reference itself: with Tx = 1, α = 1 and c_1 = h_1 whatever the energies are."""
    w = paper_weights(random_model())
    ref = decode_ref(w, [EOS_ID], [BOS_ID])
    torch.testing.assert_close(ref.alpha[0], torch.ones(1, dtype=torch.float64))
    torch.testing.assert_close(ref.log_p.exp().sum(), torch.tensor(1.0, dtype=torch.float64))


def test_annotations_s0_and_summary_follow_the_paper() -> None:
    """Encoder (GRU with reset before U, ← reading each sentence backwards within its length),
    s_0 = tanh(W_s ←h_1) and the fixed summary c = [→h_Tx; ←h_1], in a padded batch."""
    model = random_model()
    w = paper_weights(model)
    src, src_len = padded(SOURCES)
    with torch.no_grad():
        enc = model.encode(src, src_len)
    for b, x in enumerate(SOURCES):
        H, s0, summary = encode_ref(w, x)
        torch.testing.assert_close(enc.annotations[b, : len(x)], H, **TOL)
        torch.testing.assert_close(enc.s0[b], s0, **TOL)
        torch.testing.assert_close(enc.summary[b], summary, **TOL)


@pytest.mark.parametrize("context", ["attention", "fixed"])
def test_teacher_forced_log_p_follows_the_paper(context: str) -> None:
    """Training path (RNNSearch.forward): log p of every target position, padded batch, float64."""
    model = random_model(context)
    w = paper_weights(model)
    src, src_len = padded(SOURCES)
    with torch.no_grad():
        logits = model(src, src_len, torch.tensor(TARGETS))
    for b, (x, y) in enumerate(zip(SOURCES, TARGETS, strict=True)):
        ref = decode_ref(w, x, y, context)
        torch.testing.assert_close(torch.log_softmax(logits[b], -1), ref.log_p, **TOL)


@pytest.mark.parametrize("context", ["attention", "fixed"])
def test_step_energies_alpha_log_p_and_states_follow_the_paper(context: str) -> None:
    """Inference path (encode/step): e_ij, α_ij, log p and s_i at every step, padded batch."""
    model = random_model(context)
    w = paper_weights(model)
    src, src_len = padded(SOURCES)
    refs = [decode_ref(w, x, y, context) for x, y in zip(SOURCES, TARGETS, strict=True)]
    y_in = torch.tensor(TARGETS)
    with torch.no_grad():
        enc = model.encode(src, src_len)
        state = model.initial_state(enc, y_in[:, 0])
        for i in range(y_in.shape[1]):
            out = model.step(enc, state, context)
            for b, ref in enumerate(refs):
                n_src = len(SOURCES[b])
                torch.testing.assert_close(out.log_probs[b].double(), ref.log_p[i], **LOGP32_T)
                torch.testing.assert_close(out.state.s[b], ref.states[i], **TOL)
                if context == "attention":
                    torch.testing.assert_close(out.attended.energies[b, :n_src], ref.energies[i], **TOL)
                    torch.testing.assert_close(out.attended.alpha[b, :n_src], ref.alpha[i], **TOL)
                else:
                    assert out.attended.alpha is None and out.attended.energies is None
            if i + 1 < y_in.shape[1]:
                state = type(state)(out.state.s, y_in[:, i + 1])


def test_mean_context_follows_the_paper_in_float32() -> None:
    """The ``mean`` ablation (uniform α, c = mean_j h_j), float32 model against the float64 reference."""
    model = random_model("mean", dtype=torch.float32)
    w = paper_weights(model)
    src, src_len = padded(SOURCES)
    with torch.no_grad():
        logits = model(src, src_len, torch.tensor(TARGETS))
    for b, (x, y) in enumerate(zip(SOURCES, TARGETS, strict=True)):
        ref = decode_ref(w, x, y, "mean")
        torch.testing.assert_close(torch.log_softmax(logits[b].double(), -1), ref.log_p, atol=1e-5, rtol=1e-5)


def test_mean_context_runs_in_float64() -> None:
    """The mean α is built in the model's dtype (it was float32 only: mask.float()), and follows the paper."""
    model = random_model("mean")
    w = paper_weights(model)
    src, src_len = padded(SOURCES)
    with torch.no_grad():
        logits = model(src, src_len, torch.tensor(TARGETS))
    for b, (x, y) in enumerate(zip(SOURCES, TARGETS, strict=True)):
        torch.testing.assert_close(torch.log_softmax(logits[b], -1), decode_ref(w, x, y, "mean").log_p, **TOL)


def _lm(model: RNNSearch) -> LoadedModel:
    """A decodable model whose words are ``w4 … w12`` (source) and ``v4 … v10`` (target)."""
    src_vocab = Vocab([*SPECIALS, *(f"w{i}" for i in range(len(SPECIALS), K_X))])
    tgt_vocab = Vocab([*SPECIALS, *(f"v{i}" for i in range(len(SPECIALS), K_Y))])
    return LoadedModel(model, src_vocab, tgt_vocab, Tokenizer("en"), Tokenizer("fr"))


def _text(x: list[int]) -> str:
    return " ".join(f"w{i}" for i in x[:-1])


def test_greedy_decoding_follows_the_paper() -> None:
    """nmt.decoding.search.greedy (batched, sentences of different lengths) picks argmax_y of the reference's
    log p given its own prefix, and records the reference's log p, e_ij and α_ij at every step."""
    model = random_model(seed=1)
    with torch.no_grad():
        model.decoder.W_o.bias[EOS_ID] -= 3.0  # a few steps before </s>
    w = paper_weights(model)
    traces = decoding.greedy(_lm(model), [_text(x) for x in SOURCES], topk=2)
    for x, t in zip(SOURCES, traces, strict=True):
        assert len(t.steps) >= 3
        ref = decode_ref(w, x, [BOS_ID, *(s.token_id for s in t.steps[:-1])])
        for i, s in enumerate(t.steps):
            assert s.token_id == int(ref.log_p[i].argmax())
            assert s.logprob == pytest.approx(float(ref.log_p[i, s.token_id]), **LOGP32)
            torch.testing.assert_close(torch.tensor(s.energies, dtype=torch.float64), ref.energies[i], **TOL)
            torch.testing.assert_close(torch.tensor(s.alpha, dtype=torch.float64), ref.alpha[i], **TOL)


def test_forced_decoding_follows_the_paper() -> None:
    """nmt.decoding.search.forced records log p(y_i | y_<i, x) and α of the reference words, ``</s>`` included."""
    model = random_model(seed=2)
    w = paper_weights(model)
    refs = [y[1:] for y in TARGETS]
    traces = decoding.forced(_lm(model), [_text(x) for x in SOURCES], [" ".join(f"v{i}" for i in y) for y in refs])
    for x, y, t in zip(SOURCES, refs, traces, strict=True):
        assert [s.token_id for s in t.steps] == [*y, EOS_ID]
        ref = decode_ref(w, x, [BOS_ID, *y])
        for i, s in enumerate(t.steps):
            assert s.logprob == pytest.approx(float(ref.log_p[i, s.token_id]), **LOGP32)
            torch.testing.assert_close(torch.tensor(s.alpha, dtype=torch.float64), ref.alpha[i], **TOL)
