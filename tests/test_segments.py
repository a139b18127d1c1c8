"""Training in segments (issue 20, nmt/training/segments.py): ``train.py --init-from CKPT --warmup N`` starts a new
run from a checkpoint's weights (also an exported int8 one) with a fresh optimiser warming up, goes on
with its update and epoch counts, and every checkpoint records the segments of its weights' history."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
import torch

import train
from nmt.models import checkpoint
from nmt.tools import export
from nmt.training.segments import warmup_lr
from tests.conftest import TINY_ARGS, TINY_DATA
from tests.test_train import refused


@pytest.fixture(scope="module")
def first(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The first segment: a tiny run of 6 updates (3 epochs of 2 batches)."""
    out = tmp_path_factory.mktemp("seg") / "first"
    train.main([*TINY_ARGS, "--epochs", "3", "--out", str(out)])
    return out


def _lrs(run: Path) -> dict[int, float]:
    return {r["update"]: r["lr"] for r in map(json.loads, (run / "metrics.jsonl").read_text().splitlines())
            if r["type"] == "train"}


def test_warmup_by_hand() -> None:
    assert [warmup_lr(0.01, k, 4) for k in range(5)] == [0.0025, 0.005, 0.0075, 0.01, None]
    assert warmup_lr(0.01, 0, 0) is None  # no warm-up: the schedule's own rate


def test_a_new_segment_goes_on_from_the_weights_counts_and_history(first: Path, tmp_path: Path) -> None:
    a = checkpoint.read_checkpoint(first / "last.pt")
    assert a["meta"]["updates"] == 6 and a["meta"]["epochs"] == 3
    assert [s["updates"] for s in a["meta"]["segments"]] == [[0, 6]] and a["meta"]["segments"][0]["from"] is None
    # --lr 0: Adam moves nothing, so the new run's weights are exactly the ones it started from
    still = tmp_path / "still"
    train.main([*TINY_ARGS, "--epochs", "4", "--lr", "0", "--init-from", str(first / "last.pt"), "--out", str(still)])
    b = checkpoint.read_checkpoint(still / "last.pt")
    assert all(torch.equal(b["model"][k], v) for k, v in a["model"].items())
    assert (b["meta"]["updates"], b["meta"]["epochs"]) == (8, 4)  # one more epoch of 2 batches, counted on
    assert b["src_vocab"] == a["src_vocab"] and b["tgt_vocab"] == a["tgt_vocab"]
    segs = b["meta"]["segments"]
    assert [s["updates"] for s in segs] == [[0, 6], [6, 8]] and segs[1]["from"] == "last.pt"
    assert segs[0] == a["meta"]["segments"][0] and segs[1]["device"].startswith("cpu")

    # the learning rate of a warm-up over 3 updates, update by update: lr·1/3, lr·2/3, then lr
    warm = tmp_path / "warm"
    train.main([*TINY_ARGS, "--epochs", "5", "--log-every", "1", "--warmup", "3", "--init-from",
                str(first / "last.pt"), "--out", str(warm)])
    lrs = _lrs(warm)
    assert sorted(lrs) == [7, 8, 9, 10]
    assert [lrs[u] for u in (7, 8, 9, 10)] == pytest.approx([0.01 / 3, 0.02 / 3, 0.01, 0.01], rel=1e-12)


def test_a_killed_segment_resumes_as_the_same_segment(first: Path, tmp_path: Path) -> None:
    two = tmp_path / "two"
    train.main([*TINY_ARGS, "--epochs", "4", "--max-updates", "7", "--init-from", str(first / "last.pt"),
                "--out", str(two)])
    train.main([*TINY_ARGS, "--epochs", "4", "--resume", "--out", str(two)])  # --init-from not needed again
    segs = checkpoint.read_checkpoint(two / "last.pt")["meta"]["segments"]
    assert [(s["updates"], s["from"]) for s in segs] == [([0, 6], None), ([6, 8], "last.pt")]


def test_a_segment_stopped_within_an_epoch_goes_on_with_the_batches_it_has_not_seen(tmp_path: Path) -> None:
    one, two = tmp_path / "one", tmp_path / "two"
    train.main([*TINY_ARGS, "--epochs", "3", "--max-updates", "5", "--out", str(one)])  # epoch 3, batch 1 of 2
    meta = checkpoint.read_checkpoint(one / "last.pt")["meta"]
    assert (meta["updates"], meta["epochs"], meta["batch_in_epoch"]) == (5, 2, 1)
    train.main([*TINY_ARGS, "--epochs", "3", "--init-from", str(one / "last.pt"), "--out", str(two)])
    meta = checkpoint.read_checkpoint(two / "last.pt")["meta"]
    assert (meta["updates"], meta["epochs"]) == (6, 3)  # only the epoch's second batch was left


