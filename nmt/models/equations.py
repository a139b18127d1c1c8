"""How each model reads its context c_i, in words and equations: the one place every page takes them from.

A context mode of :mod:`nmt.models.rnnsearch` (attention, fixed, mean) and each Luong et al. (2015) variant has one
:class:`LookText`: the LaTeX of how c_i is formed, where those equations come from, the caption of the
energy heatmap (or why there is none) and the event log's phrase. The stepper's Energies tab, the
Look / Generate / Update cards and the event log read it through a model's description
(:attr:`nmt.models.kinds.ModelDescription.look`, set from each kind's and mode's record in
:mod:`nmt.models.registry`).
Plain data; no model is loaded.
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class LookText:
    """One way of forming c_i: ``equations`` (LaTeX, one per line), ``source`` (paper and equation
    numbers), ``energies`` (the energy heatmap's caption, or why it has none: ``has_energies``),
    ``log`` (what the event log says a step read; {word} and {weight} filled by the log), ``lead`` (the
    Look card's first line; {looks_from} and {context} filled in each paper's notation), ``weights`` (what
    its α is) and ``note`` (what c_i was at a step, where there is no alignment to tabulate; {norm} filled
    with ‖c_i‖; empty where there is one)."""

    equations: tuple[str, ...]
    source: str
    energies: str
    has_energies: bool
    log: str
    lead: str
    weights: str
    note: str


_SCORED = ("The decoder scores every source word from {looks_from}, turns the scores into weights that sum to 1 and "
           "reads their weighted sum {context}.")
_SOFTMAX_WEIGHTS = "weights, softmax of the scores"
_SOFTMAX = r"\alpha_{ij} = \frac{\exp(e_{ij})}{\sum_{k=1}^{T_x} \exp(e_{ik})}"
_MOST = "most weight on “{word}” (α={weight:.2f})"

CONTEXTS: dict[str, LookText] = {
    "attention": LookText(
        (r"e_{ij} = v_a^\top \tanh(W_a s_{i-1} + U_a h_j)", _SOFTMAX, r"c_i = \sum_{j=1}^{T_x} \alpha_{ij}\, h_j"),
        "Bahdanau et al. (2015), eqs. (5)-(6); the alignment model of App. A.1.2",
        "e_ij = v_aᵀ tanh(W_a s_(i-1) + U_a h_j): the score before the softmax that turns each row into α_i·. "
        "Same colours as α: darker = higher score = more attention.", True, _MOST, _SCORED, _SOFTMAX_WEIGHTS, ""),
    "fixed": LookText(
        (r"c_i = c = [\overrightarrow{h}_{T_x}; \overleftarrow{h}_1]\quad\text{for every } i",),
        "RNNencdec: the encoder's fixed summary (Bahdanau et al. 2015, §3 and App. A.2)",
        "No energies: c_i is a fixed summary, so no alignment model runs.", False,
        "read the fixed summary c (‖c‖={norm:.2f})",
        "No looking: every step reads the same summary c = [→h_Tx; ←h_1], the encoder's last forward and first "
        "backward states. There are no energies and no α at this step.", "none: c is fixed",
        "**No alignment: every step reads the same summary vector** c = [→h_Tx; ←h_1] (the encoder's last forward "
        "and first backward states). ‖c_i‖ = {norm:.3f} at every step; there are no α_ij or e_ij to show."),
    "mean": LookText(
        (r"\alpha_{ij} = 1 / T_x", r"c_i = \frac{1}{T_x} \sum_{j=1}^{T_x} h_j"),
        "An ablation of Bahdanau et al. (2015): eq. (5) with uniform weights",
        "No energies: the mean context uses uniform weights, with no alignment model.", False,
        "read the uniform mean of the annotations",
        "Uniform weights by construction: c_i is the plain average of the annotations, at every step.",
        "uniform weights 1/Tx",
        "**Mean context:** α is uniform (1/T_x) by construction, so c_i is the same average of the annotations at "
        "every step; no energies are computed."),
}

LUONG_SCORES: dict[str, str] = {  # eq. (8), and eq. (9) for location
    "dot": r"\mathrm{score}(h_t, \bar h_s) = h_t^\top \bar h_s",
    "general": r"\mathrm{score}(h_t, \bar h_s) = h_t^\top W_a \bar h_s",
    "concat": r"\mathrm{score}(h_t, \bar h_s) = v_a^\top \tanh(W_a [h_t; \bar h_s])",
    "location": r"\mathrm{score}(h_t, \bar h_s) = (W_a h_t)_s",
}
LUONG_SCORE_WORDS = {"dot": "h_tᵀ h̄_s", "general": "h_tᵀ W_a h̄_s", "concat": "v_aᵀ tanh(W_a [h_t; h̄_s])",
                     "location": "(W_a h_t)_s"}

ENSEMBLE = LookText(
    (r"\alpha_{ij} = \frac{1}{M} \sum_{m=1}^{M} \alpha^{(m)}_{ij}",),
    "Luong et al. (2015) §5.1, Jean et al. (2015): the members decode together; α is their mean",
    "No energies: an ensemble's α is the mean of its members' α, and each member scores with its own "
    "alignment model.", False, _MOST, "", "the mean of the members' α", "")


def luong_look(score: str, attention: str) -> LookText:
    """Luong et al.'s (2015) score, weights and context for one variant (eqs. 7-11)."""
    local_p = attention == "local-p"
    eqs = [LUONG_SCORES[score],
           (r"\mathrm{align}(h_t, \bar h_s)" if local_p else "a_t(s)")
           + r" = \frac{\exp \mathrm{score}(h_t, \bar h_s)}{\sum_{s'} \exp \mathrm{score}(h_t, \bar h_{s'})}"]
    if attention == "local-m":
        eqs.append(r"p_t = t,\quad s \in [p_t - D, p_t + D]")
    elif local_p:
        eqs += [r"p_t = S \cdot \mathrm{sigmoid}(v_p^\top \tanh(W_p h_t))",
                r"a_t(s) = \mathrm{align}(h_t, \bar h_s) \exp\!\left(-\frac{(s - p_t)^2}{2\sigma^2}\right)"]
    numbers = "(7), (9)" if score == "location" else "(7)-(8)"
    local = {"local-m": ", local-m §3.2", "local-p": ", local-p eqs. (10)-(11) with σ = D/2"}.get(attention, "")
    words = LUONG_SCORE_WORDS[score]
    window = " inside the window [p_t − D, p_t + D]" if attention != "global" else ""
    return LookText(
        (*eqs, r"c_t = \sum_s a_t(s)\, \bar h_s"), f"Luong et al. (2015), eqs. {numbers}{local}",
        f"score(h_t, h̄_s) = {words} ({score}; Luong et al. 2015, eq. 8): the score of each source word{window}, "
        "from the decoder's new state h_t, before the softmax into a_t(s). Darker = higher score.", True, _MOST,
        _SCORED, _SOFTMAX_WEIGHTS, "")
