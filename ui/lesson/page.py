"""The Lesson page's Streamlit side that is not layout: its clicker script and styles, the models and
traces a stop reads (one decode trace per sentence, cached), Fig. 2's results, and the printed handout
and answer key (built from :mod:`ui.lesson.views_handout`). Used by ``pages/lesson.py``.
"""

from __future__ import annotations

import json
from typing import Any

import altair as alt
import numpy as np
import streamlit as st
import torch

from nmt.decoding.search import prepare_source
from nmt.decoding.trace import DecodeTrace
from nmt.text.data import pad_ids
from ui.common import checkpoint_files, models, search_rules
from ui.common import widgets as W
from ui.figures import unknown as U
from ui.figures.common import FONT_MAIN, chart_svg, md, readable
from ui.figures.heatmaps import fixed_context_chart
from ui.lesson import views as L
from ui.lesson import views_similarity as S
from ui.lesson.content import DEFAULT_LEVEL, FIG2, GROUP, IDEAS, STOPS, Stop
from ui.lesson.teacher import TEACHER, plan_words
from ui.lesson.views_handout import answer_key_html, handout_html

# A guess (or the level) clicked with the mouse keeps the keyboard focus in its group, which takes ← and →
# for itself (the level switch changes level, PageDown does nothing): the clicker's keys would then be lost.
# After a pointer click (a key's click has detail 0, and keeps its focus) the control lets the focus go,
# so ← / → / PageUp / PageDown reach the Back / Next shortcuts. "." is a clicker's other blank-screen key,
# which Streamlit's shortcuts cannot take: it clicks Reveal, as B does. A fixed script, installed once per
# page, with nothing from the user in it.
RELEASE_PILLS = """<script>
if (!window.lessonReleasesPills) {
  window.lessonReleasesPills = true;
  const groups = '[data-testid="stButtonGroup"] button, [data-testid="stRadio"] label, [role="radiogroup"] input, '
    + '[data-testid="stCheckbox"] label';
  document.addEventListener('click', (e) => {
    const hit = e.detail > 0 && e.target.closest && e.target.closest(groups);
    if (hit) setTimeout(() => { if (document.activeElement) document.activeElement.blur(); }, 0);
  }, true);
  document.addEventListener('keydown', (e) => {
    const t = e.target;
    if (e.key !== '.' || e.ctrlKey || e.metaKey || e.altKey) return;
    if (t && (t.isContentEditable || /^(INPUT|TEXTAREA|SELECT)$/.test(t.tagName))) return;
    const b = document.querySelector('.st-key-ls_reveal button');
    if (b && !b.disabled) { e.preventDefault(); b.click(); }
  }, true);
}
</script>"""
# the selected guess pill: white on dark red (7.3:1), not Streamlit's red on pink (3.84:1)
PILL_CSS = ('<style>[data-testid="stButtonGroup"] button[aria-checked="true"], '
            '[data-testid="stButtonGroup"] button[aria-checked="true"] * '
            '{background-color:#a51d24 !important; color:#ffffff !important; border-color:#a51d24 !important}</style>')
KEYS_NOTE = ("Clicker: → or PageDown next · ← or PageUp back · B or . reveals (a clicker's blank-screen keys)"
             " · phones vote: V starts the vote again, S shows the votes")


@st.cache_data(show_spinner=False, max_entries=32)
def annotations(path: str, mtime: float, text: str) -> np.ndarray:
    """The encoder's annotations h_j (source words + ``</s>`` × 2n) of one sentence."""
    lm = models.load_model(path, mtime)
    src = prepare_source(lm, text)
    ids, lengths = pad_ids([src.ids])
    with torch.no_grad():
        h = lm.model.encode(ids.to(lm.device), lengths.to(lm.device)).annotations[0]
    return h.float().cpu().numpy()


def annotations_of(ckpt: models.CheckpointInfo, text: str) -> np.ndarray:
    """The annotations h_j of ``text`` under a checkpoint (cached for every visitor)."""
    return annotations(str(ckpt.path), ckpt.mtime, text)


