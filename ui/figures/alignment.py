"""Builders of the alignment browser: filtering pairs, the sentence table, gold links and AER.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from typing import Any

import pandas as pd

from nmt.decoding.trace import DecodeTrace
from nmt.explanation.align import Links, alignment_error, argmax_links
from nmt.explanation.coverage import REREAD, UNREAD, coverage, flags_vs_quality
from nmt.explanation.symmetrize import LABELS, flip, symmetrized_corpus
from nmt.text.metrics import sentence_scores
from nmt.text.tokenize import Tokenizer
from ui.figures.common import csv_text
from ui.figures.heatmaps import alpha_stats


def filter_pairs(pairs: Sequence[tuple[str, str]], length: tuple[int, int] = (0, 10**6), query: str = "") -> list[int]:
    """Indices of pairs whose source has ``length[0]``–``length[1]`` words and that contain ``query``.

    Words are whitespace-separated; the search is case-insensitive over both sides."""
    lo, hi = length
    q = query.strip().lower()
    return [k for k, (s, r) in enumerate(pairs)
            if lo <= len(s.split()) <= hi and (not q or q in s.lower() or q in r.lower())]


def selected_row(state: Any) -> int | None:
    """The first selected row position of an ``st.dataframe`` selection (object or mapping form)."""
    sel = state.get("selection") if isinstance(state, Mapping) else getattr(state, "selection", None)
    rows = sel.get("rows") if isinstance(sel, Mapping) else getattr(sel, "rows", None)
    if not rows:
        return None
    try:
        return int(rows[0])
    except (TypeError, ValueError):
        return None


def scoring_text(hyp: str, ref: str, pretokenized: bool, tok: Tokenizer | None = None) -> tuple[str, str]:
    """What sentence BLEU/chrF compare: pre-tokenised lowercase references against the tokenised,
    lowercased translation; otherwise the detokenised translation against the reference as is."""
    if not pretokenized or tok is None:
        return hyp, ref
    return " ".join(tok.words(hyp)).lower(), ref.lower()  # words, not a subword model's pieces


def own_facts(own: DecodeTrace, ref: str, pretokenized: bool = False, tok: Tokenizer | None = None) -> dict[str, Any]:
    """What the table needs from the model's own translation: the text, its scores and α statistics."""
    scores = sentence_scores(*scoring_text(own.translation, ref, pretokenized, tok))
    stats = alpha_stats(own)
    cov = coverage([s.alpha for s in own.steps], len(own.src_tokens))  # None without α
    return {"translation": own.translation, "src words": len(own.src_tokens) - 1, "BLEU": scores["bleu"],
            "chrF": scores["chrf"], "α entropy": stats["entropy"], "max α": stats["max_alpha"],
            "flags": None if cov is None else cov.flags,
            "unread": "" if cov is None else ", ".join(own.src_tokens[j] for j in cov.unread),
            "re-read": "" if cov is None else ", ".join(own.src_tokens[j] for j in cov.reread)}


def coverage_line(rows: Sequence[Mapping[str, Any]]) -> str | None:
    """How the shown sentences' coverage flags go with their chrF (:func:`nmt.explanation.coverage.flags_vs_quality`),
    in one line; None without flags to compare (no α, or too few sentences)."""
    pairs = [(r["flags"], r["chrF"]) for r in rows if r.get("flags") is not None and r.get("chrF") is not None]
    res = flags_vs_quality([f for f, _ in pairs], [q for _, q in pairs]) if len(pairs) > 2 else None
    if res is None or res["spearman_rho"] is None:
        return None
    return (f"Coverage flags (a source word read less than {UNREAD:g} in all, or more than {REREAD:g} times): "
            f"{res['flagged']} of {res['n']} sentences flagged, mean chrF {res['chrf_flagged']:.1f} flagged vs "
            f"{res['chrf_clean']:.1f} clean, Spearman ρ(flags, chrF) = {res['spearman_rho']:+.2f} "
            f"(p = {res['p_value']:.2g}): a flag marks a sentence worth a look, not a bad one.")


def forced_facts(forced_: DecodeTrace) -> dict[str, Any]:
    """What the table and AER need from forced decoding: log p(reference) and the argmax-α links
    (``None`` without α)."""
    return {"ref log p": forced_.logprob,
            "links": frozenset(argmax_links(forced_)) if forced_.has_alignment else None}


def links_aer(links: Links | None, sure: Links, possible: Links) -> float | None:
    """AER of one sentence's links; ``None`` without α or without gold links."""
    if links is None or not (sure or possible):
        return None
    return float(alignment_error([set(links)], [sure], [possible])["aer"])


def table_row(idx: int, src: str, ref: str, own: Mapping[str, Any], forced_: Mapping[str, Any] | None,
              gold: tuple[Links, Links] | None = None) -> dict[str, Any]:
    """One row of the sentence table from :func:`own_facts` and :func:`forced_facts` (and the AER of
    the argmax-α links when the pair has gold ``(sure, possible)`` links)."""
    row = {"#": idx, "source": src, "reference": ref, "ref words": len(ref.split()),
           **{k: own.get(k) for k in ("translation", "src words", "BLEU", "chrF", "α entropy", "max α", "flags",
                                      "unread", "re-read")},
           "ref log p": forced_["ref log p"] if forced_ is not None else None}
    if gold is not None:
        row["AER"] = links_aer(forced_["links"] if forced_ is not None else None, *gold)
    return row


# Scores first, so they are on screen without scrolling sideways; the long texts last.
BROWSER_COLUMNS = ["#", "BLEU", "chrF", "flags", "α entropy", "max α", "ref log p", "src words", "ref words",
                   "unread", "re-read", "source", "reference", "translation"]


