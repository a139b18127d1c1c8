#!/usr/bin/env bash
# Ship Multi30k en→fr models: score each finished run on every split (greedy and beam 5), write
# checkpoints/m30k-en-fr-<model>.pt (fp16) and merge the scores into one results file.
#   scripts/ship_m30k.sh                      # the RNNsearch / RNNencdec pair → m30k-en-fr.results.json
#   MODELS="luong-global-general luong-local-p" RESULTS=checkpoints/m30k-en-fr-luong.results.json \
#     scripts/ship_m30k.sh                    # the Luong models (issue 11)
set -euo pipefail
cd "$(dirname "$0")/.."
DATA=${DATA:-data/multi30k}
SPLITS="val test_2016_flickr test_2017_flickr test_2017_mscoco"
MODELS=${MODELS:-"rnnsearch rnnencdec"}
RESULTS=${RESULTS:-checkpoints/m30k-en-fr.results.json}
pids=()
for m in $MODELS; do
  python -m nmt export --run "runs/m30k-en-fr-$m" --name "$m" --data "$DATA" --splits $SPLITS \
    --out "checkpoints/m30k-en-fr-$m.pt" --results "runs/m30k-en-fr-$m.results.json" ${FORCE:+--force} \
    > "runs/export-$m.log" 2>&1 &
  pids+=($!)
done
for p in "${pids[@]}"; do wait "$p"; done
# merge the models' entries into one results file
python - "$RESULTS" $MODELS <<'PY'
import json, pathlib, sys
out = {"corpus": "Multi30k task 1, en→fr", "models": {}}
for m in sys.argv[2:]:
    out["models"].update(json.loads(pathlib.Path(f"runs/m30k-en-fr-{m}.results.json").read_text())["models"])
pathlib.Path(sys.argv[1]).write_text(json.dumps(out, indent=1, ensure_ascii=False))
PY
ls -la checkpoints/
