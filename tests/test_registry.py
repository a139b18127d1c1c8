"""One record per model kind and per context mode (issue 49 item 4): every kind and mode has every part, in
every place keyed by them, and a config naming neither is refused instead of being described as another."""

from __future__ import annotations

import dataclasses

import pytest

from nmt.decoding import phases as decoding_phases
from nmt.models import contract, registry
from nmt.models.equations import LookText
from nmt.models.kinds import ModelDescription
from nmt.models.luong import LuongConfig, LuongNMT
from nmt.models.rnnsearch import CONTEXT_MODES, ModelConfig, RNNSearch
from ui.stepper import views_phases as phase_views

KINDS = ["rnnsearch", "luong"]  # written by hand: the kinds this project trains and imports
MODES = ["attention", "fixed", "mean"]  # RNNsearch's context modes


def test_the_registry_holds_the_kinds_and_modes_written_here() -> None:
    assert list(registry.KINDS) == KINDS and registry.ARCHS == tuple(KINDS)
    assert list(registry.MODES) == MODES == list(CONTEXT_MODES)
    assert set(registry.ARCHS) <= set(contract.ARCHS)  # the contract's kinds add the ensemble and the fusion


@pytest.mark.parametrize("name", KINDS)
def test_every_kind_has_every_part(name: str) -> None:
    k = registry.KINDS[name]
    assert all(getattr(k, f.name) is not None for f in dataclasses.fields(k))
    config = {**dataclasses.asdict(k.config(src_vocab_size=20, tgt_vocab_size=20)), "arch": name}
    assert k.model.capabilities_for(k.config.from_dict(config)).arch == name  # the model says it is this kind
    for mode in registry.capabilities_of(config).context_modes:
        assert isinstance(k.describe(config, mode), ModelDescription)
        assert isinstance(k.look(config, mode), LookText) and k.look(config, mode).source
    assert k.short(config)
    # the parts above the models layer, keyed by the same names: a step's phases and their cards
    assert name in decoding_phases.PARTS
    assert name in phase_views.NOTATION and name in phase_views.GENERATE and name in phase_views.UPDATE


def test_the_parts_above_name_no_kind_the_registry_lacks() -> None:
    assert set(decoding_phases.PARTS) == set(registry.KINDS)
    for table in (phase_views.NOTATION, phase_views.GENERATE, phase_views.UPDATE):
        assert set(table) == set(registry.KINDS)


@pytest.mark.parametrize("mode", MODES)
def test_every_context_mode_has_every_part(mode: str) -> None:
    m = registry.MODES[mode]
    assert m.trained.context == mode and m.look.equations and m.look.source and m.look.log
    assert m.look.has_energies == (mode == "attention")  # only attention runs an alignment model
    assert m.look.lead and m.look.weights  # the Look card's line and what its α is
    assert bool(m.look.note) == (mode != "attention")  # a mode without an alignment says what c_i was instead
    desc = registry.describe_model({"context": "attention"}, mode)
    assert desc.context == mode and desc.look == m.look


def test_every_luong_score_has_its_equation_and_words() -> None:
    from nmt.models.equations import LUONG_SCORE_WORDS, LUONG_SCORES
    from nmt.models.luong import SCORES

    assert set(LUONG_SCORES) == set(LUONG_SCORE_WORDS) == set(SCORES)


def test_descriptions_read_from_the_records() -> None:
    """Hand-written: the names and kinds a reader sees for each trained / decoded pair."""
    cases = {("attention", None): ("rnnsearch", "RNNsearch"), ("fixed", None): ("rnnencdec", "RNNencdec"),
             ("attention", "fixed"): ("ablation", "RNNsearch, c_i frozen"), ("mean", None): ("mean", "mean context"),
             ("attention", "mean"): ("mean", "mean context")}
    for (trained, decoded), (kind, name) in cases.items():
        d = registry.describe_model({"context": trained}, decoded)
        assert (d.kind, d.name) == (kind, name), (trained, decoded)
    luong = registry.describe_model({"arch": "luong", "score": "dot", "attention": "local-p"})
    assert (luong.kind, luong.name) == ("luong", "Luong 2015, local-p, dot, input feeding")
    assert registry.short_name({"arch": "luong", "score": "dot", "attention": "local-p"}) == "Luong local-p dot"


def test_a_kind_or_mode_without_a_record_is_refused() -> None:
    with pytest.raises(ValueError, match="arch must be one of"):
        registry.build_model({"arch": "transformer"})
    with pytest.raises(ValueError, match="arch must be one of"):
        registry.describe_model({"arch": "transformer"})
    with pytest.raises(ValueError, match="context mode must be one of"):
        registry.describe_model({"context": "attention"}, "top2")
    with pytest.raises(ValueError, match="context mode must be one of"):
        registry.look_text({}, "top2")


def test_the_builder_builds_each_kinds_class() -> None:
    tiny = {"src_vocab_size": 20, "tgt_vocab_size": 20, "emb_dim": 4, "hidden_dim": 4}
    assert type(registry.build_model(dataclasses.asdict(ModelConfig(**tiny, attn_dim=4, maxout_dim=4)))) is RNNSearch
    assert type(registry.build_model(dataclasses.asdict(LuongConfig(**tiny)))) is LuongNMT