def test_a_segment_starts_from_an_exported_int8_checkpoint(first: Path, tmp_path: Path) -> None:
    shipped = tmp_path / "shipped.pt"
    assert export.main(["--run", str(first), "--name", "seg", "--data", str(TINY_DATA), "--splits", "val", "--beams",
                        "1", "--out", str(shipped), "--results", str(tmp_path / "r.json"), "--int8",
                        "--device", "cpu"]) == 0
    exported = checkpoint.load(shipped).model.state_dict()  # dequantised by the app's own loader
    out = tmp_path / "next"
    train.main([*TINY_ARGS, "--epochs", "4", "--lr", "0", "--init-from", str(shipped), "--out", str(out)])
    b = checkpoint.read_checkpoint(out / "last.pt")
    assert all(torch.equal(b["model"][k], v) for k, v in exported.items())
    assert [s["updates"] for s in b["meta"]["segments"]] == [[0, 6], [6, 8]]
    recorded = json.loads((tmp_path / "r.json").read_text())["models"]["seg"]["training"]
    assert [s["updates"] for s in recorded["segments"]] == [[0, 6]]


def test_a_checkpoint_of_another_model_is_refused(first: Path, tmp_path: Path,
                                                  capsys: pytest.CaptureFixture[str]) -> None:
    src = first / "last.pt"
    base = [*TINY_ARGS, "--epochs", "4", "--init-from", str(src), "--out", str(tmp_path / "b")]
    assert refused(capsys, [*base, "--hidden-dim", "128"]) == (
        f"cannot start from {src}: hidden_dim is 64 in the checkpoint but 128 now")
    assert refused(capsys, [*base, "--context", "fixed"]) == (
        f"cannot start from {src}: context is attention in the checkpoint but fixed now")
    bad = tmp_path / "bad.pt"
    bad.write_bytes(b"not a checkpoint")
    assert refused(capsys, [*TINY_ARGS, "--init-from", str(bad), "--out", str(tmp_path / "c")]).startswith(
        f"cannot start from {bad}: bad.pt is not a valid checkpoint")


def test_the_timeline_of_a_model_trained_in_segments_runs_on(tmp_path: Path) -> None:
    """Issue 23 for the GPU pair: a segment whose folder holds the last segment's timeline appends to it."""
    from nmt.training import timeline

    one, two = tmp_path / "one", tmp_path / "two"
    train.main([*TINY_ARGS, "--epochs", "3", "--timeline", "--timeline-presets", "none", "--out", str(one)])
    first = timeline.read(one / timeline.FILE_NAME).updates
    assert first == [0, 1, 2, 3, 4, 5, 6]
    two.mkdir()
    (two / timeline.FILE_NAME).write_bytes((one / timeline.FILE_NAME).read_bytes())
    train.main([*TINY_ARGS, "--epochs", "6", "--timeline", "--timeline-presets", "none", "--init-from",
                str(one / "last.pt"), "--out", str(two)])
    # the first segment's end (6, off the schedule) gives way as on --resume; log-spaced on, then the end
    assert timeline.read(two / timeline.FILE_NAME).updates == [0, 1, 2, 3, 4, 5, 7, 10, 12]


def test_truecase_check_reads_either_stored_form() -> None:
    from nmt.training.segments import init_problems

    args = {"src": "en", "tgt": "fr"}
    old_form = {"src_lang": "en", "tgt_lang": "fr", "truecase": {"src": {"best": {"my": "my", "tom": "Tom"}}}}
    same = {"src": {"spellings": "my\nTom"}}  # the compact form of the same model
    assert init_problems(old_form, args, same) == []
    other = {"src": {"spellings": "My\nTom"}}  # "my" spelt otherwise: the text would not match
    assert len(init_problems(old_form, args, other)) == 1
    assert len(init_problems({"src_lang": "en", "tgt_lang": "fr"}, args, same)) == 1  # none stored
    damaged = {"src_lang": "en", "tgt_lang": "fr", "truecase": {"src": {"best": 3}}}
    assert len(init_problems(damaged, args, same)) == 1
