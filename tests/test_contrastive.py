"""Why this word and not that one (nmt/explanation/contrastive.py), checked against computations written out here.

On the shipped Multi30k RNNsearch: the contrast is log p(written) − log p(alternative) as the greedy
trace recorded them; gradient × input equals x · ∂F/∂x from torch's own autograd through the model's
batched teacher-forcing pass (not the stepwise path the module uses); the integrated gradients sum to
F(X) − F(X') within the completeness gap, which is under 0.05 nats; the readout shares sum to the logit
difference at the step's inputs minus that at zero. The verdict names words only when the numbers carry.
"""

from __future__ import annotations

import math

import pytest
import torch

from nmt.decoding.search import InputError, greedy
from nmt.explanation.contrastive import GAP_TOL, Contrast, contrast, verdict
from nmt.models import checkpoint
from nmt.text.vocab import BOS_ID
from tests.conftest import ROOT

CKPT = ROOT / "checkpoints"
SENTENCE = "A woman is holding a red umbrella."


@pytest.fixture(scope="module")
def lm() -> checkpoint.LoadedModel:
    if not (CKPT / "m30k-en-fr-rnnsearch.pt").exists():
        pytest.skip("the shipped Multi30k RNNsearch is not in checkpoints/")
    return checkpoint.load(CKPT / "m30k-en-fr-rnnsearch.pt")


def _f(lm: checkpoint.LoadedModel, x: torch.Tensor, prefix: list[int], alt: int) -> torch.Tensor:
    """F(x) written out: the teacher-forced pass (not nmt.explanation.attribution's stepwise one) at the last
    position."""
    model = lm.model
    run = model.teacher_force(model.encode_embeddings(x, torch.tensor([x.shape[1]])),
                              torch.tensor([[BOS_ID, *prefix[:-1]]]))
    lp = run.log_probs[0, len(prefix) - 1]
    return lp[prefix[-1]] - lp[alt]


@pytest.mark.parametrize("step", [0, 4])
def test_the_contrast_matches_the_trace_autograd_and_completeness(lm: checkpoint.LoadedModel, step: int) -> None:
    t = greedy(lm, [SENTENCE], topk=5)[0]
    rec = t.steps[step]
    alt_word, alt_p = next((w, p) for w, p in rec.topk if w != rec.token)
    src_ids = lm.src_vocab.encode(t.src_tokens[:-1])
    prefix = [s.token_id for s in t.steps[: step + 1]]
    alt = lm.tgt_vocab.stoi[alt_word]
    c = contrast(lm, src_ids, prefix, alt, src_tokens=t.src_tokens)
    assert (c.chosen, c.alternative, c.step) == (rec.token, alt_word, step)
    assert c.delta == pytest.approx(rec.logprob - math.log(alt_p), abs=1e-4)  # as the trace recorded them
    assert c.alpha == pytest.approx(rec.alpha, abs=1e-6)
    x = lm.model.encoder.embed(torch.tensor([src_ids])).detach().requires_grad_(True)
    f = _f(lm, x, prefix, alt)
    (g,) = torch.autograd.grad(f, x)
    assert c.x_grad == pytest.approx((x * g).sum(-1)[0].tolist(), abs=2e-4)
    f0 = float(_f(lm, torch.zeros_like(x), prefix, alt).detach())
    assert abs(sum(c.ig) - (float(f) - f0)) == pytest.approx(c.ig_gap, abs=2e-3)
    assert c.ig_gap < GAP_TOL
    run = lm.model.teacher_force(lm.model.encode(torch.tensor([src_ids]), torch.tensor([len(src_ids)])),
                                 torch.tensor([[BOS_ID, *prefix[:-1]]]))
    ins = [v[:, step] for v in (run.s_prev, run.y_emb, run.context)]
    z, z0 = lm.model.decoder.readout(*ins), lm.model.decoder.readout(*[torch.zeros_like(v) for v in ins])
    want = float((z[0, prefix[-1]] - z[0, alt]) - (z0[0, prefix[-1]] - z0[0, alt]))
    assert sum(c.shares.values()) == pytest.approx(want, abs=max(c.shares_gap, 1e-3) + 1e-3)


