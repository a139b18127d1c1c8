"""Decoding with candidate lists (Jean et al. 2015 §3.2; issue 20): the model's own step renormalises
p over each sentence's list, and greedy, beam, the stepper, ensembles and the CLI decode with it."""

from __future__ import annotations

import dataclasses
import io
import math
from pathlib import Path

import numpy as np
import pytest
import torch

from nmt.decoding.ensemble import ensemble_of
from nmt.decoding.recorder import encode_sources
from nmt.decoding.search import InputError, Stepper, beam_search, greedy, prepare_source
from nmt.decoding.trace import DecodeTrace
from nmt.models import checkpoint
from nmt.models.candidates import CandidateError, CandidateSpec, allowed_mask, build
from nmt.models.luong import LuongConfig, LuongNMT
from nmt.text.vocab import BOS_ID, SPECIALS, Vocab
from nmt.tools import translate as translate_cli

TINY = Path(__file__).resolve().parent / "fixtures" / "tiny"


@pytest.fixture(scope="module")
def lm(tiny_lm: checkpoint.LoadedModel) -> checkpoint.LoadedModel:
    """The tiny model with the fixture's dictionary (a copy: the session's tiny model keeps none)."""
    out = dataclasses.replace(tiny_lm)
    checkpoint.use_dictionary(out, TINY / "lexicon.en-fr.tsv")
    return out


def _renormalised(full: torch.Tensor, ids: list[int]) -> np.ndarray:
    """p restricted to ``ids``, by hand from the unrestricted log p: p_k / Σ_{k′ ∈ ids} p_k′, 0 elsewhere."""
    p = np.exp(full.double().numpy())
    out = np.zeros_like(p)
    out[ids] = p[ids] / p[ids].sum()
    return out


@pytest.mark.parametrize("arch", ["rnnsearch", "luong"])
def test_the_models_step_renormalises_over_the_list(lm: checkpoint.LoadedModel, arch: str) -> None:
    if arch == "luong":
        torch.manual_seed(0)
        cfg = LuongConfig(len(lm.src_vocab), len(lm.tgt_vocab), emb_dim=8, hidden_dim=12)
        lm = dataclasses.replace(lm, model=LuongNMT(cfg).eval())
    src = prepare_source(lm, "A dog is sleeping on the bench.")
    enc = encode_sources(lm, [src])
    state = lm.model.initial_state(enc, torch.tensor([BOS_ID]))
    ids = [1, 3, 7, 11, 12]
    with torch.no_grad():
        full = lm.model.step(enc, state).log_probs[0]
        restricted = lm.model.step(enc.restrict(allowed_mask([ids], len(lm.tgt_vocab))), state).log_probs[0]
    np.testing.assert_allclose(restricted.double().exp().numpy(), _renormalised(full, ids), atol=1e-6)
    assert restricted[0].item() == -math.inf


def test_each_row_of_a_batch_renormalises_over_its_own_list(lm: checkpoint.LoadedModel) -> None:
    """Two sentences with different lists in one batch: each row's p is its own list's renormalisation
    of its full p (words in one row's list only are scored for that row, not dropped from the batch)."""
    srcs = [prepare_source(lm, s) for s in ("A dog is sleeping on the bench.", "Two men are talking.")]
    enc = encode_sources(lm, srcs)
    state = lm.model.initial_state(enc, torch.tensor([BOS_ID, BOS_ID]))
    lists = [[1, 3, 7, 11, 12], [1, 3, 5, 9, 20]]
    assert 2 * len(set(lists[0]) | set(lists[1])) < len(lm.tgt_vocab)  # the path that gathers rows
    with torch.no_grad():
        full = lm.model.step(enc, state).log_probs
        restricted = lm.model.step(enc.restrict(allowed_mask(lists, len(lm.tgt_vocab))), state).log_probs
    for row, ids in enumerate(lists):
        np.testing.assert_allclose(restricted[row].double().exp().numpy(), _renormalised(full[row], ids), atol=1e-6)


def test_build_by_hand() -> None:
    vocab = Vocab(["<pad>", "<unk>", "<s>", "</s>", "le", "la", "chat", "chien", "noir"])
    tr = {"cat": ("chat", "matou"), "black": ("noir", "la"), "dark": ("noir",)}
    ids, made = build(["the", "black", "cat", "dark"], tr, vocab, CandidateSpec(1, 2))
    # specials, "le" (the 1 most frequent), black → noir, la; cat → chat ("matou" is no vocabulary word)
    assert ids == [0, 1, 2, 3, 4, 5, 6, 8]
    assert (made.size, made.vocab_size, made.k_frequent, made.k_translations) == (8, 9, 1, 2)
    assert made.via == {"noir": ["black", "dark"], "la": ["black"], "chat": ["cat"]}  # "le" is frequent anyway
    assert allowed_mask([None, None], 9) is None
    mask = allowed_mask([[0, 3], None], 4)
    assert mask.tolist() == [[True, False, False, True], [True, True, True, True]]
    with pytest.raises(CandidateError, match="K′"):
        CandidateSpec(10, 99)


