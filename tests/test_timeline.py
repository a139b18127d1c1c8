"""The training timeline (issue 23): its schedule and file format, what a tiny run records, resuming,
the views, and the "Watch it learn" page under AppTest.

The tiny runs train on the 20 fixture pairs with ``--timeline`` (tests/conftest.py's TINY_ARGS).
"""

from __future__ import annotations

import math
from pathlib import Path

import numpy as np
import pytest
from streamlit.testing.v1 import AppTest

import train
from nmt.decoding import search as decoding
from nmt.models import checkpoint
from nmt.training import timeline
from nmt.training.timeline_record import evenly, preset_group, validation_probes
from tests import timeline_fixtures
from tests.conftest import ROOT, TINY_ARGS
from tests.page_app import app_at
from tests.state_keys import constants, created, literal_keys
from ui.timeline import state as S
from ui.timeline import views as V

TIMEOUT = 120
tl_runs, tl_dir = timeline_fixtures.tl_runs, timeline_fixtures.tl_dir  # fixtures shared with the browser test
PEAKED = 0.70  # the last entry's mean word-row entropy, as a fraction of log T_x (0.53 on the fixture)


# -- schedule, entropy, file format ------------------------------------------------------------


def test_schedule_is_log_spaced_and_dense_early() -> None:
    assert timeline.schedule(300) == [0, 1, 2, 3, 4, 5, 7, 10, 15, 20, 30, 40, 50, 70, 100, 150, 200, 300]
    assert [u for u in range(1000, 10001) if timeline.is_scheduled(u)] == [
        1000, 1500, 2000, 3000, 4000, 5000, 7000, 10000]
    assert not timeline.is_scheduled(-1) and not timeline.is_scheduled(250)


def test_row_entropy_by_hand() -> None:
    h = timeline.row_entropy(np.array([[0.25, 0.25, 0.25, 0.25], [1, 0, 0, 0], [0.5, 0.5, 0, 0], [0.2, 0.2, 0, 0]]))
    np.testing.assert_allclose(h, [math.log(4), 0.0, math.log(2), math.log(2)])  # the last row renormalised


def test_evenly_and_validation_probes_by_length() -> None:
    assert evenly(10, 4) == [0, 3, 6, 9] and evenly(3, 5) == [0, 1, 2] and evenly(7, 1) == [0]
    src = ["a b c", "a", "", "a b c d e", "a b"]
    probes = validation_probes(src, ["x"] * 5, n=3)
    assert [p.source for p in probes] == ["a", "a b c", "a b c d e"]  # shortest, middle, longest; no empty line


def test_preset_group_from_the_run_folder() -> None:
    groups = ["m30k-en-fr", "europarl-en-fr-50"]
    assert preset_group("m30k-en-fr-rnnsearch-timeline", groups) == "m30k-en-fr"
    assert preset_group("europarl-en-fr-rnnencdec-50", groups) == "europarl-en-fr-50"
    assert preset_group("tiny", groups) == ""


def _hand_made() -> timeline.Timeline:
    tl = timeline.Timeline({"model": {"config": {"context": "attention"}}, "probes": [
        {"kind": "valid", "name": "v", "source": "a b", "reference": "x y", "src_tokens": ["a", "b", "</s>"],
         "src_unk": [False, False, False]}]})
    for u, rows, scheduled in ((0, [[1 / 3] * 3, [1 / 3] * 3], True), (5, [[0.5, 0.5, 0], [1, 0, 0]], True),
                               (8, [[1, 0, 0], [0, 0, 1]], False)):
        tl.add({"update": u, "scheduled": scheduled, "train_loss": 9.0 - u, "bleu": float(u), "aer": None,
                "translations": [f"t{u}"], "tgt_tokens": [["x", "</s>"]]}, {0: np.array(rows)})
    return tl


