"""Every shipped model kind satisfies the written contract (nmt/models/contract.py) and answers its capabilities.

The expected capabilities are written out by hand per kind (from the papers: RNNsearch looks, then
generates, then updates; Luong updates first; an ensemble's and a fusion's step is several models'),
and compared with what each loaded model says and with what its config alone says before loading. A
step of each kind goes through the contract only (encode, initial_state, step, the state's
index_select / norm) and yields a distribution over the vocabulary. Static checks: no capability
``isinstance`` outside the model modules, no hand-assembled recurrence outside them, and the stepper's
panels never load a model of their own.
"""

from __future__ import annotations

import ast
import re
from pathlib import Path

import pytest
import torch

from nmt.decoding.ensemble import ensemble_of
from nmt.decoding.fusion import fuse, load_controller, load_lm
from nmt.models import checkpoint
from nmt.models.contract import Capabilities, DecodableModel, EncoderLike, RecurrentState
from nmt.models.luong import capabilities_of
from nmt.text.data import pad_ids
from nmt.text.vocab import BOS_ID
from tests.conftest import ROOT

CKPT = ROOT / "checkpoints"
RNN_MODES = ("attention", "fixed", "mean")
LOOK_FIRST, UPDATE_FIRST = ("look", "generate", "update"), ("update", "look", "generate")
EXPECTED = {
    "m30k-en-fr-rnnsearch.pt": Capabilities("rnnsearch", RNN_MODES, LOOK_FIRST, alpha_editable=True,
                                            deep_fusion=True, compilable=True, embeddings_input=True),
    "m30k-en-fr-rnnencdec.pt": Capabilities("rnnsearch", ("fixed", "attention", "mean"), LOOK_FIRST,
                                            alpha_editable=True, deep_fusion=True, compilable=True,
                                            embeddings_input=True),
    "m30k-en-fr-luong-global-general.pt": Capabilities("luong", ("attention",), UPDATE_FIRST, half_width=10,
                                                       embeddings_input=True),
    "m30k-en-fr-luong-local-m.pt": Capabilities("luong", ("attention",), UPDATE_FIRST, local_window=True,
                                                half_width=10, embeddings_input=True),
    "m30k-en-fr-luong-local-p.pt": Capabilities("luong", ("attention",), UPDATE_FIRST, local_window=True,
                                                half_width=10, gaussian=True, embeddings_input=True),
}
MODEL_MODULES = {"nmt/models/rnnsearch.py", "nmt/models/luong.py", "nmt/models/luong_attention.py",
                 "nmt/decoding/ensemble.py", "nmt/decoding/fusion.py",
                 "nmt/models/contract.py", "nmt/models/state.py"}
MODEL_CLASSES = {"RNNSearch", "LuongNMT", "Ensemble", "FusedModel", "LuongState", "EnsembleState",
                 "FusedRecurrent", "Attended", "LuongAttended", "EnsembleAttended"}


@pytest.fixture(scope="module")
def shipped() -> dict[str, checkpoint.LoadedModel]:
    if not all((CKPT / name).exists() for name in EXPECTED):
        pytest.skip("the shipped Multi30k checkpoints are not in checkpoints/")
    return {name: checkpoint.load(CKPT / name) for name in EXPECTED}


def _step_through_contract(model: DecodableModel, lm: checkpoint.LoadedModel) -> torch.Tensor:
    """Two steps of two rows, through encode / initial_state / step / index_select only; the log p of step 2."""
    ids = lm.src_vocab.encode("a dog runs on the grass".split())  # ends with </s>
    src, lengths = pad_ids([ids, [*ids[:3], ids[-1]]])  # (2, Tx): the second row padded
    enc = model.encode(src, lengths)
    assert isinstance(enc, EncoderLike)
    state = model.initial_state(enc, torch.full((2,), BOS_ID))
    assert isinstance(state.s, RecurrentState)
    out = model.step(enc, state)
    rows = torch.tensor([1, 0])  # beams reordered
    state = type(out.state)(out.state.s.index_select(0, rows), out.log_probs.argmax(-1).index_select(0, rows))
    out = model.step(enc.select(rows), state)
    assert out.state.s.norm(dim=-1).shape == (2,)
    return out.log_probs


