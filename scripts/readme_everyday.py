"""The README's block on the everyday model (issue 34), built from its results file and the ``<unk>`` bench.

Sources (:mod:`scripts.readme_numbers`): ``everyday`` (``checkpoints/europarl-tatoeba-en-fr.results.json``,
``nmt.tools.experiment`` greedy and beam-5 runs plus the Hansards AER of ``nmt.explanation.align``), ``unknown``
(``bench/unk-dictionary.json``, ``bench/unk_dictionary.py``) and ``europarl`` (the shipped Europarl pair,
for the comparison line). Every number is read from those files.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from scripts.readme_blocks import EP_TEST, NEWSTEST, count, device, shipped_europarl

TATOEBA = "tatoeba-fr-en/test"
TESTS = {TATOEBA: "Tatoeba test", NEWSTEST: "newstest2014", EP_TEST: "Europarl test2000q4"}


def unk_row(unknown: list[dict[str, Any]], checkpoint: str, test: str, decoding: str) -> dict[str, Any] | None:
    """The ``<unk>`` bench's row of a checkpoint (file name), test set (``DATA/SPLIT``) and decoding."""
    data, _, split = test.rpartition("/")
    return next((r for r in unknown if r["checkpoint"] == checkpoint and r["data"] == data
                 and r["split"] == split and r["decoding"] == decoding), None)


def score(m: dict[str, Any], key: str, test: str, part: str = "all") -> str:
    """``BLEU ± CI`` (all sentences) or ``BLEU`` (no-UNK) of one results entry, or "" when not measured."""
    r = m.get(key, {}).get(test)
    if not r or not r.get(part):
        return ""
    return f"{r[part]['score']:.2f} ± {r[part]['ci95']:.2f}" if part == "all" else f"{r[part]['score']:.2f}"


def everyday(s: dict[str, Any]) -> str:
    """The 30k-word RNNsearch for everyday sentences: BLEU greedy / beam 5 / with the dictionary, ``<unk>``
    lines, the shipped Europarl RNNsearch-50 beside it, Hansards AER and how it was trained."""
    name, m = next(iter(s["everyday"]["models"].items()))
    ckpt = Path(m["checkpoint"]).name
    rows = ["| test set | greedy | greedy no-UNK | beam 5 | beam 5 no-UNK | beam 5, `<unk>` from the dictionary | "
            "lines with `<unk>`, beam 5 |", "|---|---:|---:|---:|---:|---:|---:|"]
    for test, title in TESTS.items():
        r = m["tests_beam5"][test]
        u = unk_row(s["unknown"], ckpt, test, "beam5")
        rows.append(f"| {title} ({count(r['sentences'])}) | {score(m, 'tests', test)} | "
                    f"{score(m, 'tests', test, 'no_unk')} | {score(m, 'tests_beam5', test)} | "
                    f"{score(m, 'tests_beam5', test, 'no_unk')} | "
                    + (f"{u['dictionary']['bleu']:.2f} | {100 * u['lines_with_unk'] / u['sentences']:.1f} % |" if u
                       else "— | — |"))
    ep = shipped_europarl(s["europarl"])["RNNsearch-50"]
    ep_tatoeba = unk_row(s["unknown"], Path(ep["checkpoint"]).name, TATOEBA, "beam5")
    beside = [f"{ep['tests_beam5'][t]['all']['score']:.2f} on {TESTS[t]}" for t in (NEWSTEST, EP_TEST)]
    if ep_tatoeba:
        beside.insert(0, f"{ep_tatoeba['kept']['bleu']:.2f} on {TESTS[TATOEBA]}")
    t, c, aer = m["training"], m["config"], m.get("hansards_aer")
    seg = t.get("segments") or []
    lines = [*rows, "", (
        f"Cased BLEU (sacrebleu 13a) on detokenised, detruecased output, ± the 95 % bootstrap interval; no-UNK: "
        f"sentences with no source or reference word outside the model's {count(c['src_vocab_size'])}-word "
        f"vocabularies. The shipped Europarl RNNsearch-50 scores, with beam 5, " + ", ".join(beside) + ".")]
    if aer:
        lines[-1] += (f" The everyday model's Hansards AER (argmax α): {aer['argmax']['aer']:.3f} (Europarl "
                      f"RNNsearch-50: {ep['hansards_aer']['argmax']['aer']:.3f}).")
    lines[-1] += (
        f" `{ckpt}` ({name}) was trained by `train.py` on {device(t['device'])} for "
        f"{t['train_seconds'] / 60:.1f} min ({count(t['updates'])} updates of {m['args']['batch_size']:,} sentences"
        + (", in one segment from scratch" if len(seg) == 1 and seg[0].get("from") is None else
           f", in {len(seg)} segments" if seg else "")
        + f") on {count(t['train_data']['pairs'])} truecased pairs of at most {m['args']['max_len']} tokens: "
        f"Europarl v7 and Tatoeba's everyday pairs, the latter {m['data']['tatoeba_copies']} times"
        + (" (rebuilding them here with `scripts/prep_large_vocab.py` gives the same SHA-256, "
           f"`{t['train_data']['sha256'][:12]}…`)" if m["data"]["rebuilt_sha256"] == t["train_data"]["sha256"] else "")
        + f", with Jean et al.'s partition softmax over {count(m['args']['sampled_vocab'])} words; stored as fp16 "
        "with int8 vocabulary matrices.")
    return "\n".join(lines)
