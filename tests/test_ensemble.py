"""Ensembles (nmt/decoding/ensemble.py): an ensemble of one model, and of a model with itself, decodes as the
model does (greedy, beam, forced, the stepper); a two-member ensemble's log p is the mean of the
members' worked out by hand from their (fixed) output distributions, and its α the mean of the α
each member records when decoding alone; members that do not share vocabularies are refused.

Members are small untrained models (an RNNsearch and Luong variants) on the tiny fixture's
vocabularies, so every decoding path runs in well under a second.
"""

from __future__ import annotations

import math
from pathlib import Path

import numpy as np
import pytest
import torch

from nmt.decoding.ensemble import EnsembleError, EnsembleState, ensemble_of
from nmt.decoding.search import Stepper, beam_search, forced, greedy
from nmt.decoding.trace import DecodeTrace
from nmt.models import checkpoint
from nmt.models.candidates import CandidateSpec
from nmt.models.checkpoint import LoadedModel
from nmt.models.luong import LuongConfig, LuongNMT
from nmt.models.registry import describe_model
from nmt.models.rnnsearch import ModelConfig, RNNSearch
from nmt.text.tokenize import Tokenizer
from nmt.text.vocab import Vocab
from nmt.tools import cli
from scripts import ensemble_results
from tests.conftest import TINY_DATA

torch.set_num_threads(1)

SENTS = (TINY_DATA / "train.en").read_text().splitlines()
EN, FR = Tokenizer("en"), Tokenizer("fr")
SRC_VOCAB = Vocab.build([EN.tokenize(s) for s in SENTS], 1000)
TGT_VOCAB = Vocab.build([FR.tokenize(s) for s in (TINY_DATA / "train.fr").read_text().splitlines()], 1000)
ATTENTION = {"luong-general": "global", "luong-local-p": "local-p"}


def member(kind: str, seed: int = 0, tgt_vocab=TGT_VOCAB) -> LoadedModel:
    """A small untrained model of ``kind`` (rnnsearch, luong-general, luong-local-p) on the tiny vocabularies."""
    torch.manual_seed(seed)
    if kind == "rnnsearch":
        model = RNNSearch(ModelConfig(len(SRC_VOCAB), len(tgt_vocab), emb_dim=8, hidden_dim=12, attn_dim=10,
                                      maxout_dim=6))
    else:
        model = LuongNMT(LuongConfig(len(SRC_VOCAB), len(tgt_vocab), emb_dim=8, hidden_dim=12, window=3,
                                     attention=ATTENTION[kind]))
    return LoadedModel(model.eval(), SRC_VOCAB, tgt_vocab, EN, FR, path=f"{kind}-{seed}.pt")


def assert_same_decoding(a: list[DecodeTrace], b: list[DecodeTrace], atol: float = 0.0) -> None:
    """Same words, and per step the same log p and α (to ``atol``), in every trace."""
    for x, y in zip(a, b, strict=True):
        assert x.target_tokens == y.target_tokens
        np.testing.assert_allclose([s.logprob for s in x.steps], [s.logprob for s in y.steps], atol=atol, rtol=0)
        np.testing.assert_allclose(x.alpha_matrix(), y.alpha_matrix(), atol=atol, rtol=0)


