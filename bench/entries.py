"""The JSON files of benchmarks that keep one entry per measured setting (a list of objects)."""

from __future__ import annotations

import json
from collections.abc import Sequence
from pathlib import Path
from typing import Any


def upsert(path: str | Path, entry: dict[str, Any], key: Sequence[str]) -> None:
    """Write ``entry`` into the list in ``path``, replacing the entry that agrees with it on every
    field of ``key`` (a rerun of the same setting); the file is created when missing."""
    out = Path(path)
    rows = json.loads(out.read_text(encoding="utf-8")) if out.exists() else []
    rows = [r for r in rows if [r.get(k) for k in key] != [entry.get(k) for k in key]] + [entry]
    out.write_text(json.dumps(rows, indent=1, ensure_ascii=False) + "\n", encoding="utf-8")