def test_write_read_round_trip_and_rewind(tmp_path: Path) -> None:
    tl = _hand_made()
    timeline.write(tl, tmp_path / "t.npz")
    again = timeline.read(tmp_path / "t.npz")
    assert again.updates == [0, 5, 8] and again.entries == tl.entries
    np.testing.assert_array_equal(again.alpha_of(5, 0), np.array([[0.5, 0.5, 0], [1, 0, 0]], dtype=np.float32))
    again.rewind(7)  # resume at 7: 8 is gone; so is an end-of-run entry at or before 7
    assert again.updates == [0, 5] and (8, 0) not in again.alpha
    again.add({**tl.entries[0], "translations": ["new"]}, {})  # a repeated update replaces, never duplicates
    assert again.updates == [0, 5] and again.entries[0]["translations"] == ["new"]


def test_rewind_keeps_the_entry_of_the_update_it_resumes_at() -> None:
    tl = timeline.Timeline({"format": timeline.FORMAT})
    for u in (8, 0, 7, 5):
        tl.add({"update": u, "scheduled": True}, {0: np.eye(2)})
    assert tl.updates == [0, 5, 7, 8]  # kept in update order whatever the order of adding
    tl.rewind(7)
    assert tl.updates == [0, 5, 7] and sorted(tl.alpha) == [(0, 0), (5, 0), (7, 0)]


def test_mean_entropy_leaves_out_the_end_of_sentence_row() -> None:
    tl = _hand_made()
    assert timeline.mean_entropy(tl, 0) == pytest.approx(1.0)  # uniform over 3 → H / log 3 = 1
    assert timeline.mean_entropy(tl, 5) == pytest.approx(math.log(2) / math.log(3))  # the </s> row is not a word


def test_read_refuses_what_is_not_a_timeline(tmp_path: Path) -> None:
    bad = tmp_path / "x.timeline.npz"
    bad.write_text("not a zip")
    with pytest.raises(timeline.TimelineError, match="not a readable training timeline"):
        timeline.read(bad)
    np.savez(tmp_path / "other.npz", header=np.frombuffer(b'{"format": "x"}', dtype=np.uint8),
             entries=np.frombuffer(b"[]", dtype=np.uint8))
    with pytest.raises(timeline.TimelineError, match="not a training timeline of this format"):
        timeline.read(tmp_path / "other.npz")


def test_find_pairs_by_model(tmp_path: Path) -> None:
    for name in ("m30k-en-fr-rnnsearch-short500", "m30k-en-fr-rnnencdec-short500", "m30k-en-fr-rnnsearch", "x"):
        (tmp_path / f"{name}.timeline.npz").write_bytes(b"")
    (tmp_path / "m30k-en-fr-rnnsearch.pt").write_bytes(b"")
    found = {p.name: (p.search and p.search.name, p.encdec and p.encdec.name) for p in timeline.find(tmp_path)}
    assert found == {
        "m30k-en-fr": ("m30k-en-fr-rnnsearch.timeline.npz", None),
        "m30k-en-fr-short500": ("m30k-en-fr-rnnsearch-short500.timeline.npz",
                                "m30k-en-fr-rnnencdec-short500.timeline.npz"),
        "x": ("x.timeline.npz", None)}


# -- what a tiny run records -------------------------------------------------------------------


def test_tiny_run_records_the_schedule_and_its_end(tl_runs: dict[str, Path]) -> None:
    tl = timeline.read(tl_runs["attention"] / timeline.FILE_NAME)
    assert tl.updates == [*timeline.schedule(100), 120]  # 60 epochs × 2 batches; 120 is where it stopped
    assert [p["kind"] for p in tl.probes] == ["valid"] * 5  # no preset group for "tiny"; val has 5 pairs
    assert (tl_runs["attention"] / timeline.FILE_NAME).stat().st_size < timeline.MAX_BYTES
    assert tl.entries[0]["train_loss"] == pytest.approx(math.log(79), rel=0.1)  # untrained: about log |V_y|
    assert tl.entries[-1]["train_loss"] < 0.01 and tl.entries[-1]["bleu"] == 100.0  # val ⊂ train, learnt by heart
    assert all(e["aer"] is not None for e in tl.entries)  # en→fr: AER on the Hansards trial set


