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
from nmt.models.registry import capabilities_of
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
    for rel in ("ui/stepper/phases_panel.py", "ui/stepper/panels.py", "ui/stepper/fusion_panel.py",
                "ui/stepper/ensemble_panel.py", "pages/stepper.py"):
        text = (ROOT / rel).read_text(encoding="utf-8")
        calls = re.findall(r"models\.load\(|load_model\(|checkpoint\.load\(", text)
        # the ensemble's members and the TM to fuse
        allowed = {"ui/stepper/ensemble_panel.py": 1, "ui/stepper/fusion_panel.py": 2}.get(rel, 0)
        assert len(calls) <= allowed, (rel, calls)


def test_capabilities_answer_alpha_surgery_and_windows_as_worked_out_by_hand() -> None:
    """The questions callers ask of the capabilities (not only their fields): α is recorded in every mode
    but the fixed summary, attention surgery needs an editable α decoded with attention, the trained
    context is the first mode, and only local-p carries a Gaussian (local-m has a window, no Gaussian)."""
    search, encdec = EXPECTED["m30k-en-fr-rnnsearch.pt"], EXPECTED["m30k-en-fr-rnnencdec.pt"]
    glob, local_m, local_p = (EXPECTED[f"m30k-en-fr-luong-{k}.pt"] for k in ("global-general", "local-m", "local-p"))
    assert (search.trained_context, encdec.trained_context, local_p.trained_context) == ("attention", "fixed",
                                                                                         "attention")
    assert [search.has_alpha(), search.has_alpha("attention"), search.has_alpha("mean"), search.has_alpha("fixed")] \
        == [True, True, True, False]
    assert [encdec.has_alpha(), encdec.has_alpha("attention"), encdec.has_alpha("mean")] == [False, True, True]
    assert [search.editable(), search.editable("mean"), search.editable("fixed")] == [True, False, False]
    assert [encdec.editable(), encdec.editable("attention")] == [False, True]
    assert [glob.editable(), glob.has_alpha()] == [False, True]
    assert [c.gaussian_half_width() for c in (search, glob, local_m, local_p)] == [None, None, None, 10]
    assert [c.local_window for c in (glob, local_m, local_p)] == [False, True, True]


def test_a_config_alone_gives_the_trained_context_first() -> None:
    """Each context an RNNsearch config can be trained in comes first, the other two after in their usual
    order; a Luong config's window: local-m and local-p have one of half-width D, global none."""
    from nmt.models.rnnsearch import ModelConfig, RNNSearch

    sizes = {"src_vocab_size": 8, "tgt_vocab_size": 8, "emb_dim": 4, "hidden_dim": 4, "attn_dim": 4, "maxout_dim": 4}
    modes = {c: RNNSearch.capabilities_for(ModelConfig(**sizes, context=c)).context_modes for c in RNN_MODES}
    assert modes == {"attention": ("attention", "fixed", "mean"), "fixed": ("fixed", "attention", "mean"),
                     "mean": ("mean", "attention", "fixed")}
    luong = {"arch": "luong", "src_vocab_size": 8, "tgt_vocab_size": 8, "emb_dim": 4, "hidden_dim": 4, "window": 3}
    caps = {a: capabilities_of({**luong, "attention": a}) for a in ("global", "local-m", "local-p")}
    assert [(c.local_window, c.gaussian, c.gaussian_half_width()) for c in caps.values()] == [
        (False, False, None), (True, False, None), (True, True, 3)]