@pytest.mark.parametrize("kind", ["rnnsearch", "luong-local-p"])
@pytest.mark.parametrize("copies", [1, 2], ids=["one model", "a model with itself"])
def test_an_ensemble_of_one_model_or_a_model_with_itself_is_the_model(kind: str, copies: int) -> None:
    lm = member(kind)
    ens = ensemble_of([lm] * copies)
    sents = SENTS[:4]
    atol = 1e-6  # (a + a) / 2 and the renormalisation (Z_i = 1) may round in their last bits
    assert_same_decoding(greedy(ens, sents), greedy(lm, sents), atol)
    b_ens, b_lm = beam_search(ens, sents, beam=3, n_best=3), beam_search(lm, sents, beam=3, n_best=3)
    assert_same_decoding(b_ens, b_lm, atol)
    for x, y in zip(b_ens, b_lm, strict=True):
        assert [h.tokens for h in x.nbest] == [h.tokens for h in y.nbest]
        np.testing.assert_allclose([h.score for h in x.nbest], [h.score for h in y.nbest], atol=1e-5)
    refs = (TINY_DATA / "train.fr").read_text().splitlines()[:4]
    assert_same_decoding(forced(ens, sents, refs), forced(lm, sents, refs), atol)
    st = Stepper(ens, SENTS[5])
    st.run()
    assert_same_decoding([st.trace], greedy(lm, [SENTS[5]]), atol)
    for s in [*st.trace.steps, *(s for t in b_ens for s in t.steps)]:  # each copy is the model, on every beam row
        assert [m.logprob for m in s.members] == pytest.approx([s.logprob] * copies, abs=1e-6)
        assert [m.alpha for m in s.members] == [pytest.approx(s.alpha, abs=1e-6)] * copies
        assert [m.top[0] for m in s.members] == [s.topk[0][0]] * copies  # each row's own first choice
        assert [m.top[1] for m in s.members] == pytest.approx([s.topk[0][1]] * copies, abs=1e-5)


def constant_output(lm: LoadedModel, probs: dict[str, float]) -> LoadedModel:
    """Make the output layer ignore its input: W = 0, bias = log p, so p(y_i) = ``probs`` at every step
    (words not named get p ≈ e^-30)."""
    layer = lm.model.decoder.W_o if isinstance(lm.model, RNNSearch) else lm.model.W_s
    bias = torch.full((len(lm.tgt_vocab),), -30.0)
    for word, p in probs.items():
        bias[lm.tgt_vocab.stoi[word]] = math.log(p)
    with torch.no_grad():
        layer.weight.zero_()
        layer.bias.copy_(bias)
    return lm


def test_two_members_average_log_p_as_worked_by_hand() -> None:
    a = constant_output(member("rnnsearch"), {"chat": 0.70, "chien": 0.25, "rouge": 0.05})
    b = constant_output(member("luong-general", seed=1), {"chat": 0.05, "chien": 0.40, "rouge": 0.55})
    ens = ensemble_of([a, b])
    step = greedy(ens, [SENTS[0]])[0].steps[0]
    # mean log p: chat (ln .70 + ln .05)/2 = −1.676, chien (ln .25 + ln .40)/2 = −1.151, rouge (ln .05 + ln .55)/2
    # = −1.797: "chien" (averaging p instead would pick "chat": .375 > .325 > .30). Geometric means
    # chat sqrt(.035) = .18708, chien sqrt(.1) = .31623, rouge sqrt(.0275) = .16583, the other words
    # e^−30 each: Z = .66914, so p_ens(chien) = .31623 / .66914 = .47259, p_ens(chat) = .27958.
    assert step.token == "chien"
    assert step.logprob == pytest.approx(math.log(0.47259), abs=1e-4)
    assert [m.logprob for m in step.members] == pytest.approx([math.log(0.25), math.log(0.40)], abs=1e-5)
    assert [m.top[0] for m in step.members] == ["chat", "rouge"]
    assert [m.top[1] for m in step.members] == pytest.approx([0.70, 0.55], abs=1e-5)
    assert dict(step.topk)["chat"] == pytest.approx(0.27958, abs=1e-5)  # the normalised geometric mean
    assert dict(step.topk)["rouge"] == pytest.approx(0.24782, abs=1e-5)


def test_the_ensembles_alpha_is_the_mean_of_what_each_member_records_alone() -> None:
    a, b = member("rnnsearch"), member("luong-local-p", seed=2)
    ens_trace = greedy(ensemble_of([a, b]), [SENTS[1]])[0]
    # the ensemble's words (it may stop at the length limit), forced on each member alone
    src = " ".join(ens_trace.src_tokens[:-1])
    out = " ".join(s.token for s in ens_trace.steps if s.token != "</s>")
    alone = [forced(lm, [src], [out], pretokenized=True)[0] for lm in (a, b)]
    n = len(ens_trace.steps)
    assert [t.target_tokens[:n] for t in alone] == [ens_trace.target_tokens] * 2
    mean = (alone[0].alpha_matrix()[:n] + alone[1].alpha_matrix()[:n]) / 2
    np.testing.assert_allclose(ens_trace.alpha_matrix(), mean, atol=1e-6)
    for k, trace in enumerate(alone):
        np.testing.assert_allclose([s.members[k].logprob for s in ens_trace.steps],
                                   [s.logprob for s in trace.steps[:n]], atol=1e-5)
        np.testing.assert_allclose([s.members[k].alpha for s in ens_trace.steps], trace.alpha_matrix()[:n], atol=1e-6)
    assert all(s.energies is None for s in ens_trace.steps)  # the members' energies are on different scales
    assert DecodeTrace.from_dict(ens_trace.to_dict()) == ens_trace  # members survive the JSON export


