"""Attribution of each target word over the source words, agreement measures, and the corpus CLI.

A tiny randomly initialised RNNsearch (from tests/test_surgery.py) keeps these fast; the expected
values come from independent paths (the model's own encode, forced decoding of an edited source,
surgery of α, hand-computed rank statistics), never from the code under test.
"""

from __future__ import annotations

import json
import math

import numpy as np
import pytest
import scipy.stats
import torch
from scipy.spatial.distance import jensenshannon

from nmt.decoding.search import InputError, forced, greedy
from nmt.decoding.surgery import PRESETS, Edit, decode_with_surgery
from nmt.explanation.attribution import (
    METHODS,
    agreement,
    attribute,
    explain,
    explain_trace,
    js_divergence,
    kendall_tau,
    step_chunks,
    target_log_prob,
    top1,
)
from nmt.explanation.faithfulness import SentenceReport, argmax_links, summarise
from nmt.models import checkpoint
from nmt.text.vocab import BOS_ID, PAD_ID
from nmt.tools.cli import run as cli_run
from nmt.tools.faithfulness import main
from tests.conftest import TINY_DATA
from tests.test_surgery import SHIPPED, TEXT, needs_shipped, one_thread, tiny_random_lm  # noqa: F401

REF = "Deux chiens jouent dans la neige ."


@pytest.fixture(scope="module")
def lm():
    return tiny_random_lm(seed=1)


@pytest.fixture(scope="module")
def traced(lm):
    trace = forced(lm, [TEXT], [REF], pretokenized=False, topk=1)[0]
    return trace, explain_trace(lm, trace)


@pytest.fixture(scope="module")
def flat():
    """A model with near-uniform α, where every source position, padding too, would get weight."""
    lm = tiny_random_lm(seed=2, sharpen=1.0)
    trace = forced(lm, [TEXT], [REF], pretokenized=False, topk=1)[0]
    return lm, trace, explain_trace(lm, trace)


def _inputs(lm, trace):
    src = lm.src_vocab.encode(trace.src_tokens[:-1])
    ids = [s.token_id for s in trace.steps]
    return src, ids


@torch.no_grad()
def test_the_encoder_reads_the_embeddings_it_is_given(lm) -> None:
    """encode_embeddings(x) reads x itself: word 6's embedding put where word 7 stands encodes as the ids
    with 6 in 7's place (and differs from the sentence with 7), padding never read."""
    src = torch.tensor([[5, 6, 7, 8, 3], [9, 10, 3, PAD_ID, PAD_ID]])
    swapped = torch.tensor([[5, 6, 6, 8, 3], [9, 10, 3, 11, 12]])  # row 1: other ids in the padding
    lens = torch.tensor([5, 3])
    x = lm.model.encoder.embed(src)
    x[0, 2] = lm.model.encoder.embed.weight[6]
    out = lm.model.encode_embeddings(x, lens)
    ref, own = lm.model.encode(swapped, lens), lm.model.encode(src, lens)
    for k in ("annotations", "keys", "mask", "summary", "s0"):
        assert torch.allclose(getattr(out, k).float(), getattr(ref, k).float(), atol=1e-6), k
    assert not torch.allclose(out.annotations[0], own.annotations[0], atol=1e-3)


@torch.no_grad()
def test_forward_function_gives_each_rows_own_step(lm, traced) -> None:
    trace, _ = traced
    src, ids = _inputs(lm, trace)
    K = len(ids)
    steps = torch.tensor([3, 0, K - 1, 1, 3])
    x = lm.model.encoder.embed(torch.tensor([src])).expand(len(steps), -1, -1)
    f = target_log_prob(lm.model, x, torch.full((len(steps),), len(src)), torch.tensor([[BOS_ID, *ids[:-1]]]).expand(
        len(steps), -1), torch.tensor([ids]).expand(len(steps), -1), steps)
    assert f.tolist() == pytest.approx([trace.steps[i].logprob for i in steps.tolist()], abs=1e-5)


