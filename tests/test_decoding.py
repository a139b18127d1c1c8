"""One decoding core: greedy, beam, forced, stepping, traces and bad input.

Most tests run the tiny model trained on the fixture pairs; unknown-word replacement and the
``<unk>`` round trip run a hand-made model whose output and attention are known in advance.
"""

from __future__ import annotations

import copy
import dataclasses
import json

import numpy as np
import pytest
import torch

from nmt.decoding import search as decoding
from nmt.decoding.search import InputError, Stepper, beam_search, forced, greedy
from nmt.decoding.trace import DecodeTrace
from nmt.models.checkpoint import LoadedModel
from nmt.models.rnnsearch import DecoderState, ModelConfig, RNNSearch
from nmt.text.tokenize import Tokenizer
from nmt.text.vocab import BOS_ID, EOS, SPECIALS, UNK, UNK_ID, Vocab
from tests.conftest import TINY_DATA
from ui.figures.stepper import output_words

SENTS = [line for line in (TINY_DATA / "train.en").read_text().splitlines()]
REFS = [line for line in (TINY_DATA / "train.fr").read_text().splitlines()]


def test_tiny_model_translates_its_training_pairs(tiny_lm) -> None:
    out = decoding.translate(tiny_lm, SENTS[:10])
    assert out == REFS[:10]


def _replay_states(lm: LoadedModel, tokens: list[str], target_ids: list[int]) -> tuple[torch.Tensor, list[float]]:
    """Annotations (Tx, 2n) and ‖s_{i-1}‖ per step, from the model's own encode/step (not nmt.decoding.search)."""
    ids = lm.src_vocab.encode(tokens)
    with torch.no_grad():
        enc = lm.model.encode(torch.tensor([ids]), torch.tensor([len(ids)]))
        state = lm.model.initial_state(enc, torch.tensor([BOS_ID]))
        norms = []
        for y in target_ids:
            norms.append(float(state.s.norm()))
            state = DecoderState(lm.model.step(enc, state).state.s, torch.tensor([y]))
    return enc.annotations[0], norms


def test_greedy_trace_holds_every_step(tiny_lm) -> None:
    """Each StepRecord: α and e over every source token, top-k in order, and ‖s_{i-1}‖ and ‖c_i‖
    equal to the state replayed through the model and to ‖Σ_j α_ij h_j‖ of the recorded α."""
    t = greedy(tiny_lm, [SENTS[0]], topk=3)[0]
    assert t.finished and t.steps[-1].token == "</s>"
    assert t.src_tokens == ["A", "man", "is", "riding", "a", "bike", ".", "</s>"] and t.src_unk == [False] * 8
    annotations, state_norms = _replay_states(tiny_lm, t.src_tokens[:-1], [s.token_id for s in t.steps])
    for s, state_norm in zip(t.steps, state_norms, strict=True):
        assert len(s.alpha) == len(s.energies) == len(t.src_tokens)
        assert abs(sum(s.alpha) - 1) < 1e-5
        assert len(s.topk) == 3 and s.topk[0][0] == s.token  # greedy picks the top word
        assert s.topk[0][1] >= s.topk[1][1] >= s.topk[2][1]
        assert s.topk[0][1] == pytest.approx(np.exp(s.logprob), rel=1e-6)
        assert s.state_norm == pytest.approx(state_norm, rel=1e-5)
        context = torch.tensor(s.alpha) @ annotations
        assert s.context_norm == pytest.approx(float(context.norm()), rel=1e-5)
    assert len({round(s.state_norm, 6) for s in t.steps}) == len(t.steps)  # the state moves every step
    assert t.alpha_matrix().shape == (len(t.steps), len(t.src_tokens))
    assert len(t.cells()) == len(t.steps) * len(t.src_tokens)


def test_stepping_reproduces_greedy_exactly(tiny_lm) -> None:
    g = greedy(tiny_lm, [SENTS[3]])[0]
    st = Stepper(tiny_lm, SENTS[3])
    while not st.done:
        st.step()
    assert st.trace.target_tokens == g.target_tokens
    for a, b in zip(st.trace.steps, g.steps):
        assert a.alpha == b.alpha and a.energies == b.energies and a.logprob == b.logprob
    assert st.trace.translation == g.translation


