"""Streamlit pieces shared by the analysis pages: pickers, cached decoding, downloads.

The pages keep their state in the URL by binding each control to a query parameter
(``bind="query-params"``, the control's key being the parameter's name), so a copied URL reopens
the same view. Decoding runs through :func:`decode`, cached per checkpoint file and input with
``st.cache_data``, in chunks so long lists show a progress bar; per-sentence results of corpus-wide
work are kept for every visitor in a :class:`SharedStore` (:func:`cached_items`). The model is loaded
once per process by :func:`ui.common.models.load_model`. Nothing here computes model internals. A sentence
the visitor types goes to the pair trained for everyday sentences on every page by one rule,
:func:`ui.common.typed.on_typed`; the pickers here count a choice by hand (:func:`ui.common.typed.hand_picked`).
"""

from __future__ import annotations

import re
from collections.abc import Callable, Hashable, Sequence
from dataclasses import dataclass
from typing import Any, TypeVar

import streamlit as st

from nmt.decoding import search as decoding
from nmt.decoding.trace import DecodeTrace
from nmt.explanation.align import Links, read_links
from nmt.models import provenance
from nmt.models.checkpoint import CheckpointError, LoadedModel
from nmt.text import corpora
from nmt.text.corpora import Split, gold_files, gold_turned
from nmt.text.data import corpus_file, read_parallel
from ui.common import checkpoint_files, heavy, models, search_rules, user_models
from ui.common.typed import hand_picked
from ui.figures.common import FONT, chart_png, chart_svg, md, model_caption, readable

BIND = "query-params"
T = TypeVar("T")
CHUNK = 16

# ----------------------------------------------------------------------------------------------
# Data directory and checkpoints
# ----------------------------------------------------------------------------------------------


@st.cache_data(show_spinner=False, ttl=60, max_entries=16)
def _find_splits(roots: tuple[corpora.DataRoot, ...], src: str, tgt: str) -> list[Split]:
    """Cached :func:`nmt.text.corpora.find_splits` (folders are walked again at most once a minute)."""
    return corpora.find_splits(roots, src, tgt)


def corpus_splits(src: str, tgt: str) -> list[Split]:
    """The ``src``→``tgt`` splits under the configured data roots."""
    return _find_splits(tuple(corpora.configured_roots()), src, tgt)


def _root_shown(root: corpora.DataRoot) -> str:
    """A data root as the pages name it: data/ and the built-in sets by their project-relative folder,
    the allow-list's roots by their name (their folders may lie outside the project)."""
    if root.name == corpora.BUILTIN_NAME:
        return f"{corpora.shown(root.path)} (built-in)"
    return corpora.shown(root.path) if root.name == "data" else root.name


def roots_note() -> str:
    """Where corpora are read from, in words fit to show (no absolute server paths)."""
    names = ", ".join(md(_root_shown(r)) for r in corpora.configured_roots())
    return (f"Corpora are read only from the configured data folders and the built-in evaluation sets ({names}; "
            f"set by the {corpora.ENV_VAR} variable and configs/data\\_roots.toml). To use other text, upload it.")


def load_lm(ckpt: models.CheckpointInfo) -> LoadedModel | None:
    """The shared model of a checkpoint, or ``None`` after an error message if it cannot be read."""
    try:
        lm = models.load(ckpt)
    except CheckpointError as err:  # a damaged or foreign file: say so in one line
        st.error(md(str(err)), icon=":material/error:")
        return None
    if note := models.unverified_note(lm):
        st.warning(md(note), icon=":material/gpp_maybe:")
    return lm


def no_checkpoints() -> None:
    """The message shown when the checkpoint folder holds no model."""
    st.error(f"No checkpoints found in {md(corpora.shown(models.checkpoint_dir()))}.")
    st.markdown(
        "Copy a trained model there, e.g. `cp runs/m30k-en-fr-rnnsearch/best.pt "
        "checkpoints/m30k-en-fr-rnnsearch.pt`, or point the environment variable "
        f"`{models.ENV_VAR}` at a folder of `.pt` checkpoints.")
    left_out_note(st)  # a folder of bad files only: why each was left out


