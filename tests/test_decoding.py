"""One decoding core: greedy, beam, forced, stepping, traces and bad input."""

from __future__ import annotations

import json

import numpy as np
import pytest

from nmt import decoding
from nmt.decoding import InputError, Stepper, beam_search, forced, greedy
from nmt.trace import DecodeTrace
from tests.conftest import TINY_DATA

SENTS = [line for line in (TINY_DATA / "train.en").read_text().splitlines()]
REFS = [line for line in (TINY_DATA / "train.fr").read_text().splitlines()]


def test_tiny_model_translates_its_training_pairs(tiny_lm) -> None:
    out = decoding.translate(tiny_lm, SENTS[:10])
    assert out == REFS[:10]


def test_greedy_trace_holds_every_step(tiny_lm) -> None:
    t = greedy(tiny_lm, [SENTS[0]], topk=3)[0]
    assert t.finished and t.steps[-1].token == "</s>"
    assert t.src_tokens[-1] == "</s>" and len(t.src_unk) == len(t.src_tokens)
    for s in t.steps:
        assert len(s.alpha) == len(s.energies) == len(t.src_tokens)
        assert abs(sum(s.alpha) - 1) < 1e-5
        assert len(s.topk) == 3 and s.topk[0][0] == s.token  # greedy picks the top word
        assert s.topk[0][1] >= s.topk[1][1] >= s.topk[2][1]
        assert s.state_norm > 0 and s.context_norm > 0
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


@pytest.mark.parametrize("norm", ["none", "length", "gnmt"])
def test_nbest_is_sorted_by_normalised_score(tiny_lm, norm) -> None:
    for t in beam_search(tiny_lm, SENTS[:4], beam=5, n_best=5, length_norm=norm):
        scores = [n.score for n in t.nbest]
        assert len(scores) == 5
        assert scores == sorted(scores, reverse=True)
        best = t.nbest[0]
        assert best.tokens == t.target_tokens
        expected = best.logprob / decoding.length_penalty(len(best.tokens), norm)
        assert best.score == pytest.approx(expected)
        assert len(best.alpha) == len(best.tokens)


def test_beam_records_live_pruned_and_finished_hypotheses(tiny_lm) -> None:
    t = beam_search(tiny_lm, [SENTS[2]], beam=3, n_best=3)[0]
    first = t.beam_steps[0]
    assert len(first.live) == 3 and all(h.parent == 0 for h in first.live)
    ids = {h.id for step in t.beam_steps for h in step.live}
    for step in t.beam_steps[1:]:
        for h in step.live + step.pruned + step.finished:
            assert h.parent in ids  # every hypothesis extends a live one
        assert [h.logprob for h in step.live] == sorted((h.logprob for h in step.live), reverse=True)
    assert sum(len(s.finished) for s in t.beam_steps) >= 3


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


def test_unk_replacement_copies_the_attended_source_word(tiny_lm) -> None:
    t = greedy(tiny_lm, ["A man is riding a Zorblax."], unk_replace=True)[0]
    assert t.src_unk[t.src_tokens.index("Zorblax")]
    plain = greedy(tiny_lm, ["A man is riding a Zorblax."])[0]
    if "<unk>" in plain.target_tokens:
        assert "<unk>" not in t.translation


# -- bad input ---------------------------------------------------------------------------------


@pytest.mark.parametrize("text", ["", "   ", "\t\n"])
def test_empty_input_gives_a_clear_error(tiny_lm, text) -> None:
    with pytest.raises(InputError, match="empty"):
        greedy(tiny_lm, [text])
    with pytest.raises(InputError):
        Stepper(tiny_lm, text)


def test_only_unknown_words_still_translate(tiny_lm) -> None:
    t = greedy(tiny_lm, ["Xyzzy plugh quux"])[0]
    assert t.src_unk[:3] == [True, True, True]
    assert t.steps  # decoded something, no crash


def test_a_1000_word_line_is_truncated_with_a_flag(tiny_lm) -> None:
    t = greedy(tiny_lm, [" ".join(["dog"] * 1000)])[0]
    assert t.truncated and len(t.src_tokens) == decoding.MAX_SOURCE_TOKENS + 1
    assert len(t.steps) <= decoding.max_target_len(decoding.MAX_SOURCE_TOKENS + 1)


@pytest.mark.parametrize("text", ["<script>alert(1)</script>", "🙂 A dog 🐶", "Собака бежит.", "狗在跑"])
def test_odd_scripts_never_crash(tiny_lm, text) -> None:
    t = greedy(tiny_lm, [text])[0]
    assert t.steps and isinstance(t.translation, str)


def test_translate_keeps_line_alignment_with_empty_lines(tiny_lm) -> None:
    out = decoding.translate(tiny_lm, [SENTS[0], "", "  ", SENTS[1]], beam=2)
    assert out == [REFS[0], "", "", REFS[1]]
