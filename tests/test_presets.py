"""Every stepper preset does on the shipped model what its one-line description says."""

from __future__ import annotations

from pathlib import Path

import pytest

from nmt.decoding.search import greedy
from nmt.models import checkpoint
from tests.conftest import ROOT
from ui.common import models, twins
from ui.common.presets import BY_NAME, EUROPARL, EVERYDAY, PRESETS
from ui.figures.stepper import output_words

CKPTS = ROOT / "checkpoints"
SEARCH = CKPTS / "m30k-en-fr-rnnsearch.pt"
ENCDEC = CKPTS / "m30k-en-fr-rnnencdec.pt"
EP_SEARCH = CKPTS / "europarl-en-fr-rnnsearch-50.pt"
EP_ENCDEC = CKPTS / "europarl-en-fr-rnnencdec-50.pt"
EV_SEARCH = CKPTS / "europarl-tatoeba-en-fr-rnnsearch-30k.pt"  # no twin of its own: the Europarl one stands in

pytestmark = pytest.mark.skipif(not SEARCH.exists(), reason="no shipped checkpoint")


_LOADED: dict[str, checkpoint.LoadedModel] = {}


def load(path) -> checkpoint.LoadedModel:
    """A shipped checkpoint, loaded once for this module (fixtures and :func:`pair` share it)."""
    if str(path) not in _LOADED:
        _LOADED[str(path)] = checkpoint.load(path)
    return _LOADED[str(path)]


@pytest.fixture(scope="module")
def search():
    return load(SEARCH)


@pytest.fixture(scope="module")
def encdec():
    if not ENCDEC.exists():
        pytest.skip("no shipped RNNencdec")
    return load(ENCDEC)


def pair(group: str) -> tuple[checkpoint.LoadedModel, checkpoint.LoadedModel]:
    """The shipped RNNsearch and RNNencdec of a preset's checkpoint pair (for the everyday pair, which has no
    twin of its own, the stand-in the stepper shows beside its frozen ablation)."""
    paths = {"m30k-en-fr": (SEARCH, ENCDEC), EUROPARL: (EP_SEARCH, EP_ENCDEC), EVERYDAY: (EV_SEARCH, EP_ENCDEC)}[group]
    if not all(p.exists() for p in paths):
        pytest.skip(f"the {group} pair is not shipped")
    return load(paths[0]), load(paths[1])


def argmax_source(trace, target_word: str) -> str:
    step = next(s for s in trace.steps if s.token == target_word)
    return trace.src_tokens[max(range(len(step.alpha)), key=step.alpha.__getitem__)]


@pytest.mark.parametrize("preset", [p for p in PRESETS if p.expect], ids=lambda p: p.name)
def test_expected_alignments_hold(preset) -> None:
    t = greedy(pair(preset.group)[0], [preset.text])[0]
    for tgt, src in preset.expect:
        assert tgt in t.target_tokens, f"{preset.name}: {tgt!r} not in {t.translation!r}"
        assert argmax_source(t, tgt) == src, f"{preset.name}: {tgt!r} reads {argmax_source(t, tgt)!r}"


def test_adjective_swap_noun_jumps_ahead_of_its_adjective(search) -> None:
    t = greedy(search, [BY_NAME["Adjective swap"].text])[0]
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
    assert BY_NAME["Bottleneck: lost details"].freeze and not BY_NAME["Long sentence"].freeze
    assert BY_NAME["Bottleneck: lost details"].text == BY_NAME["Long sentence"].text


@pytest.mark.skipif(not ENCDEC.exists(), reason="no shipped RNNencdec")
def test_long_sentence_is_better_with_attention(search) -> None:
    from nmt.text.metrics import sentence_scores

    encdec = load(ENCDEC)
    text = BY_NAME["Long sentence"].text
    with_att = greedy(search, [text])[0]
    fixed = greedy(encdec, [text])[0]
    assert not fixed.has_alignment
    # the attention model keeps more of the source's content words
    content = ["homme", "femme", "banc", "enfants", "chien", "herbe"]
    assert sum(w in with_att.target_tokens for w in content) > sum(w in fixed.target_tokens for w in content)
    assert sentence_scores(with_att.translation, fixed.translation)["bleu"] < 90  # they really differ


