"""Look / Generate / Update (issue 22 B): the phases of a step are the model's own step, and the view shows them.

* On the shipped Multi30k checkpoints, every phase's numbers equal the decode trace's: α and e_ij, the
  softmax's top-k and the written word's log p exactly (the same step, read through its ``parts``),
  ‖s_(i−1)‖, ‖c_i‖ and ‖s_i‖ (the next step's ‖s_(i−1)‖) to float32 rounding; the view's tables carry
  the same numbers.
* On tiny random models, the intermediate quantities the step exposes (t̃_i, its maxout, the logits,
  the GRU gates; Luong's LSTM step, score, c_t and h̃_t) equal a hand computation with the weights,
  written here with plain torch operations (maxout as the max of each pair).
* Beam mode's replay reproduces the beam's best hypothesis step by step.
"""

from __future__ import annotations

import math
from pathlib import Path

import pytest
import torch

from nmt.decoding.phases import Candidate, Generate, Look, StepPhases, Update, explain, norm, replay
from nmt.decoding.search import Stepper, beam_search, greedy
from nmt.models import checkpoint
from nmt.models.candidates import CandidateSpec
from nmt.models.checkpoint import LoadedModel
from nmt.models.luong import LuongConfig, LuongNMT
from nmt.text.tokenize import Tokenizer
from nmt.text.vocab import EOS_ID, SPECIALS, Vocab
from tests.test_reference_a2 import SOURCES, _lm, _text, encode_ref, paper_weights, random_model
from ui.stepper import views_phases as pv

torch.set_num_threads(1)
CKPTS = Path(__file__).resolve().parent.parent / "checkpoints"
SENTENCE = "Two young men are playing soccer on a green field."
F32 = {"rel": 1e-6, "abs": 1e-6}  # a norm summed in float32 by the trace, in float64 here
TOL = {"atol": 1e-10, "rtol": 1e-9}


def _load(name: str) -> LoadedModel:
    path = CKPTS / f"{name}.pt"
    if not path.exists():
        pytest.skip(f"{path.name} is not in checkpoints/")
    return checkpoint.load(path)


# ----------------------------------------------------------------------------------------------
# The shipped checkpoints: phases = trace
# ----------------------------------------------------------------------------------------------


@pytest.mark.parametrize("name", ["m30k-en-fr-rnnsearch", "m30k-en-fr-luong-global-general",
                                  "m30k-en-fr-luong-local-p", "m30k-en-fr-rnnencdec"])
def test_every_phase_equals_the_trace_on_shipped_checkpoints(name: str) -> None:
    lm = _load(name)
    stepper = Stepper(lm, SENTENCE)
    stepper.run()
    ref = greedy(lm, [SENTENCE])[0]  # the trace greedy records for the same sentence
    assert [s.token_id for s in ref.steps] == [s.token_id for s in stepper.trace.steps]
    steps = ref.steps
    for i, rec in enumerate(steps):
        ph = explain(stepper, i)
        assert ph.trace_gap == 0.0
        # Look
        assert ph.look.alpha == rec.alpha and ph.look.energies == rec.energies
        assert norm(ph.look.context) == pytest.approx(rec.context_norm, **F32)
        assert ph.look.position == rec.position and ph.look.window == rec.window
        # Generate: the softmax's top-k and the written word
        assert [(c.word, c.p) for c in ph.generate.topk] == rec.topk
        assert ph.generate.written.token_id == rec.token_id and ph.generate.written.logprob == rec.logprob
        # Update: the state read and the state written
        assert norm(ph.update.prev) == pytest.approx(rec.state_norm, **F32)
        if i + 1 < len(steps):
            assert norm(ph.update.new) == pytest.approx(steps[i + 1].state_norm, **F32)
        _view_shows_the_trace(ph, rec, ref.src_tokens)


