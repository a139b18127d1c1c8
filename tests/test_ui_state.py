"""View state (URL round trip, plans, stepper sync, event log), the checkpoint catalogue and presets."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from nmt.decoding.search import Stepper, forced, greedy
from nmt.models import checkpoint
from ui.common import checkpoint_files, models, twins
from ui.common.presets import BY_NAME, EUROPARL, FLIPPED_TO_FREE, FLIPPED_TO_FROZEN, PRESETS, long_sentence, watch_for
from ui.figures import stepper_state as vs

SENTENCE = "A man is riding a bike."


# ---------------------------------------------------------------------------- query parameters


def test_view_round_trips_through_query_params() -> None:
    view = vs.View(text='A "dog" & <cat> 😀', model="m30k-en-fr", mode="beam", beam=7, norm="gnmt",
                   freeze=True, ablation=True, step=4, plan={3: "chat", 1: "l'"}, present=True, paper=True, unk=False)
    q = vs.view_to_query(view)
    assert q["force"] == ["1:l'", "3:chat"]
    assert (q["present"], q["paper"], q["unk"]) == ("true", "true", "false")  # as the bound controls write
    assert vs.view_from_query(q) == view
    assert vs.view_from_query({k: [v] if isinstance(v, str) else v for k, v in q.items()}) == view


def test_a_subword_models_words_view_rides_in_the_link() -> None:
    words = vs.View(text="hi", model="m", words=True)
    assert vs.view_to_query(words) == {"text": "hi", "model": "m", "step": "0", "words": "true"}
    assert vs.view_from_query({"text": ["hi"], "model": ["m"], "words": ["true"]}) == words
    assert vs.view_from_query({"words": ["maybe"]}).words is False  # junk falls back to pieces


def test_fusion_rides_in_the_view_and_its_link() -> None:
    shallow = vs.View(text="hi", model="m", fusion="shallow", beta=0.35)
    assert vs.view_to_query(shallow) == {"text": "hi", "model": "m", "step": "0", "fusion": "shallow", "beta": "0.35"}
    assert vs.view_from_query(vs.view_to_query(shallow)) == shallow
    deep = vs.View(text="hi", model="m", fusion="deep", beta=0.35)  # β belongs to shallow fusion only
    assert vs.view_to_query(deep) == {"text": "hi", "model": "m", "step": "0", "fusion": "deep"}
    junk = vs.view_from_query({"fusion": "sideways", "beta": "lots"})
    assert (junk.fusion, junk.beta) == ("none", None)
    assert [vs.view_from_query({"beta": b}).beta for b in ("7", "-1", "nan", "0.2")] == [1.0, 0.0, None, 0.2]


def test_default_view_keeps_urls_short() -> None:
    q = vs.view_to_query(vs.View(text="hi", model="m"))
    assert q == {"text": "hi", "model": "m", "step": "0"}  # presentation off, paper style off, unk copying on


@pytest.mark.parametrize(("value", "present", "unk"), [
    ("1", True, True), ("true", True, True), ("0", False, False), ("off", False, False),
    ("maybe", False, True), ("", False, True),  # junk: each setting's default (unk copying is on by default)
])
def test_display_settings_from_the_url(value: str, present: bool, unk: bool) -> None:
    v = vs.view_from_query({"present": value, "paper": value, "unk": value})
    assert (v.present, v.paper, v.unk) == (present, present, unk)


def test_junk_query_params_fall_back_to_defaults() -> None:
    v = vs.view_from_query({"step": "-3", "mode": "sideways", "beam": "x", "norm": "??", "freeze": "maybe",
                            "force": ["1:ok", "nope", "2:", ":x", "999999:far"], "text": "x" * 5000})
    assert v.step == 0 and v.mode == "greedy" and v.beam == 5 and v.norm == "length" and not v.freeze
    assert v.plan == {1: "ok"}
    assert len(v.text) == vs.MAX_TEXT_CHARS
    assert vs.view_from_query({"step": "99999"}).step == vs.MAX_STEP
    assert vs.view_from_query({}) == vs.View()


def test_query_snapshot_lists_every_value() -> None:
    assert vs.query_snapshot({"a": "1", "f": ["x"]}) == {"a": ["1"], "f": ["x"]}


def test_force_plan_drops_later_words() -> None:
    assert vs.force_plan({0: "a", 2: "b", 5: "c"}, 2, "z") == {0: "a", 2: "z"}
    assert vs.parse_plan(vs.format_plan({4: "x:y", 0: "a"})) == {0: "a", 4: "x:y"}


# ---------------------------------------------------------------------------- stepping


def test_sync_stepper_steps_back_and_replays_exactly(tiny_lm: checkpoint.LoadedModel) -> None:
    st = Stepper(tiny_lm, SENTENCE)
    ref = greedy(tiny_lm, [SENTENCE])[0]
    new = vs.sync_stepper(st, {}, 3)
    assert [r.i for r in new] == [0, 1, 2]
    assert vs.sync_stepper(st, {}, 3) == []  # nothing to do
    vs.sync_stepper(st, {}, 1)
    assert st.position == 1
    again = vs.sync_stepper(st, {}, vs.MAX_STEP)  # stops where decoding ends
    assert st.done and st.trace.translation == ref.translation
    assert [r.i for r in again] == list(range(1, len(ref.steps)))
    assert [s.alpha for s in st.trace.steps] == [s.alpha for s in ref.steps]


def test_sync_stepper_follows_the_plan(tiny_lm: checkpoint.LoadedModel) -> None:
    st = Stepper(tiny_lm, SENTENCE)
    vs.sync_stepper(st, {}, 4)
    word = st.trace.steps[1].topk[1][0]
    new = vs.sync_stepper(st, {1: word}, 4)  # goes back to step 1 and forces the word there
    assert [r.i for r in new] == [1, 2, 3]
    assert st.trace.steps[1].forced and st.trace.steps[1].token == word
    ref = forced(tiny_lm, [SENTENCE], [" ".join(s.token for s in st.trace.steps[:2])])[0]
    assert st.trace.steps[1].alpha == pytest.approx(ref.steps[1].alpha)
    vs.sync_stepper(st, {}, 4)  # the plan emptied: back to pure greedy
    assert not any(s.forced for s in st.trace.steps)
    unknown = vs.sync_stepper(st, {0: "zzz-not-a-word"}, 1)
    assert unknown[0].token == "<unk>" and unknown[0].forced


def test_prefix_trace_and_event_log(tiny_lm: checkpoint.LoadedModel) -> None:
    full = greedy(tiny_lm, [SENTENCE])[0]
    part = vs.prefix_trace(full, 2, "Un homme")
    assert len(part.steps) == 2 and not part.finished and len(full.steps) > 2
    assert vs.prefix_trace(full, len(full.steps), full.translation).finished == full.finished
    line = vs.describe_step(full.steps[0], full)
    assert line.startswith("step 0: wrote") and "most weight on" in line
    log: list[dict] = []
    for k in range(vs.MAX_LOG + 5):
        vs.add_event(log, "you", f"e{k}", k)
    assert len(log) == vs.MAX_LOG and log[-1]["#"] == vs.MAX_LOG + 5


# ---------------------------------------------------------------------------- catalogue


def test_scan_pairs_checkpoints_and_resolves_the_toggle(tiny_checkpoint_dir: Path, tmp_path: Path) -> None:
    groups = checkpoint_files.scan(tiny_checkpoint_dir)
    assert [g.name for g in groups] == ["tiny-en-fr"]
    g = groups[0]
    assert g.search is not None and g.search.name == "tiny-en-fr-rnnsearch.pt"
    assert g.encdec is not None and g.encdec.name == "tiny-en-fr-rnnencdec.pt"
    assert models.default_group(groups) is g
    off = models.resolve(g, freeze=False, ablation=False)
    on = models.resolve(g, freeze=True, ablation=False)
    abl = models.resolve(g, freeze=True, ablation=True)
    assert (off.ckpt, off.context, off.kind) == (g.search, "attention", "rnnsearch")
    assert (on.ckpt, on.context, on.kind) == (g.encdec, "fixed", "rnnencdec")  # read from the checkpoint
    assert (abl.ckpt, abl.context, abl.kind) == (g.search, "fixed", "ablation")
    cols = twins.columns(g, ablation=True)
    assert [(c.ckpt, c.context, c.kind) for c in cols] == [
        (g.search, "attention", "rnnsearch"), (g.encdec, "fixed", "rnnencdec"), (g.search, "fixed", "ablation")]
    assert [c.kind for c in twins.columns(g, ablation=False)] == ["rnnsearch", "rnnencdec"]
    assert models.load(on.ckpt).config.context == "fixed"
    assert models.load(on.ckpt) is models.load(on.ckpt)  # cached: one model per process

    # a lone RNNsearch: the freeze falls back to the ablation, with a notice
    solo = tmp_path / "solo"
    solo.mkdir()
    shutil.copy(tiny_checkpoint_dir / "tiny-en-fr-rnnsearch.pt", solo / "x-rnnsearch.pt")
    shutil.copy(tiny_checkpoint_dir / "tiny-en-fr-rnnencdec.pt", solo / "odd-name.pt")
    (solo / "notes.txt").write_text("not a checkpoint")
    by = {g.name: g for g in checkpoint_files.scan(solo)}
    assert set(by) == {"x", "odd-name"}
    lone = models.resolve(by["x"], freeze=True, ablation=False)
    assert lone.kind == "ablation" and lone.notice
    assert [c.kind for c in twins.columns(by["x"], ablation=True)] == ["rnnsearch", "ablation"]  # no duplicate
    odd = by["odd-name"]
    assert odd.search is None and odd.encdec is not None  # slot read from the trained context
    assert models.resolve(odd, freeze=False, ablation=False).notice
    assert checkpoint_files.scan(tmp_path / "missing") == []


def test_describe_and_scores(tiny_checkpoint_dir: Path) -> None:
    g = checkpoint_files.scan(tiny_checkpoint_dir)[0]
    row = models.describe(g.search)
    assert row["model"] == "RNNsearch" and row["languages"] == "en→fr" and row["data"].startswith("tiny")
    assert models.describe(g.encdec)["model"] == "RNNencdec"
    assert "tiny-en-fr" in models.group_label(g)
    assert models.format_scores({"test2016": {"bleu": 35.123, "chrf": 60}, "valid": 30}) == \
        "test2016 BLEU 35.1, valid 30.0"
    assert models.format_scores({"greedy": {"test2016": {"BLEU": 33.0}}}) == "greedy: test2016 BLEU 33.0"
    assert models.format_scores(None) == "" and models.format_scores({"x": "n/a"}) == ""
    exported = {"val": {"greedy": {"bleu": {"score": 51.84, "signature": "s"}, "sentences": 1014},
                        "beam5": {"bleu": {"score": 53.26}}},
                "test": {"greedy": {"bleu": {"score": 54.0}}}}  # nmt.tools.export's shape
    assert models.format_scores(exported) == "val greedy 51.8 · beam5 53.3; test greedy 54.0"
    assert models.format_scores(exported, first_only=True) == "val greedy 51.8 · beam5 53.3"


def test_server_threads_are_set_deliberately(monkeypatch: pytest.MonkeyPatch) -> None:
    import torch

    before = torch.get_num_threads()
    try:
        for value, expected in (("", 1), ("2", 2), ("lots", 1)):
            monkeypatch.setenv("RNNSEARCH_THREADS", value)
            assert models.configure_threads() == expected and torch.get_num_threads() == expected
    finally:
        torch.set_num_threads(before)


def test_checkpoint_dir_env(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.setenv(models.ENV_VAR, str(tmp_path))
    assert models.checkpoint_dir() == tmp_path
    monkeypatch.delenv(models.ENV_VAR)
    assert models.checkpoint_dir().name == "checkpoints"


# ---------------------------------------------------------------------------- presets


def test_presets_are_complete() -> None:
    names = [p.name for p in PRESETS]
    assert names == ["Monotonic copy", "Reordered phrase", "Fixed-vector bottleneck",  # the explainer's script
                     "Everyday sentence", "Everyday bottleneck",  # the everyday model's (issue 34)
                     "Diagonal walk", "Adjective swap", "Soft alignment", "Unknown word", "Bottleneck: lost details",
                     "Bottleneck: who wears what", "Bottleneck: short sentence", "Long sentence",
                     "Paper §5.2.2 (2)",
                     "Phrase de tous les jours (fr→en)"]  # the fr→en pair's (issue 47), listed beside it only
    assert BY_NAME["Monotonic copy"].text == "She read the old letter slowly."
    assert "European Economic Area" in BY_NAME["Reordered phrase"].text
    assert BY_NAME["Bottleneck: lost details"].freeze and not BY_NAME["Long sentence"].freeze
    assert BY_NAME["Bottleneck: lost details"].text == BY_NAME["Long sentence"].text
    assert len(BY_NAME["Long sentence"].text.split()) > 25
    for p in PRESETS:
        assert p.watch and p.text.strip()
        assert all(src in p.text for _, src in p.expect)
        assert all(src in p.text for src in p.copies)
        assert bool(p.lost) == p.freeze  # every preset that freezes c_i says what the freeze loses
    # the bottleneck page reads a pair's first preset that freezes c_i as its long sentence
    assert long_sentence("m30k-en-fr") == long_sentence("tiny-en-fr") == BY_NAME["Long sentence"].text
    assert long_sentence(EUROPARL) == BY_NAME["Fixed-vector bottleneck"].text


def test_a_flipped_preset_says_what_the_flip_shows() -> None:
    """The Watch line follows the toggle: a frozen preset flipped off never still says "c_i is frozen"."""
    bn = BY_NAME["Fixed-vector bottleneck"]
    assert watch_for(bn, True) == bn.watch and "frozen" in bn.watch
    assert watch_for(bn, False) == bn.flipped and "free again" in bn.flipped
    reorder = BY_NAME["Reordered phrase"]
    assert watch_for(reorder, False) == reorder.watch
    assert watch_for(reorder, True) == FLIPPED_TO_FROZEN
    assert watch_for(BY_NAME["Paper §5.2.2 (2)"], False) == FLIPPED_TO_FREE


def test_same_corpus_first_puts_the_training_corpus_test_sets_first() -> None:
    meta = {"train_data": {"dir": ".gpu-data/europarl-v7-fr-en", "pairs": 3}}
    prefer = ["multi30k/test_2016_flickr", "europarl-v7-fr-en/test2000q4", "wmt/newstest2014-fren"]
    assert models.same_corpus_first(meta, prefer) == ["europarl-v7-fr-en/test2000q4", "multi30k/test_2016_flickr",
                                                       "wmt/newstest2014-fren"]
    assert models.same_corpus_first({"train_data": {"dir": "data/multi30k"}}, prefer[::-1]) == [
        "multi30k/test_2016_flickr", "wmt/newstest2014-fren", "europarl-v7-fr-en/test2000q4"]
    assert models.same_corpus_first({}, prefer) == prefer


def test_play_keeps_its_pace_when_redraws_are_slow() -> None:
    """Play started at word 3 at t = 10 s, 0.25 s a word: the first tick writes word 4 at once; a tick
    0.8 s later is due at word 7 (3 + 1 + ⌊0.8 / 0.25⌋), not just the next word; a tick that comes
    early still writes one word; a long stall is caught up 4 words at a time."""
    clock = (3, 10.0)
    assert vs.play_position(3, clock, 10.0, 0.25) == 4
    assert vs.play_position(4, clock, 10.8, 0.25) == 7
    assert vs.play_position(7, clock, 10.81, 0.25) == 8  # ahead of the clock: one word a tick
    assert vs.play_position(8, clock, 20.0, 0.25) == 8 + vs.PLAY_CATCH_UP
    assert vs.play_position(5, (5, 0.0), 1.9, 2.0) == 6  # slow pace: one word
