"""The stepper's language-model fusion through AppTest: offered when an LM fits, decoded with, URL-kept."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest
import torch

from nmt.decoding.fusion import explain, fuse, load_lm
from nmt.decoding.search import beam_search, greedy
from nmt.models import checkpoint
from nmt.models.lm import GRULanguageModel, LMConfig
from scripts.train_lm import lm_checkpoint
from tests.stepper_app import SENTENCE, click, html_bodies, link, qp, start, trace


@pytest.fixture
def fusion_dir(tiny_checkpoint_dir: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """The tiny pair plus fusion/tiny-lm.pt, a random LM over the tiny RNNsearch's target vocabulary."""
    folder = tmp_path / "ckpts"
    shutil.copytree(tiny_checkpoint_dir, folder)
    tm = checkpoint.load(folder / "tiny-en-fr-rnnsearch.pt")
    torch.manual_seed(3)
    lm = GRULanguageModel(LMConfig(len(tm.tgt_vocab), emb_dim=8, hidden_dim=8))
    with torch.no_grad():
        lm.out_bias.normal_(0.0, 3.0)
    (folder / "fusion").mkdir()
    checkpoint.atomic_save(lm_checkpoint(lm, tm.tgt_vocab, "fr", {"credit": "test"}), folder / "fusion" / "tiny-lm.pt")
    monkeypatch.setenv("RNNSEARCH_CHECKPOINTS", str(folder))
    return folder


def test_shallow_fusion_from_the_url_decodes_with_the_lm_and_shows_its_top_k(fusion_dir: Path) -> None:
    at = start({"text": SENTENCE, "fusion": "shallow", "beta": "0.5"})
    assert at.radio(key="sp_fusion").options == ["none", "shallow"]  # no controller: no deep fusion
    assert at.radio(key="sp_fusion").value == "shallow" and at.slider(key="sp_beta").value == 0.5
    for _ in range(3):
        click(at, "sp_btn_step")
    tm = checkpoint.load(fusion_dir / "tiny-en-fr-rnnsearch.pt")
    fused = fuse(tm, load_lm(fusion_dir / "fusion" / "tiny-lm.pt"), "shallow", 0.5)
    want = greedy(fused, [SENTENCE])[0].steps[:3]
    assert [(s.token, round(s.logprob, 5)) for s in trace(at).steps] == [(s.token, round(s.logprob, 5)) for s in want]
    # the LM counted: each step's score is log p_TM + β log p_LM, not log p_TM (the shown log p is that
    # score renormalised, which may come close to log p_TM where the TM is sure)
    steps = explain(fused, greedy(fused, [SENTENCE])[0])[:3]
    assert all(abs(e.score - e.tm_logprob) > 1e-3 for e in steps)
    assert any('data-testid="fusion-topk"' in h for h in html_bodies(at))
    assert qp(at, "sp_fusion") == ["shallow"]
    shared = link(at)  # the Share and export tab's link reopens the fused view
    assert (shared["sp_fusion"], shared["sp_beta"]) == (["shallow"], ["0.5"])


def test_no_fusion_by_default_and_none_without_a_fitting_lm(fusion_dir: Path, ckpt_dir: Path) -> None:
    at = start({"text": SENTENCE, "model": "tiny-en-fr"})  # ckpt_dir (no fusion folder) wins the env
    assert not [r for r in at.radio if r.key == "fusion"]
    assert not any("fusion-topk" in h for h in html_bodies(at))


def test_beam_mode_searches_with_the_fused_model(fusion_dir: Path) -> None:
    at = start({"text": SENTENCE, "fusion": "shallow", "beta": "0.5", "mode": "beam", "beam": "3", "step": "2"})
    tm = checkpoint.load(fusion_dir / "tiny-en-fr-rnnsearch.pt")
    fused = fuse(tm, load_lm(fusion_dir / "fusion" / "tiny-lm.pt"), "shallow", 0.5)
    want = beam_search(fused, [SENTENCE], beam=3, n_best=3)[0]
    shown = at.session_state["sp__beam"][1]
    def rows(t: object) -> list:
        return [(e.tokens, round(e.logprob, 4)) for e in t.nbest]

    assert rows(shown) == rows(want)
    assert any('data-testid="fusion-topk"' in h for h in html_bodies(at))
