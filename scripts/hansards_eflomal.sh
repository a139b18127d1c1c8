#!/usr/bin/env bash
# A statistical aligner on the Hansards gold set, for comparison with attention (issue 8):
# eflomal (pip install eflomal; not a project dependency) aligns the 447 gold sentences together
# with PAIRS lowercased Europarl training pairs (the Hansards text is lowercased), in both
# directions; AER of forward, reverse, their intersection and their union against the gold links,
# scored with nmt.align.alignment_error. Needs .gpu-data/ (scripts/europarl_gpu_data.sh).
#
#   PAIRS=100000 scripts/hansards_eflomal.sh   # prints one JSON object
set -euo pipefail
cd "$(dirname "$0")/.."
PAIRS=${PAIRS:-100000}
G=data/alignment/hansards-naacl2003-en-fr/test
W=$(mktemp -d)
for l in en fr; do
  # (xzcat || true): head closes the pipe early, which pipefail would otherwise count as a failure
  (cat "$G.$l"; (xzcat ".gpu-data/europarl-v7-fr-en/train.tok.$l.xz" || true) | head -n "$PAIRS" \
    | tr '[:upper:]' '[:lower:]') > "$W/all.$l"
done
eflomal-align -s "$W/all.en" -t "$W/all.fr" -f "$W/fwd" -r "$W/rev" >&2
python - "$G" "$W" "$PAIRS" <<'EOF'
import json, sys
from nmt.align import alignment_error, parse_links, read_links
gold, work, pairs = sys.argv[1], sys.argv[2], int(sys.argv[3])
sure, possible = read_links(f"{gold}.en-fr.sure"), read_links(f"{gold}.en-fr.possible")
n = len(sure)
def first(path):
    with open(path, encoding="utf-8") as f:
        return [parse_links(next(f)) for _ in range(n)]
fwd, rev = first(f"{work}/fwd"), first(f"{work}/rev")
out = {"aligner": "eflomal 2.0.0", "gold": gold, "sentences": n, "extra_training_pairs": pairs}
for name, links in (("forward", fwd), ("reverse", rev), ("intersection", [a & b for a, b in zip(fwd, rev)]),
                    ("union", [a | b for a, b in zip(fwd, rev)])):
    out[name] = {k: round(v, 4) if isinstance(v, float) else v for k, v in alignment_error(links, sure, possible).items()}
print(json.dumps(out, indent=1))
EOF
rm -rf "$W"