def all_checkpoints() -> list[models.CheckpointInfo]:
    """Every checkpoint of the catalogue, RNNsearch models first within each group."""
    return [c for g in user_models.all_groups() for c in g.members]


def kind_label(c: models.CheckpointInfo) -> str:
    """``file.pt (RNNsearch)``, ``(RNNencdec)`` or ``(Luong 2015, local-p, general, input feeding)``:
    what the checkpoint is, read from its config."""
    return f"{c.name} ({models.describe(c)['model']})"


def checkpoint_picker(key: str, label: str = "Model", container: Any = None) -> models.CheckpointInfo | None:
    """A checkpoint select box bound to the URL (default: the default group's RNNsearch)."""
    groups = user_models.all_groups()
    ckpts = [c for g in groups for c in g.members]
    if not ckpts:
        no_checkpoints()
        return None
    by_name = {c.name: c for c in ckpts}
    group = models.default_group(groups)
    default = (group.search or group.encdec) if group is not None else None
    names = list(by_name)
    index = names.index(default.name) if default is not None and default.name in names else 0
    box = container if container is not None else st.sidebar
    name = box.selectbox(label, names, index=index, key=key, bind=BIND, on_change=hand_picked(key),
                         format_func=user_models.labeller(groups),
                         help="Checkpoint files in the checkpoint folder (RNNsearch and RNNencdec), then "
                              f"“{user_models.LABEL}”, the folder of your own models.")
    chosen = by_name.get(name or names[index], by_name[names[index]])
    box.caption(md(models.origin(chosen)))
    search_rules.toggle(chosen, key.removesuffix("_model") + "_app_rules", box)  # an imported model's rules
    box.caption(kind_label(chosen))
    left_out_note(box)
    return chosen


def left_out_note(box: Any) -> None:
    """Under a picker: each file of the checkpoint folder left out of it, and why (one line each)."""
    for line in checkpoint_files.notes(models.checkpoint_dir()) + user_models.notes():
        box.caption(md(line))


def group_picker(key: str, container: Any = None) -> models.ModelGroup | None:
    """A model-group select box (an RNNsearch and its RNNencdec twin) bound to the URL."""
    groups = user_models.all_groups()
    if not groups:
        no_checkpoints()
        return None
    by_name = {g.name: g for g in groups}
    default = models.default_group(groups)
    names = list(by_name)
    index = names.index(default.name) if default is not None else 0
    box = container if container is not None else st.sidebar
    name = box.selectbox("Model pair", names, index=index, key=key, bind=BIND, on_change=hand_picked(key),
                         format_func=user_models.labeller(groups),
                         help="An RNNsearch and an RNNencdec paired by name: "
                              f"<name>-rnnsearch.pt / <name>-rnnencdec.pt; then “{user_models.LABEL}”.")
    chosen = by_name.get(name or names[index], by_name[names[index]])
    meta = models.read_meta(str(chosen.members[0].path), chosen.members[0].mtime)
    if provenance.imported(meta):  # our own pairs: the caption below already names their data
        box.caption(md(provenance.origin(meta)))
        search_rules.toggle(chosen.members[0], key.removesuffix("_model") + "_app_rules", box)
    box.caption(md(model_caption([models.describe(c) for c in chosen.members])))
    left_out_note(box)
    return chosen


# ----------------------------------------------------------------------------------------------
# Cached decoding
# ----------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class Job:
    """What to decode with: a checkpoint file, a decoding method and its options."""

    path: str
    mtime: float
    method: str  # greedy | forced | beam
    context: str | None = None
    pretokenized: bool = False
    beam: int = 1
    n_best: int = 1
    length_norm: str = "length"
    gnmt_alpha: float = 0.6
    topk: int = 1
    toolkit_rules: bool = True  # an imported model: its toolkit's search rules (nmt.decoding.toolkit)


def job_for(ckpt: models.CheckpointInfo, method: str, **options: Any) -> Job:
    """A decoding job for a catalogue checkpoint, by the search rules its picker's switch chose
    (:func:`ui.common.search_rules.toolkit_rules`)."""
    return Job(str(ckpt.path), ckpt.mtime, method, **{"toolkit_rules": search_rules.toolkit_rules(ckpt), **options})


