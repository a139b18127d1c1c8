"""One record of a 30k pair's scores against issue 20's bars (after each GPU segment), on the CPU.

    python scripts/large_vocab_results.py --experiment runs/eval-rnnsearch-b5.json runs/eval-rnnencdec-b5.json \
        runs/eval-rnnsearch-b5-q4.json runs/eval-rnnencdec-b5-q4.json \
        --export .seg/s1/large-vocab-rnnsearch.results.json .seg/s1/large-vocab-rnnencdec.results.json \
        --unk bench/unk-30k.json --aer runs/aer-30k-s1.json --out bench/large-vocab-30k.json \
        --segment "1 (2026-11-26, H100, 5.5 min)"

Reads ``nmt.tools.experiment`` results (beam 5: all sentences, no-UNK, BLEU by source length), the
exports' greedy scores (``nmt.tools.export --results``) and ``bench/unk_dictionary.py`` rows (``<unk>``
kept / copied / from the dictionary, and how many lines hold an ``<unk>``) and the RNNsearch's Hansards
AER (``nmt.explanation.align --json``, its links left out), and writes them with
each bar of the issue as measured (``bars``: value, bar, met). The bars (beam 5, cased sacreBLEU):
Tatoeba test ≥ 35 with replacement; ``<unk>`` in ≤ 10 % of its lines without; test2000q4 ≥ 32;
newstest2014 ≥ 20; RNNsearch ≥ 1.3 × RNNencdec on newstest2014; the 50–59-word bucket of test2000q4
≥ 85 % of the 10–19-word bucket (Fig. 2 stays flat).
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path
from typing import Any

SEARCH, ENCDEC = "RNNsearch-50", "RNNencdec-50"
TATOEBA, Q4, NEWS = "tatoeba-fr-en/test", "europarl-v7-fr-en/test2000q4", "wmt/newstest2014-fren"


def merge_experiments(paths: list[Path]) -> dict[str, dict[str, Any]]:
    """Model name → its checkpoint, training and beam-5 tests, merged over several experiment files."""
    models: dict[str, dict[str, Any]] = {}
    for path in paths:
        for name, m in json.loads(path.read_text())["models"].items():
            entry = models.setdefault(name, {k: v for k, v in m.items() if not k.startswith("tests")})
            for key, tests in m.items():
                if key.startswith("tests"):
                    entry.setdefault(key, {}).update(tests)
    return models


def bucket(test: dict[str, Any], lo: int) -> float | None:
    """BLEU of the source-length bucket starting at ``lo`` words, if it has sentences."""
    return next((b["score"] for b in test.get("by_length", []) if b["lo"] == lo and b["n"]), None)


def bar(value: float | None, threshold: float, at_most: bool = False) -> dict[str, Any]:
    met = None if value is None else (value <= threshold if at_most else value >= threshold)
    return {"value": value, "bar": threshold, "at_most": at_most, "met": met}


def bars(models: dict[str, dict[str, Any]], unk: list[dict[str, Any]]) -> dict[str, dict[str, Any]]:
    """Each of issue 20's bars, as measured (``value`` None where the run is missing)."""
    def score(name: str, test: str) -> float | None:
        t = models.get(name, {}).get("tests_beam5", {}).get(test)
        return None if t is None else t["all"]["score"]

    tat = next((r for r in unk if r["split"] == "test" and r["data"].startswith("tatoeba")
                and r["decoding"] == "beam5" and "rnnsearch" in r["checkpoint"]), None)
    q4 = models.get(SEARCH, {}).get("tests_beam5", {}).get(Q4)
    short, long_ = (bucket(q4, 10), bucket(q4, 50)) if q4 else (None, None)
    search_news, encdec_news = score(SEARCH, NEWS), score(ENCDEC, NEWS)
    return {
        "tatoeba_with_replacement": bar(tat["dictionary"]["bleu"] if tat else None, 35.0),
        "tatoeba_unk_line_share": bar(tat["lines_with_unk"] / tat["sentences"] if tat else None, 0.10, at_most=True),
        "test2000q4": bar(score(SEARCH, Q4), 32.0),
        "newstest2014": bar(search_news, 20.0),
        "search_over_encdec_newstest2014": bar(
            search_news / encdec_news if search_news is not None and encdec_news else None, 1.3),
        "fig2_50_59_over_10_19": bar(long_ / short if long_ is not None and short else None, 0.85),
    }


def main(argv: list[str] | None = None) -> None:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--experiment", nargs="+", type=Path, required=True)
    p.add_argument("--export", nargs="*", type=Path, default=[])
    p.add_argument("--unk", type=Path, default=None, help="bench/unk_dictionary.py --json output")
    p.add_argument("--aer", type=Path, default=None,
                   help="the RNNsearch's `python -m nmt align --json` output (Hansards test)")
    p.add_argument("--segment", required=True, help="which training segment these weights are")
    p.add_argument("--out", type=Path, required=True)
    args = p.parse_args(argv)
    models = merge_experiments(args.experiment)
    greedy = {}
    for path in args.export:
        for name, m in json.loads(path.read_text())["models"].items():
            greedy[name] = m.get("scores")
    unk = json.loads(args.unk.read_text()) if args.unk else []
    out = {"what": "issue 20's 30k truecased pair (Europarl 950k + 3x Tatoeba) against the issue's bars",
           "segment": args.segment, "beam5": models, "export_greedy": greedy, "unk": unk,
           "bars": bars(models, unk)}
    if args.aer:
        out["hansards_aer"] = {k: v for k, v in json.loads(args.aer.read_text()).items() if k != "links"}
    args.out.write_text(json.dumps(out, indent=1, ensure_ascii=False) + "\n")
    for key, b in out["bars"].items():
        print(f"{key:34s} {b['value']!s:>22}  {'≤' if b['at_most'] else '≥'} {b['bar']}  met: {b['met']}")


if __name__ == "__main__":
    main()
