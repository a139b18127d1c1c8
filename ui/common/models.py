"""The checkpoint catalogue and the cached model loader of the app.

Checkpoints live in ``checkpoints/`` beside the app, or in the directory named by the environment
variable ``RNNSEARCH_CHECKPOINTS``; the user's own models in a second folder (:mod:`ui.common.user_models`).
An RNNsearch and an RNNencdec trained on the same data are paired by name, ``<prefix>-rnnsearch.pt``
and ``<prefix>-rnnencdec.pt`` (or ``<prefix>-rnnsearch-50.pt`` and ``<prefix>-rnnencdec-50.pt``, group
``<prefix>-50``), into one *model group*;
the bottleneck toggle of the stepper switches between the two. Models are loaded once per process
(``st.cache_resource``) and shared by every session; each session keeps only its own decoding state.

Threads: the server runs torch on ``$RNNSEARCH_THREADS`` intra-op threads, 1 by default (as the
command-line tools, :mod:`nmt.tools.cli`), set when the first model is loaded (:func:`configure_threads`).
Streamlit runs every session in a thread of one process, so sessions already decode side by side;
torch's default of one intra-op thread per core makes each session's small matrix products fan
out over all cores and wait for one another and for everything else on the machine. Measured on
the shared 2-core machine under load: ``nmt.decoding.search.beam_search`` of a 30-word sentence at k = 12
took 3.3–14.6 s with 2 threads against 0.5–0.8 s with 1, a greedy decoder step 20–33 ms against
5–9 ms; switching the stepper to beam search, ``bench/app-stepper-cpu.json``: 3.1 s (1.6 s of CPU)
with 2 threads against 1.1 s (0.4 s of CPU) with 1.
"""

from __future__ import annotations

import math
import os
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import streamlit as st
import torch

from nmt.decoding.toolkit import SearchRules
from nmt.models import checkpoint, provenance
from nmt.models.checkpoint import LoadedModel
from nmt.models.contract import Capabilities
from nmt.models.device import threads_from_env
from nmt.models.kinds import ModelDescription
from nmt.models.provenance import (
    CORPUS_NAMES as CORPUS_NAMES,  # re-exported: pages name corpora through ui.common.models
)
from nmt.models.provenance import data_name as data_name
from nmt.models.registry import capabilities_of, describe_model
from nmt.text.tokenize import LANGUAGE_NAMES
from ui.common.meta_cache import read_meta as read_meta  # re-exported: every page asks ui.common.models
from ui.common.typed_language import known_words

ENV_VAR = "RNNSEARCH_CHECKPOINTS"
DEFAULT_GROUP = "m30k-en-fr"
# Issue 20 item 7: the pair a typed sentence goes to in the stepper (the Multi30k pair keeps its
# presets), once it is in the checkpoint folder: the 30k-word Europarl + Tatoeba pair, trained for
# what people type (shipped by issue 34). Without it in the folder, typed sentences stay on the pair shown.
TYPED_GROUP = "europarl-tatoeba-en-fr-30k"
# Issue 47 item 3: its French→English counterpart (same corpora read the other way); a typed sentence goes to the
# one of these whose source vocabulary knows more of its words (French typed → fr→en), the first on a tie.
TYPED_GROUPS = (TYPED_GROUP, "europarl-tatoeba-fr-en-30k")
FIRST_DIRECTION = "en→fr"  # the app's first pair: the pickers name every other's direction (user_models.label)
ROOT = Path(__file__).resolve().parents[2]


def checkpoint_dir() -> Path:
    """Where the app looks for checkpoints: ``$RNNSEARCH_CHECKPOINTS`` or ``checkpoints/``."""
    env = os.environ.get(ENV_VAR, "").strip()
    return Path(env) if env else ROOT / "checkpoints"


@dataclass(frozen=True)
class CheckpointInfo:
    """One checkpoint file: where it is, which group it belongs to, and what it is."""

    path: Path
    group: str  # name prefix shared by an RNNsearch / RNNencdec pair
    kind: str  # as trained, :class:`nmt.models.kinds.ModelDescription`'s kind: rnnsearch | rnnencdec | luong | mean
    mtime: float
    yours: bool = False  # from the user's own models folder (:mod:`ui.common.user_models`), not the checkpoint folder

    @property
    def name(self) -> str:
        return self.path.name


