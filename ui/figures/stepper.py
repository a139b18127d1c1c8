"""Plain builders of the stepper page's tables, notes and exports (its charts: :mod:`ui.figures.stepper_charts`).

Every function reads a :class:`nmt.decoding.trace.DecodeTrace` (or one of its steps) and returns a figure,
a data frame, a string or bytes, so all of them are unit-tested without a browser. None computes
anything about the model: they only rearrange what the trace recorded (the one sum they do,
c_i = Σ_j α_ij h_j in :func:`context_drift`, reads α from the trace and h_j from the encoder).

One colour meaning everywhere: more attention is darker blue, in the α heatmap, the energy heatmap
(a higher energy e_ij gives a larger α_ij) and the shading of the source words. The paper style
(Fig. 3 of Bahdanau et al.) is greyscale instead, 0 black and 1 white, again for all three.

Truthfulness: a step decoded with a fixed context (RNNencdec, or the frozen ablation) has no
α and no energies, and the builders return ``None`` for them rather than drawing a fake alignment.

User text (source words) and model output reach the page through :func:`html.escape` here, or
through data frames and charts, which show text as text; nothing is ever rendered as raw HTML.
"""

from __future__ import annotations

import difflib
import math
from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np
import pandas as pd

from nmt.decoding.trace import DecodeTrace, Replacement, StepRecord
from nmt.models.equations import LookText
from nmt.models.registry import mode
from ui.figures.common import csv_text, md
from ui.figures.stepper_charts import alignment_frame

# ----------------------------------------------------------------------------------------------


def gaussian_factor(j: int, p_t: float, half_width: int) -> float:
    """Luong et al. (2015), eq. 10: exp(−(s − p_t)² / 2σ²) with σ = D/2, the weight local-p puts on word j."""
    sigma = half_width / 2
    return math.exp(-((j - p_t) ** 2) / (2 * sigma**2))


def source_columns(trace: DecodeTrace, step: StepRecord, half_width: int | None = None) -> dict[str, list] | None:
    """The columns of :func:`source_table`, as lists (the page sends them to Streamlit as Arrow, without pandas)."""
    if step.alpha is None:
        return None
    unk = list(trace.src_unk) + [False] * (len(trace.src_tokens) - len(trace.src_unk))
    best = int(np.argmax(step.alpha))
    n = len(step.alpha)
    cols: dict[str, list] = {
        "j": list(range(n)),
        "source word": list(trace.src_tokens[:n]),
        "read as": ["<unk>" if unk[j] else "" for j in range(n)],
        "e_ij": [None if step.energies is None else float(e) for e in (step.energies or [None] * n)],
        "α_ij": [float(a) for a in step.alpha],
        "most": ["★" if j == best else "" for j in range(n)],
    }
    if step.window is not None and step.position is not None:
        lo, hi = int(step.window[0]), int(step.window[1])
        cols["in window"] = ["yes" if lo <= j <= hi else "—" for j in range(n)]
        if half_width:
            cols["Gaussian"] = [gaussian_factor(j, float(step.position), half_width) if lo <= j <= hi else 0.0
                                for j in range(n)]
    return cols


def source_table(trace: DecodeTrace, step: StepRecord, half_width: int | None = None) -> pd.DataFrame | None:
    """Per source word: e_ij, α_ij and a ★ on the word with the most weight; None for a fixed context.

    For local attention it also says whether each word is inside the window and, given the model's
    D (``half_width``, local-p only), the Gaussian factor that multiplied the softmax into α."""
    cols = source_columns(trace, step, half_width)
    return None if cols is None else pd.DataFrame(cols)


def step_stats(trace: DecodeTrace, step: StepRecord) -> dict[str, Any]:
    """Σ_j α_ij, the entropy of α in nats (and its maximum ln T_x) and the most-weighted word."""
    if step.alpha is None:
        return {"sum": None, "entropy": None, "max_entropy": None, "argmax": None, "word": None, "weight": None}
    best = int(np.argmax(step.alpha))
    return {
        "sum": float(np.sum(step.alpha)),
        "entropy": step.entropy(),
        "max_entropy": math.log(len(step.alpha)) if step.alpha else 0.0,
        "argmax": best,
        "word": trace.src_tokens[best],
        "weight": float(step.alpha[best]),
    }


def output_words(trace: DecodeTrace, swaps: Mapping[int, Replacement] | None = None) -> list[str]:
    """The words written so far, before ``</s>``, with each replaced ``<unk>`` as ``swaps`` says."""
    return trace.output_words(swaps)


def topk_rows(step: StepRecord) -> list[dict[str, Any]]:
    """The candidates of a step, most probable first: rank, word, p and whether it was written."""
    return [{"rank": r, "word": w, "p": float(p), "written": w == step.token} for r, (w, p) in enumerate(step.topk)]


def word_marks(a: Sequence[str], b: Sequence[str]) -> tuple[list[bool], list[bool]]:
    """For two translations, which words of each have no counterpart in the other (a word diff, blind to
    case: a truecased model writes a sentence's first word « où » where a cased one writes « Où »)."""
    ma, mb = [True] * len(a), [True] * len(b)
    fold_a, fold_b = [w.casefold() for w in a], [w.casefold() for w in b]
    for tag, i1, i2, j1, j2 in difflib.SequenceMatcher(a=fold_a, b=fold_b, autojunk=False).get_opcodes():
        if tag == "equal":
            ma[i1:i2] = [False] * (i2 - i1)
            mb[j1:j2] = [False] * (j2 - j1)
    return ma, mb


# ----------------------------------------------------------------------------------------------
# Markdown lines (user text escaped with md)
# ----------------------------------------------------------------------------------------------