@pytest.mark.parametrize("preset", [p for p in PRESETS if p.freeze or p.lost], ids=lambda p: p.name)
def test_bottleneck_presets_change_the_translation(preset) -> None:
    """Where a preset is about the toggle, flipping it changes the words: the RNNsearch writes each
    word of ``lost`` and the RNNencdec twin writes none of them."""
    assert preset.lost, f"{preset.name}: a bottleneck preset says which words the RNNencdec loses"
    search, encdec = pair(preset.group)
    with_att = greedy(search, [preset.text])[0]
    fixed = greedy(encdec, [preset.text])[0]
    assert with_att.translation != fixed.translation
    frozen = [fixed]
    if preset.group in twins.STAND_IN_TWINS:  # no twin of its own: its frozen ablation is what the stepper shows
        frozen.append(greedy(search, [preset.text], context="fixed")[0])
    for w in preset.lost:
        assert w in with_att.target_tokens, f"{preset.name}: RNNsearch does not write {w!r}: {with_att.translation!r}"
        for t in frozen:
            assert w not in t.target_tokens, f"{preset.name}: the frozen model writes {w!r} too: {t.translation!r}"


def test_everyday_presets_are_on_the_typed_pair_and_say_what_it_writes() -> None:
    """The everyday presets run on the pair typed sentences go to, whose stand-in twin is the Europarl one;
    « Everyday sentence » writes what its Watch line quotes, and the Europarl RNNsearch-50 really has <unk>."""
    assert EVERYDAY == models.TYPED_GROUP and twins.STAND_IN_TWINS[EVERYDAY] == EUROPARL
    preset = BY_NAME["Everyday sentence"]
    search, _ = pair(EVERYDAY)
    t = greedy(search, [preset.text])[0]
    assert t.translation == "Mon frère a acheté un nouveau vélo hier.", t.translation
    assert "« Mon frère a acheté un nouveau vélo hier. »" in preset.watch
    europarl = greedy(pair(EUROPARL)[0], [preset.text])[0]
    assert "<unk>" in europarl.target_tokens and "vélo" not in europarl.target_tokens
    assert "RNNencdec" not in preset.flipped.split("no RNNencdec twin")[0]  # the ablation is not called one


@pytest.mark.parametrize("preset", [p for p in PRESETS if p.copies], ids=lambda p: p.name)
def test_unknown_word_presets_copy_the_source_word(preset) -> None:
    """The model writes <unk>, and the replacement (largest α) copies the unknown source word."""
    t = greedy(pair(preset.group)[0], [preset.text])[0]
    assert "<unk>" in t.target_tokens
    copied = [r.source for r in t.unk_replacements().values() if r.label == "copied"]
    assert copied == list(preset.copies)
    assert all(w in output_words(t, t.unk_replacements()) for w in preset.copies)
    assert "<unk>" not in output_words(t, t.unk_replacements())


# -- the paper's own sentences on the Europarl RNNsearch-50 / RNNencdec-50 (issue 8) -------------


def test_fig3a_reorders_european_economic_area() -> None:
    """Fig. 3(a): the French noun phrase runs backwards over the English one, and α follows it."""
    search, _ = pair(EUROPARL)
    t = greedy(search, [BY_NAME["Reordered phrase"].text])[0]
    assert "Espace économique européen" in t.translation, t.translation
    out, src = t.target_tokens, t.src_tokens
    at = [argmax_source(t, w) for w in ("Espace", "économique", "européen")]
    assert at == ["Area", "Economic", "European"]
    # the reversed diagonal: target positions rise while the source positions they read fall
    assert [out.index(w) for w in ("Espace", "économique", "européen")] == sorted(
        out.index(w) for w in ("Espace", "économique", "européen"))
    assert [src.index(w) for w in at] == sorted((src.index(w) for w in at), reverse=True)


# The paper's own RNNsearch-50 translations of its two long Section 5.2.2 sentences: an independent
# reference for "keeps the meaning" (chrF against them, not against our own output).
PAPER_5_2_2 = {
    "Fixed-vector bottleneck":  # the paper's §5.2.2 (1)
        "Un privilège d'admission est le droit d'un médecin de reconnaître un patient à l'hôpital ou un centre "
        "médical d'un diagnostic ou de prendre un diagnostic en fonction de son état de santé.",
    "Paper §5.2.2 (2)":
        "Ce genre d'expérience fait partie des efforts de Disney pour \"prolonger la durée de vie de ses séries et "
        "créer de nouvelles relations avec des publics via des plateformes numériques de plus en plus "
        "importantes\", a-t-il ajouté.",
}