def test_back_then_step_returns_the_same_state(tiny_lm) -> None:
    st = Stepper(tiny_lm, SENTS[5])
    st.step()
    second = st.step()
    st.back()
    assert st.position == 1
    again = st.step()
    assert again == second


def test_forcing_a_word_continues_from_it(tiny_lm) -> None:
    st = Stepper(tiny_lm, SENTS[0])  # "Un homme fait du vélo."
    st.step()
    rec = st.step(force="femme")
    assert rec.forced and rec.token == "femme"
    assert not st.trace.steps[0].forced
    st.run()
    assert st.trace.steps[1].token == "femme"
    assert st.trace.translation.startswith("Un femme")


def test_stepper_refuses_to_step_past_the_end(tiny_lm) -> None:
    st = Stepper(tiny_lm, SENTS[1])
    st.run()
    with pytest.raises(InputError):
        st.step()


def test_beam_size_one_equals_greedy(tiny_lm) -> None:
    g = greedy(tiny_lm, SENTS)
    b = beam_search(tiny_lm, SENTS, beam=1)
    assert [t.target_tokens for t in b] == [t.target_tokens for t in g]
    for x, y in zip(b[0].steps, g[0].steps):
        np.testing.assert_allclose(x.alpha, y.alpha, atol=1e-6)


PENALTY = {  # written out from the definitions, not read from nmt.decoding.search
    "none": lambda n: 1.0,
    "length": lambda n: float(n),  # Jean et al. (2015): log p / |y|
    "gnmt": lambda n: ((5.0 + n) / 6.0) ** 0.6,  # Wu et al. (2016), α = 0.6
}


@pytest.mark.parametrize("norm", ["none", "length", "gnmt"])
def test_nbest_scores_are_forced_log_p_over_the_length_penalty(tiny_lm, norm) -> None:
    """Each n-best entry's log p is the sum of the per-token log p that forced decoding of its
    tokens gives, its score that over the length penalty, its α forced decoding's α; sorted."""
    for t in beam_search(tiny_lm, SENTS[:4], beam=5, n_best=5, length_norm=norm):
        scores = [n.score for n in t.nbest]
        assert len(scores) == 5
        assert scores == sorted(scores, reverse=True)
        assert t.nbest[0].tokens == t.target_tokens
        src = " ".join(t.src_tokens[:-1])
        for n in t.nbest:
            words = n.tokens[:-1] if n.tokens[-1] == EOS else n.tokens
            f = forced(tiny_lm, [src], [" ".join(words)], pretokenized=True)[0]
            steps = f.steps[: len(n.tokens)]  # a hypothesis cut at the length limit has no </s>
            assert [s.token for s in steps] == n.tokens
            assert n.logprob == pytest.approx(sum(s.logprob for s in steps), rel=1e-5, abs=1e-5)
            assert n.score == pytest.approx(n.logprob / PENALTY[norm](len(n.tokens)), rel=1e-9)
            np.testing.assert_allclose(n.alpha, [s.alpha for s in steps], atol=1e-5)


def test_beam_records_live_pruned_and_finished_hypotheses(tiny_lm) -> None:
    """The recorded beam: k live hypotheses from the empty one first, parents always live, live ranked
    by log p; every recorded hypothesis' cumulative log p is the forced log p of its tokens, and its
    score that over its length; the n-best list is made of recorded finished hypotheses."""
    t = beam_search(tiny_lm, [SENTS[2]], beam=3, n_best=3)[0]
    first = t.beam_steps[0]
    assert len(first.live) == 3 and all(h.parent == 0 for h in first.live)
    ids = {h.id for step in t.beam_steps for h in step.live}
    src = " ".join(t.src_tokens[:-1])
    for i, step in enumerate(t.beam_steps):
        for h in step.live + step.pruned + step.finished:
            assert i == 0 or h.parent in ids  # every hypothesis extends a live one
            assert h.step == i and len(h.tokens) == i + 1 and h.token == h.tokens[-1]
            assert h.finished == (h.status == "finished") == (h.token == EOS and h in step.finished)
            words = h.tokens[:-1] if h.token == EOS else h.tokens
            f = forced(tiny_lm, [src], [" ".join(words)], pretokenized=True)[0]
            assert h.logprob == pytest.approx(sum(s.logprob for s in f.steps[: i + 1]), rel=1e-5, abs=1e-5)
            assert h.score == pytest.approx(h.logprob / (i + 1), rel=1e-9)
        assert [h.logprob for h in step.live] == sorted((h.logprob for h in step.live), reverse=True)
    finished = {tuple(h.tokens) for step in t.beam_steps for h in step.finished}
    assert len(t.nbest) == 3 and {tuple(n.tokens) for n in t.nbest} <= finished