@dataclass(frozen=True)
class ModelGroup:
    """A checkpoint that attends (``search``: an RNNsearch, or a Luong model) and its twin with a fixed
    context (``encdec``: an RNNencdec); either may be missing."""

    name: str
    search: CheckpointInfo | None
    encdec: CheckpointInfo | None

    @property
    def members(self) -> list[CheckpointInfo]:
        return [c for c in (self.search, self.encdec) if c is not None]

    @property
    def yours(self) -> bool:
        """Whether it comes from the user's own models folder (the picker's "Your models")."""
        return any(c.yours for c in self.members)


@dataclass(frozen=True)
class Choice:
    """What to decode with, decided once: a checkpoint and the context mode to decode it in.

    ``context`` is always the effective mode ("attention", "fixed" or "mean"): the checkpoint's
    own unless the choice overrides it (the frozen-context ablation). Pages pass it to the
    decoder and never derive it again; drawing code reads it back from ``trace.context``.
    """

    ckpt: CheckpointInfo
    context: str
    description: ModelDescription  # what the checkpoint is when decoded in ``context``
    notice: str | None = None  # shown when the toggle could not be honoured as asked
    members: tuple[CheckpointInfo, ...] = ()  # an ensemble's checkpoints (ckpt is the first); () for one model

    @property
    def kind(self) -> str:
        """rnnsearch | rnnencdec | ablation | luong | mean."""
        return self.description.kind

    @property
    def label(self) -> str:
        """One line saying what the model reads at each step."""
        return self.description.label

    @property
    def file_names(self) -> str:
        """The checkpoint's file name, or an ensemble's joined by " + "."""
        return " + ".join(c.name for c in self.members) if self.members else self.ckpt.name


def default_group(groups: list[ModelGroup]) -> ModelGroup | None:
    """The group shown at first launch: the Multi30k one with an RNNsearch, else the first."""
    for g in groups:
        if g.name == DEFAULT_GROUP and g.search is not None:
            return g
    with_search = [g for g in groups if g.search is not None]
    return (with_search or groups or [None])[0]


def typed_group(groups: list[ModelGroup], text: str = "") -> str | None:
    """The pair a newly typed sentence is decoded with, when no pair was chosen by hand: of the
    :data:`TYPED_GROUPS` whose RNNsearch is in the folder, the one whose source vocabulary knows the
    most of ``text``'s words (the first on a tie); None without any (stay on the shown pair)."""
    found = [g for name in TYPED_GROUPS for g in groups if g.name == name and g.search is not None]
    if len(found) < 2 or not text.strip():
        return found[0].name if found else None
    return max(found, key=lambda g: known_words(str(g.search.path), g.search.mtime, text) if g.search else 0).name


def resolve(group: ModelGroup, freeze: bool, ablation: bool) -> Choice:
    """The checkpoint and context mode for the bottleneck toggle (the one place this is decided).

    Off: the RNNsearch, a fresh c_i per word. On: the RNNencdec twin, trained with a fixed c; with
    ``ablation``, the RNNsearch's own weights decoded with c_i frozen (an untrained ablation).
    Missing twins fall back to what exists, with a notice saying so.
    """
    s, e = group.search, group.encdec

    def own(c: CheckpointInfo, notice: str | None = None) -> Choice:
        d = description(c)
        return Choice(c, d.context, d, notice)

    if not freeze:
        if s is not None:
            return own(s)
        assert e is not None
        return own(e, f"Group “{group.name}” has only an RNNencdec checkpoint, so c_i stays frozen.")
    if (ablation or e is None) and s is not None:
        if "fixed" not in capabilities(s).context_modes:  # Luong's: attention only, nothing to freeze
            return own(s, f"{description(s).name} has no fixed-context mode, so c_i cannot be frozen.")
        notice = None if ablation else (
            f"The pair “{group.name}” has no RNNencdec twin of its own; showing its RNNsearch weights with "
            "c_i frozen instead (an untrained ablation).")
        return Choice(s, "fixed", description(s, "fixed"), notice)
    if e is None:  # pragma: no cover - a group always has a member
        raise ValueError(f"group {group.name} is empty")
    return own(e, None if not ablation else
               f"Group “{group.name}” has no RNNsearch checkpoint to ablate; showing the RNNencdec.")


# ----------------------------------------------------------------------------------------------
# Loading (cached per process)
# ----------------------------------------------------------------------------------------------


def direction(ckpt: CheckpointInfo | None) -> str:
    """``en→fr``: the languages a checkpoint translates, from its own record ('' if unknown or unreadable)."""
    if ckpt is None:
        return ""
    langs = read_meta(str(ckpt.path), ckpt.mtime, ("langs",)).get("langs", "")
    return "" if "?" in langs else langs


