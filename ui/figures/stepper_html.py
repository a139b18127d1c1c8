"""The stepper's HTML snippets: word chips, the word being written, candidates, the page's CSS.

Every piece of user text and model output goes through :func:`ui.figures.common.esc`; nothing is
rendered from raw input. Colours come from the heatmap's own ramp (:mod:`ui.figures.stepper`), so a
chip and its heatmap cell say the same thing.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from typing import Any

from nmt.decoding.trace import DICTIONARY, DecodeTrace, Replacement, StepRecord
from ui.figures.common import esc
from ui.figures.stepper import word_marks
from ui.figures.stepper_charts import BLUES, MODEL_COLOURS, WINDOW, ramp_colour, text_colour

COPIED, FORCED = "#1e7b1e", "#b03a1e"  # "copied" and "forced" marks: green and red at 4.5:1 or more on white
VIA = "#6a3d9a"  # "via <source word>": a word the candidate list has through the dictionary (purple, 8:1 on white)
SUMMARY_CHIP = "rgba(230,85,13,.3)"  # the summary band's colour (nmt.models.kinds.FIXED_COLOUR at its opacity)


def _chip(big: bool) -> str:
    size = "1.6rem" if big else "1.1rem"
    return (f"display:inline-block;margin:2px 2px;padding:1px 6px;border-radius:6px;text-align:center;"
            f"border:1px solid rgba(128,128,128,.45);font-size:{size};line-height:1.35;vertical-align:top;")


def _heading(text: str, big: bool) -> str:
    return (f'<div style="font-size:{"1.25rem" if big else "1rem"};font-weight:600;margin:2px 0 2px">'
            f"{text}</div>")


def swap_title(swap: Replacement) -> str:
    """How an ``<unk>`` was replaced, in words (a chip's tooltip)."""
    where = f"{swap.source!r} (j={swap.j}, largest α)"
    if swap.label == DICTIONARY:
        return f"the dictionary translates the source word {where} as {swap.word!r}"
    return f"copied the source word {where}"


def translation_html(
    trace: DecodeTrace, shown: int | None, swaps: Mapping[int, Replacement] | None = None, big: bool = False,
) -> str:
    """The translation so far as word chips; the shown step is highlighted, forced words marked, each
    replaced ``<unk>`` marked "dictionary" (the dictionary's translation) or "copied" (the source word),
    and a word that is in the sentence's candidate list only through a source word's dictionary
    translations marked "via" that word."""
    head = _heading("Translation so far", big)
    if not trace.steps:
        return (head + '<div data-testid="translation-so-far" style="opacity:.75;font-style:italic">'
                "(nothing written yet: press Step)</div>")
    swaps = swaps or {}
    chips = []
    for s in trace.steps:
        style = _chip(big)
        title = f"i={s.i}: p={s.prob:.3f}"
        word = esc(s.token)
        swap = swaps.get(s.i)
        if swap:
            style += f"border:2px dotted {COPIED};"
            title += "; the model wrote <unk>: " + swap_title(swap)
            word = esc(swap.word) + f'<sup style="color:{COPIED}">{swap.label}</sup>'
        via = trace.came_in_via(s.i)
        if via:  # in the candidate list only through these source words' dictionary translations
            title += "; in this sentence's candidate list through the translations of " + ", ".join(map(repr, via))
            word += f'<sup style="color:{VIA}">via {esc(via[0])}{"…" if len(via) > 1 else ""}</sup>'
        if s.forced:
            style += "border:2px dashed #e4572e;"
            title += " (forced)"
            word += "<sup>forced</sup>"
        if s.i == shown:
            style += "background:rgba(255,189,69,.55);font-weight:600;"
        chips.append(f'<span style="{style}" title="{esc(title)}">{word}</span>')
    return head + '<div data-testid="translation-so-far">' + "".join(chips) + "</div>"


def source_html(trace: DecodeTrace, step: StepRecord | None, *, paper: bool = False, big: bool = False,
                heading: bool = True) -> str:
    """The source words as chips, each shaded by α_ij of ``step`` from the heatmap's own colour
    ramp and showing its α under the word; with no α (the fixed summary c) every chip has the summary
    band's flat colour. ``heading=False`` leaves out the heading (the readout line above says it),
    except local attention's window."""
    alpha = None if step is None else step.alpha
    if step is None:
        head = "Source sentence"
    elif alpha is None:
        head = f"Source sentence · no α at i = {step.i}: c_i is one fixed summary"
    else:
        head = f"Source sentence · α_ij at i = {step.i} ({esc(step.token)})"
    window = None if step is None or step.window is None or step.position is None else (
        int(step.window[0]), int(step.window[1]), float(step.position))
    if window is not None:
        head += f" · window {window[0]}–{window[1]} around p_t = {window[2]:.1f}"
    chips = []
    unk = list(trace.src_unk) + [False] * (len(trace.src_tokens) - len(trace.src_unk))
    for j, w in enumerate(trace.src_tokens):
        style = _chip(big)
        title = f"j={j}"
        sub = ""
        if window is not None:
            if not window[0] <= j <= window[1]:
                style += "opacity:.35;"
                title += ", outside the window: not attended"
            if j == min(len(trace.src_tokens) - 1, max(0, round(window[2]))):
                style += f"box-shadow:0 0 0 3px {WINDOW};"
                title += f", nearest to p_t = {window[2]:.2f}"
        if step is not None and alpha is None:  # the one summary c: the same flat band as every row
            style += f"background:{SUMMARY_CHIP};"
        if alpha is not None and j < len(alpha):
            bg = ramp_colour(alpha[j], paper)
            style += f"background:{bg};color:{text_colour(bg)};"
            title += f", α={alpha[j]:.3f}"
            sub = f'<div style="font-size:max(.875rem,.65em);line-height:1">{alpha[j]:.2f}</div>'
        if unk[j]:
            style += "border:2px dashed #d62728;"
            title += ", outside the vocabulary: the model reads <unk>"
        label = esc(w) + ('<sup style="color:#d62728">unk</sup>' if unk[j] else "")
        chips.append(f'<span style="{style}" title="{esc(title)}">{label}{sub}</span>')
    if not heading:
        head = "" if window is None else f"window {window[0]}–{window[1]} around p_t = {window[2]:.1f}"
    return (_heading(head, big) if head else "") + '<div data-testid="source-words">' + "".join(chips) + "</div>"


CHIP_ROW = {False: (910, 8.6, 14, 43), True: (1216, 12.5, 18, 59)}
"""Per size (presentation or not) at 1280×720: the row's width, a character's and a chip's padding
width and one line's height in px (Chromium, the app's font, measured on the Fig. 3(a) sentence)."""


def chip_lines(words: Sequence[str], big: bool = False) -> int:
    """About how many lines the source words take as chips across the page (for the heatmap's box)."""
    width, char, pad, _ = CHIP_ROW[big]
    lines, used = 1, 0.0
    for w in words:
        chip = len(w) * char + pad
        if used and used + chip > width:
            lines, used = lines + 1, 0.0
        used += chip
    return lines


def note_html(text: str, big: bool = False) -> str:
    """A short explanatory sentence under the readout line."""
    return (f'<div data-testid="stepper-note" style="font-size:{"1.15rem" if big else "1rem"};line-height:1.35;'
            f'margin:0 0 4px">{esc(text)}</div>')


def detokenised_html(text: str) -> str:
    """The translation so far as one detokenised line, under its word chips (drawn with them: one element a
    Step); a caption's size and weight."""
    return (f'<div data-testid="detokenised" style="font-size:.875rem;opacity:.75;margin:2px 0 4px">'
            f"Detokenised: {esc(text) or '—'}</div>")


def now_writing_html(
    step: StepRecord | None, n_written: int, *, ended: str | None = None, swap: Replacement | None = None,
    big: bool = False,
) -> str:
    """The line about the shown step: which word it wrote (i is 0-based, "word" counts from 1).

    At the latest step it says what the next Step will write, or ``ended`` (how decoding ended).
    """
    size = "1.35rem" if big else "1.05rem"
    if step is None:
        return (f'<div style="font-size:{size}">Press <b>Step</b> to write the first word (i = 0).</div>')
    latest = step.i == n_written - 1
    head = (f"Written at i = {step.i} (word {step.i + 1})" if latest
            else f"Looking back at i = {step.i} (word {step.i + 1} of {n_written})")
    mark = f'<sup style="font-size:max(.875rem,.5em);color:{COPIED}">{swap.label}</sup>' if swap else ""
    word = esc(swap.word) + mark if swap else esc(step.token)
    forced = f' <span style="color:{FORCED};font-size:.9rem">(forced by you)</span>' if step.forced else ""
    nxt = ""
    if latest:
        nxt = esc(ended) if ended else f"Next: Step writes word {step.i + 2} (i = {step.i + 1})."
        nxt = f'<div style="font-size:.9em;opacity:.85">{nxt}</div>'
    return (f'<div style="font-size:{size}">{head}:<div>'
            f'<span style="font-size:1.7em;font-weight:700;padding:0 .3rem;'
            f'background:rgba(255,189,69,.45);border-radius:6px">{word}</span>'
            f" &nbsp;p = {step.prob:.3f}{forced}</div>{nxt}</div>")


def written_candidate_html(word: str) -> str:
    """The top-k row of the word that was written: a marked chip, not a button."""
    return (f'<div data-testid="written-candidate" style="padding:4px 10px;border-radius:8px;'
            f'background:rgba(255,189,69,.45);border:2px solid rgba(230,150,20,.9);font-weight:600;'
            f'white-space:nowrap;overflow:hidden;text-overflow:ellipsis" title="the word written">'
            f'✓ {esc(word)} <span style="font-weight:400;font-size:.875rem">written</span></div>')


def prob_bar_html(p: float) -> str:
    """A probability as a bar with its percentage."""
    w = min(100.0, max(0.0, 100 * p))
    return (f'<div style="display:flex;align-items:center;gap:6px"><div style="flex:1;height:12px;'
            f'background:rgba(128,128,128,.2);border-radius:6px"><div style="width:{w:.1f}%;height:12px;'
            f'background:{BLUES[8]};border-radius:6px"></div></div><span style="min-width:3.5em">{p:.1%}</span></div>')


def topk_header_html(k: int, i: int, forcing: bool) -> str:
    """The top-k list's heading (drawn in one snippet with the list): k words at step i, and, where a click on
    one forces it (not in beam mode), that it does."""
    more = '<span style="font-weight:400"> · click one to force it</span>' if forcing else ""
    return f'<div style="font-weight:600;margin:4px 0 6px">Top-{k} candidates at i = {i}{more}</div>'


def topk_html(rows: Sequence[Mapping[str, Any]], outside: str | None = None) -> str:
    """A step's top-k candidates in one snippet (one element a Step, not a row of columns each): every word
    beside its probability bar, the written one a marked chip (:func:`written_candidate_html`); ``outside``:
    the line saying the written word is not among them (plain text, escaped here)."""
    cells = []
    for r in rows:
        word = (written_candidate_html(r["word"]) if r["written"] else
                '<div style="padding:4px 10px;white-space:nowrap;overflow:hidden;text-overflow:ellipsis">'
                f'{esc(r["word"])}</div>')
        cells.append(word + prob_bar_html(r["p"]))
    grid = ('<div data-testid="topk-candidates" style="display:grid;grid-template-columns:minmax(0,1.2fr) '
            'minmax(0,1fr);gap:6px 12px;align-items:center;margin-bottom:6px">' + "".join(cells) + "</div>")
    return grid + (f'<div style="font-size:.875rem">{esc(outside)}</div>' if outside else "")


def stats_html(stats: Mapping[str, Any]) -> str:
    """The shown step's Σ_j α_ij, the entropy of α_i and its most-weighted source word, side by side in one
    snippet (:func:`ui.figures.stepper.step_stats`'s numbers, as the three metrics drawn before)."""
    spread = f"0 = all weight on one word; ln T_x = {stats['max_entropy']:.2f} = spread evenly."

    def box(label: str, value: str, under: str = "", title: str = "") -> str:
        return (f'<div style="min-width:8rem" title="{esc(title)}"><div style="font-size:.875rem">{label}</div>'
                f'<div style="font-size:2rem;line-height:1.25">{value}</div>'
                + (f'<div style="font-size:.875rem">{under}</div>' if under else "") + "</div>")

    return ('<div data-testid="step-stats" style="display:flex;flex-wrap:wrap;gap:8px 2.5rem;margin:4px 0">'
            + box("Σ_j α_ij", f"{stats['sum']:.2f}")
            + box("entropy of α_i", f"{stats['entropy']:.2f} nats", esc(spread), spread)
            + box("most weight", esc(stats["word"]), f"α = {stats['weight']:.2f}") + "</div>")


def compare_html(label_a: str, words_a: Sequence[str], label_b: str, words_b: Sequence[str],
                 big: bool = False, colours: Sequence[str] = MODEL_COLOURS,
                 more: Sequence[tuple[str, Sequence[str]]] = ()) -> str:
    """Two (or, with ``more``, several) translations of one sentence, each under its label marked in its
    model's colour. The first two mark the words without a counterpart in the other; each of ``more``
    marks its words missing from the first translation."""
    ma, mb = word_marks(words_a, words_b)
    rows = [(label_a, words_a, ma), (label_b, words_b, mb)]
    rows += [(label, words, word_marks(words_a, words)[1]) for label, words in more]
    lines = []
    for (label, words, marks), colour in zip(rows, colours, strict=True):
        chips = []
        for w, m in zip(words, marks):
            style = _chip(big) + (f"border:2px solid {colour};font-weight:600;" if m else "opacity:.8;")
            chips.append(f'<span style="{style}" title="{"only in this translation" if m else ""}">{esc(w)}</span>')
        lines.append(f'<div style="margin:4px 0"><div style="font-weight:600;border-left:6px solid {colour};'
                     f'padding-left:6px">{esc(label)}</div>'
                     + "".join(chips) + "</div>")
    return '<div data-testid="bottleneck-compare">' + "".join(lines) + "</div>"


# A presenter's clicker sends PageDown / PageUp: a click on the Step / Back button (by its key's class), as
# → / ← (their own shortcuts) do; not while typing, and not on a page without those buttons (the lesson has
# its own). A script, not two hidden buttons: a Step would redraw those buttons each time (issue 52).
CLICKER_JS = """<script>(() => {
  if (window.__rnnsearchClicker) return;
  window.__rnnsearchClicker = true;
  const keys = KEYS;
  document.addEventListener("keydown", (e) => {
    const name = keys[e.key];
    if (!name || e.altKey || e.ctrlKey || e.metaKey || e.shiftKey) return;
    const t = e.target;
    if (t && (t.isContentEditable || /^(INPUT|TEXTAREA|SELECT)$/.test(t.tagName))) return;
    const button = document.querySelector(".st-key-" + name + " button");
    if (!button) return;
    e.preventDefault();
    if (!button.disabled) button.click();
  });
})();</script>"""


def clicker_js(step_key: str, back_key: str) -> str:
    """The page's script that turns a clicker's PageDown / PageUp into a click on the buttons keyed
    ``step_key`` / ``back_key`` (each drawn with its own → / ← shortcut), for ``st.html`` with JavaScript."""
    return CLICKER_JS.replace("KEYS", json.dumps({"PageDown": step_key, "PageUp": back_key}))


def page_css(present: bool) -> str:
    """The stepper's style sheet: less padding so a 1280×720 projector shows the whole stepper;
    larger buttons in presentation mode."""
    css = [
        '[data-testid="stMainBlockContainer"]{padding-top:3.2rem;padding-bottom:2rem;'
        "padding-left:2rem;padding-right:2rem}",
        '[data-testid="stMainBlockContainer"] h1{font-size:1.9rem;padding:0 0 .2rem 0}',
        '[data-testid="stVegaLiteChart"]{overflow-x:auto;max-width:100%}',  # a wide heatmap scrolls in itself
        # the buttons' key badges (→, ←, P, T) widened the controls row until it wrapped onto a second
        # line, pushing the heatmap below 720 px; the keys still work (the buttons' help and the README say them)
        '[data-testid="stMainBlockContainer"] button kbd{display:none}',
        # presentation mode's hidden Esc button (ui.stepper.controls.settings): its key only
        ".st-key-btn_esc{display:none}",
        # a narrow window (150 % zoom of 1280×720 is 853 CSS px): the preset, the sentence and the toggle
        # wrap onto two lines rather than squeeze the toggle's label into a sliver
        '@media (max-width:1000px){.st-key-inputs [data-testid="stHorizontalBlock"]{flex-wrap:wrap}'
        '.st-key-inputs [data-testid="stColumn"]{min-width:min(100%,13rem)!important}}',
    ]
    if present:  # nothing below the heatmap: no bottom padding, so a 12-word translation needs no scrolling
        css.append('[data-testid="stMainBlockContainer"]{padding-bottom:0}')
        # the page's title gives its room to the heatmap: a 15-word sentence's rows fit a 720-pixel projector
        css.append('[data-testid="stMainBlockContainer"] [data-testid="stHeading"]:has(h1){display:none}')
        css.append('[data-testid="stMainBlockContainer"]{padding-top:2.3rem}')
        css.append('[data-testid="stMainBlockContainer"] [data-testid="stVerticalBlock"]{gap:.5rem}')
        css.append('[data-testid="stMainBlockContainer"] button p{font-size:1.2rem}')
        css.append('[data-testid="stMainBlockContainer"] textarea{font-size:1.25rem}')
        # the Play speed slider's label beside it, not above: the controls row stays one button high
        css.append('.st-key-w_speed [data-testid="stSlider"]{display:flex;align-items:center;gap:.6rem}'
                   '.st-key-w_speed [data-testid="stWidgetLabel"]{margin:0;flex:none;min-height:0}'
                   '.st-key-w_speed [data-testid="stSlider"] > [role="group"]{flex:1;min-width:0}')
    return "<style>" + "".join(css) + "</style>"
