"""compare-mt's word analyses with paired-bootstrap intervals (nmt/text/word_analysis.py, python -m nmt paired).

Two hand-made sentences, three systems' worth of words, every count worked out on paper (below):

    ref 0: a b c a    A: a a d    B: a b c
    ref 1: x y z      A: x y z    B: z q

Frequencies a 1000, b 1, c 7, d 0, x 50, y 2, z 1, q 3 put the words in compare-mt's buckets
``>=1000``, ``1``, ``[5,10)``, ``<1``, ``[10,100)``, ``2``, ``1``, ``3``. A matches both a's of ref 0
(its d falls in ``<1`` on its own), B matches a, b, c; on ref 1 A matches all, B only z (q: ``3``).
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import numpy as np
import pytest

from nmt.text import word_analysis as wa

REFS = [["a", "b", "c", "a"], ["x", "y", "z"]]
A = [["a", "a", "d"], ["x", "y", "z"]]
B = [["a", "b", "c"], ["z", "q"]]
FREQ = {"a": 1000, "b": 1, "c": 7, "d": 0, "x": 50, "y": 2, "z": 1, "q": 3}
INDICES = np.array([[0, 0], [1, 1], [0, 1]])  # three resampled test sets: ref 0 twice, ref 1 twice, both


def row(rows: list[dict], bucket: str) -> dict:
    return next(r for r in rows if r["bucket"] == bucket)


def test_compare_mt_bucket_names_and_cutoffs() -> None:
    assert wa.bucket_labels() == ["<1", "1", "2", "3", "4", "[5,10)", "[10,100)", "[100,1000)", ">=1000"]
    assert [wa.cutoff_bucket(v) for v in (0, 1, 4, 5, 9, 10, 999, 1000, 5000)] == [0, 1, 4, 5, 5, 6, 7, 8, 8]


def test_frequency_buckets_counted_by_hand() -> None:
    res = wa.analyse(REFS, A, B, FREQ, INDICES)["by_frequency"]
    one, top, rare = row(res, "1"), row(res, ">=1000"), row(res, "<1")
    # "1" holds b (ref 0) and z (ref 1): A wrote z only (1 of 1 right), B wrote both
    assert (one["ref_words"], one["a"]["out_words"], one["a"]["matches"], one["b"]["out_words"],
            one["b"]["matches"]) == (2, 1, 1, 2, 2)
    assert (one["a"]["f"], one["b"]["f"], one["delta_f"]) == (0.6667, 1.0, 0.3333)  # F = 2m / (o + r)
    assert (one["a"]["precision"], one["a"]["recall"]) == (1.0, 0.5)
    assert (top["ref_words"], top["a"]["f"], top["b"]["f"], top["delta_f"]) == (2, 1.0, 0.6667, -0.3333)
    assert (rare["ref_words"], rare["a"]["out_words"], rare["a"]["matches"], rare["a"]["f"]) == (0, 1, 0, 0.0)
    assert (row(res, "3")["b"]["out_words"], row(res, "3")["b"]["matches"]) == (1, 0)  # B's unmatched q
    assert (row(res, "2")["delta_f"], row(res, "[5,10)")["delta_f"], row(res, "[10,100)")["delta_f"]) == (-1, 1, -1)
    # the resamples: ref 0 twice gives bucket "1" ΔF = 1 − 0, ref 1 twice 1 − 1, both 1 − 2/3; min and max of 3
    assert one["delta_ci95"] == [0.0, 1.0]


def test_thirds_of_the_sentence_counted_by_hand() -> None:
    res = wa.analyse(REFS, A, B, FREQ, INDICES)["by_position"]
    assert [r["bucket"] for r in res] == ["first third", "middle third", "last third"]
    assert [r["ref_words"] for r in res] == [3, 2, 2]  # a b | c | a  and  x | y | z
    assert [(r["a"]["out_words"], r["a"]["matches"]) for r in res] == [(2, 2), (1, 1), (3, 2)]  # d: last of 3
    assert [(r["b"]["out_words"], r["b"]["matches"]) for r in res] == [(2, 2), (2, 1), (1, 1)]  # q: 2nd of 2
    assert [r["a"]["f"] for r in res] == [0.8, 0.6667, 0.8]
    assert [r["b"]["f"] for r in res] == [0.8, 0.5, 0.6667]


def test_ngrams_b_matches_and_a_misses_and_the_reverse() -> None:
    res = wa.analyse(REFS, A, B, FREQ, INDICES)["ngrams"]
    b_side = res["b_not_a"]
    assert [r["ngram"] for r in b_side] == ["a b", "a b c", "b", "b c", "c"]  # score 1/3 each, then by words
    assert all((r["a"], r["b"], r["score"], r["examples"]) == (0, 1, 0.3333, [0]) for r in b_side)
    a_side = res["a_not_b"]
    assert [r["ngram"] for r in a_side] == ["x", "x y", "x y z", "y", "y z", "a"]  # 2/3 each, then a: 3/5
    a = a_side[-1]
    assert (a["a"], a["b"], a["score"], a["delta"], a["examples"]) == (2, 1, 0.6, -1, [0])
    assert a["delta_ci95"] == [-2.0, 0.0]  # ref 0 twice: −2, ref 1 twice: 0, both: −1
    assert "z" not in [r["ngram"] for r in b_side + a_side]  # both matched it once: score 1/2, neither side


def test_resamples_are_sacrebleus_own() -> None:
    """The per-bucket intervals resample the very test sets sacrebleu's paired bootstrap draws: B's bootstrap
    mean BLEU from our indices equals the mean sacrebleu reports."""
    from sacrebleu.metrics import BLEU

    from nmt.tools import paired

    refs = [f"le chat numéro {k} dort sur le tapis rouge" for k in range(30)]
    hyp = [r if k % 3 else "le chien dort" for k, r in enumerate(refs)]
    ours = paired.paired_test([("A", ["xyz"] * 30), ("B", hyp)], refs, resamples=200)["BLEU"]["B"]["mean"]
    bleu = BLEU()
    stats = np.array(bleu._extract_corpus_statistics(hyp, [refs]), dtype="float32")
    scores = [bleu._compute_score_from_stats(stats[i].sum(0)).score for i in wa.sacrebleu_indices(30, 200)]
    assert round(float(np.mean(scores)), 2) == ours


def test_the_cli_writes_the_tables(tiny_checkpoint_dir: Path, tmp_path: Path) -> None:
    """python -m nmt paired on the tiny pair: the frequency and n-gram tables with intervals in its JSON,
    counted over the training split the checkpoint records (tests/fixtures/tiny/train)."""
    from nmt.__main__ import main
    from nmt.models import checkpoint

    data = tmp_path / "data"
    shutil.copytree(Path(__file__).parent / "fixtures" / "tiny", data / "tiny")
    out = tmp_path / "paired.json"
    d = tiny_checkpoint_dir
    assert main(["paired", "--data", str(data), "--test", "tiny/test", "--resamples", "50", "--out", str(out),
                 "--model", f"E={d / 'tiny-en-fr-rnnencdec.pt'}", "--model", f"S={d / 'tiny-en-fr-rnnsearch.pt'}"]) == 0
    words = json.loads(out.read_text(encoding="utf-8"))["words"]
    assert words["frequency_source"].startswith("tiny/train, 20 target sentences")
    lm = checkpoint.load(d / "tiny-en-fr-rnnsearch.pt")
    refs = (data / "tiny" / "test.fr").read_text(encoding="utf-8").splitlines()
    table = words["by_system"]["S"]["by_frequency"]
    assert sum(r["ref_words"] for r in table) == sum(len(lm.tgt_tok.tokenize(r)) for r in refs)
    assert [r["bucket"] for r in table] == wa.bucket_labels()
    assert all(len(r["delta_ci95"]) == 2 and r["delta_ci95"][0] <= r["delta_ci95"][1] for r in table)
    ngrams = words["by_system"]["S"]["ngrams"]
    assert set(ngrams) == {"b_not_a", "a_not_b"}
    assert all(len(r["delta_ci95"]) == 2 for side in ngrams.values() for r in side)


@pytest.mark.parametrize("n", [1, 4])
def test_ngrams_of_a_sentence(n: int) -> None:
    got = [g for g in wa.ngrams(["a", "b", "c", "d"]) if len(g) == n]
    assert got == ([("a",), ("b",), ("c",), ("d",)] if n == 1 else [("a", "b", "c", "d")])


def test_ngram_matches_are_clipped_by_the_reference() -> None:
    """compare_ngrams: an output n-gram matches only while the reference has an unused copy of it."""
    got = wa.ngram_matches(["a", "b", "a"], ["a", "a", "a", "b", "b"])
    assert got == {("a",): 2, ("b",): 1, ("a", "b"): 1}  # three a's against two, two b's against one