def test_batched_beam_equals_one_sentence_at_a_time(tiny_lm) -> None:
    together = beam_search(tiny_lm, SENTS[:6], beam=4, n_best=2)
    for s, t in zip(SENTS[:6], together):
        alone = beam_search(tiny_lm, [s], beam=4, n_best=2)[0]
        assert [n.tokens for n in alone.nbest] == [n.tokens for n in t.nbest]


def test_forced_decoding_of_greedy_output_reproduces_its_alpha(tiny_lm) -> None:
    g = greedy(tiny_lm, SENTS[:5])
    f = forced(tiny_lm, SENTS[:5], [t.translation for t in g])
    for a, b in zip(g, f):
        assert a.target_tokens == b.target_tokens
        np.testing.assert_allclose(a.alpha_matrix(), b.alpha_matrix(), atol=1e-6)
        assert all(s.forced for s in b.steps)


def test_forced_pretokenized_keeps_indices(tiny_lm) -> None:
    t = forced(tiny_lm, ["a man is riding ."], ["un homme fait du vélo ."], pretokenized=True)[0]
    assert t.src_tokens == ["a", "man", "is", "riding", ".", "</s>"]
    assert t.target_tokens == ["un", "homme", "fait", "du", "vélo", ".", "</s>"]


def test_fixed_context_trace_has_no_alignment(tiny_lm) -> None:
    t = greedy(tiny_lm, [SENTS[0]], context="fixed")[0]
    assert t.context == "fixed" and not t.has_alignment
    assert all(s.alpha is None and s.energies is None for s in t.steps)
    assert np.isnan(t.alpha_matrix()).all()
    assert len({round(s.context_norm, 6) for s in t.steps}) == 1  # one summary for every step


def test_trace_json_round_trip(tiny_lm) -> None:
    t = beam_search(tiny_lm, [SENTS[1]], beam=3, n_best=2)[0]
    assert DecodeTrace.from_dict(json.loads(t.to_json())) == t


# -- unknown words: a hand-made model whose output and attention are known in advance -------

HAND_SRC = ["A", "man", "rides", "a", "."]
HAND_TGT = ["L'", "homme", ".", "un"]
# Attention score σ_j of each source word; the unknown "Zorblax" reads <unk>'s. Ranking: </s>,
# Zorblax, man, rides, a, ".", A, so the most-attended *word* is Zorblax and the least is A.
HAND_SCORE = {UNK: 0.6, EOS: 0.9, "A": -0.9, "man": 0.3, "rides": 0.2, "a": 0.1, ".": 0.0}
# The output depends on y_{i-1} only; every other previous word leads to </s>.
HAND_NEXT = {"<s>": "L'", "L'": UNK, UNK: "homme", "homme": ".", ".": EOS}
HAND_SENT = "A man rides a Zorblax."
HAND_TOKENS = ["L'", UNK, "homme", ".", EOS]