def source_label(ckpt: CheckpointInfo | None) -> str:
    """A source box's label, in the language the checkpoint reads: ``Source sentence (French)``."""
    src = direction(ckpt).split("→")[0]
    return f"Source sentence ({LANGUAGE_NAMES.get(src, src)})" if src else "Source sentence"


_CONFIG_KEYS = ("config", "args")  # what the two below read of a meta (copying all of it cost 200 files ~0.3 s a view)


def _trained_context(meta: dict[str, Any]) -> str:
    return str(meta.get("config", {}).get("context") or meta.get("args", {}).get("context") or "attention")


def trained_context(path: str, mtime: float) -> str:
    """The context mode a checkpoint was trained with ("attention" when unknown)."""
    return _trained_context(read_meta(path, mtime, _CONFIG_KEYS))


def saved_config(path: str, mtime: float) -> dict[str, Any]:
    """A checkpoint's config with its trained context filled in (older files kept it in ``args``)."""
    meta = read_meta(path, mtime, _CONFIG_KEYS)
    return {**meta.get("config", {}), "context": _trained_context(meta)}


def capabilities(ckpt: CheckpointInfo) -> Capabilities:
    """What ``ckpt``'s model can do (:class:`nmt.models.contract.Capabilities`), from its config, weights unread."""
    return capabilities_of(saved_config(str(ckpt.path), ckpt.mtime))


def origin(ckpt: CheckpointInfo) -> str:
    """Where ``ckpt`` came from, in one line (:func:`nmt.models.provenance.origin`), its weights unread."""
    return provenance.origin(read_meta(str(ckpt.path), ckpt.mtime))


def search_note(ckpt: CheckpointInfo) -> str:
    """For a model imported from another toolkit, the one line saying it decodes by that toolkit's search rules
    (:meth:`nmt.decoding.toolkit.SearchRules.note`); "" for this app's own models."""
    record = read_meta(str(ckpt.path), ckpt.mtime, ("search_rules",)).get("search_rules")
    if not isinstance(record, dict):
        return ""
    try:
        return "Decodes " + SearchRules.from_meta(record).note().removeprefix("decoding ") + "."
    except (TypeError, ValueError):
        return ""


def description(ckpt: CheckpointInfo, context: str | None = None) -> ModelDescription:
    """What ``ckpt`` is when decoded in ``context`` (default: as trained): kind, name, label, colour."""
    return describe_model(saved_config(str(ckpt.path), ckpt.mtime), context, ckpt.path.stem)


def configure_threads() -> int:
    """Set torch's intra-op threads for the server process (``$RNNSEARCH_THREADS``, default 1)."""
    n = threads_from_env()
    if torch.get_num_threads() != n:
        torch.set_num_threads(n)
    return n


@st.cache_resource(show_spinner="Loading the model…", max_entries=16)
def load_model(path: str, mtime: float) -> LoadedModel:
    """The model of a checkpoint file, loaded once per process (``mtime`` reloads a rewritten file).

    Up to 16 are kept (about 0.6 GB for the ten shipped ones): with 8, the comparison page's eight attending
    models alone filled the cache, so going back to an RNNencdec or a Luong model loaded it again.

    The first load also sets the process's torch threads (:func:`configure_threads`)."""
    configure_threads()
    return checkpoint.load(path)


def load(ckpt: CheckpointInfo) -> LoadedModel:
    """The shared, cached model of ``ckpt``."""
    return load_model(str(ckpt.path), ckpt.mtime)


def unverified_note(lm: LoadedModel) -> str | None:
    """What to say beside a model whose weights matched no known digest on loading, else ``None``."""
    if lm.verified:
        return None
    return (f"{Path(lm.path).name} records no SHA-256 digest of its weights, so damage to the file cannot be "
            "detected: its translations may not be what it was trained to write.")


# ----------------------------------------------------------------------------------------------
# Describing checkpoints
# ----------------------------------------------------------------------------------------------


def _num(v: Any) -> float | None:
    return float(v) if isinstance(v, (int, float)) and not isinstance(v, bool) and math.isfinite(v) else None


def _export_bleu(by_decoding: Any) -> list[tuple[str, float]]:
    """(decoding, BLEU) pairs of one split in ``nmt.tools.export``'s shape ``{greedy: {bleu: {score}}}``."""
    if not isinstance(by_decoding, dict):
        return []
    out = []
    for dec, res in by_decoding.items():
        bleu = res.get("bleu") if isinstance(res, dict) else None
        score = _num(bleu.get("score")) if isinstance(bleu, dict) else None
        if score is not None:
            out.append((str(dec), score))
    return out