def test_integrated_gradients_are_complete(lm, traced) -> None:
    trace, _ = traced
    src, ids = _inputs(lm, trace)
    K = len(ids)
    for baseline, fill in (("zero", None), ("unk", 1)):
        a = attribute(lm, src, ids, methods=["ig"], baseline=baseline, ig_steps=20)
        with torch.no_grad():
            x0 = torch.zeros(1, len(src), lm.config.emb_dim) if fill is None else \
                lm.model.encoder.embed(torch.tensor([[fill] * len(src)]))
            f0 = target_log_prob(lm.model, x0.expand(K, -1, -1), torch.full((K,), len(src)),
                                 torch.tensor([[BOS_ID, *ids[:-1]]]).expand(K, -1), torch.tensor([ids]).expand(K, -1),
                                 torch.arange(K)).numpy()
        gap = a.scores["ig"].sum(-1) - (a.logprob - f0)  # Σ_j IG_ij − (F(x) − F(x'))
        assert np.abs(gap - a.ig_delta).max() < 1e-4  # Captum's convergence delta is exactly this gap
        assert np.abs(gap).max() < 0.02 * max(1.0, np.abs(a.logprob - f0).max())
        assert np.abs(a.logprob - f0).max() > 0.05  # the test is not vacuous
        fine = attribute(lm, src, ids, methods=["ig"], baseline=baseline, ig_steps=100)
        assert np.abs(fine.ig_delta).max() <= np.abs(a.ig_delta).max() + 1e-5


def test_gradient_scores_equal_autograd_through_the_models_own_forward(lm, traced) -> None:
    trace, att = traced
    src, ids = _inputs(lm, trace)
    K = len(ids)
    # The gradients come from plain autograd through the model's own teacher-forced pass on the
    # encoder re-run from x (encode_embeddings + teacher_force), one backward pass per target word:
    # neither Captum nor nmt.explanation.attribution's forward (target_log_prob) is involved.
    x = lm.model.encoder.embed(torch.tensor([src])).detach().clone().requires_grad_(True)
    run = lm.model.teacher_force(lm.model.encode_embeddings(x, torch.tensor([len(src)])),
                                 torch.tensor([[BOS_ID, *ids[:-1]]]))
    sal, ixg = np.zeros((K, len(src))), np.zeros((K, len(src)))
    for i in range(K):
        (g,) = torch.autograd.grad(run.log_probs[0, i, ids[i]], x, retain_graph=True)
        sal[i] = g[0].norm(dim=-1).numpy()  # ‖∂F_i/∂x_j‖₂
        ixg[i] = (x[0] * g[0]).sum(-1).detach().numpy()  # Σ_d x_jd ∂F_i/∂x_jd
    assert np.abs(sal).max() > 1e-3  # not vacuous
    assert np.allclose(att.scores["saliency"], sal, atol=1e-5)
    assert np.allclose(att.scores["x_grad"], ixg, atol=1e-5)


@pytest.mark.parametrize("which", ["sharp", "flat"])
def test_leave_one_out_of_padding_is_zero(lm, traced, flat, which) -> None:
    lm, trace, att = (lm, *traced) if which == "sharp" else flat
    src, ids = _inputs(lm, trace)
    padded = attribute(lm, [*src, PAD_ID, PAD_ID, PAD_ID], ids, src_len=len(src))
    n = len(src)
    for m in METHODS:
        assert np.abs(padded.scores[m][:, n:]).max() < 1e-6, m  # padding is no word
        assert np.allclose(padded.scores[m][:, :n], att.scores[m], atol=1e-4), m
    assert np.abs(padded.scores["loo_embed"][:, :n]).max() > 1e-3  # real words do count


