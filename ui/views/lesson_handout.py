"""The Lesson's printable handout: one self-contained, print-styled HTML page.

Pure: it takes the stops, the narration level and each stop's figure (an SVG document, rendered
elsewhere by vl-convert) and returns HTML text. Every word of text is escaped; figures are embedded
as ``data:`` images so no markup of theirs runs in the page. Each stop starts a new printed page.
"""

from __future__ import annotations

import base64
from collections.abc import Mapping, Sequence

from ui.lesson_content import LEVELS, Stop
from ui.views.common import esc

STYLE = """
body { font-family: Georgia, 'DejaVu Serif', serif; font-size: 14pt; color: #111; margin: 2em; }
h1 { font-size: 22pt; } h2 { font-size: 17pt; margin-top: 0; }
.stop { break-after: page; page-break-after: always; }
.sentence { font-style: italic; }
.question { border: 2px solid #111; padding: 0.6em; margin: 0.8em 0; }
.answer { border-bottom: 1px solid #888; height: 2.2em; }
img { max-width: 100%; height: auto; }
@media print { body { margin: 0; } a { color: #111; text-decoration: none; } }
"""


def svg_image(svg: str, alt: str) -> str:
    """An SVG document as an ``<img>`` with a base64 ``data:`` URL (its markup never joins the page)."""
    data = base64.b64encode(svg.encode("utf-8")).decode("ascii")
    return f'<img alt="{esc(alt)}" src="data:image/svg+xml;base64,{data}">'


def stop_html(stop: Stop, level: str, figure: str | None, note: str | None = None) -> str:
    """One stop of the handout: title, sentence, narration at ``level``, figure, note, question."""
    parts = [f'<section class="stop"><h2>{esc(stop.title)}</h2>']
    if stop.sentence:
        parts.append(f'<p class="sentence">“{esc(stop.sentence)}”</p>')
    parts.append(f"<p>{esc(stop.narration.get(level, ''))}</p>")
    if figure:
        parts.append(f"<figure>{svg_image(figure, stop.title)}</figure>")
    if note:
        parts.append(f"<p>{esc(note)}</p>")
    parts.append(f'<div class="question"><strong>Question.</strong> {esc(stop.question)}'
                 '<div class="answer"></div><div class="answer"></div></div></section>')
    return "\n".join(parts)


def handout_html(stops: Sequence[Stop], level: str, figures: Mapping[str, str | None],
                 notes: Mapping[str, str] | None = None, title: str = "Attention in neural machine translation"
                 ) -> str:
    """The whole handout: a title, the level, then each stop (see :func:`stop_html`).

    ``figures`` maps a stop's key to its SVG (figures hide the row to predict, as in class);
    ``notes`` to a line under the figure (e.g. both translations)."""
    notes = notes or {}
    body = "\n".join(stop_html(s, level, figures.get(s.key), notes.get(s.key)) for s in stops)
    return (f'<!DOCTYPE html>\n<html lang="en"><head><meta charset="utf-8"><title>{esc(title)}</title>'
            f"<style>{STYLE}</style></head><body>\n<h1>{esc(title)}</h1>\n"
            f"<p>Bahdanau, Cho &amp; Bengio (2015), “Neural machine translation by jointly learning to align and "
            f"translate”, in {len(stops)} stops. Narration: {esc(LEVELS.get(level, level).lower())}. "
            "Grey “?” rows are for you to predict.</p>\n"
            f"{body}\n</body></html>\n")