def format_scores(scores: Any, first_only: bool = False) -> str:
    """A short line from ``meta["scores"]``, whatever its shape: ``nmt.tools.export``'s
    ``{split: {greedy|beam5: {bleu: {score}}}}`` (e.g. "val greedy 51.8 · beam5 53.3"), ``{name: bleu}``
    or other nested dicts. ``first_only``: the first split alone (for a picker label)."""
    if not isinstance(scores, dict):
        return ""
    exported = {split: _export_bleu(v) for split, v in scores.items()}
    if exported and all(exported.values()):
        items = list(exported.items())[:1] if first_only else list(exported.items())
        return "; ".join(f"{split} " + " · ".join(f"{dec} {x:.1f}" for dec, x in decs) for split, decs in items)
    parts = []
    for name, v in scores.items():
        x = _num(v)
        if x is not None:
            parts.append(f"{name} {x:.1f}")
        elif isinstance(v, dict):
            inner = [(k, _num(val)) for k, val in v.items()]
            bleu = next((val for k, val in inner if str(k).lower() in ("bleu", "score") and val is not None), None)
            if bleu is not None:
                parts.append(f"{name} BLEU {bleu:.1f}")
            else:
                sub = format_scores(v)
                if sub:
                    parts.append(f"{name}: {sub}")
    return ", ".join(parts)


def same_corpus_first(meta: dict[str, Any], labels: Sequence[str]) -> list[str]:
    """``labels`` (split labels such as ``europarl-v7-fr-en/test2000q4``) with those from the corpus the
    checkpoint was trained on first, order otherwise kept: a Europarl model is scored on Europarl."""
    td = meta.get("train_data")
    corpus = Path(str(td.get("dir", ""))).name if isinstance(td, dict) else ""
    return sorted(labels, key=lambda label: not (corpus and label.split("/")[0] == corpus))


def describe(ckpt: CheckpointInfo) -> dict[str, Any]:
    """One catalogue row for a checkpoint: file, kind, data, scores and training facts."""
    meta = read_meta(str(ckpt.path), ckpt.mtime)
    valid = _num(meta.get("best_valid_bleu"))
    return {
        "file": ckpt.name,
        "model": description(ckpt).name,
        "languages": meta.get("langs", ""),
        "data": data_name(meta),
        "scores": format_scores(meta.get("scores")) or "—",
        "valid BLEU": f"{valid:.1f}" if valid is not None and valid >= 0 else "—",
        "updates": str(meta["updates"]) if _num(meta.get("updates")) is not None else "—",  # one column type
        "hours": f"{meta['train_seconds'] / 3600:.1f}" if _num(meta.get("train_seconds")) else "—",
    }


SPLIT_WORDS = {"val": "validation", "valid": "validation", "dev": "development"}
DECODING_WORDS = {"greedy": "greedy decoding", "beam5": "beam search, k = 5"}


def score_phrase(scores: Any) -> str:
    """A checkpoint's first recorded BLEU in words, for a picker a class reads: e.g. "BLEU 51.8 with
    greedy decoding, 53.3 with beam search, k = 5, on the validation set" rather than "val greedy 51.8"."""
    for split, by_decoding in (scores.items() if isinstance(scores, dict) else ()):
        decs = _export_bleu(by_decoding)
        if decs:
            where = SPLIT_WORDS.get(str(split), str(split))
            return ("BLEU " + ", ".join(f"{x:.1f} with {DECODING_WORDS.get(d, d)}" for d, x in decs)
                    + f", on the {where} set")
    return format_scores(scores, first_only=True)


def group_label(group: ModelGroup) -> str:
    """The model picker's label of a group: its name, corpus and scores where known."""
    parts = []
    for c in group.members:
        d = describe(c)
        score = score_phrase(read_meta(str(c.path), c.mtime, ("scores",)).get("scores")) or "—"
        if score == "—":
            score = f"valid BLEU {d['valid BLEU']}" if d["valid BLEU"] != "—" else ""
        parts.append(f"{d['model']}" + (f" {score}" if score else ""))
    first = describe(group.members[0]) if group.members else {}
    data = first.get("data") or ""
    return f"{group.name}" + (f" · {data}" if data else "") + (f" · {'; '.join(parts)}" if parts else "")