def decode_now(job: Job, sources: Sequence[str], refs: Sequence[str] | None = None) -> list[DecodeTrace]:
    """Decode ``sources`` now, uncached; raises :class:`nmt.decoding.search.InputError`."""
    lm = models.load_model(job.path, job.mtime)
    if job.method == "greedy":
        return decoding.greedy(lm, list(sources), context=job.context, topk=job.topk,
                               toolkit_rules=job.toolkit_rules)
    if job.method == "forced":
        assert refs is not None
        return decoding.forced(lm, list(sources), list(refs), context=job.context, topk=job.topk,
                               pretokenized=job.pretokenized)
    if job.method == "beam":
        return decoding.beam_search(lm, list(sources), beam=job.beam, n_best=job.n_best,
                                    length_norm=job.length_norm, gnmt_alpha=job.gnmt_alpha, context=job.context,
                                    topk=job.topk, record_beam=True, toolkit_rules=job.toolkit_rules)
    raise ValueError(f"unknown decoding method {job.method!r}")


def _decode_chunk(job: Job, sources: tuple[str, ...], refs: tuple[str, ...] | None,
                  on_wait: Callable[[], None] | None = None,
                  say: Callable[[str], None] | None = None) -> list[DecodeTrace]:
    """Decode one chunk, kept per job and input in the byte-bounded "decode" store and run once at a
    time (a second session asking for it waits for the first's result); with ``say``, a heavy job that
    runs in one of the server's slots (:func:`heavy_slot`). Raises :class:`nmt.decoding.search.InputError`."""
    compute = (lambda: decode_now(job, sources, refs)) if say is None else (
        lambda: in_slot(say, lambda: decode_now(job, sources, refs)))
    return heavy.memo(heavy.store("decode"), heavy.FLIGHT, ("decode", job, sources, refs), compute, on_wait)


def decode(job: Job, sources: Sequence[str], refs: Sequence[str] | None = None, label: str | None = None,
           chunk: int = CHUNK, heavy_job: bool = False) -> list[DecodeTrace]:
    """Traces of ``sources`` (and ``refs`` for forced decoding), chunk by chunk (each cached) with a
    progress bar: a second call with the same inputs returns at once. ``heavy_job`` (a button's corpus
    work): each chunk runs in one of the server's heavy-job slots, queued with a message while all are taken.
    (A whole split's run that keeps only translations streams through :mod:`ui.paired.run` instead.)"""
    sources, refs_t = list(sources), None if refs is None else list(refs)
    if not sources:
        return []
    label = label or "Translating"
    bar = st.progress(0.0, text=label) if heavy_job or len(sources) > chunk else None
    out: list[DecodeTrace] = []
    try:
        for k in range(0, len(sources), chunk):
            part = tuple(sources[k : k + chunk])
            at = k / len(sources)
            traces = _decode_chunk(
                job, part, None if refs_t is None else tuple(refs_t[k : k + chunk]),
                on_wait=None if bar is None else lambda at=at: bar.progress(at, text=f"{label}: {WAITING}"),
                say=None if bar is None or not heavy_job else lambda text, at=at: bar.progress(at, text=text))
            out.extend(traces)
            if bar is not None:
                done = min(len(sources), k + chunk)
                bar.progress(done / len(sources), text=f"{label} ({done}/{len(sources)})")
    finally:
        if bar is not None:
            bar.empty()
    return out


SharedStore = heavy.ByteLRU  # a map shared by every session, bounded in bytes (ui/common/heavy.py)
WAITING = "another visitor started the same computation; showing its result when it is done"


def shared_store(name: str) -> heavy.ByteLRU:
    """The process-wide store called ``name`` (results computed once for every visitor), bounded by its
    byte budget in :data:`ui.common.heavy.BUDGETS`."""
    return heavy.store(name)