@st.cache_data(show_spinner=False, max_entries=4)
def read_results(name: str, mtime: float) -> dict[str, Any]:
    """A results file of the checkpoint folder, by its fixed name from the lesson's content."""
    try:
        return json.loads((models.checkpoint_dir() / name).read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return {}


def results(name: str) -> dict[str, Any]:
    """A results file named in the lesson's content (BLEU by length), or {} when it is missing."""
    path = models.checkpoint_dir() / name
    return read_results(name, path.stat().st_mtime) if path.is_file() else {}


def fig2_charts(height: int = 230) -> list[tuple[Any, str]]:
    """Each Fig. 2 chart that has results (plots ``height`` px tall), with its gaps in words (RNNsearch
    minus RNNencdec)."""
    out = []
    for name, test, title, better, worse in FIG2:
        frame = L.fig2_frame(results(name), test)
        chart = L.fig2_chart(frame, title, height=height)
        if chart is not None:
            gaps = L.bleu_gaps(frame, better, worse)
            out.append((chart, f"{L.paper_name(better)} minus {L.paper_name(worse)}: "
                        + " · ".join(f"{b}: {g:+.1f}" for b, g in gaps.items())))
    return out


def model_pair(name: str = GROUP, warn: bool = True) -> models.ModelGroup | None:
    """The checkpoint group a stop was written for (the Multi30k pair; the everyday model for stop 9),
    else the lesson's pair, else the default pair, with a warning (``warn``) and, for a model imported from another
    toolkit, the note saying whose search rules decode it."""
    groups = checkpoint_files.scan(models.checkpoint_dir())
    group = next((g for g in groups if g.name == name and g.search is not None), None)
    if group is None and name != GROUP:
        group = next((g for g in groups if g.name == GROUP and g.search is not None), None)
    if group is None:
        group = models.default_group(groups)
        if group is None or group.search is None:
            if warn:
                W.no_checkpoints()
            return None
    if group.name != name and warn:
        st.warning(f"This stop was written for the {name} models, which are missing: showing {md(group.name)}; "
                   "the narration may not match what this model does.")
    for ckpt in group.members if warn else ():  # an imported model: whose search rules decode it
        if note := search_rules.note(ckpt):
            st.caption(f"{md(ckpt.name)}: {note}")
    return group


def trace_of(ckpt: models.CheckpointInfo, text: str) -> DecodeTrace:
    """The greedy trace of ``text`` (cached for every visitor)."""
    return W.decode(W.job_for(ckpt, "greedy"), [text])[0]


def as_read(ckpt: models.CheckpointInfo, trace: DecodeTrace, stop: Stop, revealed: bool) -> U.Shown:
    """The translation as the class reads it: each ``<unk>`` replaced and marked (:mod:`ui.figures.unknown`),
    except at the row to predict until it is revealed (its replacement would give the answer away)."""
    hold = () if revealed or stop.predict is None or not trace.steps else (min(stop.predict, len(trace.steps) - 1),)
    return U.shown(trace, models.load(ckpt).tgt_tok.detokenize, hold)


def options(stop: Stop, trace: DecodeTrace) -> list[int]:
    """The source positions the class may guess: every one, but the asked word itself at the annotations stop."""
    return [j for j in range(len(trace.src_tokens)) if stop.like is None or j != stop.like[0]]


def question(stop: Stop, group: models.ModelGroup) -> tuple[str, str, list[str]] | None:
    """A stop's question for the phones (its key, the prompt and the words to choose from, in the order of
    :func:`options`), or None where the class predicts nothing."""
    if not stop.asks or not stop.sentence or group.search is None:
        return None
    t = trace_of(group.search, stop.sentence)
    if stop.like is not None:
        prompt = f"Whose annotation is most like that of “{t.src_tokens[stop.like[0]]}”?"
    else:
        prompt = f"Which English word will « {t.steps[min(stop.predict or 0, len(t.steps) - 1)].token} » read?"
    return stop.key, prompt, [t.src_tokens[j] for j in options(stop, t)]


def stepper_link(stop: Stop, revealed: bool) -> str | None:
    """The stepper opened on a stop: its sentence (or, without one, the sentence it names) with the model it
    was shown on, at the row to predict (the words before it; with it once ``revealed``) or the whole
    translation; None when that model is missing."""
    text, name = (stop.sentence, stop.group) if stop.sentence else (stop.stepper or (None, GROUP))
    group = model_pair(name, warn=False)
    if not text or group is None or group.search is None:
        return None
    if stop.predict is not None:
        step = stop.predict + int(revealed)
    else:
        step = len(trace_of(group.search, text).steps)  # the whole translation, its end included
    return L.stepper_link(text, group.name, step)


# ----------------------------------------------------------------------------------------------
# Handout and answer key
# ----------------------------------------------------------------------------------------------


def stop_figure(stop: Stop, group: models.ModelGroup) -> Any:
    """The figure of a stop as printed: the rows so far with the row to predict hidden (energies at the
    energies stop), the bottleneck's RNNencdec beside, the annotations' similarities (the asked word's row
    and column hidden) or Fig. 2; None
    for the wrap-up."""
    assert group.search is not None
    if stop.key == "length":
        charts = [c for c, _ in fig2_charts(height=150)]
        return alt.hconcat(*charts).resolve_scale(color="independent") if charts else None
    if stop.sentence is None:
        return None
    if stop.key == "annotations":
        h = annotations_of(group.search, stop.sentence)
        return S.similarity_chart(trace_of(group.search, stop.sentence).src_tokens, h, cell=26,
                                  probe=stop.like[0] if stop.like else None, revealed=False)
    t = trace_of(group.search, stop.sentence)
    chart = L.lesson_alpha_chart(t, stop.predict, revealed=False, cell=30 if stop.key == "energies" else 22,
                                 quantity="energy" if stop.key == "energies" else "alpha")
    if stop.key == "bottleneck" and group.encdec is not None:  # beside the RNNencdec's one summary
        fixed = fixed_context_chart(trace_of(group.encdec, stop.sentence), title="RNNencdec: one fixed c",
                                    max_width=240)
        return chart if fixed is None else alt.hconcat(chart, fixed)
    return chart


def stop_note(stop: Stop, group: models.ModelGroup) -> str | None:
    """The translation under a stop's figure, with the row to predict held back (its <unk> unreplaced)."""
    if not stop.sentence or group.search is None:
        return None
    note = f"RNNsearch: {as_read(group.search, trace_of(group.search, stop.sentence), stop, False).labelled}"
    if stop.key == "bottleneck" and group.encdec is not None:
        note += f" · RNNencdec: {as_read(group.encdec, trace_of(group.encdec, stop.sentence), stop, False).labelled}"
    return note


def handout() -> str:
    """The handout's HTML: each stop's title, sentence, figure and question, no narration and no answer
    (figures rendered by vl-convert when the download is clicked)."""
    figures, notes = {}, {}
    for stop in STOPS:
        group = model_pair(stop.group, warn=False)
        if group is None or group.search is None:
            continue
        chart = stop_figure(stop, group)
        figures[stop.key] = None if chart is None else chart_svg(readable(chart, FONT_MAIN))
        if (note := stop_note(stop, group)) is not None:
            notes[stop.key] = note
    return handout_html(STOPS, figures, notes, extras={"wrapup": IDEAS})


def model_line(stop: Stop) -> str | None:
    """The model's own answer to a stop's row, from its decode trace (plain text), or None."""
    group = model_pair(stop.group, warn=False)
    if not stop.asks or not stop.sentence or group is None or group.search is None:
        return None
    t = trace_of(group.search, stop.sentence)
    if stop.like is not None:
        v = S.likeness(t.src_tokens, annotations_of(group.search, stop.sentence), stop.like[0], None)
        return S.likeness_text(v, DEFAULT_LEVEL).removesuffix(" No guess was made.")
    step = min(stop.predict or 0, len(t.steps) - 1)
    if stop.key == "energies":
        return L.energy_verdict_text(t, step, None).removesuffix(" No guess was made.")
    return L.verdict_text(L.verdict(t, step, None)).removesuffix(" No guess was made.")


def answer_key() -> str:
    """The answer key's HTML: each stop's question, its answer, and the model's own numbers."""
    lines = {s.key: line for s in STOPS if (line := model_line(s)) is not None}
    if gaps := [g for _, g in fig2_charts()]:
        lines["length"] = " · ".join(gaps)
    return answer_key_html(STOPS, TEACHER, lines, plan={s.key: plan_words(s.key) for s in STOPS})