def peaked(lm: LoadedModel, seed: int) -> LoadedModel:
    """``lm`` with a large random output bias (std 3): members that are sure of themselves and disagree,
    so the mean of their log p is far from a distribution (Σ_k exp(mean) well below 1)."""
    layer = lm.model.decoder.W_o if isinstance(lm.model, RNNSearch) else lm.model.W_s
    with torch.no_grad():
        layer.bias.add_(3.0 * torch.randn(len(lm.tgt_vocab), generator=torch.Generator().manual_seed(seed)))
    return lm


MIXES = {"two": [("rnnsearch", 0), ("luong-general", 1)],
         "three": [("rnnsearch", 0), ("luong-local-p", 2), ("luong-general", 3)]}


@pytest.mark.parametrize("mix", MIXES)
def test_every_p_shown_for_an_ensemble_sums_to_one(mix: str) -> None:
    """Greedy, beam, forced, the stepper and a candidate list, every word listed (top-k = K_y): the
    ensemble's p of each step sum to 1, and the written word's p is its top-k entry. Z_i, read off
    each step as the members' geometric mean over p_ens, is far from 1: without renormalising, the
    sums would not be 1."""
    ens = ensemble_of([peaked(member(kind, seed), seed) for kind, seed in MIXES[mix]])
    k = len(TGT_VOCAB)
    refs = (TINY_DATA / "train.fr").read_text().splitlines()[:2]
    traces = [*greedy(ens, SENTS[:3], topk=k), *beam_search(ens, SENTS[:2], beam=3, topk=k),
              *forced(ens, SENTS[:2], refs, topk=k), Stepper(ens, SENTS[3], topk=k).run(),
              *greedy(ens, SENTS[:2], topk=k, candidates=CandidateSpec(6, 0))]
    steps = [s for t in traces for s in t.steps]
    assert len(steps) > 20
    for s in steps:
        assert len(s.topk) == k and sum(p for _, p in s.topk) == pytest.approx(1.0, abs=1e-5)
        assert dict(s.topk)[s.token] == pytest.approx(s.prob, abs=1e-6)
    z = [math.exp(sum(m.logprob for m in s.members) / len(s.members)) / s.prob for s in steps]
    assert min(z) < 0.9  # Z_i = Σ_k Π_m p_m(k)^(1/M): what the renormalisation divides by


def test_the_ensembles_state_and_context_are_its_members_side_by_side() -> None:
    # by hand: ‖[3, 4; 12, 0, 5]‖ = sqrt(25 + 169) = 13.9284, ‖[0, 1; 0, 0, 0]‖ = 1
    st = EnsembleState((torch.tensor([[3.0, 4.0], [0.0, 1.0]]), torch.tensor([[12.0, 0.0, 5.0], [0.0, 0.0, 0.0]])))
    assert st.norm(dim=-1).tolist() == pytest.approx([13.92839, 1.0], abs=1e-5)
    assert [x.tolist() for x in st.index_select(0, torch.tensor([1, 1])).members] == [[[0.0, 1.0]] * 2, [[0.0] * 3] * 2]
    # decoding: each step's ‖s_{i-1}‖² and ‖c_i‖² are the sums of what each member records alone
    a, b = member("rnnsearch"), member("luong-general", seed=2)
    ens_trace = greedy(ensemble_of([a, b]), [SENTS[2]])[0]
    src = " ".join(ens_trace.src_tokens[:-1])
    out = " ".join(s.token for s in ens_trace.steps if s.token != "</s>")
    alone = [forced(lm, [src], [out], pretokenized=True)[0].steps[: len(ens_trace.steps)] for lm in (a, b)]
    for attr in ("state_norm", "context_norm"):
        want = [math.hypot(getattr(x, attr), getattr(y, attr)) for x, y in zip(*alone, strict=True)]
        np.testing.assert_allclose([getattr(s, attr) for s in ens_trace.steps], want, rtol=1e-5, err_msg=attr)
        assert min(getattr(x, attr) for x in alone[1]) > 1e-3  # the second member's part is not nothing