def test_first_alpha_rows_are_near_uniform_and_last_peaked(tl_runs: dict[str, Path]) -> None:
    tl = timeline.read(tl_runs["attention"] / timeline.FILE_NAME)
    for p in range(len(tl.probes)):
        a = tl.alpha_of(0, p)
        h = timeline.row_entropy(a)
        assert np.all(np.abs(h - math.log(a.shape[1])) <= 0.05 * math.log(a.shape[1])), p
    assert timeline.mean_entropy(tl, 0) > 0.95
    assert timeline.mean_entropy(tl, tl.updates[-1]) < PEAKED


def test_last_entry_equals_a_greedy_decode_of_the_final_checkpoint(tl_runs: dict[str, Path]) -> None:
    for context, run in tl_runs.items():
        tl = timeline.read(run / timeline.FILE_NAME)
        lm = checkpoint.load(run / "last.pt")
        assert checkpoint.read_checkpoint(run / "last.pt")["train_state"]["progress"]["update"] == tl.updates[-1]
        traces = decoding.greedy(lm, [p["source"] for p in tl.probes])
        last = tl.entries[-1]
        assert last["translations"] == [t.translation for t in traces], context
        assert last["tgt_tokens"] == [t.target_tokens for t in traces], context
        for p, t in enumerate(traces):
            a = tl.alpha_of(tl.updates[-1], p)
            if context == "fixed":
                assert a is None  # RNNencdec: no α is stored, none invented
            else:
                np.testing.assert_allclose(a, [s.alpha for s in t.steps], atol=1e-3)


def test_resumed_timeline_equals_an_uninterrupted_one(tmp_path: Path) -> None:
    args = [*TINY_ARGS, "--dropout", "0.3", "--save-every", "3", "--epochs", "8", "--batch-size", "8",
            "--timeline"]
    train.main([*args, "--out", str(tmp_path / "straight"), "--max-updates", "17"])
    broken = tmp_path / "broken"
    train.main([*args, "--out", str(broken), "--max-updates", "8"])  # stops at 8, off the schedule
    assert timeline.read(broken / timeline.FILE_NAME).updates[-1] == 8
    train.main([*args, "--out", str(broken), "--max-updates", "17", "--resume"])
    a = timeline.read(tmp_path / "straight" / timeline.FILE_NAME)
    b = timeline.read(broken / timeline.FILE_NAME)
    assert a.updates == b.updates == [*timeline.schedule(15), 17]
    assert a.entries == b.entries and a.probes == b.probes
    assert a.alpha.keys() == b.alpha.keys()
    for k in a.alpha:
        np.testing.assert_array_equal(a.alpha[k], b.alpha[k])


# -- views -------------------------------------------------------------------------------------


def test_changed_words_by_hand() -> None:
    assert V.changed_words(["un", "homme", "."], ["un", "chien", "noir", "."]) == [
        ("un", False), ("chien", True), ("noir", True), (".", False)]
    assert V.changed_words([], ["a"]) == [("a", True)]
    assert V.nearest([0, 5, 10], 7) == 5 and V.nearest([0, 5, 10], 8) == 10


def test_note_head_stops_at_the_first_colon_or_semicolon_outside_parentheses() -> None:
    assert V.note_head("A GPU run (not shipped: yet): trained for 5 minutes; more later") == \
        "A GPU run (not shipped: yet)"
    assert V.note_head("A retraining (seed 1234) recorded on the CPU; best BLEU 51.65 (the shipped: 51.82)") == \
        "A retraining (seed 1234) recorded on the CPU"
    assert V.note_head("No colon at all") == "No colon at all"


