"""Every control labelled (issue 21): finds the controls of a rendered page that show no label a class can read.

:data:`UNLABELLED_JS` runs in the page. For every visible Streamlit input widget (select boxes, text
boxes, sliders, radios, checkboxes and toggles, number inputs …) it looks for the widget's own
label (``[data-testid="stWidgetLabel"]``) and calls it unlabelled when that label is missing, empty,
hidden (``label_visibility="hidden"`` or ``"collapsed"``), outside the page's width, covered by
another element where its text is drawn (for instance by the page's fixed header), or cut off with an
ellipsis ("Freeze…", a narrow column at 150 % zoom). A button (or a popover's button) is unlabelled
when it shows no words, only an icon glyph, or when its words are cut off. Used by
``tests/test_browser_controls.py``.
"""

from __future__ import annotations

from typing import Any

INPUTS = ("stSelectbox", "stMultiSelect", "stTextArea", "stTextInput", "stNumberInput", "stSlider", "stRadio",
          "stCheckbox", "stDateInput", "stTimeInput", "stColorPicker", "stFileUploader", "stSegmentedControl",
          "stButtonGroup")

UNLABELLED_JS = r"""
(inputs) => {
  const shown = (e) => {
    if (!e) return false;
    const r = e.getBoundingClientRect(), cs = getComputedStyle(e);
    return r.width >= 1 && r.height >= 1 && cs.visibility === 'visible' && cs.display !== 'none'
      && parseFloat(cs.opacity || '1') > 0.05;
  };
  const words = (e) => {  // the text of e, less its icon glyphs (Material Symbols ligatures)
    let out = '';
    const walk = document.createTreeWalker(e, NodeFilter.SHOW_TEXT);
    for (let n = walk.nextNode(); n; n = walk.nextNode()) {
      const p = n.parentElement;
      if (!p || /Material Symbols|Material Icons/i.test(getComputedStyle(p).fontFamily) || !shown(p)) continue;
      out += n.textContent;
    }
    return out.replace(/\s+/g, ' ').trim();
  };
  // whether the text of `label` is drawn where nothing else covers it: the topmost element at the
  // centre of its first line of text must be the label or inside it
  const uncovered = (label) => {
    const range = document.createRange();
    range.selectNodeContents(label);
    const r = [...range.getClientRects()].find(q => q.width >= 1 && q.height >= 1);
    if (!r) return false;
    const x = r.left + Math.min(r.width / 2, 20), y = r.top + r.height / 2;
    if (x < 0 || x > innerWidth || y < 0 || y > innerHeight) return false;
    const top = document.elementFromPoint(x, y);
    return !!top && (label === top || label.contains(top));
  };
  // a text cut off with an ellipsis ("Freeze…") inside e
  const cut = (e) => [e, ...e.querySelectorAll('*')].some(
    c => getComputedStyle(c).textOverflow === 'ellipsis' && c.scrollWidth > c.clientWidth + 1 && c.textContent.trim());
  // words of `label` drawn outside the widget's box (over its neighbour, or past the page's edge)
  const spills = (label, w) => {
    const range = document.createRange();
    range.selectNodeContents(label);
    const b = w.getBoundingClientRect();
    return [...range.getClientRects()].some(q => q.width >= 1 && (q.right > b.right + 1 || q.left < b.left - 1));
  };
  const out = [];
  const key = (e) => e.closest('[class*="st-key-"]')?.className.match(/st-key-[\w-]+/)?.[0] || '';
  for (const id of inputs) {
    for (const w of document.querySelectorAll(`[data-testid="${id}"]`)) {
      // in a collapsed sidebar or a closed expander: hidden with it
      if (!shown(w) || w.getBoundingClientRect().right <= 0 || w.closest('details:not([open])')) continue;
      const label = w.querySelector('[data-testid="stWidgetLabel"]');
      const name = id + ' ' + key(w);
      if (!label || !shown(label) || !words(label)) { out.push({widget: name, why: 'no visible label'}); continue; }
      label.scrollIntoView({block: 'center'});
      if (!uncovered(label)) out.push({widget: name, why: `label "${words(label)}" covered or off screen`});
      else if (cut(label) || spills(label, w)) out.push({widget: name, why: `label "${words(label)}" cut off`});
    }
  }
  const chrome = ['stVegaLiteChart', 'stDataFrame', 'stToolbar', 'stElementToolbar', 'stWidgetLabel',
                  'stTooltipIcon', 'stTooltipHoverTarget', ...inputs];  // a chart's tools, a label's help icon, a
  // number input's − / + (its label names them)
  for (const b of document.querySelectorAll('[data-testid="stMain"] button, [data-testid="stMain"] [role="button"]')) {
    if (!shown(b) || chrome.some(id => b.closest(`[data-testid="${id}"]`))) continue;
    if (b.closest('[data-testid="stTabs"]') && b.getAttribute('role') !== 'tab') continue;  // its scroll arrows
    const name = 'button ' + (key(b) || words(b) || b.outerHTML.slice(0, 80));
    if (!words(b)) out.push({widget: name, why: 'a button without words'});
    else if (cut(b) && !b.closest('[data-testid="stSelectbox"]')) out.push({widget: name, why: 'its words cut off'});
  }
  return out;
}
"""


def unlabelled(page: Any) -> list[dict[str, str]]:
    """The visible controls of ``page`` that show no readable label: ``{"widget", "why"}`` each."""
    found = page.evaluate(UNLABELLED_JS, list(INPUTS))
    page.evaluate("() => { const m = document.querySelector('[data-testid=\"stMain\"]'); if (m) m.scrollTop = 0; }")
    return found
