"""Every stepper tab with every model kind the stepper offers, on the shipped checkpoints (AppTest).

A kind is a URL (the way a shared link opens it): RNNsearch, its RNNencdec twin, the frozen-c_i
ablation, Luong global and local-p, the ensemble of the Multi30k group, candidate lists, and shallow
and deep fusion with the shipped language model (Europarl pair). For each, three Steps, then each tab
under the stepper is opened: no exception, no error box, and the tab shows what it promises for that
kind (the Look / Generate / Update cards in the model's own order, or the line saying why an
ensemble or a fusion has none) while the session's own stepper stays the one it decoded with.
Before the contract, opening the phases tab of the ensemble replaced the session's stepper by a
single RNNsearch at step 0 and ended in an IndexError.
"""

from __future__ import annotations

import pytest

from tests.stepper_app import click, open_tab, start
from ui.common import models

SENTENCE = "A man in a red shirt is riding a bike."
EUROPARL = "The committee will vote on the report tomorrow."
TABS = ("This step's numbers", "Look · Generate · Update", "Why this word?", "Energies e_ij", "Bottleneck",
        "Event log", "Share and export")

# kind: (URL, the phases tab's first card, or None where the tab says the model has no single step,
#        the decoded model's arch and context mode, as its capabilities and the trace say)
KINDS: dict[str, tuple[dict[str, str], str | None, str, str]] = {
    "rnnsearch": ({"model": "m30k-en-fr"}, "1 · Look", "rnnsearch", "attention"),
    "rnnencdec": ({"model": "m30k-en-fr", "freeze": "true"}, "1 · Look", "rnnsearch", "fixed"),
    "freeze-ablation": ({"model": "m30k-en-fr", "freeze": "true", "ablation": "true"}, "1 · Look", "rnnsearch",
                        "fixed"),
    "luong-global": ({"model": "m30k-en-fr-luong-global-general"}, "1 · Update", "luong", "attention"),
    "luong-local-p": ({"model": "m30k-en-fr-luong-local-p"}, "1 · Update", "luong", "attention"),
    "luong-frozen": ({"model": "m30k-en-fr-luong-local-p", "freeze": "true"}, "1 · Update", "luong", "attention"),
    "ensemble": ({"model": "m30k-en-fr", "ens": "true"}, None, "ensemble", "attention"),
    "candidates": ({"model": "m30k-en-fr", "cand": "true", "cand_k": "1000"}, "1 · Look", "rnnsearch", "attention"),
    "shallow-fusion": ({"model": "europarl-en-fr-50", "fusion": "shallow", "beta": "0.3", "text": EUROPARL}, None,
                       "fused", "attention"),
    "deep-fusion": ({"model": "europarl-en-fr-50", "fusion": "deep", "text": EUROPARL}, None, "fused", "attention"),
}


# what the Energies tab says for each kind: the model's own score equation, or why there are no energies
BAHDANAU = "v_aᵀ tanh(W_a s_(i-1) + U_a h_j)"
ENERGIES = {"rnnsearch": BAHDANAU, "candidates": BAHDANAU, "shallow-fusion": BAHDANAU, "deep-fusion": BAHDANAU,
            "rnnencdec": "c_i is a fixed summary", "freeze-ablation": "c_i is a fixed summary",
            "luong-global": "h_tᵀ W_a h̄_s (general", "luong-local-p": "inside the window [p_t − D, p_t + D]",
            "luong-frozen": "inside the window [p_t − D, p_t + D]", "ensemble": "the mean of its members' α"}


