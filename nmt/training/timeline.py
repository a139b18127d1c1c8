"""A training timeline: what the model translates, and where it looks, as training goes on.

``train.py --timeline`` writes ``timeline.npz`` beside ``last.pt`` (recorded by
:mod:`nmt.training.timeline_record`); the "Watch it learn" page reads it with :func:`read`. At update 0 and
at every update of the log-spaced :func:`is_scheduled` schedule (dense early, where alignment
appears: 1, 1.5, 2, 3, 4, 5, 7 × 10^k), and once more where the run stops, an entry holds, for a
fixed set of probe sentences (the presets written for the model pair and about 20 validation
sentences of different lengths), the greedy translation and its α matrix (T_y × T_x, ``</s>`` rows
and columns included), with the training loss, validation BLEU and, for en→fr, the AER on the
Hansards trial set at that update.

File format (``numpy.savez_compressed``, read with ``allow_pickle=False``: loading runs no code):
``header`` and ``entries`` are UTF-8 JSON held in uint8 arrays; ``a{update}_{probe}`` is the α
matrix of a probe at an update, float16 (omitted for models without α). Everything else is plain
data, so the page never loads a model.

Resuming: :func:`rewind` keeps the entries up to the update ``last.pt`` resumes from and drops the
end-of-invocation entries (off the schedule) of earlier invocations, so a resumed run's timeline
equals an uninterrupted one's, each update once.
"""

from __future__ import annotations

import json
import math
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from nmt.text.atomic import atomic_path

FORMAT = "rnnsearch-explorer/timeline/1"
FILE_NAME = "timeline.npz"  # in a run directory, beside last.pt
SUFFIX = ".timeline.npz"  # shipped: checkpoints/NAME.timeline.npz
MANTISSAS_X2 = (2, 3, 4, 6, 8, 10, 14)  # 2 × (1, 1.5, 2, 3, 4, 5, 7): the schedule per decade
MAX_BYTES = 5 * 1024 * 1024  # the budget for one run's timeline


def is_scheduled(update: int) -> bool:
    """Whether ``update`` is on the log-spaced schedule: 0 and m·10^k, m ∈ {1, 1.5, 2, 3, 4, 5, 7}.

    0, 1, 2, 3, 4, 5, 7, 10, 15, 20, 30, 40, 50, 70, 100, 150, … (18 entries up to 300, 25 to 3000)."""
    if update < 0:
        return False
    if update == 0:
        return True
    return any(2 * update == m * 10**k for k in range(len(str(update)) + 1) for m in MANTISSAS_X2)


def schedule(up_to: int) -> list[int]:
    """The scheduled updates from 0 to ``up_to`` (inclusive)."""
    return [u for u in range(up_to + 1) if is_scheduled(u)]


def row_entropy(alpha: np.ndarray) -> np.ndarray:
    """Entropy H_i = −Σ_j α_ij log α_ij (nats) of each row of a (T_y, T_x) α matrix, 0·log 0 = 0.

    Rows are renormalised first (float16 storage leaves them a little off 1). A uniform row over
    T_x positions has H = log T_x, a one-hot row H = 0."""
    a = np.asarray(alpha, dtype=np.float64)
    a = a / np.clip(a.sum(axis=1, keepdims=True), 1e-12, None)
    with np.errstate(divide="ignore", invalid="ignore"):
        terms = np.where(a > 0, a * np.log(a), 0.0)
    return -terms.sum(axis=1)


@dataclass
class Timeline:
    """One run's timeline: its header (run, model, probes) and entries in update order.

    ``header``: format, model (``context``, ``arch``, ``label``), run (options, data, note),
    ``probes`` (kind, name, source, src_tokens, reference). ``entries``: dicts with ``update``,
    ``scheduled``, ``train_loss``, ``bleu``, ``aer`` (None where not measured), ``translations`` and
    ``tgt_tokens`` (one per probe). ``alpha[(update, probe)]``: float16 (T_y, T_x)."""

    header: dict[str, Any]
    entries: list[dict[str, Any]] = field(default_factory=list)
    alpha: dict[tuple[int, int], np.ndarray] = field(default_factory=dict)

    @property
    def updates(self) -> list[int]:
        return [e["update"] for e in self.entries]

    @property
    def probes(self) -> list[dict[str, Any]]:
        return list(self.header.get("probes", []))

    def entry_at(self, update: int) -> dict[str, Any] | None:
        return next((e for e in self.entries if e["update"] == update), None)

    def alpha_of(self, update: int, probe: int) -> np.ndarray | None:
        a = self.alpha.get((update, probe))
        return None if a is None else a.astype(np.float32)

    def add(self, entry: dict[str, Any], alphas: dict[int, np.ndarray]) -> None:
        """Add (or replace) the entry of ``entry["update"]``, keeping update order."""
        u = int(entry["update"])
        self.drop(lambda e: e["update"] == u)
        self.entries.append(entry)
        self.entries.sort(key=lambda e: e["update"])
        for p, a in alphas.items():
            self.alpha[(u, p)] = np.asarray(a, dtype=np.float16)

    def drop(self, gone: Any) -> None:
        """Remove the entries for which ``gone(entry)`` is true, with their α."""
        dead = {e["update"] for e in self.entries if gone(e)}
        self.entries = [e for e in self.entries if e["update"] not in dead]
        self.alpha = {k: v for k, v in self.alpha.items() if k[0] not in dead}

    def rewind(self, update: int) -> None:
        """Prepare to resume at ``update``: drop later entries and earlier end-of-run ones."""
        self.drop(lambda e: e["update"] > update or not e.get("scheduled", True))


