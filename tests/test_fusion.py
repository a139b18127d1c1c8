"""Language-model fusion (nmt/decoding/fusion.py) and the target-side LM (nmt/models/lm.py) on tiny models.

The fused model goes through the ordinary decoders (greedy, beam, Stepper): β = 0 and a gate held at
0 must give back the translation model bit for bit; a unigram LM and a constant TM give fused scores
computed here by hand; the LM's step must equal its teacher-forced pass.
"""

from __future__ import annotations

import hashlib
import math
from pathlib import Path

import pytest
import torch

from nmt.decoding.fusion import (
    DeepFusionController,
    FusionFiles,
    LoadedLM,
    explain,
    find_fusion_files,
    fuse,
    load_controller,
    load_lm,
)
from nmt.decoding.search import Stepper, beam_search, forced, greedy
from nmt.models import checkpoint
from nmt.models.checkpoint import LoadedModel
from nmt.models.lm import GRULanguageModel, LMConfig
from nmt.models.rnnsearch import ModelConfig, RNNSearch
from nmt.text.tokenize import Tokenizer
from nmt.text.vocab import BOS_ID, SPECIALS, Vocab

SRC = ["a", "man", "rides", "horse", "."]
TGT = ["un", "homme", "monte", "cheval", "."]
SENTS = ["a man rides a horse .", "a horse .", "man rides ."]


@pytest.fixture(scope="module")
def tm() -> LoadedModel:
    """A small RNNsearch with random weights (float64, so sums are exact enough to compare)."""
    torch.manual_seed(0)
    src, tgt = Vocab([*SPECIALS, *SRC]), Vocab([*SPECIALS, *TGT])
    model = RNNSearch(ModelConfig(len(src), len(tgt), emb_dim=8, hidden_dim=8, attn_dim=8, maxout_dim=4)).double()
    with torch.no_grad():
        model.decoder.W_o.bias.add_(torch.randn(len(tgt), dtype=torch.float64))
    return LoadedModel(model.eval(), src, tgt, Tokenizer("en"), Tokenizer("fr"))


@pytest.fixture(scope="module")
def lm(tm: LoadedModel) -> LoadedLM:
    torch.manual_seed(1)
    model = GRULanguageModel(LMConfig(len(tm.tgt_vocab), emb_dim=6, hidden_dim=5)).double().eval()
    with torch.no_grad():
        model.out_bias.copy_(3 * torch.randn(len(tm.tgt_vocab), dtype=torch.float64))
    return LoadedLM(model, tm.tgt_vocab, "fr", {})


def _controller(lm: LoadedLM) -> DeepFusionController:
    torch.manual_seed(2)
    ctl = DeepFusionController(lm.model.cfg.hidden_dim, 8).double()
    with torch.no_grad():
        ctl.W_f.weight.normal_(0.0, 3.0)  # not the zero start, so the LM's state would change t̃
    return ctl.eval()


def _steps(traces: list) -> list[list[tuple[int, float]]]:
    return [[(s.token_id, s.logprob) for s in t.steps] for t in traces]


def _nbest(traces: list) -> list[list[tuple[list[str], float]]]:
    return [[(e.tokens, e.logprob) for e in t.nbest] for t in traces]


def test_shallow_fusion_with_beta_zero_is_the_translation_model(tm, lm) -> None:
    fused = fuse(tm, lm, "shallow", beta=0.0)
    assert _steps(greedy(fused, SENTS)) == _steps(greedy(tm, SENTS))
    assert _nbest(beam_search(fused, SENTS, beam=3, n_best=3)) == _nbest(beam_search(tm, SENTS, beam=3, n_best=3))
    # …and a β that is not 0 changes the output (so the comparison above can fail).
    assert _steps(greedy(fuse(tm, lm, "shallow", beta=1.0), SENTS)) != _steps(greedy(tm, SENTS))


def test_deep_fusion_with_the_gate_held_at_zero_is_the_translation_model(tm, lm) -> None:
    ctl = _controller(lm)
    fused = fuse(tm, lm, "deep", controller=ctl, gate=0.0)
    assert _steps(greedy(fused, SENTS)) == _steps(greedy(tm, SENTS))
    assert _nbest(beam_search(fused, SENTS, beam=3, n_best=3)) == _nbest(beam_search(tm, SENTS, beam=3, n_best=3))
    assert _steps(greedy(fuse(tm, lm, "deep", controller=ctl, gate=1.0), SENTS)) != _steps(greedy(tm, SENTS))
    assert _steps(greedy(fuse(tm, lm, "deep", controller=ctl), SENTS)) != _steps(greedy(tm, SENTS))