def test_translation_is_shown_as_written_with_changed_words_marked() -> None:
    """A truecased model's tokens are « elle lut » but it writes « Elle lut »: the page shows what it writes."""
    tl = timeline.Timeline(header={"probes": [{"source": "She read .", "src_tokens": ["She", "read", ".", "</s>"],
                                               "kind": "preset"}]})
    for u, text, toks in [(0, "Il lit.", ["il", "lit", "."]), (5, "Elle lut.", ["elle", "lut", "."])]:
        tl.add({"update": u, "train_loss": 1.0, "translations": [text], "tgt_tokens": [[*toks, "</s>"]]}, {})
    assert V.translation_markdown(tl, 0, 0) == r"Il lit\."  # markdown-escaped
    assert V.translation_markdown(tl, 7, 0) == r":blue-background[**Elle**] :blue-background[**lut\.**]"


def test_curves_and_exports_of_a_hand_made_timeline() -> None:
    tl = _hand_made()
    frame = V.curves_frame({"RNNsearch": tl}, 0)
    loss = frame[frame["metric"] == "training loss"]
    assert loss["update"].tolist() == [0, 5, 8] and loss["value"].tolist() == [9.0, 4.0, 1.0]
    ent = frame[(frame["metric"] == "α entropy") & (frame["series"] == "this sentence")]
    assert ent["value"].tolist() == pytest.approx([1.0, math.log(2) / math.log(3), 0.0])
    assert "AER" not in set(frame["metric"])  # None is not plotted
    assert V.translation_markdown(tl, 6, 0) == ":blue-background[**t5**]"  # update 6: the entry of 5, new since 0
    out = V.export_frame({"RNNsearch": tl}, 0)
    assert out["translation"].tolist() == ["t0", "t5", "t8"]


def test_shipped_timelines_are_small_readable_and_labelled() -> None:
    shipped = sorted((ROOT / "checkpoints").glob("*" + timeline.SUFFIX))
    for path in shipped:
        assert path.stat().st_size <= 2 * 1024 * 1024, path.name  # the lead's limit for checkpoints/
        tl = timeline.read(path)
        assert tl.updates[0] == 0 and tl.updates == sorted(set(tl.updates)), path.name
        assert tl.header["note"], path.name  # says what run it is (a demo is labelled as one)
        if not path.with_name(path.name[: -len(timeline.SUFFIX)] + ".pt").exists():  # the GPU pair's, for now
            assert "not shipped" in tl.header["note"], path.name  # the page says the stepper cannot load it
    assert all(p.search and p.encdec for p in timeline.find(ROOT / "checkpoints"))  # shipped as pairs


# -- the page ----------------------------------------------------------------------------------


def page(monkeypatch: pytest.MonkeyPatch, ckpts: Path, **params: str) -> AppTest:
    monkeypatch.setenv("RNNSEARCH_CHECKPOINTS", str(ckpts))
    at = app_at("pages/watch_it_learn.py", TIMEOUT)
    at.query_params.update(params)
    at.run()
    assert not at.exception, at.exception
    return at


def test_page_says_how_to_record_when_no_timeline_is_shipped(monkeypatch: pytest.MonkeyPatch,
                                                              tmp_path: Path) -> None:
    at = page(monkeypatch, tmp_path)
    assert any("No training timeline" in i.value and "train.py --timeline" in i.value for i in at.info)


def test_page_shows_both_models_at_the_chosen_update(monkeypatch: pytest.MonkeyPatch, tl_dir: Path) -> None:
    search = timeline.read(tl_dir / "tiny-en-fr-rnnsearch.timeline.npz")
    at = page(monkeypatch, tl_dir, wl_update="20", wl_probe=V.probe_labels(search)[2])
    slider = at.get("select_slider")[0]
    assert slider.value == 20 and list(slider.options) == [str(u) for u in search.updates]
    text = "\n".join(m.value for m in at.markdown)
    assert "RNNsearch" in text and "RNNencdec" in text
    assert V.translation_markdown(search, 20, 2) in text
    assert any("RNNencdec has no α" in i.value for i in at.info)
    heat = [c for c in at.get("vega_lite_chart")]
    assert len(heat) == 2  # RNNsearch's α at update 20, and the curves
    assert [d.label for d in at.get("download_button")] == ["Curves CSV", "This frame JSON"]


