"""Attention surgery and the debate's two α tests (nmt.decoding.surgery, nmt.explanation.debate).

Most tests run a tiny randomly initialised RNNsearch over the fixture vocabularies (built in a
fraction of a second, no training); a few check the shipped Multi30k model and its presets and are
skipped when the checkpoint is absent.
"""

from __future__ import annotations

import math

import pytest
import torch

from nmt.decoding.search import InputError, Stepper
from nmt.decoding.surgery import PRESETS, Edit, apply_edit, decode_with_surgery, surgery_at_stepper
from nmt.explanation.faithfulness import adversarial_alpha, jsd, permutation_test, project_simplex
from nmt.models import checkpoint
from nmt.models.checkpoint import LoadedModel
from nmt.models.rnnsearch import DecoderState, ModelConfig, RNNSearch
from nmt.text.tokenize import Tokenizer
from nmt.text.vocab import BOS_ID, SPECIALS, Vocab
from tests.conftest import ROOT, TINY_DATA

SHIPPED = ROOT / "checkpoints" / "m30k-en-fr-rnnsearch.pt"
needs_shipped = pytest.mark.skipif(not SHIPPED.exists(), reason="shipped checkpoint absent")
TEXT = "Two dogs are playing in the snow."


def tiny_random_lm(context: str = "attention", seed: int = 0, sharpen: float = 30.0) -> LoadedModel:
    """An untrained RNNsearch (m=16, n=24, n'=16, l=8) over the tiny fixture vocabularies, with
    random biases and v_a scaled by ``sharpen`` (1: near-uniform α, 30: α far from uniform)."""
    vocabs = []
    for lang in ("en", "fr"):
        tok = Tokenizer(lang)
        words = {w for line in (TINY_DATA / f"train.{lang}").read_text().splitlines() for w in tok.tokenize(line)}
        vocabs.append(Vocab([*SPECIALS, *sorted(words)]))
    torch.manual_seed(seed)
    cfg = ModelConfig(len(vocabs[0]), len(vocabs[1]), emb_dim=16, hidden_dim=24, attn_dim=16, maxout_dim=8,
                      context=context)
    model = RNNSearch(cfg).eval()
    with torch.no_grad():  # like a trained model: non-zero biases, and α far from uniform
        for name, w in model.named_parameters():
            if name.endswith("bias") or name.endswith("b_in"):
                w.normal_(0.0, 0.5)
        model.decoder.attention.v_a.weight.mul_(sharpen)
    return LoadedModel(model, vocabs[0], vocabs[1], Tokenizer("en"), Tokenizer("fr"))


@pytest.fixture(autouse=True, scope="module")
def one_thread():
    """One torch thread, as the tools use (a loaded machine runs these tests), restored after."""
    before = torch.get_num_threads()
    torch.set_num_threads(1)
    yield
    torch.set_num_threads(before)


@pytest.fixture(scope="module")
def lm() -> LoadedModel:
    return tiny_random_lm()


@pytest.fixture(scope="module")
def shipped() -> LoadedModel:
    if not SHIPPED.exists():
        pytest.skip("shipped checkpoint absent")
    return checkpoint.load(SHIPPED)


def _same(a, b) -> bool:
    """Traces equal in every recorded number, whatever their ``method``."""
    da, db = a.to_dict(), b.to_dict()
    da.pop("method")
    db.pop("method")
    return da == db


@torch.no_grad()
def _enc_state(lm: LoadedModel, texts: list[str]):
    ids = [lm.src_vocab.encode(lm.src_tok.tokenize(t)) for t in texts]
    src = torch.zeros(len(ids), max(map(len, ids)), dtype=torch.long)
    for b, x in enumerate(ids):
        src[b, : len(x)] = torch.tensor(x)
    enc = lm.model.encode(src, torch.tensor([len(x) for x in ids]))
    return enc, lm.model.initial_state(enc, torch.full((len(ids),), BOS_ID))