@pytest.mark.parametrize("name", list(PAPER_5_2_2))
def test_long_paper_sentences_rnnencdec_drifts_rnnsearch_holds(name: str) -> None:
    from nmt.text.metrics import sentence_scores

    search, encdec = pair(EUROPARL)
    text = BY_NAME[name].text
    assert len(search.src_tok.tokenize(text)) > 30  # the paper's long-sentence regime
    with_att, fixed = greedy(search, [text])[0], greedy(encdec, [text])[0]
    ref = PAPER_5_2_2[name]
    att_chrf = sentence_scores(with_att.translation, ref)["chrf"]
    fixed_chrf = sentence_scores(fixed.translation, ref)["chrf"]
    assert att_chrf > fixed_chrf + 8, (att_chrf, fixed_chrf, with_att.translation, fixed.translation)
    # drifting: the fixed-vector model loops on a few words; RNNsearch does not repeat itself as much
    def most_repeated(words: list[str]) -> int:
        return max(words.count(w) for w in words if len(w) > 3)
    assert most_repeated(fixed.target_tokens) > most_repeated(with_att.target_tokens)


# -- the explainer's script (issue 21) on the Europarl RNNsearch-50 / RNNencdec-50 ---------------------


def test_explainer_script_runs_on_one_pair_in_its_order() -> None:
    """The three presets the explainer names, first in the picker, all on the Europarl pair."""
    assert [p.name for p in PRESETS[:3]] == ["Monotonic copy", "Reordered phrase", "Fixed-vector bottleneck"]
    assert {p.group for p in PRESETS[:3]} == {EUROPARL}
    assert [p.freeze for p in PRESETS[:3]] == [False, False, True]


def test_monotonic_copy_walks_down_the_diagonal() -> None:
    """'She read the old letter slowly.': after the first word, each row's largest α is on a source word
    at or after the previous row's (the diagonal), and the four content words are read in place."""
    t = greedy(pair(EUROPARL)[0], [BY_NAME["Monotonic copy"].text])[0]
    assert t.translation.startswith("Elle a lu la vieille lettre"), t.translation
    words = ["a", "lu", "la", "vieille", "lettre"]
    at = [t.src_tokens.index(argmax_source(t, w)) for w in words]
    assert at == [1, 1, 2, 3, 4]  # read, read, the, old, letter: never backwards


def test_reordered_phrase_jumps_past_the_two_adjectives() -> None:
    """At « Espace » the row's maximum is on 'Area', two source words past 'European' and 'Economic',
    which the previous row (« l' ») did not read most."""
    t = greedy(pair(EUROPARL)[0], [BY_NAME["Reordered phrase"].text])[0]
    out, src = t.target_tokens, t.src_tokens
    k = out.index("Espace")
    row = t.steps[k].alpha
    assert src[max(range(len(row)), key=row.__getitem__)] == "Area"
    assert row[src.index("Area")] > row[src.index("European")] + row[src.index("Economic")]
    prev = t.steps[k - 1].alpha
    assert src.index("Area") - max(range(len(prev)), key=prev.__getitem__) >= 3  # a jump ahead


def test_fixed_vector_bottleneck_unfrozen_rows_read_different_words() -> None:
    """Flipped off, RNNsearch-50's rows peak on many different source words (the alignment is back):
    over the first 20 steps, at least 12 distinct source words get a row's maximum."""
    t = greedy(pair(EUROPARL)[0], [BY_NAME["Fixed-vector bottleneck"].text])[0]
    peaks = {max(range(len(s.alpha)), key=s.alpha.__getitem__) for s in t.steps[:20]}
    assert len(peaks) >= 12, peaks


def test_training_timelines_record_the_presets_sentences() -> None:
    """train.py --timeline reads configs/timeline_sentences.json (it never imports the app): the same
    sentences, group by group and in order, as the stepper's presets."""
    from nmt.training.timeline_record import preset_sentences

    want: dict[str, list[str]] = {}
    for p in PRESETS:
        want.setdefault(p.group, []).append(p.text)
    assert preset_sentences() == want, "regenerate configs/timeline_sentences.json from ui/common/presets.py"
    assert "ui" not in {m.split(".")[0] for m in _imports(Path(__file__).resolve().parent.parent / "train.py")}


def _imports(path: Path) -> set[str]:
    import ast

    tree = ast.parse(path.read_text(encoding="utf-8"))
    return {n.module or "" for n in ast.walk(tree) if isinstance(n, ast.ImportFrom)} | {
        a.name for n in ast.walk(tree) if isinstance(n, ast.Import) for a in n.names}