def test_every_key_the_page_names_is_listed() -> None:
    """ui/timeline/state.py lists every key of the page and its package (issue 49), each prefixed ``wl_``."""
    files = [ROOT / "pages" / "watch_it_learn.py", *sorted((ROOT / "ui" / "timeline").glob("*.py"))]
    named = {k for path in files for k in literal_keys(path)} | constants(S)
    assert S.PREFIX == "wl_" and all(k.startswith(S.PREFIX) for k in S.KEYS)
    assert S.listed("wl_heat_RNNsearch") and S.listed("wl_dl_1") and not S.listed("wl_heat") and not S.listed("x")
    assert len(named) >= 8 and sorted(k for k in named if not S.listed(k)) == []


def test_every_key_the_page_makes_is_listed(monkeypatch: pytest.MonkeyPatch, tl_dir: Path) -> None:
    """The page's default view, a deep link to update 20 in presentation mode, then Play: every key in the
    session's state is listed in ui/timeline/state.py (none comes from app.py or ui/common here)."""
    seen = created(page(monkeypatch, tl_dir))
    at = page(monkeypatch, tl_dir, wl_update="20", wl_present="true")
    at.toggle(key="wl_play").set_value(True).run()
    seen |= created(at)
    assert not at.exception and {"wl_update", "wl_run", "wl_probe", "wl_present", "wl_play"} <= seen
    assert sorted(k for k in seen if not S.listed(k)) == []


def test_the_shipped_rnnencdec_timeline_ends_with_what_the_shipped_checkpoint_writes() -> None:
    """The Multi30k RNNencdec timeline was recorded by retraining the shipped recipe, whose final weights
    rounded to fp16 are the shipped checkpoint's: its last entry's greedy translations of every probe are
    what the shipped checkpoint writes now."""
    ckpt = ROOT / "checkpoints" / "m30k-en-fr-rnnencdec.pt"
    tl = timeline.read(ROOT / "checkpoints" / "m30k-en-fr-rnnencdec.timeline.npz")
    last = tl.entries[-1]
    assert last["update"] == 4050 == checkpoint.read_checkpoint(ckpt)["meta"]["updates"]
    traces = decoding.greedy(checkpoint.load(ckpt), [p["source"] for p in tl.header["probes"]])
    assert [t.translation for t in traces] == last["translations"]
    assert [t.target_tokens for t in traces] == last["tgt_tokens"]


def test_the_everyday_timeline_ends_at_the_shipped_30k_checkpoint() -> None:
    """The 30k RNNsearch's GPU timeline is cut at the update whose weights ship (3,000): its last entry's
    greedy translations are what the shipped checkpoint writes: 21 of its 24 probes token for token (the
    timeline decoded the run's fp32 weights, the checkpoint is fp16 with int8 vocabulary matrices, which moves
    a word of one short probe and the ends of two of 39 and 86 words). The segment-1 timeline it replaces
    (update 1,480) matched 6 of them."""
    ckpt = ROOT / "checkpoints" / "europarl-tatoeba-en-fr-rnnsearch-30k.pt"
    tl = timeline.read(ROOT / "checkpoints" / "europarl-tatoeba-en-fr-rnnsearch-30k.timeline.npz")
    last = tl.entries[-1]
    assert last["update"] == 3000 == checkpoint.read_checkpoint(ckpt)["meta"]["updates"]
    assert "shipped" in tl.header["note"] and "not shipped" not in tl.header["note"]
    traces = decoding.greedy(checkpoint.load(ckpt), [p["source"] for p in tl.header["probes"]])
    same = [t.target_tokens == want for t, want in zip(traces, last["tgt_tokens"], strict=True)]
    assert sum(not s for s in same) <= 3, [t.translation for t, s in zip(traces, same) if not s]
    assert traces[0].translation == last["translations"][0] == "Elle lut la vieille lettre lentement."
