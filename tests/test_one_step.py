"""One decoder step, owned by the model: greedy, beam, surgery and attribution all follow the paper,
and one mutation of that step (the energy's sign, the softmax's axis) breaks all four at once.

The reference is tests/test_reference_a2.py's, written again from Appendix A.2 in float64 with no
module of :mod:`nmt.models.rnnsearch` (``decode_ref``; its ``given`` α rows are the surgery's c_i = Σ_j α'_ij h_j).
Each ``check_*`` below compares one consumer of :meth:`nmt.models.rnnsearch.RNNSearch.step` with it. Were any
consumer to carry its own copy of the step, the mutation would not reach it and its check would keep
passing under the mutation, failing :func:`test_a_mutated_step_fails_every_consumer`.

Run once by hand with each mutation written into nmt/models/rnnsearch.py itself (a copy of the tree, issue 22):
``-self.v_a(...)`` in ``AdditiveAttention.energies`` failed 23 tests of test_decoding, test_beam_views,
test_reference_a2, test_surgery, test_attribution and this module; ``dim=0`` in
``AdditiveAttention.weights`` failed 40 of them. The tiny random-model tests of surgery and attribution
mostly pass under the sign flip (they compare the model with itself), which is why the checks here
compare with the independent reference.
"""

from __future__ import annotations

from collections.abc import Callable

import pytest
import torch

from nmt.decoding import search as decoding
from nmt.decoding.surgery import Edit, decode_with_surgery
from nmt.explanation.attribution import attribute, target_log_prob
from nmt.models.rnnsearch import AdditiveAttention, RNNSearch
from nmt.text.vocab import BOS_ID, EOS_ID
from tests.test_reference_a2 import LOGP32, SOURCES, TOL, _lm, _text, decode_ref, paper_weights, random_model

ALPHA_TOL = {"atol": 1e-9, "rtol": 1e-7}


def _model() -> RNNSearch:
    model = random_model(seed=1)
    with torch.no_grad():
        model.decoder.W_o.bias[EOS_ID] -= 3.0  # a few steps before </s>
    return model


def _ref(model: RNNSearch, x: list[int], ids: list[int], given: dict[int, torch.Tensor] | None = None):
    """The reference's steps for source x and target ids y_1 … y_T (fed <s> y_1 … y_{T-1})."""
    return decode_ref(paper_weights(model), x, [BOS_ID, *ids[:-1]], given=given)


def check_greedy(model: RNNSearch) -> None:
    """Greedy words are the reference's argmax; log p and α are the reference's."""
    for x, t in zip(SOURCES, decoding.greedy(_lm(model), [_text(x) for x in SOURCES]), strict=True):
        ref = _ref(model, x, [s.token_id for s in t.steps])
        for i, s in enumerate(t.steps):
            assert s.token_id == int(ref.log_p[i].argmax())
            assert s.logprob == pytest.approx(float(ref.log_p[i, s.token_id]), **LOGP32)
            torch.testing.assert_close(torch.tensor(s.alpha, dtype=torch.float64), ref.alpha[i], **TOL)


def check_beam(model: RNNSearch) -> None:
    """Every n-best hypothesis of a k = 3 beam: log p the reference's sum, α rows the reference's."""
    for x, t in zip(SOURCES, decoding.beam_search(_lm(model), [_text(x) for x in SOURCES], beam=3, n_best=3),
                    strict=True):
        assert len(t.nbest) >= 2
        for h in t.nbest:
            ids = [_lm(model).tgt_vocab.stoi[w] for w in h.tokens]
            ref = _ref(model, x, ids)
            assert h.logprob == pytest.approx(sum(float(ref.log_p[i, y]) for i, y in enumerate(ids)), abs=1e-5)
            torch.testing.assert_close(torch.tensor(h.alpha, dtype=torch.float64), torch.stack(ref.alpha), **TOL)