def _view_shows_the_trace(ph: StepPhases, rec, src_tokens: list[str]) -> None:
    """The cards' tables carry the trace's numbers: α and e per source word, the top-k, the norms."""
    cards = {c.key: c for c in pv.cards(ph, src_tokens)}
    tables = {key: dict(c.tables) for key, c in cards.items()}
    look = next(iter(tables["look"].values()))
    if rec.alpha is None:
        assert "summary" in cards["look"].lead and "Where step" not in " ".join(tables["look"])
    else:
        for _, row in look.iterrows():
            j = int(row.iloc[0])  # j (RNNsearch) or s (Luong)
            assert row["source word"] == src_tokens[j] and row.iloc[3] == rec.alpha[j]
            assert row.iloc[2] == (None if rec.energies is None else rec.energies[j])
        n, rest = pv.rest_weight(ph)
        assert len(look) + n == len(rec.alpha)
        assert math.fsum(look.iloc[:, 3]) + rest == pytest.approx(sum(rec.alpha), abs=1e-12)
    top = tables["generate"][next(k for k in tables["generate"] if k.startswith("Softmax"))]
    assert list(zip(top["word"], top["p"], strict=True))[: len(rec.topk)] == rec.topk
    assert list(top.loc[top["written"] != "", "word"]) == [rec.token]
    numbers = tables["update"]["Numbers"].set_index("quantity")["value"]
    prev = "‖h_(t−1)‖" if ph.arch == "luong" else "‖s_(i−1)‖"
    assert numbers[prev] == pytest.approx(rec.state_norm, **F32)
    c_norm = tables["look"]["Numbers"].set_index("quantity")["value"]
    assert c_norm["‖c_t‖" if ph.arch == "luong" else "‖c_i‖"] == pytest.approx(rec.context_norm, **F32)


def test_beam_replay_reproduces_the_best_hypothesis() -> None:
    """Beam mode: a stepper forced along the beam's best hypothesis gives each step's α and top-k
    (the beam's batched arithmetic, so to float32 rounding); continuing a shorter replay is the same."""
    lm = _load("m30k-en-fr-rnnsearch")
    t = beam_search(lm, [SENTENCE], beam=4)[0]
    short = replay(lm, t, 3)
    assert short.position == 3
    full = replay(lm, t, len(t.steps), start=short)
    fresh = replay(lm, t, len(t.steps))
    assert [s.token_id for s in full.trace.steps] == [s.token_id for s in t.steps]
    for i, rec in enumerate(t.steps):
        ph = explain(full, i, record=rec)
        assert ph.trace_gap < 1e-5
        assert ph.look.alpha == explain(fresh, i).look.alpha
    other = beam_search(lm, [SENTENCE], beam=1)[0]  # another hypothesis: the replay forks where they part
    if [s.token_id for s in other.steps] != [s.token_id for s in t.steps]:
        moved = replay(lm, other, len(other.steps), start=full)
        assert [s.token_id for s in moved.trace.steps] == [s.token_id for s in other.steps]


def test_beam_replay_decodes_with_the_traces_candidate_list() -> None:
    """A beam trace decoded over a candidate list is replayed over the same list: its p (renormalised
    over the list) equal the trace's, which those over the whole vocabulary do not."""
    lm = _load("m30k-en-fr-rnnsearch")
    t = beam_search(lm, [SENTENCE], beam=4, candidates=CandidateSpec(100))[0]
    replayed = replay(lm, t, len(t.steps))
    assert replayed.trace.candidates == t.candidates
    assert max(explain(replayed, i, record=rec).trace_gap for i, rec in enumerate(t.steps)) < 1e-5
    plain = Stepper(lm, SENTENCE)
    for rec in t.steps:
        plain.step(force=rec.token_id)
    assert max(explain(plain, i, record=rec).trace_gap for i, rec in enumerate(t.steps)) > 1e-3


# ----------------------------------------------------------------------------------------------
# Tiny models: the exposed intermediates against a hand computation with the weights
# ----------------------------------------------------------------------------------------------