# -- one step with a given α ------------------------------------------------------------------


@torch.no_grad()
def test_passing_the_models_own_alpha_changes_nothing(lm) -> None:
    """step(alpha=its own α) is step(): log p, c_i and s_i bit for bit; any other α changes all three."""
    enc, state = _enc_state(lm, [TEXT, "A man ."])  # a padded batch of two
    for _ in range(3):
        ref = lm.model.step(enc, state)
        out = lm.model.step(enc, state, alpha=ref.attended.alpha)
        assert torch.equal(out.log_probs, ref.log_probs) and torch.equal(out.attended.alpha, ref.attended.alpha)
        assert torch.equal(out.state.s, ref.state.s) and torch.equal(out.attended.context, ref.attended.context)
        other = lm.model.step(enc, state, alpha=enc.mask.float() / enc.mask.sum(-1, keepdim=True))  # uniform
        assert not torch.allclose(other.log_probs, ref.log_probs) and not torch.allclose(other.state.s, ref.state.s)
        state = DecoderState(ref.state.s, ref.log_probs.argmax(-1))


@torch.no_grad()
def test_one_hot_alpha_on_word_j_makes_c_i_equal_h_j(lm) -> None:
    enc, state = _enc_state(lm, [TEXT])
    for j in range(enc.annotations.shape[1]):
        alpha = torch.zeros(1, enc.annotations.shape[1])
        alpha[0, j] = 1.0
        out = lm.model.step(enc, state, alpha=alpha)
        assert torch.equal(out.attended.context[0], enc.annotations[0, j])


# -- edits --------------------------------------------------------------------------------------


def test_edits_by_hand() -> None:
    a = torch.tensor([[0.5, 0.3, 0.2]])
    e = torch.tensor([[1.0, 2.0, 3.0]])
    z, _ = apply_edit(Edit("zero", j=1), a, e)
    assert z.tolist()[0] == pytest.approx([0.5 / 0.7, 0.0, 0.2 / 0.7])
    assert apply_edit(Edit("onehot", j=2), a, e)[0].tolist() == [[0.0, 0.0, 1.0]]
    assert apply_edit(Edit("uniform"), a, e)[0].tolist()[0] == pytest.approx([1 / 3] * 3)
    s, se = apply_edit(Edit("shuffle", seed=3), a, e)
    assert sorted(s[0].tolist()) == sorted(a[0].tolist()) and s[0].tolist() != a[0].tolist()
    assert torch.equal(torch.softmax(se, -1), torch.softmax(e[:, [e[0].tolist().index(v) for v in se[0].tolist()]], -1))
    assert apply_edit(Edit("copy", step=1), a, e, [[1.0, 0, 0], [0.1, 0.2, 0.7]])[0].tolist()[0] == pytest.approx(
        [0.1, 0.2, 0.7])
    ea, ee = apply_edit(Edit("energies", values=(0.0, math.log(2.0), 0.0)), a, e)
    assert ea.tolist()[0] == pytest.approx([0.25, 0.5, 0.25]) and ee.tolist()[0] == pytest.approx([0, math.log(2), 0])
    assert apply_edit(Edit("alpha", values=(2.0, 0.0, 2.0)), a, e)[0].tolist() == [[0.5, 0.0, 0.5]]
    assert apply_edit(Edit("own"), a, e)[0] is a
    with pytest.raises(InputError, match="outside"):
        apply_edit(Edit("zero", j=3), a, e)
    with pytest.raises(InputError, match="3 values"):
        apply_edit(Edit("alpha", values=(1.0, 0.0)), a, e)
    with pytest.raises(InputError, match="needs a source position"):
        Edit("onehot")