def test_leave_one_out_of_the_embedding_is_forced_decoding_of_an_unknown_word(lm, traced) -> None:
    trace, _ = traced
    src, ids = _inputs(lm, trace)
    a = attribute(lm, src, ids, methods=["loo_embed"], baseline="unk")
    words = trace.src_tokens[:-1]
    for j in (0, 3, len(words) - 1):
        edited = " ".join([*words[:j], "zzzunknown", *words[j + 1 :]])  # an out-of-vocabulary word → <unk>
        t = forced(lm, [edited], [" ".join(trace.target_tokens[:-1])], pretokenized=True, topk=1)[0]
        delta = [s0.logprob - s1.logprob for s0, s1 in zip(trace.steps, t.steps, strict=True)]
        assert a.scores["loo_embed"][:, j] == pytest.approx(delta, abs=1e-4)


@pytest.mark.parametrize("which", ["sharp", "flat"])
def test_leave_one_out_of_alpha_is_surgery_zeroing_that_word(lm, traced, flat, which) -> None:
    lm, trace, att = (lm, *traced) if which == "sharp" else flat
    target = trace.target_tokens[:-1]
    for i, j in ((0, 2), (3, 3), (len(target), 0)):
        r = decode_with_surgery(lm, TEXT, {i: Edit("zero", j=j)}, target=target)
        assert att.scores["loo_alpha"][i, j] == pytest.approx(
            r.original.steps[i].logprob - r.trace.steps[i].logprob, abs=1e-5)


def test_kendall_tau_by_hand() -> None:
    v = [0.1, 0.5, 0.2, 0.9]
    assert kendall_tau(v, v) == pytest.approx(1.0)
    assert kendall_tau([1, 2, 3], [3, 2, 1]) == pytest.approx(-1.0)
    assert kendall_tau([1, 2, 3, 4], [1, 3, 2, 4]) == pytest.approx(4 / 6)  # 5 concordant, 1 discordant
    assert kendall_tau([1, 1, 2], [1, 2, 3]) == pytest.approx(2 / math.sqrt(6))  # τ-b: one tie in a
    assert math.isnan(kendall_tau([1, 1, 1], [1, 2, 3]))


def test_top1_and_jsd_by_hand() -> None:
    assert top1([0.1, 0.7, 0.2], [-1, 3, 2]) == 1.0 and top1([0.1, 0.7, 0.2], [5, 3, 2]) == 0.0
    assert js_divergence([1, 0], [0, 1]) == pytest.approx(math.log(2))
    assert js_divergence([0.5, 0.5], [2, 0]) == pytest.approx(0.5 * (0.5 * math.log(2 / 3) + 0.5 * math.log(2))
                                                             + 0.5 * math.log(4 / 3))
    a = agreement([0.7, 0.2, 0.1], [-7.0, 2.0, 1.0])  # signed for τ and top-1, |·| for JSD
    assert a["kendall_tau"] == pytest.approx(-1 / 3) and a["top1"] == 0.0 and a["jsd"] == pytest.approx(0.0, abs=1e-12)


def test_explain_a_reference_or_the_models_own_output(lm) -> None:
    trace, att = explain(lm, TEXT, REF, methods=["loo_alpha"])
    assert trace.method == "forced" and att.tgt_tokens == [*REF.split(), "</s>"]
    assert list(att.scores) == ["loo_alpha"] and att.scores["loo_alpha"].shape == (len(att.steps), len(att.src_tokens))
    g, ga = explain(lm, TEXT, methods=["saliency"], steps=[1])
    assert g.method == "greedy" and ga.steps == [1]
    assert ga.alpha[0].tolist() == pytest.approx(g.steps[1].alpha, abs=1e-6)
    with pytest.raises(ValueError, match="unknown attribution"):
        explain(lm, TEXT, methods=["lime"])
    with pytest.raises(ValueError, match="target positions"):
        explain(lm, TEXT, steps=[99])
    with pytest.raises(InputError, match="needs an RNNsearch"):
        explain(tiny_random_lm("fixed"), TEXT)


