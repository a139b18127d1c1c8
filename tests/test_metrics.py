"""BLEU through sacrebleu: against hand-computed n-gram counts, the sacrebleu CLI and sacrebleu's
own functions called directly; buckets; bootstrap intervals; sentence scores.

Hand counts use sacrebleu's 13a tokenisation (the full stop split off, "L'homme" kept whole) or
Moses' (``L'`` split off) as stated; BLEU = BP · (p1 p2 p3 p4)^(1/4), BP = min(1, exp(1 − r/c)).
"""

from __future__ import annotations

import math
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
import sacrebleu

from nmt.text.metrics import all_bleu, bleu_by_length, corpus_bleu, length_buckets, sentence_scores

HYPS = ["Un homme fait du vélo.", "Une femme lit un livre rouge.", "Deux chiens jouent dans la neige blanche."]
REFS = ["Un homme fait du vélo.", "Une femme lit un livre.", "Deux chiens jouent dans la neige."]


def bleu_by_hand(precisions: list[float], bp: float = 1.0) -> float:
    """100 · BP · geometric mean of the four n-gram precisions."""
    return 100 * bp * math.prod(precisions) ** 0.25


# Corpus counts over HYPS/REFS (13a tokens): unigrams 6/6 + 6/7 + 7/8, bigrams 5/5 + 4/6 + 5/7,
# trigrams 4/4 + 3/5 + 4/6, 4-grams 3/3 + 2/4 + 3/5; c = 21 > r = 19, so BP = 1.
HAND_BLEU = bleu_by_hand([19 / 21, 14 / 18, 11 / 15, 8 / 12])  # 76.586…


@pytest.mark.parametrize("extra", [[], ["-lc"]])
def test_bleu_equals_the_sacrebleu_cli(tmp_path: Path, extra: list[str]) -> None:
    hyp, ref = tmp_path / "hyp.txt", tmp_path / "ref.txt"
    hyp.write_text("\n".join(HYPS) + "\n")
    ref.write_text("\n".join(REFS) + "\n")
    out = subprocess.run([sys.executable, "-m", "sacrebleu", str(ref), "-i", str(hyp), "-b", "-w", "2", *extra],
                         capture_output=True, text=True, check=True).stdout
    ours = corpus_bleu(HYPS, REFS, lowercase=bool(extra))
    assert ours["score"] == pytest.approx(float(out.strip()), abs=0.005)
    assert ours["signature"].startswith("nrefs:1|case:" + ("lc" if extra else "mixed"))


def test_corpus_bleu_equals_hand_counts() -> None:
    """Corpus-level pooling of n-gram counts (not a mean of sentence scores), and the brevity penalty."""
    res = corpus_bleu(HYPS, REFS)
    assert res["score"] == round(HAND_BLEU, 2) == 76.59 and res["bp"] == 1.0 and res["n"] == 3
    # "Un homme fait du vélo ." against "... vélo rouge .": c = 6 < r = 7, BP = exp(1 − 7/6)
    short = corpus_bleu(["Un homme fait du vélo."], ["Un homme fait du vélo rouge."])
    assert short["bp"] == round(math.exp(1 - 7 / 6), 4)
    assert short["score"] == round(bleu_by_hand([6 / 6, 4 / 5, 3 / 4, 2 / 3], math.exp(1 - 7 / 6)), 2)


def test_all_bleu_variants_differ_where_case_and_tokenisation_differ() -> None:
    """bleu is cased, bleu_lc lowercased, bleu_tok_lc over Moses tokens (which split "L'homme")."""
    res = all_bleu(HYPS, REFS, "fr")
    assert set(res) == {"bleu", "bleu_lc", "bleu_tok_lc"}
    assert [v["score"] for v in res.values()] == [round(HAND_BLEU, 2)] * 3  # one case, same tokens
    # Only the case of the first word differs: cased 5/6, 4/5, 3/4, 2/3; lowercased all correct.
    case = all_bleu(["un homme fait du vélo."], ["Un homme fait du vélo."], "fr")
    assert case["bleu"]["score"] == round(bleu_by_hand([5 / 6, 4 / 5, 3 / 4, 2 / 3]), 2) == 75.98
    assert case["bleu_lc"]["score"] == case["bleu_tok_lc"]["score"] == 100.0
    # 13a keeps "L'homme" whole: 5/6, 3/5, 2/4, 1/3; Moses splits "L'" "homme": 6/7, 4/6, 3/5, 2/4.
    tok = all_bleu(["L'homme porte un chapeau rouge."], ["L'homme porte un chapeau bleu."], "fr")
    assert tok["bleu"]["score"] == tok["bleu_lc"]["score"] == round(bleu_by_hand([5 / 6, 3 / 5, 2 / 4, 1 / 3]), 2)
    assert tok["bleu_tok_lc"]["score"] == round(bleu_by_hand([6 / 7, 4 / 6, 3 / 5, 2 / 4]), 2) == 64.35
    assert "|tok:none|" in tok["bleu_tok_lc"]["signature"] and "|tok:13a|" in tok["bleu_lc"]["signature"]
    assert all_bleu(REFS, REFS, "fr")["bleu"]["score"] == 100.0