def test_shallow_fusion_of_a_constant_tm_and_a_unigram_lm_by_hand() -> None:
    """TM: p(un) = .5, p(homme) = .4, p(</s>) = .1 at every step (W_o = 0, bias = log p); LM: all GRU
    weights 0, so h = 0 and p_LM = softmax(b) = (un .1, homme .8, </s> .1). With β = .5:
    score(un) = ln .5 + .5 ln .1 = −1.8444, score(homme) = ln .4 + .5 ln .8 = −1.02786,
    score(</s>) = ln .1 + .5 ln .1 = −3.4539: fusion writes "homme" where the TM writes "un"."""
    tgt = Vocab([*SPECIALS, "un", "homme"])
    src = Vocab([*SPECIALS, "a"])
    far = -60.0  # the other specials: p ≈ e^−60
    p_tm = {"un": 0.5, "homme": 0.4, "</s>": 0.1}
    p_lm = {"un": 0.1, "homme": 0.8, "</s>": 0.1}
    model = RNNSearch(ModelConfig(len(src), len(tgt), emb_dim=4, hidden_dim=4, attn_dim=4, maxout_dim=2)).double()
    lm = GRULanguageModel(LMConfig(len(tgt), emb_dim=3, hidden_dim=2)).double()
    with torch.no_grad():
        model.decoder.W_o.weight.zero_()
        model.decoder.W_o.bias.copy_(torch.tensor([math.log(p_tm[w]) if w in p_tm else far for w in tgt.itos]))
        for p in lm.gru.parameters():
            p.zero_()
        lm.proj.bias.zero_()
        lm.out_bias.copy_(torch.tensor([math.log(p_lm[w]) if w in p_lm else far for w in tgt.itos]))
    tm = LoadedModel(model.eval(), src, tgt, Tokenizer("en"), Tokenizer("fr"))
    fused = fuse(tm, LoadedLM(lm.eval(), tgt, "fr", {}), "shallow", beta=0.5)
    assert [s.token for s in greedy(tm, ["a"])[0].steps[:2]] == ["un", "un"]
    steps = greedy(fused, ["a"])[0].steps
    assert [s.token for s in steps[:2]] == ["homme", "homme"]
    # renormalised: Z = e^score summed = .5·√.1 + .4·√.8 + .1·√.1 = .15811 + .35777 + .03162 = .54751,
    # so log p_fused(homme) = −1.02786 − ln .54751 = −0.42548 (p .65345)
    assert steps[0].logprob == pytest.approx(-0.42548, abs=1e-5)
    assert dict(steps[0].topk)["un"] == pytest.approx(0.5 * math.sqrt(0.1) / 0.54751, abs=1e-5)
    [first] = explain(fused, greedy(fused, ["a"])[0])[:1]
    assert first.score == pytest.approx(-1.02786, abs=1e-5)  # the panel's score: log p_TM + β log p_LM
    assert dict(first.fused_top)["un"] == pytest.approx(-1.84444, abs=1e-5)
    assert dict(first.fused_top)["</s>"] == pytest.approx(-3.45388, abs=1e-5)
    assert dict(first.lm_top)["homme"] == pytest.approx(0.8, abs=1e-6)
    assert dict(first.tm_top)["un"] == pytest.approx(0.5, abs=1e-6)


def test_lm_step_equals_its_teacher_forced_pass(lm) -> None:
    model = lm.model
    ids = torch.tensor([[2, 4, 5, 6, 8, 3], [2, 7, 7, 4, 5, 6]])  # <s> then words (B = 2, T = 6)
    hs, logits = model.teacher_force(ids)
    state = model.initial_state(ids[:, 0])
    for t in range(ids.shape[1]):
        out = model.step(state)
        torch.testing.assert_close(out.hidden, hs[:, t], rtol=0, atol=1e-6)
        torch.testing.assert_close(out.log_probs, torch.log_softmax(logits[:, t], -1).float(), rtol=0, atol=1e-6)
        if t + 1 < ids.shape[1]:
            state = type(out.state)(out.state.h, ids[:, t + 1])


def test_stepper_and_explain_read_the_same_fused_steps(tm, lm) -> None:
    """The Stepper on a fused model reproduces fused greedy; explain's log p_TM of each written word
    equals forced decoding of those words by the TM alone, and its score is log p_TM + β log p_LM."""
    fused = fuse(tm, lm, "shallow", beta=0.7)
    trace = greedy(fused, [SENTS[0]])[0]
    stepped = Stepper(fused, SENTS[0]).run()
    assert _steps([stepped]) == _steps([trace])
    steps = explain(fused, trace)
    words = [s.token for s in trace.steps[:-1]] if trace.finished else [s.token for s in trace.steps]
    ref = forced(tm, [SENTS[0]], [" ".join(words)], pretokenized=True)[0]
    for e, r in zip(steps, ref.steps, strict=False):
        assert e.tm_logprob == pytest.approx(r.logprob, abs=1e-6)
        assert e.score == pytest.approx(e.tm_logprob + 0.7 * e.lm_logprob, abs=1e-6)
    assert all(e.gate is None for e in steps)