@pytest.fixture(scope="module")
def hand_lm() -> LoadedModel:
    """An RNNsearch with weights set by hand (float64).

    * encoder: update gate z = σ(30) ≈ 1 and no recurrence, so h_j = [tanh σ_j; tanh σ_j], σ_j being
      the first coordinate of the word's embedding;
    * alignment: W_a = 0, U_a = [1 0], v_a = 10, so e_ij = 10 tanh(tanh σ_j) at every step;
    * deep output: U_o = C_o = 0, one-hot target embeddings, and V_o gives HAND_NEXT[y_{i-1}] a
      logit of 20 (both maxout units of the pair): greedy writes L' <unk> homme . </s>.
    """
    src_vocab, tgt_vocab = Vocab([*SPECIALS, *HAND_SRC]), Vocab([*SPECIALS, *HAND_TGT])
    K = len(tgt_vocab)
    model = RNNSearch(ModelConfig(len(src_vocab), K, emb_dim=K, hidden_dim=1, attn_dim=1, maxout_dim=K),
                      init=False).double()
    sd = {k: torch.zeros_like(v) for k, v in model.state_dict().items()}
    for word, score in HAND_SCORE.items():
        sd["encoder.embed.weight"][src_vocab.stoi[word], 0] = score
    sd["encoder.b_in"][:, 0, 0] = 30.0  # z ≈ 1: h_j = h̃_j
    sd["encoder.w_in"][:, 0, 2] = 1.0  # h̃_j = tanh(σ_j)
    sd["decoder.attention.U_a.weight"][0, 0] = 1.0
    sd["decoder.attention.v_a.weight"][0, 0] = 10.0
    sd["decoder.embed.weight"] = torch.eye(K, dtype=torch.float64)
    sd["decoder.W_o.weight"] = torch.eye(K, dtype=torch.float64)
    for prev, word in enumerate(tgt_vocab.itos):
        nxt = tgt_vocab.stoi[HAND_NEXT.get(word, EOS)]
        sd["decoder.V_o.weight"][2 * nxt : 2 * nxt + 2, prev] = 20.0
    model.load_state_dict(sd)
    return LoadedModel(model.eval(), src_vocab, tgt_vocab, Tokenizer("en"), Tokenizer("fr"))


def test_hand_model_does_what_it_was_built_to_do(hand_lm) -> None:
    """Guards the hand-made model the next tests rely on: its tokens, and α ranking </s> first, Zorblax second."""
    t = greedy(hand_lm, [HAND_SENT])[0]
    assert t.src_tokens == ["A", "man", "rides", "a", "Zorblax", ".", EOS]
    assert t.src_unk == [False, False, False, False, True, False, False]
    assert t.target_tokens == HAND_TOKENS
    for s in t.steps:
        assert np.argsort(s.alpha)[::-1].tolist() == [6, 4, 1, 2, 3, 5, 0]


def test_unk_replacement_copies_the_most_attended_source_word_never_eos(hand_lm) -> None:
    """Jean et al. (2015): <unk> becomes argmax_j α_ij over the source *words*: Zorblax here, not
    </s> (which has more α) and not "A" (an argmin); greedy, beam, stepper and translate agree."""
    plain = greedy(hand_lm, [HAND_SENT])[0]
    assert plain.translation == "L'<unk> homme."
    assert greedy(hand_lm, [HAND_SENT], unk_replace=True)[0].translation == "L'Zorblax homme."
    beam = beam_search(hand_lm, [HAND_SENT], beam=2, n_best=2, unk_replace=True)[0]
    assert beam.translation == beam.nbest[0].translation == "L'Zorblax homme."
    assert Stepper(hand_lm, HAND_SENT, unk_replace=True).run().translation == "L'Zorblax homme."
    assert decoding.translate(hand_lm, [HAND_SENT], unk_replace=True) == ["L'Zorblax homme."]
    assert decoding.translate(hand_lm, [HAND_SENT]) == ["L'<unk> homme."]


def test_unk_replacement_in_the_mean_context_copies_nothing_in_decoding_and_in_the_view(hand_lm) -> None:
    """The mean context's uniform α points at no word: greedy, beam, the stepper and the stepper page's
    copies (all the trace's one rule) keep <unk> (a first-largest argmax would copy "A")."""
    g = greedy(hand_lm, [HAND_SENT], context="mean", unk_replace=True)[0]
    assert g.target_tokens == HAND_TOKENS and g.has_alignment and g.unk_copies() == {}
    assert g.translation == "L'<unk> homme."
    assert beam_search(hand_lm, [HAND_SENT], beam=2, context="mean", unk_replace=True)[0].translation == g.translation
    assert Stepper(hand_lm, HAND_SENT, context="mean", unk_replace=True).run().translation == g.translation
    assert output_words(g, g.unk_copies()) == ["L'", UNK, "homme", "."]


def test_forced_decoding_of_output_with_unk_reproduces_it(hand_lm) -> None:
    """Round trip: force-decoding the detokenised output "L'<unk> homme." gives back its tokens
    (``<unk>`` stays one token, "L'" stays glued) and its α."""
    g = greedy(hand_lm, [HAND_SENT])[0]
    f = forced(hand_lm, [HAND_SENT], [g.translation])[0]
    assert f.target_tokens == g.target_tokens == HAND_TOKENS
    np.testing.assert_allclose(f.alpha_matrix(), g.alpha_matrix(), atol=1e-12)
    assert f.logprob == pytest.approx(g.logprob, abs=1e-12)


