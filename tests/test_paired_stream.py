"""The paired page's whole-split run streams: ``W.decode(..., keep=…)`` keeps what ``keep`` takes of each
trace (the translation) as the chunks go by, and no trace outlives its chunk (weak references tell)."""

from __future__ import annotations

import gc
import weakref
from typing import Any

import pytest

from ui import widgets as W


class FakeTrace:
    """Stands in for a DecodeTrace (~245 KB each on a real beam-5 run)."""

    def __init__(self, text: str) -> None:
        self.translation = text.upper()


def test_decode_keeps_only_what_keep_takes(monkeypatch: pytest.MonkeyPatch) -> None:
    made: list[weakref.ref] = []

    def chunk(job: Any, part: tuple[str, ...], refs: Any, on_wait: Any = None, say: Any = None) -> list[FakeTrace]:
        out = [FakeTrace(s) for s in part]
        made.extend(weakref.ref(t) for t in out)
        return out

    monkeypatch.setattr(W, "_decode_chunk", chunk)
    sources = [f"s{i}" for i in range(100)]
    kept = W.decode(None, sources, chunk=8, keep=lambda t: t.translation)  # type: ignore[arg-type]
    gc.collect()
    assert kept == [f"S{i}" for i in range(100)] and len(made) == 100
    assert sum(r() is not None for r in made) == 0  # not one trace kept
    whole = W.decode(None, sources, chunk=8)  # type: ignore[arg-type]
    assert [t.translation for t in whole] == kept and sum(r() is not None for r in made) == 100  # the check can fail
