"""Every stepper preset does on the shipped model what its one-line description says."""

from __future__ import annotations

import pytest

from nmt import checkpoint
from nmt.decoding import greedy
from tests.conftest import ROOT
from ui.presets import BY_NAME, PRESETS
from ui.views.stepper import output_words, unk_copies

SEARCH = ROOT / "checkpoints" / "m30k-en-fr-rnnsearch.pt"
ENCDEC = ROOT / "checkpoints" / "m30k-en-fr-rnnencdec.pt"

pytestmark = pytest.mark.skipif(not SEARCH.exists(), reason="no shipped checkpoint")


@pytest.fixture(scope="module")
def search():
    return checkpoint.load(SEARCH)


@pytest.fixture(scope="module")
def encdec():
    if not ENCDEC.exists():
        pytest.skip("no shipped RNNencdec")
    return checkpoint.load(ENCDEC)


def argmax_source(trace, target_word: str) -> str:
    step = next(s for s in trace.steps if s.token == target_word)
    return trace.src_tokens[max(range(len(step.alpha)), key=step.alpha.__getitem__)]


@pytest.mark.parametrize("preset", [p for p in PRESETS if p.expect], ids=lambda p: p.name)
def test_expected_alignments_hold(search, preset) -> None:
    t = greedy(search, [preset.text])[0]
    for tgt, src in preset.expect:
        assert tgt in t.target_tokens, f"{preset.name}: {tgt!r} not in {t.translation!r}"
        assert argmax_source(t, tgt) == src, f"{preset.name}: {tgt!r} reads {argmax_source(t, tgt)!r}"


def test_reordered_noun_jumps_ahead_of_its_adjective(search) -> None:
    t = greedy(search, [BY_NAME["Reordered phrase"].text])[0]
    src = t.src_tokens
    out = t.target_tokens
    for noun, adj, en_noun, en_adj in (("voiture", "rouge", "car", "red"), ("maison", "blanche", "house", "white")):
        assert out.index(noun) + 1 == out.index(adj)  # French order: noun, then adjective
        assert src.index(en_adj) < src.index(en_noun)  # English order: adjective, then noun
        assert argmax_source(t, noun) == en_noun and argmax_source(t, adj) == en_adj  # jump ahead, then back


def test_soft_alignment_spreads_the_elided_article(search) -> None:
    t = greedy(search, [BY_NAME["Soft alignment"].text])[0]
    assert "l'eau" in t.translation
    step = next(s for s in t.steps if s.token == "l'")
    a = dict(zip(t.src_tokens, step.alpha))
    assert a["the"] + a["water"] > 0.6  # the article reads both words…
    assert min(a["the"], a["water"]) > 0.2  # …not just one of them


def test_bottleneck_preset_uses_the_toggle_and_long_sentence_does_not() -> None:
    assert BY_NAME["Fixed-vector bottleneck"].freeze and not BY_NAME["Long sentence"].freeze
    assert BY_NAME["Fixed-vector bottleneck"].text == BY_NAME["Long sentence"].text


@pytest.mark.skipif(not ENCDEC.exists(), reason="no shipped RNNencdec")
def test_long_sentence_is_better_with_attention(search) -> None:
    from nmt.metrics import sentence_scores

    encdec = checkpoint.load(ENCDEC)
    text = BY_NAME["Long sentence"].text
    with_att = greedy(search, [text])[0]
    fixed = greedy(encdec, [text])[0]
    assert not fixed.has_alignment
    # the attention model keeps more of the source's content words
    content = ["homme", "femme", "banc", "enfants", "chien", "herbe"]
    assert sum(w in with_att.target_tokens for w in content) > sum(w in fixed.target_tokens for w in content)
    assert sentence_scores(with_att.translation, fixed.translation)["bleu"] < 90  # they really differ


@pytest.mark.parametrize("preset", [p for p in PRESETS if p.freeze or p.lost], ids=lambda p: p.name)
def test_bottleneck_presets_change_the_translation(search, encdec, preset) -> None:
    """Where a preset is about the toggle, flipping it changes the words: the RNNsearch writes each
    word of ``lost`` and the RNNencdec twin writes none of them."""
    assert preset.lost, f"{preset.name}: a bottleneck preset says which words the RNNencdec loses"
    with_att = greedy(search, [preset.text])[0]
    fixed = greedy(encdec, [preset.text])[0]
    assert with_att.translation != fixed.translation
    for w in preset.lost:
        assert w in with_att.target_tokens, f"{preset.name}: RNNsearch does not write {w!r}: {with_att.translation!r}"
        assert w not in fixed.target_tokens, f"{preset.name}: RNNencdec writes {w!r} too: {fixed.translation!r}"


@pytest.mark.parametrize("preset", [p for p in PRESETS if p.copies], ids=lambda p: p.name)
def test_unknown_word_presets_copy_the_source_word(search, preset) -> None:
    """The model writes <unk>, and the replacement (largest α) copies the unknown source word."""
    t = greedy(search, [preset.text])[0]
    assert "<unk>" in t.target_tokens
    copied = [w for _, w in unk_copies(t).values()]
    assert copied == list(preset.copies)
    assert all(w in output_words(t, unk_copies(t)) for w in preset.copies)
    assert "<unk>" not in output_words(t, unk_copies(t))