def in_slot(say: Callable[[str], None], fn: Callable[[], T]) -> T:
    """``fn()`` in one of the server's heavy-job slots (:data:`ui.common.heavy.SLOTS`, ``$RNNSEARCH_HEAVY_JOBS`` at
    once). While all are taken, ``say`` shows who runs and how many wait, again every second: each
    update is where Streamlit stops the wait if the visitor changes a widget or closes the tab."""
    with heavy.SLOTS.hold(on_queue=lambda running, ahead: say(heavy.queued_message(running, ahead, heavy.SLOTS.n)),
                          poll_s=1.0):
        return fn()


def cached_items(store: SharedStore, keys: Sequence[Hashable], compute: Callable[[list[int]], list[Any]],
                 label: str, chunk: int = CHUNK, heavy_job: bool = False) -> list[Any]:
    """The value of each key; only missing ones are computed (``compute(positions)`` returns their
    values), ``chunk`` at a time under a progress bar. Unlike ``st.cache_data`` of the whole list, a
    changed filter reuses every value already known, and no element runs inside a cached function.
    A chunk runs once at a time (a second session asking for the same keys waits for its values);
    with ``heavy_job``, in one of the server's heavy-job slots (:func:`in_slot`)."""
    out = [store.get(k, None) for k in keys]
    missing = [n for n, v in enumerate(out) if v is None]
    if not missing:
        return out
    bar = st.progress(0.0, text=f"{label} (0/{len(missing)})")

    def run(part: list[int], at: float) -> list[Any]:
        values = in_slot(lambda text: bar.progress(at, text=text), lambda: compute(part)) if heavy_job else \
            compute(part)
        for n, value in zip(part, values, strict=True):
            store.put(keys[n], value)
        return values

    try:
        for k in range(0, len(missing), chunk):
            part, at = missing[k : k + chunk], k / len(missing)
            values = heavy.FLIGHT.run(("items", id(store), tuple(keys[n] for n in part)),
                                      lambda part=part, at=at: run(part, at),
                                      lambda at=at: bar.progress(at, text=f"{label}: {WAITING}"))
            for n, value in zip(part, values, strict=True):
                out[n] = value
            done = min(len(missing), k + chunk)
            bar.progress(done / len(missing), text=f"{label} ({done}/{len(missing)})")
    finally:
        bar.empty()
    return out


# ----------------------------------------------------------------------------------------------
# Downloads
# ----------------------------------------------------------------------------------------------


@dataclass
class Download:
    """One download button: label, data (or a callable making it on click), file name, MIME type."""

    label: str
    data: str | bytes | Callable[[], str | bytes]
    file_name: str
    mime: str


def downloads(items: Sequence[Download], key: str) -> None:
    """A row of download buttons (no rerun on click; callables run only when clicked)."""
    if not items:
        return
    cols = st.columns(len(items))
    for n, (col, item) in enumerate(zip(cols, items)):
        col.download_button(item.label, item.data, file_name=item.file_name, mime=item.mime,
                            key=f"{key}_{n}", on_click="ignore", icon=":material/download:")


def chart_downloads(chart: Any, stem: str) -> list[Download]:
    """PNG and SVG downloads of an altair chart, rendered by vl-convert when clicked."""
    if chart is None:
        return []
    return [Download("PNG", lambda: chart_png(readable(chart)), f"{stem}.png", "image/png"),
            Download("SVG", lambda: chart_svg(readable(chart)), f"{stem}.svg", "image/svg+xml")]


def safe_stem(text: str, limit: int = 40) -> str:
    """A file-name-safe stem from free text."""
    s = re.sub(r"[^A-Za-z0-9]+", "-", text).strip("-").lower()
    return (s[:limit].rstrip("-") or "sentence")


FIT_EXTRA = 90  # px a fitted chart needs beyond its plot's height: its title and the top axis' title


def show_chart(chart: Any, key: str | None = None, fit: bool = False, size: int = FONT,
               keep_height: bool = False) -> None:
    """An altair chart at its own width, or (``fit``) its column's width, with text of ``size`` px;
    ``keep_height`` keeps a fitted chart's plot height (Streamlit's "content" height drew RNNencdec's
    fixed-c band at about 60 % of it, its row labels printed over each other)."""
    plot = getattr(chart, "height", None)
    tall = {"height": plot + FIT_EXTRA} if keep_height and fit and isinstance(plot, int) else {}
    st.altair_chart(readable(chart, size), width="stretch" if fit else "content", key=key, **tall)


