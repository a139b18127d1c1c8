"""The Lesson's printable handout and its separate answer key: self-contained, print-styled HTML pages.

Pure: they take the stops and each stop's figure (an SVG document, rendered elsewhere by vl-convert),
note and answer, and return HTML text. Every word of text is escaped; figures are embedded as
``data:`` images so no markup of theirs runs in the page.

The handout is for the class: each stop's title, sentence, figure (the row to predict hidden) and
question with room to write, and no narration or answer (the narration of a prediction names its
answer). Two stops side by side on A4, so ten stops print on three pages; a figure too wide to print its
labels at :data:`MIN_LABEL_PT` or more in half the page spans the page's width (:func:`label_pt` works out
the size a figure's smallest label prints at, from the SVG's own size and the box the page gives it). The
answer key is for the teacher: each question with its answer and the model's own numbers.
"""

from __future__ import annotations

import base64
import re
from collections.abc import Mapping, Sequence
from typing import Protocol

from ui.figures.common import esc
from ui.lesson.content import Stop

TITLE = "Attention in neural machine translation"
CREDIT = ("Bahdanau, Cho &amp; Bengio (2015), “Neural machine translation by jointly learning to align and "
          "translate”")
STYLE = """
@page { size: A4; margin: 12mm; }
body { font-family: Georgia, 'DejaVu Serif', serif; font-size: 10.5pt; color: #111; margin: 0; }
h1 { font-size: 16pt; margin: 0 0 2mm; } h2 { font-size: 12pt; margin: 0 0 1mm; }
.intro { margin: 0 0 3mm; }
.stops { display: grid; grid-template-columns: 1fr 1fr; column-gap: 6mm; row-gap: 4mm; }
.stop { break-inside: avoid; page-break-inside: avoid; border-top: 1px solid #888; padding-top: 2mm; }
.sentence { font-style: italic; margin: 0 0 1mm; }
.note { margin: 1mm 0; }
.question { border: 1.5px solid #111; padding: 1.5mm 2mm; margin: 1.5mm 0 0; }
.answer { border-bottom: 1px solid #888; height: 6mm; }
figure { margin: 0; } img { max-width: 100%; max-height: var(--h, 52mm); height: auto; display: block; }
.stop.wide, .stop.solo { grid-column: 1 / -1; }
.stop.solo { display: grid; grid-template-columns: 1fr 1fr; column-gap: 6mm; align-content: start; }
.stop.solo > * { grid-column: 1; } .stop.solo > figure { grid-column: 2; grid-row: 1 / span 6; }
ol { margin: 1mm 0; padding-left: 5mm; }
.key p { margin: 1mm 0; } .key .stop { padding-bottom: 1mm; }
a { color: #111; text-decoration: none; }
"""


MIN_LABEL_PT = 8.5  # the smallest chart label printed (a little over the 8 pt that reads on paper)
PAGE_MM = 210 - 2 * 12  # A4's width inside the page margins
HALF_MM, HALF_H_MM = (PAGE_MM - 6) / 2, 52  # a figure's usual box: half a row's width, and its height
PX_PER_MM = 96 / 25.4  # CSS pixels


def label_pt(svg: str, box_mm: tuple[float, float]) -> float | None:
    """The size in points at which the SVG's smallest text prints in a box of ``box_mm`` (width, height):
    its font size in CSS pixels, times the image's shrink to fit the box (never enlarged), times 0.75 pt/px;
    None for an SVG without text or size."""
    size = re.search(r'<svg[^>]*?\bwidth="([\d.]+)"[^>]*?\bheight="([\d.]+)"', svg)
    fonts = [float(f) for f in re.findall(r'font-size(?:="|:\s*)([\d.]+)px', svg)]
    if size is None or not fonts:
        return None
    w, h = float(size.group(1)), float(size.group(2))
    shrink = min(1.0, box_mm[0] * PX_PER_MM / w, box_mm[1] * PX_PER_MM / h) if w > 0 and h > 0 else 1.0
    return min(fonts) * shrink * 0.75


def figure_box(svg: str | None) -> tuple[bool, float]:
    """Where a figure prints so that its smallest label is at least :data:`MIN_LABEL_PT`: whether it needs
    the page's width (in half of it the labels would print smaller) and its box's height in mm (52 mm,
    or what the figure needs beyond that)."""
    pt = label_pt(svg, (1e6, 1e6)) if svg else None  # its labels at its own size
    if svg is None or pt is None or pt <= MIN_LABEL_PT:
        return False, HALF_H_MM
    need = MIN_LABEL_PT / pt  # the least shrink that keeps the labels readable
    w, h = (float(v) for v in re.search(r'<svg[^>]*?\bwidth="([\d.]+)"[^>]*?\bheight="([\d.]+)"', svg).groups())
    return w * need / PX_PER_MM > HALF_MM, max(HALF_H_MM, h * need / PX_PER_MM + 0.5)