@pytest.fixture(autouse=True)
def shipped(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv(models.ENV_VAR, raising=False)
    for name in ("m30k-en-fr-rnnsearch.pt", "europarl-en-fr-rnnsearch-50.pt", "fusion/europarl-en-fr-deep-fusion.pt"):
        if not (models.ROOT / "checkpoints" / name).exists():
            pytest.skip(f"the shipped checkpoint {name} is not in checkpoints/")


def _stepper_id(at) -> int:
    return id(at.session_state["sp__stepper"][1])


@pytest.mark.parametrize("kind", list(KINDS))
def test_every_tab_draws_for_every_model_kind(kind: str) -> None:
    query, first_card, arch, context = KINDS[kind]
    at = start({"text": SENTENCE, **query})
    for _ in range(3):
        click(at, "sp_btn_step")
    own, stepper = _stepper_id(at), at.session_state["sp__stepper"][1]
    decoded = stepper.trace
    assert len(decoded.steps) == 3
    assert (stepper.lm.model.capabilities.arch, decoded.context) == (arch, context)  # the kind the URL asked for
    assert (decoded.steps[0].members is not None) == (kind == "ensemble")
    assert (decoded.candidates is not None) == (kind == "candidates")
    assert any("cannot be frozen" in w.value for w in at.warning) == (kind == "luong-frozen")  # said, not crashed
    assert (stepper.lm.meta.get("fusion") or {}).get("mode") == (kind.removesuffix("-fusion") if arch == "fused"
                                                                 else None)
    for tab in TABS:
        open_tab(at, tab)
        assert not at.error, (kind, tab, [e.value for e in at.error])
        assert _stepper_id(at) == own, f"{tab} replaced the session's stepper ({kind})"
        assert at.session_state["sp_pos"] == 3
        if tab == "Energies e_ij":
            said = [c.value for c in at.caption] + [i.value for i in at.info]
            assert any(ENERGIES[kind] in t for t in said), (kind, said)
            assert (kind in ENERGIES and ENERGIES[kind] != BAHDANAU) or all("h_tᵀ" not in t for t in said)
            if "luong" in kind:
                assert all(BAHDANAU not in t for t in said)  # not Bahdanau's equation for a Luong model
        if tab == "Why this word?":  # offered where α can be edited (RNNsearch with attention), else said why not
            offered = [b for b in at.selectbox if b.key == "sp_why_alt"]
            assert bool(offered) == (kind in ("rnnsearch", "candidates")), (kind, [i.value for i in at.info])
            assert offered or any("explains an RNNsearch decoding with attention" in i.value for i in at.info)
        if tab == "Look · Generate · Update":
            heads = [m.value for m in at.markdown if m.value.startswith("#### ")]
            if first_card is None:
                assert not heads and any("no single step" in i.value or "two models' steps" in i.value
                                         for i in at.info), (kind, [i.value for i in at.info])
            else:
                assert heads and heads[0] == f"#### {first_card}" and len(heads) == 3, (kind, heads)
                gaps = [w.value for w in at.warning if "cannot be frozen" not in w.value]
                assert not gaps, gaps  # the replay matches the trace


def test_why_this_word_explains_a_step_with_a_small_completeness_gap() -> None:
    """The stepper's "why not" on a top-k alternative: the verdict, the source words' scores beside α,
    and integrated gradients whose completeness gap is under 0.05 nats (shown in the summary line)."""
    import re

    from tests.conftest import plain

    at = start({"text": "A woman is holding a red umbrella.", "model": "m30k-en-fr"})
    for _ in range(2):
        click(at, "sp_btn_step")
    open_tab(at, "Why this word?")
    step = at.session_state["sp__stepper"][1].trace.steps[1]
    alt = at.selectbox(key="sp_why_alt")
    assert alt.options == [w for w, _ in step.topk if w != step.token and w != "<unk>"]  # no special token (here <unk>)
    assert "<unk>" in [w for w, _ in step.topk]
    click(at, "sp_why_run")
    said = " ".join(plain(m.value) for m in at.markdown) + " ".join(plain(c.value) for c in at.caption)
    assert f"« {step.token} » over « {alt.value} »" in said
    (first,) = [plain(m.value) for m in at.markdown if "The model prefers" in m.value]  # plain words first …
    assert "nats" not in first and first.startswith("**The model prefers")
    assert "with an all-zero source" in said  # … and the part no source word carries, with the numbers
    gap = float(re.search(r"completeness gap ([0-9.]+) nats", said).group(1))
    assert gap < 0.05
    words = at.dataframe[0].value
    assert list(words.columns) == ["j", "source word", "α_ij", "integrated gradients", "gradient × input"]
    assert sorted(words["α_ij"]) == pytest.approx(sorted(step.alpha), abs=1e-5)  # the step's own α