@pytest.mark.parametrize("name", list(EXPECTED))
def test_each_shipped_model_answers_its_capabilities(shipped: dict, name: str) -> None:
    lm = shipped[name]
    assert isinstance(lm.model, DecodableModel)
    assert lm.model.capabilities == EXPECTED[name]
    assert capabilities_of(checkpoint.read_checkpoint(CKPT / name, mmap=True)["config"]) == EXPECTED[name]
    lp = _step_through_contract(lm.model, lm)
    assert lp.shape == (2, len(lm.tgt_vocab))
    assert torch.allclose(lp.exp().sum(-1), torch.ones(2), atol=1e-5)


def test_an_ensemble_and_fusions_satisfy_the_contract_with_their_own_capabilities(shipped: dict) -> None:
    members = [shipped[n] for n in ("m30k-en-fr-rnnsearch.pt", "m30k-en-fr-luong-local-p.pt")]
    ens = ensemble_of(members)
    assert isinstance(ens.model, DecodableModel)
    assert ens.model.capabilities == Capabilities("ensemble", ("attention",))
    assert _step_through_contract(ens.model, ens).shape == (2, len(ens.tgt_vocab))
    tm_path, lm_path = CKPT / "europarl-en-fr-rnnsearch-50.pt", CKPT / "fusion" / "tatoeba-fr-lm.pt"
    ctl_path = CKPT / "fusion" / "europarl-en-fr-deep-fusion.pt"
    if not (tm_path.exists() and lm_path.exists() and ctl_path.exists()):
        pytest.skip("the shipped fusion files are not in checkpoints/")
    tm, flm = checkpoint.load(tm_path), load_lm(lm_path)
    # a fusion's α is its TM's (its modes), but its step is two models': no phases, surgery or compilation
    fused_caps = Capabilities("fused", RNN_MODES)
    for mode, extra in (("shallow", {"beta": 0.3}), ("deep", {"controller": load_controller(ctl_path)[0]})):
        fused = fuse(tm, flm, mode, **extra)
        assert isinstance(fused.model, DecodableModel)
        assert fused.model.capabilities == fused_caps, mode
        assert _step_through_contract(fused.model, fused).shape == (2, len(tm.tgt_vocab))


def _python_files(*folders: str) -> list[Path]:
    return [p for f in folders for p in sorted((ROOT / f).rglob("*.py"))] + [ROOT / "app.py", ROOT / "train.py"]


def test_no_capability_isinstance_and_no_hand_made_recurrence_outside_the_model_modules() -> None:
    found = []
    for path in _python_files("nmt", "ui", "pages", "scripts"):
        rel = path.relative_to(ROOT).as_posix()
        if rel in MODEL_MODULES:
            continue
        tree = ast.parse(path.read_text(encoding="utf-8"))
        for node in ast.walk(tree):
            if isinstance(node, ast.Call) and getattr(node.func, "id", None) == "isinstance" and len(node.args) == 2:
                names = {n.id if isinstance(n, ast.Name) else getattr(n, "attr", "") for n in ast.walk(node.args[1])}
                if names & MODEL_CLASSES:
                    found.append(f"{rel}:{node.lineno} isinstance({ast.unparse(node.args[1])})")
            if isinstance(node, ast.Attribute) and node.attr in ("recur", "attend", "_recur", "_attend"):
                found.append(f"{rel}:{node.lineno} .{node.attr}(")
    assert not found, found


def test_the_stepper_panels_ask_the_sessions_model_and_load_none() -> None:
    for rel in ("ui/phases_panel.py", "ui/stepper_panels.py", "ui/fusion_ui.py", "ui/ensemble_panel.py", "app.py"):
        text = (ROOT / rel).read_text(encoding="utf-8")
        calls = re.findall(r"models\.load\(|load_model\(|checkpoint\.load\(", text)
        allowed = {"ui/ensemble_panel.py": 1, "ui/fusion_ui.py": 2}.get(rel, 0)  # members and the TM to fuse
        assert len(calls) <= allowed, (rel, calls)