def test_a_contrast_needs_alpha_and_a_different_word(lm: checkpoint.LoadedModel, tiny_checkpoint_dir) -> None:
    encdec = checkpoint.load(tiny_checkpoint_dir / "tiny-en-fr-rnnencdec.pt")
    with pytest.raises(InputError, match="attention"):
        contrast(encdec, [5, 6, 2], [7], 8)
    with pytest.raises(ValueError, match="different alternative"):
        contrast(lm, [5, 6, 2], [7], 7)


def _contrast(ig: list[float], delta: float = 2.0) -> Contrast:
    return Contrast(["the", "red", "car", "</s>"], 1, "rouge", "bleu", delta, -0.1, -2.1, [0.1, 0.7, 0.1, 0.1],
                    ig, ig, 0.01, 64, shares={"state": 0.5, "previous word": 0.5, "context": 3.0})


def test_the_verdict_names_words_only_when_they_carry_the_contrast() -> None:
    # Σ IG = 2.2 of a 2.0-nat contrast: −0.20 nats are there with the all-zero source
    assert verdict(_contrast([0.1, 1.5, 0.6, 0.0])) == (
        "« rouge » over « bleu » by 2.00 nats, mostly because of “red” (+1.50) and “car” (+0.60); -0.20 of the "
        "2.00 nats are there with an all-zero source (no source word carries them); 75% of the readout's "
        "difference came through c_i.")
    assert verdict(_contrast([0.3, 0.2, 0.4, 0.1])) == (  # Σ IG = 1.0: the other 1.0 is the baseline's
        "« rouge » over « bleu » by 2.00 nats: no single source word carries it (the scores are spread); +1.00 of "
        "the 2.00 nats are there with an all-zero source (no source word carries them).")
    forced = _contrast([0.1, -1.5, 0.2, 0.0], delta=-2.0)  # a forced word the model found less likely
    assert verdict(forced) == ("The model preferred « bleu » to the forced « rouge » by 2.00 nats, mostly because "
                               "of “red” (-1.50); +0.80 of the 2.00 nats are there with an all-zero source (no "
                               "source word carries them); 75% of the readout's difference came through c_i.")


def test_a_contrast_within_the_completeness_gap_names_no_word() -> None:
    """A 0.0067-nat near tie whose IG scores sum to 0.04 (0.0333 nats at the all-zero source, 0.01 missed by
    IG): no source word is the reason, however large one word's score."""
    from nmt.explanation.contrastive import baseline_part, within_gap

    tie = _contrast([0.02, -0.01, 0.03, 0.0], delta=0.0067)
    assert baseline_part(tie) == pytest.approx(0.0067 - 0.04) and within_gap(tie)
    assert verdict(tie) == ("« rouge » over « bleu » by 0.01 nats: no source word is the reason; -0.03 nats of it "
                            "are there with an all-zero source (which no source word carries) and integrated "
                            "gradients miss 0.010.")
    assert not within_gap(_contrast([0.1, 1.5, 0.6, 0.0]))


def test_the_plain_verdict_is_one_sentence_without_numbers() -> None:
    from nmt.explanation.contrastive import plain_verdict

    assert plain_verdict(_contrast([0.1, 1.5, 0.6, 0.0])) == (
        "The model prefers « rouge » to « bleu » mostly because of the English words “red” and “car”.")
    assert plain_verdict(_contrast([0.5, 0.4, 0.45, 0.45])) == (  # Σ 1.8, none over 0.5 nats
        "The model prefers « rouge » to « bleu », and no single English word makes the difference: many words "
        "push a little.")
    # « orange » over « oranges »: 4.03 of 5.61 nats already there with an all-zero source (issue 51)
    orange = _contrast([1.2, 0.3, 0.08, 0.0], delta=5.61)
    assert orange.delta - sum(orange.ig) == pytest.approx(4.03)
    assert plain_verdict(orange) == ("The model prefers « rouge » to « bleu » mostly for a reason that is not any "
                                     "English word: it leans that way even when it is given no English sentence at "
                                     "all.")
    assert plain_verdict(_contrast([0.02, -0.01, 0.03, 0.0], delta=0.0067)).endswith("no English sentence at all.")