def test_rnnsearch_intermediates_equal_a_hand_computation() -> None:
    """t̃_i = U_o s_(i−1) + V_o E y_(i−1) + C_o c_i, t_i,k = max(t̃_i,2k−1, t̃_i,2k), logits W_o t_i + b, and the
    GRU's z_i, r_i, s̃_i, s_i, with the weights of a random float64 model, for every step of a greedy decoding."""
    model = random_model(seed=1)
    with torch.no_grad():
        model.decoder.W_o.bias[EOS_ID] -= 3.0
    w = paper_weights(model)
    x = SOURCES[2]
    stepper = Stepper(_lm(model), _text(x), topk=3)
    stepper.run()
    assert stepper.position >= 3
    H, s, _ = encode_ref(w, x)
    y_prev = stepper.state_before(0).y_prev.item()
    for i, rec in enumerate(stepper.trace.steps):
        ph = explain(stepper, i)
        e = torch.stack([w["v_a"] @ torch.tanh(w["W_a"] @ s + w["U_a"] @ h + w["b_a"]) for h in H])
        alpha = torch.softmax(e, 0)
        c = alpha @ H
        ey = w["E_y"][y_prev]
        t_tilde = w["U_o"] @ s + w["V_o"] @ ey + w["b_o"] + w["C_o"] @ c
        t = torch.stack([max(t_tilde[2 * k], t_tilde[2 * k + 1]) for k in range(len(t_tilde) // 2)])
        logits = w["W_o"] @ t + w["b_out"]
        z = torch.sigmoid(w["W_z"] @ ey + w["b_z"] + w["U_z"] @ s + w["C_z"] @ c)
        r = torch.sigmoid(w["W_r"] @ ey + w["b_r"] + w["U_r"] @ s + w["C_r"] @ c)
        cand = torch.tanh(w["W"] @ ey + w["b"] + w["U"] @ (r * s) + w["C"] @ c)
        s_new = (1 - z) * s + z * cand
        got = {"energies": ph.look.energies, "alpha": ph.look.alpha, "c": ph.look.context, "t̃": ph.generate.pre,
               "t": ph.generate.hidden, "z": ph.update.z, "r": ph.update.r, "s̃": ph.update.candidate,
               "s_prev": ph.update.prev, "s": ph.update.new}
        want = {"energies": e, "alpha": alpha, "c": c, "t̃": t_tilde, "t": t, "z": z, "r": r, "s̃": cand,
                "s_prev": s, "s": s_new}
        for key, value in want.items():
            torch.testing.assert_close(torch.tensor(got[key], dtype=torch.float64), value, **TOL, msg=key)
        for cnd in ph.generate.topk:
            assert cnd.logit == pytest.approx(float(logits[cnd.token_id]), abs=1e-9)
        assert [cnd.token_id for cnd in ph.generate.topk] == logits.topk(3).indices.tolist()
        s, y_prev = s_new, rec.token_id


def _tiny_luong(seed: int = 3) -> LoadedModel:
    torch.manual_seed(seed)
    cfg = LuongConfig(src_vocab_size=13, tgt_vocab_size=11, emb_dim=5, hidden_dim=6, score="general")
    model = LuongNMT(cfg).double().eval()
    with torch.no_grad():
        for p in model.parameters():
            p.mul_(8.0)  # far from 0, so every term matters
        model.W_s.bias[EOS_ID] -= 4.0
    src = Vocab([*SPECIALS, *(f"w{i}" for i in range(len(SPECIALS), 13))])
    tgt = Vocab([*SPECIALS, *(f"v{i}" for i in range(len(SPECIALS), 11))])
    return LoadedModel(model, src, tgt, Tokenizer("en"), Tokenizer("fr"))


def test_luong_phases_equal_a_hand_computation() -> None:
    """Luong's order: h_t = LSTM(h_(t−1), [E y_(t−1); h̃_(t−1)]) (the gates written out here), then
    score h_tᵀ W_a h̄_s, a_t, c_t = Σ_s a_t(s) h̄_s, then h̃_t = tanh(W_c [c_t; h_t] + b) and W_s h̃_t + b."""
    lm = _tiny_luong()
    model: LuongNMT = lm.model
    stepper = Stepper(lm, "w5 w9 w4 w11 w7", topk=3)
    stepper.run()
    assert stepper.position >= 3
    with torch.no_grad():  # the hand computation reads the weights
        memory = stepper.enc.memory[0]  # (S, n)
        cell = model.cells[0]
        W_a, W_c, W_s = model.attention.W_a.weight, model.W_c, model.W_s
        for i in range(stepper.position):
            ph = explain(stepper, i)
            assert ph.order == ("update", "look", "generate")
            st = stepper.state_before(i)
            h_prev, c_prev, feed = st.s.h[0, 0], st.s.c[0, 0], st.s.feed[0]
            x = torch.cat([model.tgt_embed.weight[st.y_prev[0]], feed])
            gates = cell.weight_ih @ x + cell.bias_ih + cell.weight_hh @ h_prev + cell.bias_hh
            g_i, g_f, g_g, g_o = gates.chunk(4)
            c_new = torch.sigmoid(g_f) * c_prev + torch.sigmoid(g_i) * torch.tanh(g_g)
            h = torch.sigmoid(g_o) * torch.tanh(c_new)
            score = torch.stack([h @ (W_a @ hs) for hs in memory])
            a = torch.softmax(score, 0)
            ctx = a @ memory
            h_tilde = torch.tanh(W_c.weight @ torch.cat([ctx, h]) + W_c.bias)
            logits = W_s.weight @ h_tilde + W_s.bias
            got = {"h_prev": ph.update.prev, "h": ph.update.new, "memory": ph.update.memory, "feed": ph.update.feed,
                   "score": ph.look.energies, "a": ph.look.alpha, "c": ph.look.context, "h̃": ph.generate.hidden}
            want = {"h_prev": h_prev, "h": h, "memory": c_new, "feed": feed, "score": score, "a": a, "c": ctx,
                    "h̃": h_tilde}
            for key, value in want.items():
                torch.testing.assert_close(torch.tensor(got[key], dtype=torch.float64), value.detach(), **TOL, msg=key)
            for cnd in ph.generate.topk:
                assert cnd.logit == pytest.approx(float(logits[cnd.token_id]), abs=1e-9)
            assert ph.generate.pre is None and ph.update.z is None


# ----------------------------------------------------------------------------------------------
# The view's builders, on hand-made phases
# ----------------------------------------------------------------------------------------------


def _phases(arch: str = "rnnsearch", context: str = "attention") -> StepPhases:
    alpha = None if context == "fixed" else [0.1, 0.6, 0.05, 0.15, 0.1]
    energies = None if context != "attention" else [0.0, 1.8, -0.7, 0.4, 0.0]
    cands = [Candidate("chat", 7, 4.0, math.log(0.7), 0.7), Candidate("chien", 8, 3.0, math.log(0.2), 0.2)]
    written = cands[0] if arch == "rnnsearch" else Candidate("lapin", 9, 0.5, math.log(0.01), 0.01)
    pre = [1.0, 5.0, 3.0, -2.0, -1.0, -4.0] if arch == "rnnsearch" else None
    hidden = [5.0, 3.0, -1.0] if arch == "rnnsearch" else [0.3, -0.2, 0.1]
    gates = {"z": [0.5, 0.25, 1.0], "r": [0.2, 0.4, 0.6], "candidate": [1.0, -1.0, 0.5]} if arch == "rnnsearch" else {}
    upd = Update([2.0, 0.0, 1.0], [1.5, -0.25, 0.5], **gates, feed=[0.1, 0.1, 0.1] if arch == "luong" else None)
    shapes = {"memory": [5, 6], "alpha": [5], "context": [6], "state": [3], "y_emb": [4], "logits": [11],
              "t_tilde": [6], "t": [3], "h_tilde": [3]}
    variant = {"score": "general", "attention": "global", "input_feeding": True, "cell": "lstm", "layers": 1}
    look = Look(energies, alpha, [3.0, 4.0, 0.0, 0.0, 0.0, 0.0])
    order = ("update", "look", "generate") if arch == "luong" else ("look", "generate", "update")
    return StepPhases(2, arch, context, variant if arch == "luong" else {}, look, Generate(pre, hidden, cands, written),
                      upd, shapes, order=order)


def test_maxout_table_pairs_and_picks_the_larger() -> None:
    rows = pv.maxout_rows(_phases(), pairs=6)
    assert rows.to_dict("list") == {"k": [1, 2, 3], "t̃_(2k−1)": [1.0, 3.0, -1.0], "t̃_(2k)": [5.0, -2.0, -4.0],
                                    "t_k = max": [5.0, 3.0, -1.0]}
    assert pv.maxout_rows(_phases("luong")) is None


def test_source_rows_most_weight_first_with_the_rest_summed() -> None:
    rows = pv.source_rows(_phases(), ["a", "b", "c", "d", "</s>"], top=2)
    assert rows["source word"].tolist() == ["b", "d"] and rows["j"].tolist() == [1, 3]
    assert rows["α_ij"].tolist() == [0.6, 0.15] and rows["e_ij"].tolist() == [1.8, 0.4]
    assert pv.rest_weight(_phases(), top=2) == (3, pytest.approx(0.25))
    assert pv.source_rows(_phases(context="fixed"), ["a"] * 5) is None


def test_candidates_mark_the_written_word_and_add_a_forced_one() -> None:
    own = pv.candidate_rows(_phases())
    assert own["written"].tolist() == ["✓", ""]
    forced = pv.candidate_rows(_phases("luong"))
    assert forced["word"].tolist() == ["chat", "chien", "lapin"] and forced["written"].tolist()[-1] == "✓ (forced)"


def test_cards_follow_each_models_order_with_its_equations_and_shapes() -> None:
    rnn = pv.cards(_phases(), ["a", "b", "c", "d", "</s>"])
    assert [c.title for c in rnn] == ["1 · Look", "2 · Generate", "3 · Update"]
    assert any(r"\max(\tilde t_{i,2k-1}, \tilde t_{i,2k})" in e for e in rnn[1].equations)
    assert pv.latex_block([r"a = b", r"c = d"]) == r"\begin{aligned}a &= b \\[6pt] c &= d\end{aligned}"
    assert rnn[0].shapes.set_index("tensor").loc["h_j, all j", "shape"] == "Tx = 5 × 2n = 6"
    assert rnn[1].shapes.set_index("tensor").loc["t̃_i", "shape"] == "2l = 6"
    upd = rnn[2].tables[0][1].set_index("quantity")["value"]
    assert upd["‖s_i − s_(i−1)‖"] == pytest.approx(math.sqrt(0.25 + 0.0625 + 0.25))
    assert upd["mean z_i"] == pytest.approx(1.75 / 3)
    lu = pv.cards(_phases("luong"), ["a", "b", "c", "d", "</s>"])
    assert [c.key for c in lu] == ["update", "look", "generate"]
    assert any(r"h_t^\top W_a \bar h_s" in e for e in lu[1].equations)
    assert lu[0].equations == [r"h_t = \mathrm{LSTM}(h_{t-1}, [E y_{t-1}; \tilde h_{t-1}])"]
    assert "input feeding" in lu[0].source and "eqs. (5)-(6)" in lu[2].source
    fixed = pv.cards(_phases(context="fixed"), ["a"] * 5)[0]
    assert "summary" in fixed.lead and fixed.equations == [
        r"c_i = c = [\overrightarrow{h}_{T_x}; \overleftarrow{h}_1]\quad\text{for every } i"]


def test_gap_note_only_when_the_rerun_differs() -> None:
    ph = _phases()
    assert pv.gap_note(ph) is None
    ph.trace_gap = 0.02
    assert "0.02" in pv.gap_note(ph)
