"""The size every piece of text prints at in a PDF (Chromium's print of the handout), read with pypdf.

A text's printed size is its font size (``Tf``) scaled by the text matrix and the transformation in force
(``Tm`` × ``cm``): the vertical scale of their product, in points on the page. Chromium prints an SVG image
shrunk into its box as text under a scaling ``cm``, so this is the size a reader sees on paper.
"""

from __future__ import annotations

import io
import math

from pypdf import PdfReader

Matrix = list[float]


def _times(a: Matrix, b: Matrix) -> Matrix:
    """The product of two PDF matrices [a b c d e f] (a row vector times ``a`` then ``b``)."""
    return [a[0] * b[0] + a[1] * b[2], a[0] * b[1] + a[1] * b[3], a[2] * b[0] + a[3] * b[2],
            a[2] * b[1] + a[3] * b[3], a[4] * b[0] + a[5] * b[2] + b[4], a[4] * b[1] + a[5] * b[3] + b[5]]


def text_sizes(pdf: bytes) -> list[tuple[float, str, int]]:
    """Every non-blank piece of text in ``pdf``: (printed size in points, the text, its 0-based page)."""
    out: list[tuple[float, str, int]] = []
    for n, page in enumerate(PdfReader(io.BytesIO(pdf)).pages):
        def seen(text: str, cm: Matrix, tm: Matrix, font: object, size: float, n: int = n) -> None:
            if text.strip():
                m = _times(tm, cm)
                out.append((size * math.hypot(m[2], m[3]), text.strip(), n))
        page.extract_text(visitor_text=seen)
    return out
