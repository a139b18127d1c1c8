"""Shared fixtures: a tiny model overfitted on 20 fixture pairs, and the real corpora when present.

``tests/fixtures/tiny``: ``train`` holds the 20 pairs the tiny models learn by heart, ``val`` the
first 5 of them (model selection only), and ``test`` 20 held-out pairs the models never saw:
pairs 1-10 recombine training words only, pairs 11-20 also use words outside the training
vocabularies ("camel", "chameau", ...), so a test score can show memorising, not hide it.
"""

from __future__ import annotations

import functools
import os
import re
import shutil
from pathlib import Path

import pytest
import torch

import train
from nmt.models import checkpoint

# The tier timing (CI_TIMES_JSON), the solo marker's lock between xdist workers, the heaviest files first
# (so both workers end together), and the browser tier's per-worker Chromium and server (session fixtures,
# defined once here so each worker starts them once).
pytest_plugins = ["tests.tier_times", "tests.solo", "tests.file_order", "tests.chromium"]

ROOT = Path(__file__).resolve().parent.parent

if os.environ.get("PYTEST_XDIST_WORKER"):  # one worker per core (-n 2 on CI's 2 cores): one intra-op thread
    torch.set_num_threads(1)  # each, as the app and the tools use, rather than two workers × two threads


def _scan_components_once() -> None:
    """Streamlit's AppTest scans every installed distribution's metadata for components at each new AppTest
    (about half a second a test, ~40 % of the AppTest tier); the installed packages do not change during a
    run, so each process scans once (the scan is looked up by name at each call, so the cached one is used)."""
    from streamlit.components.v2 import manifest_scanner

    if not hasattr(manifest_scanner.scan_component_manifests, "cache_info"):
        manifest_scanner.scan_component_manifests = functools.cache(manifest_scanner.scan_component_manifests)


_scan_components_once()


def _compile_scripts_once() -> None:
    """AppTest gives every run a new ScriptCache, so each run parsed, rewrote (Streamlit's magic) and compiled
    ``app.py`` and the page it opens again: about a third of a run's time. A server keeps one cache for its
    life; here one is kept per process, keyed by the file's path, size and modification time (a file written
    again compiles again). The code objects are immutable, and each run still executes them afresh."""
    from streamlit.runtime.scriptrunner.script_cache import ScriptCache

    if getattr(ScriptCache.get_bytecode, "shared", False):
        return
    fresh = ScriptCache.get_bytecode
    compiled: dict[tuple[str, int, int], object] = {}

    def get_bytecode(self: ScriptCache, script_path: str) -> object:
        path = os.path.abspath(script_path)
        stat = os.stat(path)
        key = (path, stat.st_size, stat.st_mtime_ns)
        if key not in compiled:
            compiled[key] = fresh(self, script_path)
        return compiled[key]

    get_bytecode.shared = True  # type: ignore[attr-defined]
    ScriptCache.get_bytecode = get_bytecode  # type: ignore[method-assign]


_compile_scripts_once()

FIXTURES = ROOT / "tests" / "fixtures"
TINY_DATA = FIXTURES / "tiny"

TINY_ARGS = [
    "--data", str(TINY_DATA), "--emb-dim", "32", "--hidden-dim", "64", "--attn-dim", "32",
    "--maxout-dim", "32", "--epochs", "60", "--batch-size", "10", "--lr", "0.01", "--min-freq", "1",
    "--valid-every", "100000", "--no-progress", "--threads", "1", "--amp", "off", "--log-every", "10",
]


def plain(text: str) -> str:
    """Shown Markdown with its backslash escapes undone (the text a visitor reads)."""
    return re.sub(r"\\(.)", r"\1", text)


def shared_data_dir() -> Path | None:
    """The real corpora: ``data/`` in the repository, else ``../shared/data`` beside it."""
    for cand in (ROOT / "data", ROOT.parent / "shared" / "data"):
        if (cand / "multi30k").is_dir():
            return cand
    return None


@pytest.fixture(scope="session")
def tiny_run(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """Run directory of a tiny RNNsearch trained to near-zero loss on the 20 fixture pairs."""
    out = tmp_path_factory.mktemp("tiny_run")
    train.main([*TINY_ARGS, "--out", str(out)])
    return out


@pytest.fixture(scope="session")
def tiny_ckpt(tiny_run: Path) -> Path:
    return tiny_run / "best.pt"


@pytest.fixture(scope="session")
def tiny_lm(tiny_ckpt: Path) -> checkpoint.LoadedModel:
    return checkpoint.load(tiny_ckpt)


@pytest.fixture(scope="session")
def tiny_rev_ckpt(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A tiny French→English RNNsearch: the same 20 fixture pairs read the other way (``--src fr --tgt en``)."""
    out = tmp_path_factory.mktemp("tiny_rev_run")
    train.main([*TINY_ARGS, "--src", "fr", "--tgt", "en", "--out", str(out)])
    return out / "best.pt"


@pytest.fixture(scope="session")
def tiny_checkpoint_dir(tiny_ckpt: Path, tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A checkpoints/ folder with a tiny RNNsearch and a tiny RNNencdec (same vocabularies)."""
    d = tmp_path_factory.mktemp("ckpts")
    shutil.copy(tiny_ckpt, d / "tiny-en-fr-rnnsearch.pt")
    enc = tmp_path_factory.mktemp("tiny_encdec")
    train.main([*TINY_ARGS, "--context", "fixed", "--out", str(enc)])
    shutil.copy(enc / "best.pt", d / "tiny-en-fr-rnnencdec.pt")
    return d


@pytest.fixture(scope="session")
def real_data() -> Path:
    d = shared_data_dir()
    if d is None:
        pytest.skip("real corpora not present (see README: getting the data)")
    return d


# The stepper page's AppTests (tests/test_app_stepper*.py) read the tiny pair through the environment.
@pytest.fixture
def ckpt_dir(tiny_checkpoint_dir: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.setenv("RNNSEARCH_CHECKPOINTS", str(tiny_checkpoint_dir))
    return tiny_checkpoint_dir


@pytest.fixture
def search_lm(ckpt_dir: Path) -> checkpoint.LoadedModel:
    return checkpoint.load(ckpt_dir / "tiny-en-fr-rnnsearch.pt")