class Answer(Protocol):
    """A stop's teacher line (:class:`ui.lesson.teacher.Teacher`)."""

    answer: str
    say: str


def svg_image(svg: str, alt: str) -> str:
    """An SVG document as an ``<img>`` with a base64 ``data:`` URL (its markup never joins the page)."""
    data = base64.b64encode(svg.encode("utf-8")).decode("ascii")
    return f'<img alt="{esc(alt)}" src="data:image/svg+xml;base64,{data}">'


def layout(figures: Sequence[str | None]) -> list[str]:
    """Each stop's place in the two-to-a-row grid, in order: ``"half"``, ``"wide"`` (its figure needs the
    page's width) or ``"solo"`` (a half stop that a wide one leaves alone in its row: it spans the row,
    its figure beside its text, so no half row stays empty)."""
    kinds = ["wide" if figure_box(f)[0] else "half" for f in figures]
    run: list[int] = []  # the half stops since the last wide one
    for k, kind in enumerate([*kinds, "wide"]):
        if kind == "wide":
            if len(run) % 2:
                kinds[run[-1]] = "solo"
            run = []
        else:
            run.append(k)
    return kinds


def stop_html(stop: Stop, figure: str | None, note: str | None = None, extra: Sequence[str] = (),
              place: str = "half") -> str:
    """One stop of the handout: title, sentence, figure, note, ``extra`` lines as a list, question, room
    to answer, in its ``place`` (:func:`layout`). No narration: it would answer the question."""
    height = figure_box(figure)[1]
    parts = [f'<section class="stop{"" if place == "half" else " " + place}"><h2>{esc(stop.title)}</h2>']
    if stop.sentence:
        parts.append(f'<p class="sentence">“{esc(stop.sentence)}”</p>')
    if figure:
        parts.append(f'<figure style="--h:{height:.1f}mm">{svg_image(figure, stop.title)}</figure>')
    if note:
        parts.append(f'<p class="note">{esc(note)}</p>')
    if extra:
        parts.append("<ol>" + "".join(f"<li>{esc(x)}</li>" for x in extra) + "</ol>")
    parts.append(f'<div class="question"><strong>Question.</strong> {esc(stop.question)}'
                 '<div class="answer"></div><div class="answer"></div></div></section>')
    return "\n".join(parts)


def _page(title: str, intro: str, body: str) -> str:
    return (f'<!DOCTYPE html>\n<html lang="en"><head><meta charset="utf-8"><title>{esc(title)}</title>'
            f'<style>{STYLE}</style></head><body>\n<h1>{esc(title)}</h1>\n<p class="intro">{intro}</p>\n'
            f"{body}\n</body></html>\n")


def handout_html(stops: Sequence[Stop], figures: Mapping[str, str | None], notes: Mapping[str, str] | None = None,
                 extras: Mapping[str, Sequence[str]] | None = None, title: str = TITLE) -> str:
    """The class's handout: a title, then each stop (see :func:`stop_html`) two to a row.

    ``figures`` maps a stop's key to its SVG (figures hide the row to predict, as in class); ``notes``
    to a line under the figure (e.g. both translations); ``extras`` to lines listed under it."""
    notes, extras = notes or {}, extras or {}
    places = layout([figures.get(s.key) for s in stops])
    body = "\n".join(stop_html(s, figures.get(s.key), notes.get(s.key), extras.get(s.key, ()), place)
                     for s, place in zip(stops, places, strict=True))
    intro = (f"{CREDIT}, in {len(stops)} stops. Grey “?” rows are for you to predict: which English word will "
             "the next French word read?")
    return _page(title, intro, f'<div class="stops">\n{body}\n</div>')


def answer_key_html(stops: Sequence[Stop], answers: Mapping[str, Answer], model: Mapping[str, str] | None = None,
                    title: str = TITLE + ": answer key", plan: Mapping[str, str] | None = None) -> str:
    """The teacher's answer key: each stop's minutes and vote (``plan``), question, answer, what to say, and
    ``model`` (the model's own numbers for the stop, from its decode trace) where given."""
    model, plan = model or {}, plan or {}
    rows = []
    for s in stops:
        a = answers.get(s.key)
        parts = [f'<section class="stop"><h2>{esc(s.title)}</h2>']
        if s.key in plan:
            parts.append(f"<p><strong>Plan.</strong> {esc(plan[s.key])}</p>")
        parts.append(f"<p><strong>Question.</strong> {esc(s.question)}</p>")
        if a is not None:
            parts.append(f"<p><strong>Answer.</strong> {esc(a.answer)}</p>")
        if s.key in model:
            parts.append(f"<p><strong>The model.</strong> {esc(model[s.key])}</p>")
        if a is not None:
            parts.append(f"<p><em>Say:</em> {esc(a.say)}</p>")
        rows.append("\n".join(parts) + "</section>")
    return _page(title, f"{CREDIT}: the answers, for the teacher only.", '<div class="key">\n' + "\n".join(rows)
                 + "\n</div>")