def run_button(label: str, key: str, token: str, help: str | None = None,
               on_click: Callable[[], None] | None = None) -> bool:
    """A button that starts a corpus-wide computation (never triggered by a URL).

    True when pressed now, and on later reruns of this session while ``token`` (what would be
    computed, e.g. checkpoint and split) stays the same, so the result stays on screen. ``on_click``
    runs before the rerun a press starts (e.g. a stopped run's mark cleared).
    """
    done_key = f"{key}_done"  # the page's key, so it carries the page's prefix
    if st.button(label, key=key, help=help, type="primary", icon=":material/play_arrow:", on_click=on_click):
        st.session_state[done_key] = token
        return True
    return st.session_state.get(done_key) == token


def input_error(err: Exception) -> None:
    """Show a user-facing decoding problem (never a traceback)."""
    st.error(md(str(err)))


# ----------------------------------------------------------------------------------------------
# Corpora
# ----------------------------------------------------------------------------------------------

MAX_READ = 20000  # lines read from the top of a split (big training files are only sampled)


@heavy.cached("splits")
def _read_split(directory: str, name: str, src: str, tgt: str, limit: int, stamp: float
                ) -> tuple[list[str], list[str]]:
    """Cached :func:`nmt.text.data.read_parallel` (``stamp`` is the files' mtime, so edits re-read)."""
    return read_parallel(directory, name, src, tgt, limit=limit)


def read_split(split: Split, src: str, tgt: str, limit: int = MAX_READ) -> tuple[list[str], list[str]]:
    """The first ``limit`` sentence pairs of a split (cached; re-read when the files change)."""
    try:
        stamp = max(corpus_file(split.directory, split.name, lang).stat().st_mtime for lang in (src, tgt))
    except OSError:
        stamp = 0.0
    return _read_split(str(split.directory), split.name, src, tgt, limit, stamp)


@st.cache_data(show_spinner=False, max_entries=8)
def _read_gold(sure: str, possible: str, stamp: float) -> tuple[list[Links], list[Links]]:
    """Cached Sure and Possible link files."""
    return read_links(sure), read_links(possible)


def read_gold(split: Split, src: str, tgt: str) -> tuple[list[Links], list[Links]]:
    """The Sure and Possible links of a gold split, one set per sentence (cached)."""
    s, p = gold_files(split, src, tgt)
    stamp = max((f.stat().st_mtime for f in (s, p) if f.exists()), default=0.0)
    sure, possible = _read_gold(str(s), str(p if p.exists() else s), stamp)
    if gold_turned(split, src, tgt):  # stored for the other direction: (its source, its target) turned round
        return [{(j, i) for i, j in a} for a in sure], [{(j, i) for i, j in a} for a in possible]
    return sure, possible


def split_picker(splits: Sequence[Split], key: str, label: str = "Corpus split", prefer: Sequence[str] = (),
                 container: Any = None) -> Split:
    """A split select box bound to the URL; ``prefer`` lists labels to default to, in order."""
    labels = [s.label for s in splits]
    index = next((labels.index(p) for p in prefer if p in labels), 0)
    by_label = {s.label: s for s in splits}
    box = container if container is not None else st
    chosen = box.selectbox(label, labels, index=index, key=key, bind=BIND,
                           help="Parallel files NAME.src / NAME.tgt found in the configured data folders, "
                                "then the built-in evaluation sets (evalsets/) for names those folders lack.")
    split = by_label.get(chosen or labels[index], splits[index])
    notes = ["A gold alignment set: pre-tokenised text with Sure/Possible links."] if split.gold else []
    if split.root == corpora.BUILTIN_NAME:
        notes.append("Built-in: shipped in evalsets/ (sources and terms in evalsets/README.md).")
    if notes:
        box.caption(" ".join(notes))
    return split
