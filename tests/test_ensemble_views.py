"""The stepper's ensemble: the pure view of one step (ui/stepper/views_ensemble.py) against a hand-written step,
the URL's ``ens`` switch, and the page through AppTest with an ensemble of a tiny model and its copy
(which must write what the model alone writes, with a panel of both members beside it)."""

from __future__ import annotations

import math
import shutil
from pathlib import Path

import pytest
import torch

from nmt.decoding.search import greedy
from nmt.decoding.trace import DecodeTrace, MemberStep, StepRecord
from nmt.models import checkpoint
from tests.stepper_app import SENTENCE, html_bodies, qp, specs, start, trace
from ui.figures import stepper_state as vs
from ui.stepper import decoding as dec
from ui.stepper import views_ensemble as ev

NAMES = ["RNNsearch", "Luong local-p"]


def hand_step() -> tuple[DecodeTrace, StepRecord]:
    """Two members writing "chien": p .25 and .40, geometric mean sqrt(.1) = .3162, over Z = 0.9 (the
    geometric means of every word summed, given here) p_ens = .3514; the second ranks "rouge" first."""
    members = [MemberStep(math.log(0.25), [0.6, 0.3, 0.1], ("chien", 0.25)),
               MemberStep(math.log(0.40), [0.2, 0.7, 0.1], ("rouge", 0.55))]
    step = StepRecord(i=0, token="chien", token_id=7, logprob=math.log(math.sqrt(0.1) / 0.9), forced=False,
                      energies=None, alpha=[0.4, 0.5, 0.1], topk=[("chien", math.sqrt(0.1) / 0.9), ("rouge", 0.2)],
                      state_norm=1.0, context_norm=1.0, members=members)
    return DecodeTrace("a dog", ["a", "dog", "</s>"], [False, False, False], "step", "attention", [step]), step


def test_member_rows_read_the_step() -> None:
    _, step = hand_step()
    rows = ev.member_rows(step, NAMES)
    assert [r["model"] for r in rows] == ["ensemble", "RNNsearch", "Luong local-p"]
    assert [r["p"] for r in rows] == pytest.approx([0.35136, 0.25, 0.40], abs=1e-5)
    assert [r["alpha"] for r in rows] == [[0.4, 0.5, 0.1], [0.6, 0.3, 0.1], [0.2, 0.7, 0.1]]
    assert [r["agrees"] for r in rows] == [True, True, False]
    with pytest.raises(ValueError, match="2 members"):
        ev.member_rows(step, NAMES[:1])


def test_members_chart_has_each_rows_alpha_and_p() -> None:
    t, step = hand_step()
    bar, heat = ev.members_chart(t, step, NAMES)["hconcat"]
    cells = {(c["model"], c["source"]): c["alpha"] for c in heat["data"]["values"]}
    assert cells[("ensemble", "dog")] == 0.5 and cells[("RNNsearch", "a")] == 0.6
    assert cells[("Luong local-p", "dog")] == 0.7
    assert len(cells) == 9
    assert heat["encoding"]["y"]["sort"] == ["ensemble", *NAMES]
    assert [b["label"] for b in bar["data"]["values"]] == ["0.35", "0.25", "0.40"]
    assert bar["encoding"]["x"]["axis"]["title"] == "p(“chien”)"


def test_members_caption_gives_the_normalised_geometric_mean_and_who_disagrees() -> None:
    _, step = hand_step()
    assert ev.members_caption(step, NAMES) == (
        "p_ens(“chien”) = (0.25 · 0.40)^(1/2) / Z = 0.32 / 0.90 = 0.35: the members' log p averaged, then "
        "renormalised (Z sums the geometric means of every word, so the ensemble's p sum to 1). "
        "Alone, Luong local-p would write “rouge” (p = 0.55).")


def test_the_ensemble_switch_round_trips_through_the_url() -> None:
    assert vs.view_from_query({"ens": "true"}).ens and not vs.view_from_query({}).ens
    assert vs.view_to_query(vs.View(text="x", ens=True))["ens"] == "true"
    assert "ens" not in vs.view_to_query(vs.View(text="x"))