def test_argmax_links_and_summary_by_hand(traced) -> None:
    _, att = traced
    scores = np.zeros_like(att.alpha)
    scores[:, 2] = 1.0
    links = argmax_links(att, scores)
    assert links == {(2, i) for i in range(len(att.steps) - 1)}  # </s> step left out
    reps = [SentenceReport({"ig": {"kendall_tau": [1.0, math.nan], "top1": [1.0, 0.0], "jsd": [0.2, 0.4]}},
                           [[0.5, 0.1]], [[True, False]], [0.3], [0.01, -0.02]),
            SentenceReport({"ig": {"kendall_tau": [0.0], "top1": [1.0], "jsd": [0.0]}}, [[0.2, 0.2]],
                           [[False, False]], [0.0], [0.03])]
    s = summarise(reps)
    assert s["agreement"]["ig"] == {"kendall_tau": 0.5, "top1": pytest.approx(2 / 3, abs=1e-4),
                                    "jsd": pytest.approx(0.2)}
    assert s["permutation"]["flip_rate"] == 0.25 and s["permutation"]["median_tvd"] == 0.2
    assert s["adversarial"]["mean_jsd"] == 0.15 and s["adversarial"]["found_rate"] == 0.5
    assert s["steps"] == 3 and s["tau_defined"]["ig"] == 2 and s["ig_abs_delta"]["max"] == 0.03


def test_corpus_cli_on_tiny_data(lm, tmp_path, capsys) -> None:
    ckpt = tmp_path / "tiny.pt"
    checkpoint.atomic_save(checkpoint.make_checkpoint(lm.model, lm.src_vocab, lm.tgt_vocab, "en", "fr", {}), ckpt)
    gold = tmp_path / "gold"
    gold.mkdir()
    (gold / "test.en").write_text("Two dogs .\nA man is riding a bike .\n")
    (gold / "test.fr").write_text("Deux chiens .\nUn homme fait du vélo .\n")
    (gold / "test.en-fr.sure").write_text("0-0 1-1 2-2\n0-0 1-1 5-4\n")
    (gold / "test.en-fr.possible").write_text("0-0 1-1 2-2\n0-0 1-1 3-2 4-3 5-4\n")
    out = tmp_path / "f.json"
    assert main(["--checkpoint", str(ckpt), "--data", str(TINY_DATA), "--split", "test", "--limit", "2",
                 "--json", str(out), "--aer", str(gold), "--no-progress", "--permutations", "3", "--time-panel"]) == 0
    res = json.loads(out.read_text())
    assert res["sentences"] == 2 and set(res["agreement"]) == set(METHODS)
    src = (TINY_DATA / "test.en").read_text(encoding="utf-8").splitlines()[:2]
    steps = sum(len(t.steps) for t in greedy(lm, src, topk=1))  # every target word of both, </s> included
    assert res["steps"] == steps and res["permutation"]["trials"] == 3 * steps  # --permutations 3 at each
    for m, want in _agreement_by_hand(lm, src).items():
        assert res["agreement"][m] == pytest.approx(want, abs=2e-4), m
    assert res["aer"]["sentences"] == 2 and res["aer"]["alpha"]["links_sure"] == 6
    for m, want in _aer_by_hand(lm, gold).items():
        assert res["aer"][m]["aer"] == pytest.approx(want, abs=1e-4), m
    assert res["panel_timing"]["middle"]["wall_s"] > 0 and res["panel_timing"]["src_tokens"] == 27
    assert "kendall_tau" in capsys.readouterr().out
    assert cli_run(lambda: main(["--checkpoint", str(ckpt), "--data", str(tmp_path), "--split", "nope",
                                 "--json", str(out)])) == 2
    assert "error: no nope.en" in capsys.readouterr().err