def test_the_views_tables_in_source_order_and_percent() -> None:
    """The tab's tables: rows strongest |IG| first, shares in percent of the three summed magnitudes, the CSV
    in source order."""
    from ui.figures import contrastive as cv

    c = _contrast([0.1, -1.5, 0.6, 0.0])
    assert list(cv.source_frame(c)["source word"]) == ["red", "car", "the", "</s>"]
    assert list(cv.shares_frame(c)["share %"]) == pytest.approx([12.5, 12.5, 75.0])
    assert cv.csv_of(c).splitlines()[1].startswith("0,the,")
    assert cv.alternatives([("rouge", 0.6), ("bleu", 0.3), ("vert", 0.1)], "bleu") == ["rouge", "vert"]


def test_integrated_gradients_equal_a_riemann_sum_written_out_on_a_two_word_source(
        lm: checkpoint.LoadedModel) -> None:
    """IG by hand on a two-word source ("Two dogs." → three tokens and </s>): the path integral of ∂F/∂x from
    the zero embedding, as a midpoint sum over 256 points with torch's autograd through the batched
    teacher-forced pass, times (x − 0); no Captum."""
    t = greedy(lm, ["Two dogs"], topk=5)[0]
    rec = t.steps[1]
    alt = lm.tgt_vocab.stoi[next(w for w, _ in rec.topk if w != rec.token)]
    src_ids = lm.src_vocab.encode(t.src_tokens[:-1])
    prefix = [s.token_id for s in t.steps[:2]]
    c = contrast(lm, src_ids, prefix, alt, src_tokens=t.src_tokens)
    x = lm.model.encoder.embed(torch.tensor([src_ids])).detach()
    n = 256
    total = torch.zeros_like(x)
    for k in range(n):
        xk = ((k + 0.5) / n * x).requires_grad_(True)  # the straight path from the zero baseline
        (g,) = torch.autograd.grad(_f(lm, xk, prefix, alt), xk)
        total += g
    ig = (x * total / n).sum(-1)[0]
    assert c.ig == pytest.approx(ig.tolist(), abs=0.02)


def test_the_readout_split_names_each_input_its_own_share() -> None:
    """A readout linear in each input, F = 1·Σs + 2·Σy + 3·Σc, split by integrated gradients from zero: each
    share is that input's own term, exactly. At step 0 (the first of two positions): s = (1, 2), y = (1,),
    c = (1, 1, 1) give state 3, previous word 2, context 9; step 1's inputs (all 5) must not be read."""
    from types import SimpleNamespace

    from nmt.explanation.contrastive import readout_shares

    def readout(s: torch.Tensor, y: torch.Tensor, c: torch.Tensor) -> torch.Tensor:
        f = s.sum(-1) + 2 * y.sum(-1) + 3 * c.sum(-1)
        return torch.stack([torch.zeros_like(f), f, -f], dim=-1)  # word 1 scores F, word 2 −F

    model = SimpleNamespace(decoder=SimpleNamespace(readout=readout))
    five = [5.0]
    run = SimpleNamespace(s_prev=torch.tensor([[[1.0, 2.0], five * 2]]), y_emb=torch.tensor([[[1.0], five]]),
                          context=torch.tensor([[[1.0, 1.0, 1.0], five * 3]]))
    shares, gap = readout_shares(model, run, 0, 1, 0)
    assert shares == pytest.approx({"state": 3.0, "previous word": 2.0, "context": 9.0}, abs=1e-5)
    assert gap < 1e-5
    shares, _ = readout_shares(model, run, 0, 2, 1)  # −F − F: each share doubled and negative
    assert shares == pytest.approx({"state": -6.0, "previous word": -4.0, "context": -18.0}, abs=1e-5)
