"""Reads what a projector shows: the rendered size and contrast of every visible piece of text on a page.

Used by ``tests/test_browser_readable.py`` (and ``scripts/readability_audit.py`` for a report). In the
page, :data:`AUDIT_JS` walks every text node (HTML and SVG: chart axes, labels and annotations alike)
that has a box on the page, and returns for each its text, rendered font size in CSS pixels (an SVG
text's size scaled by its ``getScreenCTM``) and its contrast ratio (WCAG 2.x relative luminance)
against the colour actually behind it: the backgrounds of its ancestors composited from the page's
white upwards (rgba included), and for SVG text the filled shapes painted under its centre (a
heatmap cell). The text colour is blended with that background by its own alpha and its ancestors' opacity.

Left out, as WCAG 1.4.3 leaves them out: text of disabled controls, and icon glyphs (Material
Symbols ligatures such as "chevron_right", which are pictures, not words). Text drawn on a
``<canvas>`` (Streamlit's data grids) is invisible to the DOM and not measured here.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

MIN_PX = 14.0
MIN_CONTRAST = 4.5
# Streamlit marks its root element with the script's state: "running" while the page's script runs.
IDLE = ("() => document.querySelector('[data-testid=\"stApp\"]')?.getAttribute('data-test-script-state') "
        "=== 'notRunning'")

AUDIT_JS = r"""
() => {
  const parse = (c) => {
    const m = /rgba?\(([^)]*)\)/.exec(c || '');
    if (!m) return null;
    const p = m[1].split(/[\s,\/]+/).filter(Boolean).map(parseFloat);
    return [p[0], p[1], p[2], p.length > 3 ? p[3] : 1];
  };
  const over = (top, bottom) => {  // composite colour `top` (with alpha) over opaque `bottom`
    const a = top[3];
    return [0, 1, 2].map(i => top[i] * a + bottom[i] * (1 - a)).concat([1]);
  };
  const lum = (c) => {
    const f = (v) => { v /= 255; return v <= 0.03928 ? v / 12.92 : Math.pow((v + 0.055) / 1.055, 2.4); };
    return 0.2126 * f(c[0]) + 0.7152 * f(c[1]) + 0.0722 * f(c[2]);
  };
  const ratio = (a, b) => { const x = lum(a), y = lum(b); return (Math.max(x, y) + 0.05) / (Math.min(x, y) + 0.05); };
  const inside = (e, x, y) => {
    const b = e.getBoundingClientRect();
    return x >= b.left - 0.5 && x <= b.right + 0.5 && y >= b.top - 0.5 && y <= b.bottom + 0.5;
  };
  // the ancestors' background colours under the point (x, y), composited from white upwards (a
  // positioned child drawn outside its parent's box does not sit on the parent's background)
  const htmlBackground = (el, x, y) => {
    const layers = [];
    for (let e = el; e && e.nodeType === 1; e = e.parentElement) {
      if (x !== undefined && !inside(e, x, y)) continue;
      const bg = parse(getComputedStyle(e).backgroundColor);
      if (bg && bg[3] > 0) { layers.push(bg); if (bg[3] >= 1) break; }
    }
    let out = [255, 255, 255, 1];
    for (let i = layers.length - 1; i >= 0; i--) out = over(layers[i], out);
    return out;
  };
  const opacity = (el) => {
    let o = 1;
    for (let e = el; e && e.nodeType === 1; e = e.parentElement) o *= parseFloat(getComputedStyle(e).opacity || '1');
    return o;
  };
  // the topmost filled shape painted before the text (under it) at the text's centre, else the HTML behind the <svg>
  const svgBackground = (el, x, y) => {
    let root = el;
    while (root.ownerSVGElement) root = root.ownerSVGElement;
    const base = htmlBackground(root.parentElement, x, y);
    let under = null;
    for (const s of root.querySelectorAll('path, rect, circle, ellipse, polygon')) {
      if (s.compareDocumentPosition(el) & Node.DOCUMENT_POSITION_PRECEDING) break;  // painted after the text
      if (!inside(s, x, y) || !s.getScreenCTM) continue;
      const cs = getComputedStyle(s);
      const fill = parse(cs.fill);
      if (!fill || cs.visibility !== 'visible' || cs.display === 'none') continue;
      const a = fill[3] * parseFloat(cs.fillOpacity || '1') * opacity(s) / opacity(root);
      if (a <= 0) continue;
      const m = s.getScreenCTM();
      if (!m || !s.isPointInFill(new DOMPoint(x, y).matrixTransform(m.inverse()))) continue;
      under = under ? over([fill[0], fill[1], fill[2], a], under) : over([fill[0], fill[1], fill[2], a], base);
    }
    return under || base;
  };
  const out = [];
  const seen = new Set();
  const walker = document.createTreeWalker(document.body, NodeFilter.SHOW_TEXT);
  for (let n = walker.nextNode(); n; n = walker.nextNode()) {
    const text = n.textContent.replace(/\s+/g, ' ').trim();
    if (!text) continue;
    const el = n.parentElement;
    if (!el || seen.has(el)) continue;
    if (el.closest('script, style, noscript, title, template, [aria-hidden="true"] svg title')) continue;
    const range = document.createRange();
    range.selectNodeContents(n);
    const r = range.getBoundingClientRect();
    if (r.width < 1 || r.height < 1) continue;
    const cs = getComputedStyle(el);
    if (cs.visibility !== 'visible' || cs.display === 'none') continue;
    const op = opacity(el);
    if (op < 0.05) continue;
    if (/Material Symbols|Material Icons/i.test(cs.fontFamily)) continue;
    if (el.closest('[disabled], [aria-disabled="true"]')) continue;
    seen.add(el);
    const isSvg = el instanceof SVGElement;
    let size = parseFloat(cs.fontSize);
    if (isSvg && el.getScreenCTM) {
      const m = el.getScreenCTM();
      if (m) size *= Math.sqrt(Math.abs(m.a * m.d - m.b * m.c));
    }
    const x = r.left + r.width / 2, y = r.top + r.height / 2;
    const bg = isSvg ? svgBackground(el, x, y) : htmlBackground(el, x, y);
    const ink = parse(isSvg ? cs.fill : cs.color) || [0, 0, 0, 1];
    const fg = over([ink[0], ink[1], ink[2], ink[3] * op], bg);
    const tid = el.closest('[data-testid]');
    out.push({text: text.slice(0, 60), px: Math.round(size * 100) / 100,
              contrast: Math.round(ratio(fg, bg) * 100) / 100,
              where: (tid ? tid.getAttribute('data-testid') : '') + ' ' + el.tagName.toLowerCase()});
  }
  return out;
}
"""


@dataclass(frozen=True)
class Reading:
    """One piece of text as rendered: its first characters, size in px, contrast ratio and where it sits."""

    text: str
    px: float
    contrast: float
    where: str

    def __str__(self) -> str:
        return f"{self.text!r} {self.px:g}px {self.contrast:.2f}:1 ({self.where.strip()})"


# Half a screen at a time, two animation frames at each stop: what is drawn once scrolled into view (an
# IntersectionObserver's callback) is told so in the frame after the scroll; then back to the top.
SCROLL_THROUGH = """async () => {
  const main = document.querySelector('[data-testid="stMain"]') || document.scrollingElement;
  const frames = () => new Promise(r => requestAnimationFrame(() => requestAnimationFrame(r)));
  for (let y = 0; y < main.scrollHeight; y += main.clientHeight / 2) {
    main.scrollTop = y;
    await frames();
  }
  main.scrollTop = 0;
  await frames();
}"""


def rendered(page: Any, url: str) -> None:
    """Open ``url`` and wait until the page's charts have drawn and its script has stayed finished for 0.6 s (a
    bound control's first view runs the script once more to write the URL), then scroll through it once and
    wait until the script is still finished and every chart drawn (what the scroll brought into view too)."""
    from tests.browser_waits import drawn, still_drawn

    page.goto(url, timeout=180_000)
    page.locator("h1").first.wait_for(state="attached", timeout=180_000)  # hidden in presentation mode
    drawn(page)
    page.evaluate(SCROLL_THROUGH)  # anything drawn only once scrolled into view is drawn
    still_drawn(page, timeout=180_000)


def readings(page: Any, settle_s: float = 20.0, every_ms: int = 500) -> list[Reading]:
    """Every visible text of the page as rendered (the whole page, not only the viewport), read
    once the page has stopped changing: charts draw after Streamlit's run ends, so the texts are
    read again every ``every_ms`` until two readings agree (at most ``settle_s`` seconds)."""
    rows = page.evaluate(AUDIT_JS)
    for _ in range(int(settle_s * 1000 / every_ms)):
        page.wait_for_timeout(every_ms)
        again = page.evaluate(AUDIT_JS)
        if again == rows:
            break
        rows = again
    return [Reading(**r) for r in rows]


def offenders(rows: list[Reading], min_px: float = MIN_PX, min_contrast: float = MIN_CONTRAST) -> list[Reading]:
    """The readings under ``min_px`` or under ``min_contrast`` (0.01 px of rounding forgiven)."""
    return [r for r in rows if r.px < min_px - 0.01 or r.contrast < min_contrast]