def test_surgery_with_the_models_own_alpha_reproduces_the_stepper_exactly(lm) -> None:
    st = Stepper(lm, TEXT)
    st.step()
    st.step(force="chiens")
    ref = st.run()
    n = len(ref.steps)
    r = decode_with_surgery(lm, TEXT, {i: Edit("own") for i in range(n)}, prefix=[ref.steps[0].token_id, "chiens"])
    assert r.edited_steps == list(range(n)) and r.trace.method == "surgery"
    assert r.trace.steps[1].forced and not r.trace.steps[2].forced
    assert _same(r.original, r.trace)
    r.trace.steps[0].forced = False  # the stepper chose step 0 itself; the replay forced it
    assert _same(r.trace, ref)
    assert r.first_change is None


def test_one_hot_surgery_continues_from_the_edited_step(lm) -> None:
    r = decode_with_surgery(lm, TEXT, {2: Edit("onehot", j=3)})
    t, o = r.trace, r.original
    assert r.edited_steps == [2] and "one-hot on 'playing'" in r.edits[2]
    assert [s.alpha for s in t.steps[:2]] == [s.alpha for s in o.steps[:2]]
    assert t.steps[2].alpha == [1.0 if j == 3 else 0.0 for j in range(len(t.src_tokens))]
    assert r.original_alpha[2] == o.steps[2].alpha
    enc, _ = _enc_state(lm, [TEXT])
    assert t.steps[2].context_norm == pytest.approx(float(enc.annotations[0, 3].norm()), rel=1e-6)  # c_2 = h_3
    assert t.steps[2].logprob != o.steps[2].logprob and t.steps[3].state_norm != o.steps[3].state_norm


def test_zeroing_a_word_whose_alpha_is_already_zero_changes_nothing(lm) -> None:
    one = decode_with_surgery(lm, TEXT, {1: [Edit("onehot", j=2)]})
    both = decode_with_surgery(lm, TEXT, {1: [Edit("onehot", j=2), Edit("zero", j=5)]})
    assert _same(one.trace, both.trace)
    explicit = (0.9, 0.0, 0.04, 0.55, 0.94, 0.39, 0.22, 0.43, 0.0)  # normalised, it sums to 1 − 1.2e-7 in fp32
    a = decode_with_surgery(lm, TEXT, {0: Edit("alpha", values=explicit)})
    b = decode_with_surgery(lm, TEXT, {0: [Edit("alpha", values=explicit), Edit("zero", j=1), Edit("zero", j=8)]})
    assert _same(a.trace, b.trace)
    c = decode_with_surgery(lm, TEXT, {0: [Edit("alpha", values=explicit), Edit("zero", j=0)]})
    assert c.trace.steps[0].alpha[0] == 0.0 and c.trace.steps[0].logprob != a.trace.steps[0].logprob


def test_freeze_holds_alpha_from_the_step_on(lm) -> None:
    r = decode_with_surgery(lm, TEXT, {1: Edit("onehot", j=4)}, freeze_from=1)
    rows = [s.alpha for s in r.trace.steps]
    assert all(row == rows[1] for row in rows[1:]) and rows[1][4] == 1.0
    assert r.edited_steps == list(range(1, len(rows)))
    assert r.edits[2] == "α frozen from step 1"


def test_copy_takes_alpha_from_the_unedited_decoding(lm) -> None:
    r = decode_with_surgery(lm, TEXT, {1: Edit("copy", step=4)})
    assert r.trace.steps[1].alpha == pytest.approx(r.original.steps[4].alpha, abs=1e-7)
    with pytest.raises(InputError, match="does not exist"):
        decode_with_surgery(lm, TEXT, {1: Edit("copy", step=999)})


def test_surgery_on_a_forced_target(lm) -> None:
    r = decode_with_surgery(lm, TEXT, {1: Edit("uniform")}, target=["Deux", "chiens", "jouent"])
    assert r.trace.target_tokens == r.original.target_tokens == ["Deux", "chiens", "jouent", "</s>"]
    assert all(s.forced for s in r.trace.steps) and r.original.method == "forced"
    assert r.trace.steps[1].logprob != r.original.steps[1].logprob and r.trace.steps[0] == r.original.steps[0]