def check_surgery(model: RNNSearch) -> None:
    """A one-hot α at step 1 of a forced target: every step's log p and α are the reference's with that α."""
    x = SOURCES[2]
    ids = [4, 7, 9, 5, EOS_ID]
    onehot = torch.zeros(len(x), dtype=torch.float64)
    onehot[3] = 1.0
    r = decode_with_surgery(_lm(model), _text(x), {1: Edit("onehot", j=3)}, target=[f"v{i}" for i in ids[:-1]])
    ref = _ref(model, x, ids, given={1: onehot})
    assert r.edited_steps == [1] and [s.token_id for s in r.trace.steps] == ids
    for i, s in enumerate(r.trace.steps):
        assert s.logprob == pytest.approx(float(ref.log_p[i, ids[i]]), **LOGP32)
        torch.testing.assert_close(torch.tensor(s.alpha, dtype=torch.float64), ref.alpha[i], **TOL)


def check_attribution(model: RNNSearch) -> None:
    """Attribution's log p(y_i), its α, its Captum forward F(x) and leave-one-out of α are the reference's."""
    x = SOURCES[0]
    ids = [6, 4, 8, EOS_ID]
    att = attribute(_lm(model), x, ids, methods=("loo_alpha",))
    ref = _ref(model, x, ids)
    for i, y in enumerate(ids):
        assert att.logprob[i] == pytest.approx(float(ref.log_p[i, y]), **LOGP32)
        torch.testing.assert_close(torch.from_numpy(att.alpha[i]).double(), ref.alpha[i], **ALPHA_TOL)
        for j in range(len(x)):  # α' = softmax of the reference energies over k ≠ j (eq. 6), at step i only
            e = ref.energies[i].clone()
            e[j] = float("-inf")
            edited = _ref(model, x, ids, given={i: torch.softmax(e, 0)})
            want = float(ref.log_p[i, y] - edited.log_p[i, y])
            assert att.scores["loo_alpha"][i, j] == pytest.approx(want, abs=1e-5)
    k = len(ids)
    emb = model.encoder.embed(torch.tensor([x])).expand(k, -1, -1)
    with torch.no_grad():
        f = target_log_prob(model, emb, torch.full((k,), len(x)), torch.tensor([[BOS_ID, *ids[:-1]]]).expand(k, -1),
                            torch.tensor([ids]).expand(k, -1), torch.arange(k))
    assert f.tolist() == pytest.approx([float(ref.log_p[i, y]) for i, y in enumerate(ids)], abs=1e-5)


CHECKS: dict[str, Callable[[RNNSearch], None]] = {
    "greedy": check_greedy, "beam": check_beam, "surgery": check_surgery, "attribution": check_attribution}


def _wrong_sign(monkeypatch: pytest.MonkeyPatch) -> None:
    own = AdditiveAttention.energies
    monkeypatch.setattr(AdditiveAttention, "energies", lambda self, s_prev, keys: -own(self, s_prev, keys))


def _wrong_axis(monkeypatch: pytest.MonkeyPatch) -> None:
    def weights(energies: torch.Tensor, mask: torch.Tensor) -> torch.Tensor:
        return torch.softmax(energies.masked_fill(~mask, float("-inf")), dim=0)  # over rows, not source words

    monkeypatch.setattr(AdditiveAttention, "weights", staticmethod(weights))


MUTATIONS = {"energy sign": _wrong_sign, "softmax axis": _wrong_axis}


@pytest.mark.parametrize("name", CHECKS)
def test_every_consumer_of_the_step_follows_the_paper(name: str) -> None:
    CHECKS[name](_model())


@pytest.mark.parametrize("mutation", MUTATIONS)
@pytest.mark.parametrize("name", CHECKS)
def test_a_mutated_step_fails_every_consumer(name: str, mutation: str, monkeypatch: pytest.MonkeyPatch) -> None:
    MUTATIONS[mutation](monkeypatch)
    with pytest.raises(AssertionError):
        CHECKS[name](_model())