ROOT = Path(__file__).resolve().parent.parent
FUSION_DIR = ROOT / "checkpoints" / "fusion"
LM_FILE = FUSION_DIR / "tatoeba-fr-lm.pt"


@pytest.mark.skipif(not LM_FILE.exists(), reason="no shipped language model")
def test_the_shipped_lm_fits_the_europarl_model_only() -> None:
    """The Tatoeba LM reads the Europarl RNNsearch's target vocabulary word for word (recorded by digest),
    credits Tatoeba, stays small, and is not offered to the Multi30k model (another vocabulary)."""
    europarl = checkpoint.load(ROOT / "checkpoints" / "europarl-en-fr-rnnsearch-50.pt")
    assert find_fusion_files(FUSION_DIR, europarl).lm == LM_FILE
    lm = load_lm(LM_FILE)
    digest = hashlib.sha256("\n".join(europarl.tgt_vocab.itos).encode()).hexdigest()
    assert lm.meta["vocabulary"]["sha256"] == digest and lm.vocab.itos == europarl.tgt_vocab.itos
    assert "tatoeba.org" in lm.meta["credit"] and "manythings.org" in lm.meta["credit"]
    assert LM_FILE.stat().st_size <= 12_000_000
    m30k = checkpoint.load(ROOT / "checkpoints" / "m30k-en-fr-rnnsearch.pt")
    assert find_fusion_files(FUSION_DIR, m30k) == FusionFiles()
    # it learned French word order: a sentence beats its own words reversed
    @torch.no_grad()
    def logp(words: list[str]) -> float:
        ids = torch.tensor([[BOS_ID, *lm.vocab.encode(words)]])
        return float(torch.log_softmax(lm.model.teacher_force(ids[:, :-1])[1], -1)
                     .gather(-1, ids[:, 1:, None]).sum())
    sentence = ["Je", "suis", "très", "fatigué", "ce", "soir", "."]
    assert logp(sentence) > logp(sentence[::-1]) + 5


def test_deep_fusion_training_loss_is_the_fused_steps_log_p_and_trains_the_controller_only(tm, lm) -> None:
    """The controller training's (nmt/training/fusion_training.py) teacher-forced loss equals −Σ log p of the same
    words decoded step by step by the fused model (forced decoding); one update moves v_g, b_g and W_f and
    nothing else."""
    from nmt.text.data import Example, make_batch
    from scripts.train_fusion import fused_loss

    ctl = _controller(lm)
    refs = ["un homme monte .", "cheval ."]
    examples = [Example(s.split(), r.split()) for s, r in zip(SENTS[:2], refs, strict=True)]
    batch = make_batch(examples, tm.src_vocab, tm.tgt_vocab)
    traces = forced(fuse(tm, lm, "deep", controller=ctl), SENTS[:2], refs, pretokenized=True)
    stepwise = -sum(s.logprob for t in traces for s in t.steps)
    assert fused_loss(tm.model, lm.model, ctl, batch).item() == pytest.approx(stepwise, abs=1e-4)
    frozen = {k: v.clone() for k, v in [*tm.model.state_dict().items(), *lm.model.state_dict().items()]}
    before = {k: v.clone() for k, v in ctl.state_dict().items()}
    opt = torch.optim.SGD(ctl.parameters(), lr=0.1)
    for p in [*tm.model.parameters(), *lm.model.parameters()]:
        p.requires_grad_(False)
    fused_loss(tm.model, lm.model, ctl, batch).backward()
    opt.step()
    after = dict([*tm.model.state_dict().items(), *lm.model.state_dict().items()])
    assert all(torch.equal(frozen[k], after[k]) for k in frozen)
    assert all(not torch.equal(before[k], v) for k, v in ctl.state_dict().items())
    for p in [*tm.model.parameters(), *lm.model.parameters()]:
        p.requires_grad_(True)


def test_explain_of_deep_fusion_reads_the_tm_alone_and_the_gate(tm, lm) -> None:
    """For deep fusion explain gives the TM's own log p (forced decoding by the TM alone), the fused
    log p (forced decoding by the fused model) and g_i = σ(v_gᵀ s_i^LM + b_g) from the LM's states."""
    ctl = _controller(lm)
    fused = fuse(tm, lm, "deep", controller=ctl)
    trace = greedy(fused, [SENTS[1]])[0]
    words = " ".join(s.token for s in trace.steps if s.token != "</s>")
    alone, with_lm = (forced(m, [SENTS[1]], [words], pretokenized=True)[0] for m in (tm, fused))
    steps = explain(fused, trace)
    h, _ = lm.model.teacher_force(torch.tensor([[2, *(s.token_id for s in trace.steps[:-1])]]))
    gates = torch.sigmoid(ctl.gate(h)).squeeze(-1)[0].tolist()
    for e, a, w, g in zip(steps, alone.steps, with_lm.steps, gates, strict=True):
        assert e.tm_logprob == pytest.approx(a.logprob, abs=1e-6)
        assert e.score == pytest.approx(w.logprob, abs=1e-6)
        assert e.gate == pytest.approx(g, abs=1e-9)
    assert any(abs(e.score - e.tm_logprob) > 1e-3 for e in steps)  # the LM's state changed the readout