def test_surgery_at_a_stepper_leaves_the_stepper_alone(lm) -> None:
    st = Stepper(lm, TEXT)
    st.step(force="Deux")
    st.step()
    before = st.trace.to_dict()
    r = surgery_at_stepper(st, Edit("onehot", j=0), freeze=True)
    assert st.trace.to_dict() == before and st.position == 2
    assert r.edited_steps[0] == 2 and r.trace.steps[0].forced and not r.trace.steps[1].forced
    assert [s.alpha for s in r.trace.steps[:2]] == [s.alpha for s in st.trace.steps]
    assert all(s.alpha[0] == 1.0 for s in r.trace.steps[2:])
    ref = surgery_at_stepper(st)  # no edit: the stepper's own greedy continuation
    assert _same(ref.trace, st.run())


def test_surgery_needs_alpha() -> None:
    with pytest.raises(InputError, match="needs an RNNsearch"):
        decode_with_surgery(tiny_random_lm("fixed"), TEXT, {0: Edit("uniform")})


# -- the debate's tests -------------------------------------------------------------------------


def test_simplex_projection_by_hand() -> None:
    v = torch.tensor([[0.5, 0.5], [2.0, 0.0], [0.6, 0.6], [0.2, 0.1], [-1.0, -1.0]])
    expected = [0.5, 0.5, 1.0, 0.0, 0.5, 0.5, 0.55, 0.45, 0.5, 0.5]
    assert project_simplex(v).flatten().tolist() == pytest.approx(expected)
    w = project_simplex(torch.tensor([[0.6, 0.6, 0.0], [0.2, 0.1, -0.3]]))
    assert w.tolist()[0] == pytest.approx([0.5, 0.5, 0.0])
    assert w.tolist()[1] == pytest.approx([8 / 15, 6.5 / 15, 0.5 / 15])  # θ = −1/3
    r = project_simplex(torch.randn(50, 7, generator=torch.Generator().manual_seed(0)) * 3)
    assert (r >= 0).all() and torch.allclose(r.sum(-1), torch.ones(50), atol=1e-6)


def test_jsd_by_hand() -> None:
    p = torch.tensor([[1.0, 0.0], [0.5, 0.5], [0.2, 0.8]])
    q = torch.tensor([[0.0, 1.0], [1.0, 0.0], [0.2, 0.8]])
    kl_p = 0.5 * math.log(0.5 / 0.75) + 0.5 * math.log(0.5 / 0.25)
    kl_q = math.log(1 / 0.75)
    assert jsd(p, q).tolist() == pytest.approx([math.log(2), 0.5 * (kl_p + kl_q), 0.0], abs=1e-7)


def _forced_run(lm: LoadedModel, trace):
    ids = [s.token_id for s in trace.steps]
    src = torch.tensor([lm.src_vocab.encode(trace.src_tokens[:-1])])
    with torch.no_grad():
        enc = lm.model.encode(src, torch.tensor([src.shape[1]]))
        return enc, lm.model.teacher_force(enc, torch.tensor([[BOS_ID, *ids[:-1]]])), ids


def test_permutation_test_matches_a_step_with_the_shuffled_alpha(lm) -> None:
    trace = decode_with_surgery(lm, TEXT).trace
    enc, run, ids = _forced_run(lm, trace)
    res = permutation_test(lm.model, enc.annotations[0], run, n=4, seed=1)
    assert res.tvd.shape == res.flipped.shape == (len(ids), 4)
    for i, k in ((0, 0), (3, 2), (len(ids) - 1, 3)):
        alpha = run.alpha[0, i][res.perms[i, k]].unsqueeze(0)
        y_prev = torch.tensor([BOS_ID if i == 0 else ids[i - 1]])
        with torch.no_grad():
            out = lm.model.step(enc, DecoderState(run.s_prev[:, i], y_prev), alpha=alpha)
        p, p0 = out.log_probs[0].exp(), run.log_probs[0, i].exp()
        assert float(res.tvd[i, k]) == pytest.approx(0.5 * float((p - p0).abs().sum()), abs=1e-5)
        assert bool(res.flipped[i, k]) == (int(p.argmax()) != int(p0.argmax()))
    assert 0.0 <= res.flip_rate <= 1.0 and float(res.tvd.max()) <= 1.0