def browser_frame(rows: Iterable[Mapping[str, Any]]) -> pd.DataFrame:
    """The sentence table from :func:`table_row` rows (``AER`` after chrF when present)."""
    rows = list(rows)
    cols = list(BROWSER_COLUMNS)
    if any("AER" in r for r in rows):
        cols.insert(cols.index("chrF") + 1, "AER")
    return pd.DataFrame(rows, columns=cols)


def links_corpus_aer(links: Sequence[Links | None], sure: Sequence[Links], possible: Sequence[Links]
                     ) -> dict[str, Any]:
    """AER, precision and recall of argmax-α links over a whole gold set (Och & Ney 2003)."""
    if any(a is None for a in links):
        raise ValueError("a fixed-context model has no α, so it has no alignment to score")
    res = alignment_error([set(a or ()) for a in links], sure, possible)
    return {**res, "sentences": len(links)}


def links_table(links: Sequence[Links | None], indices: Sequence[int]) -> str:
    """Predicted links per sentence in the gold files' ``j-i`` format, as CSV."""
    rows = [{"#": k, "links": " ".join(f"{j}-{i}" for j, i in sorted(a or ()))} for k, a in zip(indices, links)]
    return csv_text(pd.DataFrame(rows, columns=["#", "links"]))


IN_DOMAIN_FOR_HANSARDS = ("europarl", "hansard")  # parliamentary proceedings, like the Hansards gold set


def domain_note(train_corpus: str, gold_set: str) -> str | None:
    """A warning to show beside a gold-set AER when the model was trained on another domain.

    The Hansards gold set is parliamentary text; a model trained on image captions (Multi30k) reads
    many of its words as ``<unk>``, so its AER says more about the domain than about attention."""
    if "hansard" not in gold_set.lower():
        return None
    corpus = train_corpus.strip() or "an unknown corpus"
    if any(k in corpus.lower() for k in IN_DOMAIN_FOR_HANSARDS):
        return None
    return (f"Out of domain: this model was trained on {corpus}, while the Hansards are parliamentary "
            "debates; many words are <unk> to it, so this AER is no measure of attention alone. Compare "
            "models trained on Europarl (Luong et al. 2015 report 0.34–0.39 on RWTH de–en).")


# Published AERs on the gold sets this project ships (lower is better).
AER_REFERENCES = (
    {"aligner": "fast_align with grow-diag (a statistical aligner)", "set": "Hansards en–fr test", "AER": "0.105",
     "precision": "—", "recall": "—", "source": "reported for this set; not run here"},
    {"aligner": "attention, Luong et al. (2015)", "set": "RWTH Europarl de–en", "AER": "0.34–0.39",
     "precision": "—", "recall": "—", "source": "Luong, Pham & Manning (2015)"},
)


def recorded_aer_rows(results: dict[str, dict[str, Any]]) -> list[dict[str, Any]]:
    """The Hansards AERs recorded in results files (``models[NAME].hansards_aer``, written for the
    Europarl RNNsearch-50: argmax and thresholded α; ``hansards_statistical_aligner``: eflomal), then
    the published reference points; numbers as text (a range such as 0.34–0.39 sits in the same column)."""
    rows: list[dict[str, Any]] = []
    for file, res in results.items():
        for name, m in (res.get("models") or {}).items():
            aer = m.get("hansards_aer")
            if not aer:
                continue
            tau = aer.get("tau_from_trial")
            picked = [("argmax α", aer["argmax"])]
            if tau is not None and f"{tau:g}" in aer.get("thresholded", {}):
                picked.append((f"α ≥ {tau:g} (τ tuned on trial)", aer["thresholded"][f"{tau:g}"]))
            rows += [{"aligner": f"{name}: {how}", "set": "Hansards en–fr test", "AER": f"{r['aer']:.3f}",
                      "precision": f"{r['precision']:.2f}", "recall": f"{r['recall']:.2f}", "source": file}
                     for how, r in picked]
        stat = res.get("hansards_statistical_aligner")
        if stat:
            rows += [{"aligner": f"{stat['aligner']}: {how} (+ {stat.get('extra_training_pairs', 0):,} Europarl pairs)",
                      "set": "Hansards en–fr test", "AER": f"{stat[how]['aer']:.3f}",
                      "precision": f"{stat[how]['precision']:.2f}", "recall": f"{stat[how]['recall']:.2f}",
                      "source": file} for how in ("forward", "intersection") if how in stat]
    return rows + [dict(r) for r in AER_REFERENCES]


def both_ways_sets(forward: Sequence[Links], reverse: Sequence[Links]) -> dict[str, list[Links]]:
    """Every link set of :mod:`nmt.explanation.symmetrize` over a corpus: ``forward`` as (source, target),
    ``reverse`` as the reverse model gives them, (its source, its target), turned round here."""
    return symmetrized_corpus([set(a) for a in forward], [flip(a) for a in reverse])


def both_ways_rows(sets: dict[str, list[Links]], sure: Sequence[Links], possible: Sequence[Links]
                   ) -> list[dict[str, Any]]:
    """One row per link set: its name, corpus AER, precision, recall and number of links."""
    rows = []
    for method, links in sets.items():
        r = alignment_error(links, sure, possible)
        rows.append({"links": LABELS[method], "AER": r["aer"], "precision": r["precision"], "recall": r["recall"],
                     "links predicted": r["links_predicted"]})
    return rows


def both_ways_table(sets: dict[str, list[Links]]) -> str:
    """Each sentence's links in every set, in the gold files' ``j-i`` format, as CSV."""
    rows = [{"#": k, **{m: " ".join(f"{j}-{i}" for j, i in sorted(links[k])) for m, links in sets.items()}}
            for k in range(len(next(iter(sets.values()), [])))]
    return csv_text(pd.DataFrame(rows, columns=["#", *sets]))