@pytest.fixture
def twin_dir(tiny_ckpt: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A checkpoint folder with the tiny RNNsearch and a copy of it under another group's name."""
    for name in ("tiny-en-fr-rnnsearch.pt", "twin-en-fr-rnnsearch.pt"):
        shutil.copy(tiny_ckpt, tmp_path / name)
    monkeypatch.setenv("RNNSEARCH_CHECKPOINTS", str(tmp_path))
    return tmp_path


def test_the_stepper_decodes_with_an_ensemble_and_shows_its_members(twin_dir: Path) -> None:
    at = start({"text": SENTENCE, "model": "tiny-en-fr", "ens": "true", "step": "3"})
    assert at.toggle(key="sp_ens").value is True and qp(at, "sp_ens") == ["true"]
    shown = trace(at)
    alone = greedy(checkpoint.load(twin_dir / "tiny-en-fr-rnnsearch.pt"), [SENTENCE])[0]
    assert shown.target_tokens == alone.target_tokens[:3]  # a model with itself is the model
    assert [len(s.members) for s in shown.steps] == [2, 2, 2]
    panel = [s for s in specs(at) if "hconcat" in s]
    assert len(panel) == 1
    assert panel[0]["hconcat"][1]["encoding"]["y"]["sort"] == ["ensemble", "RNNsearch", "RNNsearch 2"]
    at.radio(key="sp_mode").set_value("beam").run()  # the beam search runs on the ensemble too
    assert not at.exception and all(len(s.members) == 2 for s in at.session_state["sp__beam"][1].steps)
    at.radio(key="sp_mode").set_value("greedy").run()
    at.toggle(key="sp_ens").set_value(False).run()
    assert not at.exception and trace(at).steps[0].members is None
    assert not [s for s in specs(at) if "hconcat" in s]


@pytest.fixture
def pair_dir(tiny_ckpt: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """The tiny RNNsearch and a second model on its vocabularies whose weights differ (the tiny one's
    plus noise), so the two disagree and their plain geometric mean is no distribution."""
    shutil.copy(tiny_ckpt, tmp_path / "tiny-en-fr-rnnsearch.pt")
    ckpt = checkpoint.read_checkpoint(tiny_ckpt)
    g = torch.Generator().manual_seed(0)
    weights = {k: v + 0.2 * torch.randn(v.shape, generator=g) if v.is_floating_point() else v
               for k, v in ckpt["model"].items()}
    ckpt = {**ckpt, "model": weights, "weights_sha256": checkpoint.weights_digest(weights)}
    checkpoint.atomic_save(ckpt, tmp_path / "twin-en-fr-rnnsearch.pt")
    monkeypatch.setenv("RNNSEARCH_CHECKPOINTS", str(tmp_path))
    return tmp_path


def test_the_stepper_top_k_of_a_real_ensemble_step_sums_to_one(pair_dir: Path,
                                                                 monkeypatch: pytest.MonkeyPatch) -> None:
    """Every candidate listed (top-k = the whole target vocabulary): the p the stepper shows for the
    ensemble's step sum to 1 ± 1e-5, one bar per word; the members' geometric mean of the written word
    is not p_ens (Z_i ≠ 1), so the members do disagree."""
    k = len(checkpoint.load(pair_dir / "tiny-en-fr-rnnsearch.pt").tgt_vocab)
    monkeypatch.setattr(dec, "TOPK", k)
    at = start({"text": SENTENCE, "model": "tiny-en-fr", "ens": "true", "step": "2"})
    steps = trace(at).steps
    assert len(steps) == 2 and all(len(s.members) == 2 for s in steps)
    for s in steps:
        assert len(s.topk) == k and sum(p for _, p in s.topk) == pytest.approx(1.0, abs=1e-5)
    shown = steps[-1]
    panel = [b for b in html_bodies(at) if 'data-testid="topk-candidates"' in b]
    assert len(panel) == 1 and panel[0].count("min-width:3.5em") == k  # one row per word, each with its p
    geo = math.exp(sum(m.logprob for m in shown.members) / 2)
    assert abs(geo / shown.prob - 1) > 0.01