@pytest.fixture(scope="module")
def unk_lm(tiny_lm) -> LoadedModel:
    """The tiny model with its output layer biased so far towards <unk> that greedy writes only <unk>."""
    model = copy.deepcopy(tiny_lm.model)
    with torch.no_grad():
        model.decoder.W_o.bias[UNK_ID] += 100.0
    return dataclasses.replace(tiny_lm, model=model)


def test_unk_replacement_on_a_trained_attention_follows_alpha(unk_lm) -> None:
    """With a trained (not hand-made) attention, each <unk> becomes the source word of largest α_ij
    (</s> left out), read from the recorded α with numpy; the round trip of the <unk> output holds."""
    sent = "A man is riding a Zorblax."
    plain = greedy(unk_lm, [sent])[0]
    assert set(plain.target_tokens) == {UNK} and len(plain.steps) == decoding.max_target_len(8)
    copied = [plain.src_tokens[int(np.argmax(s.alpha[:-1]))] for s in plain.steps]
    assert EOS not in copied
    replaced = greedy(unk_lm, [sent], unk_replace=True)[0]
    assert replaced.translation == unk_lm.tgt_tok.detokenize(copied)
    f = forced(unk_lm, [sent], [plain.translation])[0]
    assert f.target_tokens[:-1] == plain.target_tokens and f.target_tokens[-1] == EOS
    np.testing.assert_allclose(f.alpha_matrix()[:-1], plain.alpha_matrix(), atol=1e-6)


# -- bad input ---------------------------------------------------------------------------------


@pytest.mark.parametrize("text", ["", "   ", "\t\n"])
def test_empty_input_gives_a_clear_error(tiny_lm, text) -> None:
    with pytest.raises(InputError, match="empty"):
        greedy(tiny_lm, [text])
    with pytest.raises(InputError):
        Stepper(tiny_lm, text)


def test_only_unknown_words_translate_like_any_other_unknown_words(tiny_lm) -> None:
    """Three unknown words reach the encoder as <unk> <unk> <unk> </s>, whatever they were."""
    t = greedy(tiny_lm, ["Xyzzy plugh quux"])[0]
    other = greedy(tiny_lm, ["Foo bar baz"])[0]
    assert t.src_tokens == ["Xyzzy", "plugh", "quux", EOS] and t.src_unk == [True, True, True, False]
    assert t.target_tokens == other.target_tokens and t.translation == other.translation
    assert t.finished or len(t.steps) == decoding.max_target_len(4)


def test_a_1000_word_line_is_truncated_with_a_flag(tiny_lm) -> None:
    t = greedy(tiny_lm, [" ".join(["dog"] * 1000)])[0]
    assert t.truncated and len(t.src_tokens) == decoding.MAX_SOURCE_TOKENS + 1
    assert len(t.steps) <= decoding.max_target_len(decoding.MAX_SOURCE_TOKENS + 1)


@pytest.mark.parametrize("text", ["<script>alert(1)</script>", "🙂 A dog 🐶", "Собака бежит.", "狗在跑"])
def test_odd_scripts_never_crash(tiny_lm, text) -> None:
    """Odd input decodes: unknown words flagged by vocabulary membership, the translation is the
    detokenised output, and decoding ends with </s> or at the length limit."""
    t = greedy(tiny_lm, [text])[0]
    assert t.src_unk == [w not in tiny_lm.src_vocab for w in t.src_tokens[:-1]] + [False]
    words = t.target_tokens[:-1] if t.finished else t.target_tokens
    assert EOS not in words and t.translation == tiny_lm.tgt_tok.detokenize(words)
    assert t.finished or len(t.steps) == decoding.max_target_len(len(t.src_tokens))


def test_translate_keeps_line_alignment_with_empty_lines(tiny_lm) -> None:
    out = decoding.translate(tiny_lm, [SENTS[0], "", "  ", SENTS[1]], beam=2)
    assert out == [REFS[0], "", "", REFS[1]]