def _agreement_by_hand(lm, src: list[str]) -> dict[str, dict[str, float]]:
    """The corpus table recomputed from each sentence's attributions with scipy and numpy directly:
    Kendall τ-b (NaN steps left out), same-argmax rate, and JSD = (scipy's JS distance)² in nats,
    pooled over every step of every sentence."""
    per: dict[str, dict[str, list[float]]] = {m: {"kendall_tau": [], "top1": [], "jsd": []} for m in METHODS}
    for trace in greedy(lm, src, topk=1):
        att = explain_trace(lm, trace)
        for m in METHODS:
            for r in range(len(att.steps)):
                a, s = att.alpha[r].astype(np.float64), att.scores[m][r].astype(np.float64)
                if np.ptp(s) > 0 and np.ptp(a) > 0:
                    per[m]["kendall_tau"].append(scipy.stats.kendalltau(a, s, variant="b").statistic)
                per[m]["top1"].append(float(np.argmax(a) == np.argmax(s)))
                per[m]["jsd"].append(jensenshannon(a / a.sum(), np.abs(s) / np.abs(s).sum()) ** 2)
    return {m: {k: float(np.mean(v)) for k, v in d.items()} for m, d in per.items()}


def _aer_by_hand(lm, gold) -> dict[str, float]:
    """AER = 1 − (|A∩S| + |A∩P|) / (|A| + |S|) of argmax links (real source words; no link for the
    target </s>) of α and of each method on the force-decoded gold references."""
    src = (gold / "test.en").read_text().splitlines()
    ref = (gold / "test.fr").read_text().splitlines()

    def links_of(name: str) -> list[set[tuple[int, ...]]]:
        lines = (gold / f"test.en-fr.{name}").read_text().splitlines()
        return [{tuple(map(int, p.split("-"))) for p in line.split()} for line in lines]

    sure, poss = links_of("sure"), links_of("possible")
    counts = {m: [0, 0, 0, 0] for m in ("alpha", *METHODS)}  # |A|, |S|, |A∩S|, |A∩P|
    for trace, s, p in zip(forced(lm, src, ref, pretokenized=True, topk=1), sure, poss, strict=True):
        att = explain_trace(lm, trace)
        n = len(trace.src_tokens) - 1
        for m in counts:
            rows = att.alpha if m == "alpha" else att.scores[m]
            links = {(int(np.argmax(rows[r][:n])), i) for r, i in enumerate(att.steps)
                     if trace.steps[i].token != "</s>"}
            for k, v in enumerate((len(links), len(s), len(links & s), len(links & (p | s)))):
                counts[m][k] += v
    return {m: 1 - (c[2] + c[3]) / (c[0] + c[1]) for m, c in counts.items()}


def test_corpus_cli_workers_give_what_one_process_gives(lm, tmp_path) -> None:
    """--workers 2 (two spawned processes, each loading the checkpoint; 10 sentences = chunks of 8 and
    2, so both run and the results must be put back in order) against the same run in this process,
    for the corpus and for the AER on a 10-pair gold set whose sure links differ from pair to pair."""
    ckpt = tmp_path / "tiny.pt"
    checkpoint.atomic_save(checkpoint.make_checkpoint(lm.model, lm.src_vocab, lm.tgt_vocab, "en", "fr", {}), ckpt)
    gold = tmp_path / "gold"
    gold.mkdir()
    for lang in ("en", "fr"):  # Moses-tokenised, as the Hansards files are
        lines = (TINY_DATA / f"test.{lang}").read_text(encoding="utf-8").splitlines()[:10]
        (gold / f"test.{lang}").write_text("".join(t.replace(".", " .") + "\n" for t in lines), encoding="utf-8")
    links = "".join(" ".join(f"{j}-{j}" for j in range(k % 4 + 1)) + "\n" for k in range(10))
    (gold / "test.en-fr.sure").write_text(links)
    (gold / "test.en-fr.possible").write_text(links)
    runs = []
    for workers in (1, 2):
        out = tmp_path / f"w{workers}.json"
        assert main(["--checkpoint", str(ckpt), "--data", str(TINY_DATA), "--split", "test", "--limit", "10",
                     "--json", str(out), "--no-progress", "--permutations", "3", "--adv-iters", "5", "--ig-steps", "5",
                     "--workers", str(workers), "--per-sentence", "--aer", str(gold)]) == 0
        runs.append(json.loads(out.read_text()))
    one, two = runs
    assert two["workers"] == 2 and len(two["per_sentence"]) == 10
    assert one["aer"]["sentences"] == 10 and one["aer"]["alpha"]["links_sure"] == sum(k % 4 + 1 for k in range(10))
    for m in ("alpha", *METHODS):
        assert one["aer"][m] == two["aer"][m]
    for a, b in zip(one["per_sentence"], two["per_sentence"], strict=True):
        assert a["perm_flipped"] == b["perm_flipped"]
        assert np.allclose(a["adv_jsd"], b["adv_jsd"], atol=1e-5)
        assert np.allclose(a["ig_delta"], b["ig_delta"], atol=1e-5)
        for m in METHODS:
            assert np.allclose(a["agreement"][m]["jsd"], b["agreement"][m]["jsd"], atol=1e-5)
    assert one["steps"] == two["steps"] and one["permutation"]["trials"] == two["permutation"]["trials"]


