"""The stepper's Look / Generate / Update view: one decoder step walked through its three phases.

Reads an :class:`nmt.decoding.phases.StepPhases` (the model's own step, re-run with its intermediate tensors)
and the source words, and returns one :class:`PhaseCard` per phase in the model's order:
RNNsearch looks, generates, then updates (Bahdanau et al. 2015, eqs. 4-6 and App. A.2.2; the names
are those of the MILA WMT'15 system, Jean et al. 2015, Table 1); Luong et al. (2015) run the recurrent
step first and attend from its result (eqs. 5-8). Each card has the phase's equations (LaTeX), the
shapes of its tensors (read from the tensors) and its numbers, all as data frames and strings: no
Streamlit here, every builder is unit-tested.

The numbers are chosen so a reader can check the arithmetic by hand on a few coordinates: the
maxout pairs and their larger element, s_i = (1 − z_i) ∘ s_{i−1} + z_i ∘ s̃_i unit by unit.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np
import pandas as pd

from nmt.decoding.phases import StepPhases, norm
from nmt.models.equations import LookText
from nmt.models.registry import look_text

COORDS = 4  # coordinates of a vector shown in the tables
PAIRS = 6  # maxout pairs shown
TOP_SOURCE = 6  # source words shown in the Look table (most weight first)

TITLES = {"look": "Look", "generate": "Generate", "update": "Update"}


@dataclass(frozen=True)
class Notation:
    """How one kind's paper writes a step: its index, the state it looks from, the context, the source
    memory (and its width and length), the scores and weights (and their sum), the Look table's columns and
    the line over the cards (``{i}`` and ``{word}`` filled in)."""

    step: str
    state: str
    context: str
    memory: str
    width: str
    length: str
    score: str
    weights: str
    weight_sum: str
    looks_from: str
    columns: tuple[str, str, str]
    intro: str


NOTATION = {  # one per kind of nmt.models.registry.KINDS (tests/test_registry.py)
    "rnnsearch": Notation("i", "s_(i−1)", "c_i", "h_j, all j", "2n", "Tx", "e_i·", "α_i·", "Σ α", "s_(i−1)",
                          ("j", "e_ij", "α_ij"),
                          "Step i = {i} wrote **{word}**. RNNsearch looks from s_(i−1), generates y_i from s_(i−1), "
                          "y_(i−1) and c_i, and updates the state to s_i: Look → Generate → Update."),
    "luong": Notation("t", "h_t", "c_t", "h̄_s, all s", "n", "S", "score(h_t, h̄_s)", "a_t", "Σ_s a_t(s)",
                      "its new state h_t", ("s", "score", "a_t(s)"),
                      "Step t = {i} wrote **{word}**. Luong et al.'s decoder runs the recurrent step first and "
                      "attends from its result: Update → Look → Generate."),
}


@dataclass
class PhaseCard:
    """One phase: its title, a plain-language line, equations, tensor shapes, number tables, a jargon note."""

    key: str  # look | generate | update
    title: str
    lead: str  # Markdown, no user text
    equations: list[str]  # LaTeX
    shapes: pd.DataFrame  # symbol, shape, what it is
    tables: list[tuple[str, pd.DataFrame]] = field(default_factory=list)  # (caption, frame)
    note: str = ""  # one line per jargon word (Markdown, no user text)
    source: str = ""  # where the equations are in the papers


def latex_block(equations: list[str]) -> str:
    """The equations as one LaTeX ``aligned`` block, aligned at their first "=" (one compact figure)."""
    rows = [eq.replace("=", "&=", 1) if "=" in eq else eq for eq in equations]
    return r"\begin{aligned}" + r" \\[6pt] ".join(rows) + r"\end{aligned}"


def _shape(names: list[str], sizes: list[int] | None) -> str:
    if sizes is None:
        return "—"
    return " × ".join(f"{n} = {s}" for n, s in zip(names, sizes, strict=True))


def _shapes(rows: list[tuple[str, list[str], list[int] | None, str]]) -> pd.DataFrame:
    return pd.DataFrame([{"tensor": sym, "shape": _shape(names, sizes), "what": what}
                         for sym, names, sizes, what in rows])


def _coords(columns: dict[str, list[float] | None], k: int = COORDS) -> pd.DataFrame:
    """The first ``k`` coordinates (1-based, as in the papers) of a few same-length vectors, side by side."""
    k = min([k, *(len(v) for v in columns.values() if v is not None)])
    out: dict[str, list[float] | list[int]] = {"unit": list(range(1, k + 1))}
    for name, v in columns.items():
        if v is not None:
            out[name] = [float(x) for x in v[:k]]
    return pd.DataFrame(out)


def _quantities(rows: list[tuple[str, float | None, str]]) -> pd.DataFrame:
    return pd.DataFrame([{"quantity": q, "value": v, "meaning": m} for q, v, m in rows if v is not None])


# ----------------------------------------------------------------------------------------------
# Look
# ----------------------------------------------------------------------------------------------


def source_rows(ph: StepPhases, src_tokens: list[str], top: int = TOP_SOURCE) -> pd.DataFrame | None:
    """The ``top`` source words with the most weight α (j 0-based, as in the stepper's other tables),
    with e_ij; None without α (a fixed summary c). :func:`rest_weight` sums the words left out."""
    a = ph.look.alpha
    if a is None:
        return None
    e = ph.look.energies
    shown = sorted(range(len(a)), key=lambda j: -a[j])[:top]
    pos, score, weight = NOTATION[ph.arch].columns
    return pd.DataFrame([{pos: j, "source word": src_tokens[j] if j < len(src_tokens) else "?",
                          score: None if e is None else float(e[j]), weight: float(a[j])} for j in shown])


def rest_weight(ph: StepPhases, top: int = TOP_SOURCE) -> tuple[int, float]:
    """How many source words :func:`source_rows` leaves out, and their total weight α."""
    a = sorted(ph.look.alpha or [], reverse=True)[top:]
    return len(a), float(sum(a))


def look_equations(ph: StepPhases) -> list[str]:
    """The Look phase's equations for this model and context mode (:mod:`nmt.models.equations`)."""
    return list(_look(ph).equations)


def _look(ph: StepPhases) -> LookText:
    return look_text({"arch": ph.arch, **ph.variant}, ph.context)


def look_card(ph: StepPhases, src_tokens: list[str]) -> PhaseCard:
    """Energies and α into the context: the alignment model's scores, their softmax and the weighted sum."""
    sh, nt, text = ph.shapes, NOTATION[ph.arch], _look(ph)
    lead = text.lead.format(looks_from=nt.looks_from, context=nt.context)
    rows = [(nt.memory, [nt.length, nt.width], sh.get("memory"), "the source words' encodings"),
            (nt.score, [nt.length], sh.get("alpha") if ph.look.energies is not None else None,
             "one score per source word" if ph.look.energies is not None else "none: no alignment model runs"),
            (nt.weights, [nt.length], sh.get("alpha"), text.weights),
            (nt.context, [nt.width], sh.get("context"),
             "the fixed summary c" if ph.look.alpha is None else "the context read at this step")]
    quantities = [(nt.weight_sum, None if ph.look.alpha is None else float(sum(ph.look.alpha)),
                   "1 unless a local-p Gaussian shrank it"),
                  (f"‖{nt.context}‖", norm(ph.look.context), "length of the context vector"),
                  ("p_t", ph.look.position, "centre of the local window (0-based source position)")]
    tables = []
    if (src := source_rows(ph, src_tokens)) is not None:
        n, rest = rest_weight(ph)
        more = f"; the other {n} words: Σ {nt.columns[2]} = {rest:.4f}" if n else ""
        tables.append((f"Where step {nt.step} = {ph.i} looks (most weight first{more})", src))
    tables.append(("Numbers", _quantities(quantities)))
    note = "" if ph.look.alpha is None else (
        f"Energy (score): how well source word {nt.columns[0]} fits what {nt.state} is about to write; "
        "softmax: exp of each "
        "score divided by their sum, so the weights are positive and sum to 1.")
    return PhaseCard("look", TITLES["look"], lead, look_equations(ph), _shapes(rows), tables, note, look_source(ph))


def look_source(ph: StepPhases) -> str:
    """Where the Look equations come from."""
    return _look(ph).source


# ----------------------------------------------------------------------------------------------
# Generate
# ----------------------------------------------------------------------------------------------


def maxout_rows(ph: StepPhases, pairs: int = PAIRS) -> pd.DataFrame | None:
    """The first ``pairs`` maxout pairs: t̃_(i,2k−1), t̃_(i,2k) and t_(i,k), their larger one (k 1-based).
    None for Luong (no maxout)."""
    pre, post = ph.generate.pre, ph.generate.hidden
    if pre is None:
        return None
    k = min(pairs, len(post))
    return pd.DataFrame({"k": list(range(1, k + 1)), "t̃_(2k−1)": [float(x) for x in pre[0 : 2 * k : 2]],
                         "t̃_(2k)": [float(x) for x in pre[1 : 2 * k : 2]], "t_k = max": [float(x) for x in post[:k]]})


def candidate_rows(ph: StepPhases) -> pd.DataFrame:
    """The softmax's top-k: word, logit, p, the written one marked (added below when outside the top-k)."""
    g = ph.generate
    rows = [{"rank": r + 1, "word": c.word, "logit": c.logit, "p": c.p, "written": "✓" if c.token_id ==
             g.written.token_id else ""} for r, c in enumerate(g.topk)]
    if all(c.token_id != g.written.token_id for c in g.topk):
        w = g.written
        rows.append({"rank": None, "word": w.word, "logit": w.logit, "p": w.p, "written": "✓ (forced)"})
    return pd.DataFrame(rows)


Card = tuple[list[str], str, list[tuple[str, list[str], list[int] | None, str]], list[tuple[str, pd.DataFrame]], str,
             str]  # equations, lead, shape rows, tables, note, source


def _generate_rnnsearch(ph: StepPhases) -> Card:
    sh = ph.shapes
    eqs = [r"\tilde t_i = U_o s_{i-1} + V_o E y_{i-1} + C_o c_i",
           r"t_{i,k} = \max(\tilde t_{i,2k-1}, \tilde t_{i,2k}),\quad k = 1 \dots l",
           r"p(y_i \mid y_{<i}, x) = \mathrm{softmax}(W_o t_i)"]
    lead = ("The deep output mixes the previous state, the previous word and the context into t̃_i; maxout "
            "halves it to t_i; a softmax over the vocabulary turns W_o t_i into probabilities.")
    rows = [("E y_(i−1)", ["m"], sh["y_emb"], "embedding of the previous word"),
            ("t̃_i", ["2l"], sh["t_tilde"], "deep output before maxout"),
            ("t_i", ["l"], sh["t"], "after maxout"),
            ("W_o t_i", ["K_y"], sh["logits"], "one logit per target word")]
    tables = [(f"Maxout, first {PAIRS} pairs", maxout_rows(ph))]
    note = ("t̃_i: the deep output's pre-activation, 2l numbers. Maxout: keep the larger number of each pair, "
            "so 2l numbers become l (a learned non-linearity). Logit: a word's score before the softmax.")
    return eqs, lead, rows, tables, note, "Bahdanau et al. (2015), eq. (4) and App. A.2.2 (deep output with maxout)"


def _generate_luong(ph: StepPhases) -> Card:
    sh = ph.shapes
    eqs = [r"\tilde h_t = \tanh(W_c [c_t; h_t])", r"p(y_t \mid y_{<t}, x) = \mathrm{softmax}(W_s \tilde h_t)"]
    lead = ("One tanh layer mixes the context c_t with the state h_t into h̃_t; a softmax over the vocabulary "
            "reads it.")
    rows = [("[c_t; h_t]", ["2n"], [2 * sh["h_tilde"][0]], "context and state, stacked"),
            ("h̃_t", ["n"], sh["h_tilde"], "the attentional state (also fed to the next step)"),
            ("W_s h̃_t", ["K_y"], sh["logits"], "one logit per target word")]
    tables = [(f"h̃_t, first {COORDS} units", _coords({"h̃_t": ph.generate.hidden}))]
    note = ("h̃_t: the attentional hidden state; with input feeding it is also an input of the next recurrent "
            "step. Logit: a word's score before the softmax turns scores into probabilities.")
    return eqs, lead, rows, tables, note, "Luong et al. (2015), eqs. (5)-(6)"


GENERATE = {"rnnsearch": _generate_rnnsearch, "luong": _generate_luong}  # one per kind (tests/test_registry.py)


def generate_card(ph: StepPhases) -> PhaseCard:
    """The readout: t̃_i and its maxout (RNNsearch) or h̃_t (Luong), then the softmax's top-k."""
    g = ph.generate
    eqs, lead, rows, tables, note, source = GENERATE[ph.arch](ph)
    tables = [(f"Softmax: top-{len(g.topk)} of {ph.shapes['logits'][0]} words", candidate_rows(ph)), *tables]
    return PhaseCard("generate", TITLES["generate"], lead, eqs, _shapes(rows), tables, note, source)


# ----------------------------------------------------------------------------------------------
# Update
# ----------------------------------------------------------------------------------------------


def _diff(a: list[float], b: list[float]) -> float:
    return float(np.linalg.norm(np.asarray(b) - np.asarray(a)))


def _update_luong(ph: StepPhases) -> Card:
    u, sh = ph.update, ph.shapes
    cell = str(ph.variant.get("cell", "lstm")).upper()
    feed = bool(ph.variant.get("input_feeding"))
    inp = r"[E y_{t-1}; \tilde h_{t-1}]" if feed else r"E y_{t-1}"
    eqs = [rf"h_t = \mathrm{{{cell}}}(h_{{t-1}}, {inp})"]
    lead = (f"First the recurrent step: the {cell} reads the previous word"
            + (" and the previous attentional state h̃_(t−1)" if feed else "")
            + " into h_t; attention comes after, from h_t.")
    rows = [("E y_(t−1)", ["m"], sh["y_emb"], "embedding of the previous word"),
            ("h̃_(t−1)", ["n"], sh["h_tilde"] if feed else None, "fed back from the last step"),
            ("h_t", ["n"], sh["state"], "the new state" + (f" (top of {ph.variant.get('layers')} layers)"
                                                           if int(ph.variant.get("layers", 1)) > 1 else ""))]
    q = [("‖h_(t−1)‖", norm(u.prev), "state before the step"), ("‖h_t‖", norm(u.new), "state after"),
         ("‖h_t − h_(t−1)‖", _diff(u.prev, u.new), "how far the step moved it"),
         ("‖h̃_(t−1)‖", norm(u.feed), "the fed-back attentional state"),
         ("‖memory cell‖", norm(u.memory), f"the {cell}'s memory cell after the step")]
    tables = [("Numbers", _quantities(q)), (f"First {COORDS} units", _coords({"h_(t−1)": u.prev, "h_t": u.new}))]
    note = f"{cell}: the recurrent cell; its memory cell is internal state, not the context c_t."
    source = "Luong et al. (2015), §3" + (" and §3.3 (input feeding)" if ph.variant.get("input_feeding") else "")
    return eqs, lead, rows, tables, note, source


def _update_rnnsearch(ph: StepPhases) -> Card:
    u, sh = ph.update, ph.shapes
    eqs = [r"z_i = \sigma(W_z E y_{i-1} + U_z s_{i-1} + C_z c_i)",
           r"r_i = \sigma(W_r E y_{i-1} + U_r s_{i-1} + C_r c_i)",
           r"\tilde s_i = \tanh(W E y_{i-1} + U [r_i \circ s_{i-1}] + C c_i)",
           r"s_i = (1 - z_i) \circ s_{i-1} + z_i \circ \tilde s_i"]
    lead = ("The GRU moves the state: the update gate z_i says, unit by unit, how much of s_(i−1) to replace "
            "by the proposal s̃_i, which reads the previous word and c_i. The word just written enters at the "
            "next step.")
    rows = [("s_(i−1)", ["n"], sh["state"], "state before the step"),
            ("z_i, r_i", ["n"], sh["state"], "update and reset gates, each in (0, 1)"),
            ("s̃_i", ["n"], sh["state"], "the proposed new state"), ("s_i", ["n"], sh["state"], "state after")]
    q = [("‖s_(i−1)‖", norm(u.prev), "state before the step"), ("‖s_i‖", norm(u.new), "state after"),
         ("‖s_i − s_(i−1)‖", _diff(u.prev, u.new), "how far the step moved it"),
         ("mean z_i", float(np.mean(u.z)) if u.z else None, "share of the state rewritten"),
         ("mean r_i", float(np.mean(u.r)) if u.r else None, "share of s_(i−1) the proposal reads")]
    coords = _coords({"s_(i−1)": u.prev, "z_i": u.z, "s̃_i": u.candidate, "s_i": u.new})
    tables = [("Numbers", _quantities(q)), (f"First {COORDS} units", coords)]
    note = ("Update gate z_i: 0 keeps a unit of s_(i−1), 1 takes the proposal s̃_i. Reset gate r_i: how much of "
            "s_(i−1) the proposal reads. Check a row: s_i = (1 − z_i)·s_(i−1) + z_i·s̃_i.")
    return eqs, lead, rows, tables, note, "Bahdanau et al. (2015), s_i = f(s_(i−1), y_(i−1), c_i) and App. A.2.2 (GRU)"


UPDATE = {"rnnsearch": _update_rnnsearch, "luong": _update_luong}  # one per kind (tests/test_registry.py)


def update_card(ph: StepPhases) -> PhaseCard:
    """The recurrent step: s_i from s_(i−1) (GRU gates shown), or Luong's h_t from h_(t−1) (first of its phases)."""
    eqs, lead, rows, tables, note, source = UPDATE[ph.arch](ph)
    return PhaseCard("update", TITLES["update"], lead, eqs, _shapes(rows), tables, note, source)


def cards(ph: StepPhases, src_tokens: list[str]) -> list[PhaseCard]:
    """The three phases in the model's order, numbered: 1 · Look, 2 · Generate, 3 · Update (RNNsearch)."""
    build = {"look": lambda: look_card(ph, src_tokens), "generate": lambda: generate_card(ph),
             "update": lambda: update_card(ph)}
    out = []
    for n, key in enumerate(ph.order, 1):
        card = build[key]()
        card.title = f"{n} · {card.title}"
        out.append(card)
    return out


def intro(ph: StepPhases, word: str) -> str:
    """The line over the cards: the step, its word (escaped by the caller) and the order of the phases."""
    return NOTATION[ph.arch].intro.format(i=ph.i, word=word)


def gap_note(ph: StepPhases, tol: float = 1e-4) -> str | None:
    """A warning when the re-run step does not match what the trace recorded (an edited α, or a beam's batch)."""
    if ph.trace_gap <= tol:
        return None
    return (f"These numbers differ from the decoding's record of this step by up to {ph.trace_gap:.2g}: "
            "the step shown is the model's own, re-run.")
