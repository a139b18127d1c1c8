"""BLEU through sacrebleu: equal to the sacrebleu CLI; buckets; sentence scores."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from nmt.metrics import all_bleu, bleu_by_length, corpus_bleu, length_buckets, sentence_scores

HYPS = ["Un homme fait du vélo.", "Une femme lit un livre rouge.", "Deux chiens jouent dans la neige blanche."]
REFS = ["Un homme fait du vélo.", "Une femme lit un livre.", "Deux chiens jouent dans la neige."]


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


def test_all_bleu_variants() -> None:
    res = all_bleu(HYPS, REFS, "fr")
    assert set(res) == {"bleu", "bleu_lc", "bleu_tok_lc"}
    assert all(0 < v["score"] < 100 for v in res.values())
    assert all_bleu(REFS, REFS, "fr")["bleu"]["score"] == 100.0


def test_length_buckets_cover_all_lengths() -> None:
    assert length_buckets([3, 12, 25]) == [(0, 10), (10, 20), (20, 30)]


def test_bleu_by_length_splits_sentences_into_buckets() -> None:
    rows = bleu_by_length([5, 15, 16], HYPS, REFS, width=10)
    assert [(r["lo"], r["n"]) for r in rows] == [(0, 1), (10, 2)]
    assert rows[0]["score"] == 100.0
    assert rows[1]["score"] == corpus_bleu(HYPS[1:], REFS[1:])["score"]


def test_bootstrap_gives_a_confidence_interval() -> None:
    res = corpus_bleu(HYPS * 5, REFS * 5, n_bootstrap=50)
    assert res["ci95"] >= 0 and "mean" in res


def test_sentence_scores() -> None:
    s = sentence_scores(HYPS[0], REFS[0])
    assert s["bleu"] == 100.0 and s["chrf"] == 100.0
    assert sentence_scores("xyz", REFS[0])["bleu"] < 5