def test_greedy_and_beam_write_only_listed_words_and_the_full_list_changes_nothing(
        lm: checkpoint.LoadedModel) -> None:
    sents = (TINY / "test.en").read_text().splitlines()
    everything = CandidateSpec(len(lm.tgt_vocab))
    for run in (lambda **kw: greedy(lm, sents, **kw), lambda **kw: beam_search(lm, sents, beam=3, **kw)):
        plain, full = run(), run(candidates=everything)
        assert [t.target_tokens for t in full] == [t.target_tokens for t in plain]
        assert [s.logprob for t in full for s in t.steps] == pytest.approx([s.logprob for t in plain for s in t.steps])
        small = run(candidates=CandidateSpec(0, 1))  # the specials and each source word's best translation only
        for t in small:
            allowed = set(SPECIALS) | {lm.translations[w][0] for w in t.src_tokens if w in lm.translations}
            assert set(t.target_tokens) <= allowed, t.source
            assert t.candidates is not None and t.candidates.size == len(
                {lm.tgt_vocab.stoi[w] for w in allowed if w in lm.tgt_vocab.stoi})
        assert [t.target_tokens for t in small] != [t.target_tokens for t in plain]


def test_an_ensemble_of_the_model_with_itself_decodes_with_the_list_as_the_model(lm: checkpoint.LoadedModel) -> None:
    sents = (TINY / "test.en").read_text().splitlines()[:4]
    spec = CandidateSpec(3, 2)
    ens = ensemble_of([lm, lm], ["a", "b"])
    assert ens.translations == lm.translations
    one, two = greedy(lm, sents, candidates=spec), greedy(ens, sents, candidates=spec)
    assert [t.target_tokens for t in two] == [t.target_tokens for t in one]


def test_the_stepper_marks_words_that_came_in_through_a_source_word(lm: checkpoint.LoadedModel) -> None:
    st = Stepper(lm, "A woman is riding a bike.", candidates=CandidateSpec(2, 3))
    trace = st.run()
    assert trace.candidates is not None
    frequent = set(lm.tgt_vocab.itos[: len(SPECIALS) + 2])
    for s in trace.steps:
        via = trace.came_in_via(s.i)
        if s.token in frequent:
            assert via == []
        else:  # every other written word came in through a source word whose translations list it
            assert via and all(s.token in lm.translations[w][:3] for w in via), s.token
    assert any(trace.came_in_via(s.i) for s in trace.steps)
    back = DecodeTrace.from_dict(trace.to_dict())
    assert back.candidates == trace.candidates and back.came_in_via(1) == trace.came_in_via(1)
    st2 = Stepper(lm, "A woman is riding a bike.", candidates=CandidateSpec(2, 3))
    outside = next(w for w in lm.tgt_vocab.itos[len(SPECIALS):] if lm.tgt_vocab.stoi[w] not in
                   set(st2.source.candidate_ids))
    with pytest.raises(InputError, match="candidate list"):
        st2.step(outside)
    assert Stepper(lm, "A woman is riding a bike.").step(outside).forced  # without a list it can be forced


def test_translate_cli_candidates(lm: checkpoint.LoadedModel) -> None:
    args = translate_cli.parser().parse_args(["--checkpoint", "x", "--candidates", "0", "--candidates-per-word", "1"])
    out, err = io.StringIO(), io.StringIO()
    translate_cli.translate_stream(lm, io.StringIO("A woman is riding a bike.\n\n"), out, err, args)
    spec_out = greedy(lm, ["A woman is riding a bike."], candidates=CandidateSpec(0, 1))[0].translation
    assert out.getvalue() == spec_out + "\n\n"
    assert spec_out != greedy(lm, ["A woman is riding a bike."])[0].translation
    with pytest.raises(SystemExit):
        translate_cli.main(["--checkpoint", "x", "--candidates", "-1"])


def test_bench_coverage_by_hand(lm: checkpoint.LoadedModel) -> None:
    """bench/candidates.py: the list size and the share of reference words it holds, against a count by hand."""
    import importlib.util

    spec = importlib.util.spec_from_file_location("bench_candidates", TINY.parent.parent.parent / "bench" /
                                                  "candidates.py")
    bench = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(bench)
    src, ref = "A woman is riding a bike.", "Une femme fait du vélo."
    best = {w: lm.translations[w][0] for w in lm.src_tok.tokenize(src) if w in lm.translations}
    listed = set(SPECIALS) | set(best.values())
    ref_words = [w for w in lm.tgt_tok.tokenize(ref) if w in lm.tgt_vocab.stoi]
    want = sum(w in listed for w in ref_words) / len(ref_words)
    got = bench.coverage(lm, [src], [ref], CandidateSpec(0, 1))
    assert got == {"mean_size": float(len({w for w in listed if w in lm.tgt_vocab.stoi})),
                   "reference_coverage": round(want, 4)}
    assert 0 < want < 1  # the case tells something: some reference words are in the list, some are not