def _json_array(obj: Any) -> np.ndarray:
    return np.frombuffer(json.dumps(obj, ensure_ascii=False).encode("utf-8"), dtype=np.uint8)


def write(tl: Timeline, path: str | Path) -> None:
    """Write atomically (the old file or the new one, never half)."""
    path = Path(path)
    arrays = {"header": _json_array({**tl.header, "format": FORMAT}), "entries": _json_array(tl.entries)}
    arrays.update({f"a{u}_{p}": a for (u, p), a in tl.alpha.items()})
    with atomic_path(path) as tmp, open(tmp, "wb") as f:  # synced, then renamed (nmt.text.atomic)
        np.savez_compressed(f, **arrays)


class TimelineError(ValueError):
    """A file that is not a readable timeline; the message is one plain line."""


def read(path: str | Path) -> Timeline:
    """Read a timeline written by :func:`write` (no pickled objects are ever loaded)."""
    path = Path(path)
    try:
        with np.load(path, allow_pickle=False) as z:
            header = json.loads(z["header"].tobytes().decode("utf-8"))
            entries = json.loads(z["entries"].tobytes().decode("utf-8"))
            alpha = {}
            for key in z.files:
                if key.startswith("a") and "_" in key:
                    u, p = key[1:].split("_")
                    alpha[(int(u), int(p))] = z[key]
    except (OSError, ValueError, KeyError, EOFError) as err:
        raise TimelineError(f"{path.name} is not a readable training timeline ({err})") from None
    if header.get("format") != FORMAT:
        raise TimelineError(f"{path.name} is not a training timeline of this format ({header.get('format')!r})")
    return Timeline(header, entries, alpha)


def mean_entropy(tl: Timeline, update: int, probes: list[int] | None = None,
                 relative: bool = True) -> float | None:
    """Mean row entropy of α over the probes' word rows (``</s>`` step left out) at ``update``.

    ``relative``: each row's entropy divided by log T_x (1 = uniform, 0 = one-hot). None without α."""
    entry = tl.entry_at(update)
    vals: list[float] = []
    for p in probes if probes is not None else range(len(tl.probes)):
        a = tl.alpha_of(update, p)
        if entry is None or a is None or a.shape[1] < 2:
            continue
        words = [i for i, t in enumerate(entry["tgt_tokens"][p]) if t != "</s>"]
        if not words:
            continue
        h = row_entropy(a[words])
        vals.extend((h / math.log(a.shape[1])).tolist() if relative else h.tolist())
    return float(np.mean(vals)) if vals else None


@dataclass(frozen=True)
class Shipped:
    """A pair of shipped timelines of one run recipe: RNNsearch and RNNencdec (either may be missing).

    Files are ``NAME.timeline.npz`` in the checkpoint folder; the pair of ``X-rnnsearch-Y`` is
    ``X-rnnencdec-Y``, and ``name`` is ``X-Y`` (e.g. ``m30k-en-fr-short500``)."""

    name: str
    search: Path | None
    encdec: Path | None


def find(directory: str | Path) -> list[Shipped]:
    """The timelines in ``directory`` (files ``*.timeline.npz``), paired by model, sorted by name."""
    pairs: dict[str, dict[str, Path]] = {}
    for path in sorted(Path(directory).glob("*" + SUFFIX)):
        stem = path.name[: -len(SUFFIX)]
        kind = next((k for k in ("rnnsearch", "rnnencdec") if f"-{k}" in stem), "rnnsearch")
        name = stem.replace(f"-{kind}", "", 1)
        pairs.setdefault(name, {})[kind] = path
    return [Shipped(n, p.get("rnnsearch"), p.get("rnnencdec")) for n, p in sorted(pairs.items())]


def summary(tl: Timeline) -> str:
    """One line per entry: update, loss, BLEU, AER, mean α entropy (÷ log T_x), first probe's translation."""
    def num(x: float | None) -> str:
        return "—" if x is None else f"{x:.3f}"

    lines = [f"{tl.header.get('model', {}).get('context', '?')}: {len(tl.entries)} entries, "
             f"{len(tl.probes)} probe sentences"]
    for e in tl.entries:
        first = e["translations"][0] if e["translations"] else ""
        lines.append(f"{e['update']:>7}  loss {num(e['train_loss'])}  BLEU {num(e.get('bleu'))}  "
                     f"AER {num(e.get('aer'))}  H {num(mean_entropy(tl, e['update']))}  | {first}")
    return "\n".join(lines)