def _check_adversarial(lm: LoadedModel, text: str, eps: float) -> torch.Tensor:
    trace = decode_with_surgery(lm, text).trace
    enc, run, ids = _forced_run(lm, trace)
    res = adversarial_alpha(lm.model, enc.annotations[0], run, torch.tensor(ids), eps=eps)
    assert (res.alpha >= 0).all() and torch.allclose(res.alpha.sum(-1), torch.ones(len(ids)), atol=1e-5)
    for i, y in enumerate(ids):  # re-run every step with α' through the model's own step
        y_prev = torch.tensor([BOS_ID if i == 0 else ids[i - 1]])
        with torch.no_grad():
            out = lm.model.step(enc, DecoderState(run.s_prev[:, i], y_prev), alpha=res.alpha[i : i + 1])
        assert int(out.log_probs[0].argmax()) == y == trace.steps[i].token_id  # the output word is kept
        assert abs(float(out.log_probs[0, y].exp()) - float(res.prob_model[i])) <= eps + 1e-5
    assert torch.allclose(res.jsd, jsd(res.alpha, run.alpha[0]), atol=1e-6)
    assert (res.jsd >= 0).all() and (res.jsd <= math.log(2) + 1e-6).all()
    return res.jsd


def test_adversarial_alpha_stays_on_the_simplex_and_keeps_the_output_word(lm) -> None:
    assert float(_check_adversarial(lm, TEXT, eps=0.01).max()) > 0.05  # it found something


# -- the shipped model --------------------------------------------------------------------------


@needs_shipped
def test_shipped_surgery_with_own_alpha_reproduces_the_stepper(shipped) -> None:
    text = "A man in a blue shirt is riding a red bike."
    ref = Stepper(shipped, text).run()
    r = decode_with_surgery(shipped, text, {i: Edit("own") for i in range(len(ref.steps))})
    assert _same(r.trace, ref) and r.trace.translation == "Un homme en T-shirt bleu fait du vélo."


@needs_shipped
@pytest.mark.parametrize("preset", PRESETS, ids=[p.name for p in PRESETS])
def test_shipped_presets_claims_hold(shipped, preset) -> None:
    r = preset.run(shipped)
    if preset.unchanged:
        assert r.trace.target_tokens == r.original.target_tokens and r.edited_steps
    if preset.expect is not None:
        at = preset.step if preset.at is None else preset.at
        assert r.original.target_tokens[at] != preset.expect  # the surgery made the difference
        assert r.trace.target_tokens[at] == preset.expect


@needs_shipped
def test_shipped_adversarial_alpha(shipped) -> None:
    js = _check_adversarial(shipped, "A little girl is eating an apple.", eps=0.01)
    assert float(js.mean()) > 0.1


@needs_shipped
def test_shipped_zeroing_a_word_for_good_leaves_it_written(shipped) -> None:
    """The README's example: 'dogs' (j=1) zeroed at step 1 and every later step, yet 'chiens' is written,
    with its p roughly halved: the neighbouring annotations carry the word (bidirectional encoder)."""
    text = "Two dogs are running in the snow."
    r = decode_with_surgery(shipped, text, {k: Edit("zero", j=1) for k in range(1, 30)})
    assert r.trace.translation == r.original.translation == "Deux chiens courent dans la neige."
    assert all(s.alpha[1] == 0.0 for s in r.trace.steps[1:]) and r.edited_steps == list(range(1, 8))
    assert r.original.steps[1].prob > 0.97 and 0.45 < r.trace.steps[1].prob < 0.55  # 0.98 → 0.50