@needs_shipped
def test_shipped_attribution_of_a_noun() -> None:
    lm = checkpoint.load(SHIPPED)
    trace = greedy(lm, ["Two dogs are running in the snow."], topk=1)[0]
    att = explain_trace(lm, trace, steps=[1, 5])  # chiens, neige
    assert [att.tgt_tokens[i] for i in att.steps] == ["chiens", "neige"]
    for r, j in enumerate((1, 6)):  # dogs, snow
        assert int(att.alpha[r].argmax()) == j and int(att.scores["loo_embed"][r].argmax()) == j
    assert np.abs(att.ig_delta).max() < 0.1 * np.abs(att.scores["ig"].sum(-1)).max()


@needs_shipped
@pytest.mark.parametrize("preset", [p for p in PRESETS if p.disagree], ids=lambda p: p.name)
def test_shipped_presets_where_alpha_and_attributions_disagree(preset) -> None:
    """Each (method, word) of the preset: the method ranks that source word first at the preset's step,
    and α does not (its largest weight is on another word)."""
    lm = checkpoint.load(SHIPPED)
    trace = greedy(lm, [preset.text], topk=1)[0]
    att = explain_trace(lm, trace, steps=[preset.step])
    src = trace.src_tokens
    alpha_top = src[int(att.alpha[0, :-1].argmax())]
    for method, word in preset.disagree:
        assert src[int(att.scores[method][0, :-1].argmax())] == word, (method, preset.name)
        assert alpha_top != word
    assert f"'{alpha_top}'" in preset.watch  # the watch line names α's word


def test_step_chunks_by_hand() -> None:
    # costs (step + 1) · tx · points = 2, 4, 6, 8 against a limit of 6
    assert step_chunks([0, 1, 2, 3], tx=2, points=1, units=6) == [[0, 1], [2], [3]]
    assert step_chunks([3, 0], tx=2, points=1, units=6) == [[0], [1]]  # over the limit alone: its own chunk
    assert step_chunks([0, 1, 2], tx=1, points=1, units=100) == [[0, 1, 2]]
    assert step_chunks([], tx=5, points=20) == []


def test_attributions_in_chunks_equal_one_batch(lm, traced, monkeypatch) -> None:
    """A long translation is explained a few steps at a time (bounded memory); the rows must not change."""
    import nmt.explanation.attribution as A

    trace, whole = traced
    src_ids = lm.src_vocab.encode(trace.src_tokens[:-1])
    tgt = [s.token_id for s in trace.steps]
    monkeypatch.setattr(A, "READOUT_ELEMS", 1)  # leave-one-out reads out one step at a time
    parts = attribute(lm, src_ids, tgt, grad_units=1)  # and the gradients run a step a chunk
    assert len(step_chunks(range(len(tgt)), len(src_ids), 20, 1)) == len(tgt) > 2
    assert A._readout_steps(lm.model, len(src_ids) + 1) == 1
    for m in METHODS:
        assert np.allclose(parts.scores[m], whole.scores[m], atol=1e-5), m
    assert np.allclose(parts.ig_delta, whole.ig_delta, atol=1e-5)
