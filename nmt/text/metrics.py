"""Translation quality through sacrebleu (never a hand-written BLEU).

* ``bleu``        – corpus BLEU on detokenised, cased text (sacrebleu's default 13a tokeniser),
                    reported with its signature;
* ``bleu_lc``     – the same, lowercased (the issue's quality bar, and close to Multi30k papers);
* ``bleu_tok_lc`` – lowercased BLEU over Moses-tokenised text with sacrebleu's tokeniser off,
                    as multi-bleu.perl-style Multi30k papers report it.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from sacrebleu.metrics import BLEU, CHRF

from nmt.text.tokenize import Tokenizer


def corpus_bleu(hyps: Sequence[str], refs: Sequence[str], lowercase: bool = False,
                tokenize: str | None = None, n_bootstrap: int = 1) -> dict[str, Any]:
    """Corpus BLEU with sacrebleu's signature (and a 95 % bootstrap CI if ``n_bootstrap`` > 1).

    ``tokenize="none"`` is for text that is already tokenised on purpose (``force`` silences
    sacrebleu's warning about it)."""
    metric = BLEU(lowercase=lowercase, tokenize=tokenize, force=True) if tokenize else BLEU(lowercase=lowercase)
    res = metric.corpus_score(list(hyps), [list(refs)], n_bootstrap=n_bootstrap)
    out: dict[str, Any] = {"score": round(res.score, 2), "signature": str(metric.get_signature()),
                           "bp": round(res.bp, 4), "n": len(hyps)}
    if n_bootstrap > 1:
        out["mean"], out["ci95"] = round(res._mean, 2), round(res._ci, 2)
    return out


def all_bleu(hyps: Sequence[str], refs: Sequence[str], tgt_lang: str) -> dict[str, Any]:
    """The three BLEU variants of the module docstring for one system output."""
    tok = Tokenizer(tgt_lang)
    return {
        "bleu": corpus_bleu(hyps, refs),
        "bleu_lc": corpus_bleu(hyps, refs, lowercase=True),
        "bleu_tok_lc": corpus_bleu([" ".join(tok.tokenize(h)) for h in hyps],
                                   [" ".join(tok.tokenize(r)) for r in refs], lowercase=True, tokenize="none"),
    }


def length_buckets(src_lengths: Sequence[int], width: int = 10) -> list[tuple[int, int]]:
    """Source-length buckets [lo, hi) of ``width`` words covering all lengths (paper Fig. 2)."""
    top = max(src_lengths, default=0)
    return [(lo, lo + width) for lo in range(0, top + 1, width)]


def bleu_by_length(src_lengths: Sequence[int], hyps: Sequence[str], refs: Sequence[str], width: int = 10,
                   lowercase: bool = False, n_bootstrap: int = 1) -> list[dict[str, Any]]:
    """Corpus BLEU of the sentences in each source-length bucket, with bucket sizes."""
    rows = []
    for lo, hi in length_buckets(src_lengths, width):
        idx = [k for k, n in enumerate(src_lengths) if lo <= n < hi]
        if not idx:
            continue
        res = corpus_bleu([hyps[k] for k in idx], [refs[k] for k in idx], lowercase, n_bootstrap=n_bootstrap)
        rows.append({"lo": lo, "hi": hi, "n": len(idx), **{k: v for k, v in res.items() if k != "n"}})
    return rows


def sentence_scores(hyp: str, ref: str) -> dict[str, float]:
    """Sentence-level BLEU and chrF of one hypothesis (for browsing, not for reporting)."""
    return {
        "bleu": round(BLEU(effective_order=True).sentence_score(hyp, [ref]).score, 2),
        "chrf": round(CHRF().sentence_score(hyp, [ref]).score, 2),
    }