def status_markdown(trace: DecodeTrace, done: bool, limit: int, model: str, checkpoint: str) -> str:
    """Where decoding stands, with which model, and the source words outside the vocabulary."""
    n = len(trace.steps)
    if trace.method == "beam":
        end = f"of the beam's best hypothesis ({limit} words); forcing works in greedy mode"
    else:
        end = ("finished (</s>)" if trace.finished else "stopped at the length limit" if done
               else f"at most {limit} (the length limit: 2 × source tokens + 10)")
    unk = list(dict.fromkeys(w for w, u in zip(trace.src_tokens, trace.src_unk) if u))
    oov = (f" · :red[{len(unk)} source word{'s' if len(unk) != 1 else ''} outside the model's vocabulary, read as "
           f"{md('<unk>')}: {', '.join(md(w) for w in unk)}]") if unk else ""
    return (f"**{n}** target word{'s' if n != 1 else ''} written, {md(end)} · {md(model)} · "
            f"checkpoint {md(checkpoint)}{oov}")


def context_note(context: str, step: StepRecord, ablation: bool) -> str | None:
    """What c_i was at a step when there is no alignment to tabulate (the note of ``context``'s record, e.g.
    fixed or mean; None for attention); ``ablation``: the weights were trained to attend."""
    note = mode(context).look.note
    if not note:
        return None
    kind = ("**Untrained ablation.** These are RNNsearch's weights with c_i frozen to the summary c it was "
            "never trained to read: what changes shows what attention was doing.\n\n" if ablation else "")
    return kind + note.format(norm=step.context_norm)


def no_energies_note(trace: DecodeTrace, look: LookText | None = None) -> str:
    """Why the energy tab has no heatmap: nothing decoded yet, or what the model's ``look`` says
    (:mod:`nmt.models.equations`; default: the record of the trace's context mode, :mod:`nmt.models.registry`)."""
    if not trace.steps:
        return "No energies: nothing decoded yet."
    return (look or mode(trace.context).look).energies


def no_checkpoints_markdown(env_var: str) -> str:
    """How to get checkpoints into an empty checkpoint folder."""
    return ("Train a model and copy it there, for example:\n\n```bash\n"
            "python train.py --config configs/m30k-en-fr-rnnsearch.toml --data data/multi30k\n"
            "python train.py --config configs/m30k-en-fr-rnnencdec.toml --data data/multi30k\n"
            "cp runs/m30k-en-fr-rnnsearch/best.pt checkpoints/m30k-en-fr-rnnsearch.pt\n"
            "cp runs/m30k-en-fr-rnnencdec/best.pt checkpoints/m30k-en-fr-rnnencdec.pt\n```\n\n"
            f"or point the environment variable `{env_var}` at a folder of `.pt` checkpoints. An RNNsearch and "
            "an RNNencdec are paired by name: `<name>-rnnsearch.pt` / `<name>-rnnencdec.pt`.")


# ----------------------------------------------------------------------------------------------
# Exports


def trace_csv(trace: DecodeTrace) -> str:
    """The trace's cells (one row per target step × source word) as CSV, with p and unk flags."""
    df = alignment_frame(trace)
    if len(df):
        probs = {s.i: s.prob for s in trace.steps}
        df.insert(3, "p_target", [probs[i] for i in df["i"]])
        ctx = {s.i: s.context_norm for s in trace.steps}
        df["context_norm"] = [ctx[i] for i in df["i"]]
    df.insert(0, "context_mode", trace.context)
    return csv_text(df)


def trace_json(trace: DecodeTrace) -> str:
    """The whole trace as JSON (reloadable with ``DecodeTrace.from_dict``)."""
    return trace.to_json(indent=1)


# ----------------------------------------------------------------------------------------------
# The candidate list (Jean et al. 2015 §3.2)
# ----------------------------------------------------------------------------------------------


def candidates_markdown(trace: DecodeTrace, short: bool = False) -> str | None:
    """One line on the sentence's candidate list: how many words it may use and where they come from
    (``short``: the numbers only, for a projector); None when it decoded over the whole vocabulary."""
    c = trace.candidates
    if c is None:
        return None
    frequent = f"the {c.k_frequent:,} most frequent" if c.k_frequent else "no words for their frequency alone"
    if short:
        return (f"**Candidate list:** {c.size:,} of {c.vocab_size:,} words ({frequent}, "
                f"{len(c.via):,} more from the dictionary)")
    return (f"**Candidate list** (Jean et al. 2015, §3.2): this sentence may use **{c.size:,}** of the model's "
            f"{c.vocab_size:,} target words: {frequent}, the specials (such as {md('</s>')} and {md('<unk>')}), "
            f"and **{len(c.via):,}** more that the dictionary lists among the {c.k_translations} likeliest "
            "translations of its words. Every other word gets p = 0, and p is renormalised over the list.")


def candidate_rows(trace: DecodeTrace) -> list[dict[str, str]]:
    """Per source word (in sentence order): the words its dictionary translations brought into the list
    (those not among the K most frequent) and which of them the translation so far has written."""
    c = trace.candidates
    if c is None:
        return []
    brought: dict[str, list[str]] = {}
    for word, sources in c.via.items():
        for w in sources:
            brought.setdefault(w, []).append(word)
    written = {s.token for s in trace.steps}
    rows = []
    for w in dict.fromkeys(trace.src_tokens):
        if w in brought:
            rows.append({"source word": w, "brings in": ", ".join(brought[w]),
                         "written so far": ", ".join(t for t in brought[w] if t in written)})
    return rows
