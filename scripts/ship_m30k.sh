#!/usr/bin/env bash
# Ship the Multi30k en→fr pair: score both finished runs on every split (greedy and beam 5) and write
# checkpoints/m30k-en-fr-{rnnsearch,rnnencdec}.pt (fp16) and checkpoints/m30k-en-fr.results.json.
set -euo pipefail
cd "$(dirname "$0")/.."
DATA=${DATA:-data/multi30k}
SPLITS="val test_2016_flickr test_2017_flickr test_2017_mscoco"
pids=()
for m in rnnsearch rnnencdec; do
  python -m nmt.export --run "runs/m30k-en-fr-$m" --name "$m" --data "$DATA" --splits $SPLITS \
    --out "checkpoints/m30k-en-fr-$m.pt" --results "runs/m30k-en-fr-$m.results.json" ${FORCE:+--force} \
    > "runs/export-$m.log" 2>&1 &
  pids+=($!)
done
for p in "${pids[@]}"; do wait "$p"; done
# merge the two models' entries into one results file
python - <<'PY'
import json, pathlib
out = {"corpus": "Multi30k task 1, en→fr", "models": {}}
for m in ("rnnsearch", "rnnencdec"):
    out["models"].update(json.loads(pathlib.Path(f"runs/m30k-en-fr-{m}.results.json").read_text())["models"])
pathlib.Path("checkpoints/m30k-en-fr.results.json").write_text(json.dumps(out, indent=1, ensure_ascii=False))
PY
ls -la checkpoints/