def test_length_buckets_cover_all_lengths() -> None:
    assert length_buckets([3, 12, 25]) == [(0, 10), (10, 20), (20, 30)]


def test_bleu_by_length_splits_sentences_into_buckets() -> None:
    """Each bucket is scored on its own sentences only (hand counts of HYPS[1:] in the second)."""
    rows = bleu_by_length([5, 15, 16], HYPS, REFS, width=10)
    assert [(r["lo"], r["hi"], r["n"]) for r in rows] == [(0, 10, 1), (10, 20, 2)]
    assert rows[0]["score"] == 100.0
    assert rows[1]["score"] == round(bleu_by_hand([13 / 15, 9 / 13, 7 / 11, 5 / 9]), 2) == 67.87
    edges = bleu_by_length([9, 10, 20], HYPS, REFS, width=10)  # buckets are [lo, hi)
    sent2, sent3 = bleu_by_hand([6 / 7, 4 / 6, 3 / 5, 2 / 4]), bleu_by_hand([7 / 8, 5 / 7, 4 / 6, 3 / 5])
    assert [(r["lo"], r["n"], r["score"]) for r in edges] == [(0, 1, 100.0), (10, 1, round(sent2, 2)),
                                                               (20, 1, round(sent3, 2))]


def test_bootstrap_of_identical_sentences_has_no_spread() -> None:
    """Every resample of a corpus of one repeated pair is that corpus: mean = score, CI half-width 0."""
    res = corpus_bleu(HYPS[1:2] * 8, REFS[1:2] * 8, n_bootstrap=30)
    assert res["score"] == res["mean"] == round(bleu_by_hand([6 / 7, 4 / 6, 3 / 5, 2 / 4]), 2)
    assert res["ci95"] == 0.0


def test_bootstrap_interval_equals_resampling_by_hand(monkeypatch: pytest.MonkeyPatch) -> None:
    """95 % CI and mean from sacrebleu's resampling (numpy default_rng(SACREBLEU_SEED), n rows drawn
    with replacement), each resample scored by sacrebleu.corpus_bleu on the sentences themselves;
    the CI half-width is half the spread between the n/40-th lowest and highest resample scores."""
    monkeypatch.setenv("SACREBLEU_SEED", "7")
    hyps = [*HYPS, "Un chien court.", "Une fille mange une pomme rouge."]
    refs = [*REFS, "Un chien noir court.", "Une petite fille mange une pomme."]
    res = corpus_bleu(hyps, refs, n_bootstrap=80)
    idx = np.random.default_rng(7).choice(len(hyps), size=(80, len(hyps)), replace=True)
    scores = sorted(sacrebleu.corpus_bleu([hyps[k] for k in row], [[refs[k] for k in row]]).score for row in idx)
    lo = len(scores) // 40
    assert res["ci95"] == pytest.approx(round(0.5 * (scores[-lo - 1] - scores[lo]), 2), abs=0.011)
    assert res["mean"] == pytest.approx(round(float(np.mean(scores)), 2), abs=0.011)
    assert res["ci95"] > 1.0  # five different sentences: the resamples do spread


def test_sentence_scores() -> None:
    """Sentence BLEU (effective order) and chrF: hand values and sacrebleu's sentence functions."""
    assert sentence_scores(HYPS[0], REFS[0]) == {"bleu": 100.0, "chrf": 100.0}
    s = sentence_scores(HYPS[1], REFS[1])  # 6/7, 4/6, 3/5, 2/4; c = 7 > r = 6
    assert s["bleu"] == round(bleu_by_hand([6 / 7, 4 / 6, 3 / 5, 2 / 4]), 2) == 64.35
    assert s["chrf"] == round(sacrebleu.sentence_chrf(HYPS[1], [REFS[1]]).score, 2)
    assert sentence_scores("xyz", REFS[0]) == {"bleu": 0.0, "chrf": 0.0}  # no shared word or character