def test_members_with_other_vocabularies_or_languages_are_refused() -> None:
    a = member("rnnsearch")
    other = member("luong-general", tgt_vocab=Vocab(TGT_VOCAB.itos[:-1]))
    with pytest.raises(EnsembleError, match="different target vocabularies"):
        ensemble_of([a, other], ["a.pt", "b.pt"])
    swapped = TGT_VOCAB.itos[:-2] + TGT_VOCAB.itos[-2:][::-1]  # same words, same size, two ids swapped
    with pytest.raises(EnsembleError, match="different target vocabularies"):
        ensemble_of([a, member("luong-general", tgt_vocab=Vocab(swapped))], ["a.pt", "b.pt"])
    de = LoadedModel(member("rnnsearch").model, SRC_VOCAB, TGT_VOCAB, EN, Tokenizer("de"), path="de.pt")
    with pytest.raises(EnsembleError, match="language pair"):
        ensemble_of([a, de], ["a.pt", "de.pt"])


def test_the_results_script_refuses_mismatched_members_in_one_line(tmp_path: Path, capsys) -> None:
    paths = []
    for k, lm in enumerate([member("rnnsearch"), member("luong-general", tgt_vocab=Vocab(TGT_VOCAB.itos[:-2]))]):
        p = tmp_path / f"m{k}.pt"
        checkpoint.atomic_save(checkpoint.make_checkpoint(lm.model, lm.src_vocab, lm.tgt_vocab, "en", "fr", {}), p)
        paths.append(str(p))
    assert cli.run(lambda: ensemble_results.main([*paths, "--out", str(tmp_path / "r.json")])) == 2
    err = capsys.readouterr().err
    assert err.startswith("error: m1.pt and m0.pt have different target vocabularies") and "Traceback" not in err
    assert not (tmp_path / "r.json").exists()


def test_an_ensembles_description() -> None:
    configs = [{"context": "attention"}, {"arch": "luong", "attention": "global", "score": "general"},
               {"arch": "luong", "attention": "local-p", "score": "general"}]
    d = describe_model({"arch": "ensemble", "members": configs})
    assert d.name == "Ensemble (3): RNNsearch + Luong general + Luong local-p"
    assert (d.kind, d.context, d.has_alpha) == ("ensemble", "attention", True)


SHIPPED = [Path(__file__).resolve().parent.parent / "checkpoints" / f"m30k-en-fr-{n}.pt"
           for n in ("rnnsearch", "luong-global-general", "luong-local-p")]


@pytest.mark.skipif(not all(p.exists() for p in SHIPPED), reason="no shipped Multi30k members")
def test_every_p_of_the_shipped_ensemble_sums_to_one() -> None:
    """The shipped three-member ensemble, every word of its vocabulary listed, on real steps (greedy and
    beam): Σ p = 1, where the members' plain geometric mean sums to well under 1 on some step."""
    from nmt.decoding.ensemble import load_ensemble

    ens = load_ensemble(SHIPPED)
    k = len(ens.tgt_vocab)
    traces = [*greedy(ens, ["Two dogs are playing in the snow.", "A man in a red coat sells fish."], topk=k),
              *beam_search(ens, ["A girl is jumping."], beam=3, topk=k)]
    steps = [s for t in traces for s in t.steps]
    for s in steps:
        assert sum(p for _, p in s.topk) == pytest.approx(1.0, abs=1e-5)
    assert min(math.exp(sum(m.logprob for m in s.members) / 3) / s.prob for s in steps) < 0.95
