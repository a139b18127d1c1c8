"""Print the Markdown results table of checkpoints/m30k-en-fr.results.json (for the README).

    python scripts/results_table.py checkpoints/m30k-en-fr.results.json
"""

from __future__ import annotations

import json
import sys


def main(path: str) -> None:
    res = json.loads(open(path, encoding="utf-8").read())
    splits = ["val", "test_2016_flickr", "test_2017_flickr", "test_2017_mscoco"]
    print("| model | decoding | " + " | ".join(splits) + " |")
    print("|---|---|" + "---:|" * len(splits))
    for name, m in res["models"].items():
        for dec in ("greedy", "beam5"):
            cells = []
            for s in splits:
                r = m["scores"].get(s, {}).get(dec)
                cells.append("" if r is None else f"{r['bleu']['score']:.1f} / {r['bleu_lc']['score']:.1f}")
            print(f"| {name} | {dec} | " + " | ".join(cells) + " |")
    print()
    print("BLEU cased / lowercased (sacrebleu 13a, detokenised output against the raw references).")
    for name, m in res["models"].items():
        t = m["training"]
        print(f"* {name}: {t['epochs']} epochs, {t['updates']} updates, {t['train_seconds'] / 60:.0f} min of "
              f"training on {t['device']}, {t['train_tokens_per_s']:.0f} target tokens/s.")


if __name__ == "__main__":
    main(sys.argv[1])