def _fused_systems(tm: LoadedModel, lm: LoadedLM) -> dict[str, LoadedModel]:
    ctl = _controller(lm)
    return {"shallow β=0.5": fuse(tm, lm, "shallow", beta=0.5), "shallow β=1": fuse(tm, lm, "shallow", beta=1.0),
            "deep": fuse(tm, lm, "deep", controller=ctl), "deep g=1": fuse(tm, lm, "deep", controller=ctl, gate=1.0)}


def test_every_p_shown_for_a_fused_model_sums_to_one(tm, lm) -> None:
    """Greedy, beam and the stepper, every word listed: each step's p sum to 1 for every fusion mode,
    and so do explain's p_TM and p_LM; the shallow score (e^score summed) is far from 1, so the sums
    hold because the fused score is renormalised, not by accident."""
    k = len(tm.tgt_vocab)
    for name, fused in _fused_systems(tm, lm).items():
        traces = [*greedy(fused, SENTS, topk=k), *beam_search(fused, SENTS[:2], beam=3, topk=k),
                  Stepper(fused, SENTS[0], topk=k).run()]
        for s in (s for t in traces for s in t.steps):
            assert sum(p for _, p in s.topk) == pytest.approx(1.0, abs=1e-6), name
            assert dict(s.topk)[s.token] == pytest.approx(s.prob, abs=1e-7), name
        for e in explain(fused, traces[0], topk=k):
            assert sum(p for _, p in e.tm_top) == pytest.approx(1.0, abs=1e-6)
            assert sum(p for _, p in e.lm_top) == pytest.approx(1.0, abs=1e-6)
            if name.startswith("shallow"):
                assert sum(math.exp(v) for _, v in e.fused_top) < 0.9  # the score itself is no distribution
                assert e.score == pytest.approx(e.tm_logprob + fused.model.beta * e.lm_logprob, abs=1e-6)


def test_deep_fusion_gate_by_hand() -> None:
    """g = σ(v_gᵀ s + b_g) and W_f (g s): v_g = (1, −2), b_g = 0.5, s = (0.3, 0.4): v_gᵀ s + b_g = 0,
    so g = 0.5 and W_f (g s) with W_f = [[2, 0], [0, 4], [1, 1]] is (0.3, 0.8, 0.35); held at 0.2:
    (0.12, 0.32, 0.14)."""
    ctl = DeepFusionController(2, 3)
    with torch.no_grad():
        ctl.gate.weight.copy_(torch.tensor([[1.0, -2.0]]))
        ctl.gate.bias.fill_(0.5)
        ctl.W_f.weight.copy_(torch.tensor([[2.0, 0.0], [0.0, 4.0], [1.0, 1.0]]))
    g, extra = ctl(torch.tensor([[0.3, 0.4]]))
    assert g.tolist() == pytest.approx([0.5], abs=1e-6)
    assert extra[0].tolist() == pytest.approx([0.3, 0.8, 0.35], abs=1e-6)
    g, extra = ctl(torch.tensor([[0.3, 0.4]]), held=0.2)
    assert g.tolist() == pytest.approx([0.2]) and extra[0].tolist() == pytest.approx([0.12, 0.32, 0.14], abs=1e-6)


EUROPARL = ROOT / "checkpoints" / "europarl-en-fr-rnnsearch-50.pt"


@pytest.mark.skipif(not (LM_FILE.exists() and EUROPARL.exists()), reason="no shipped fusion files")
def test_every_p_of_the_shipped_fusion_sums_to_one() -> None:
    """The shipped Europarl RNNsearch-50 with the Tatoeba LM, shallow (β = 0.2) and deep (its controller):
    a few real steps, every word of the 30k vocabulary listed."""
    tm = checkpoint.load(EUROPARL)
    lm = load_lm(LM_FILE)
    files = find_fusion_files(FUSION_DIR, tm)
    ctl = load_controller(files.controller)[0] if files.controller else None
    modes = [fuse(tm, lm, "shallow", beta=0.2), *([fuse(tm, lm, "deep", controller=ctl)] if ctl else [])]
    for fused in modes:
        st = Stepper(fused, "The committee has adopted the report.", topk=len(tm.tgt_vocab))
        for _ in range(3):
            st.step()
        for s in st.trace.steps:
            assert sum(p for _, p in s.topk) == pytest.approx(1.0, abs=1e-5)
