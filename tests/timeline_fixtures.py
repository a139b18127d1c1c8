"""Fixtures of the timeline tests: tiny RNNsearch / RNNencdec runs recorded with ``--timeline``."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

import train
from nmt.training import timeline
from tests.conftest import TINY_ARGS


@pytest.fixture(scope="session")
def tl_runs(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    """Run folders of a tiny RNNsearch and a tiny RNNencdec trained with ``--timeline``."""
    out = {}
    for context in ("attention", "fixed"):
        d = tmp_path_factory.mktemp(f"tl_{context}")
        train.main([*TINY_ARGS, "--context", context, "--out", str(d), "--timeline"])
        out[context] = d
    return out


@pytest.fixture(scope="session")
def tl_dir(tl_runs: dict[str, Path], tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A checkpoint folder holding the two tiny timelines as a pair (and no checkpoint)."""
    d = tmp_path_factory.mktemp("tl_ckpts")
    shutil.copy(tl_runs["attention"] / timeline.FILE_NAME, d / "tiny-en-fr-rnnsearch.timeline.npz")
    shutil.copy(tl_runs["fixed"] / timeline.FILE_NAME, d / "tiny-en-fr-rnnencdec.timeline.npz")
    return d
